/**
 * `POST /v1/messages/count_tokens` answer, following docs/wire-contracts.md ("Anthropic SDK": count_tokens
 * returns `{"input_tokens": N}`). The count is the local o200k estimate of core/count-tokens.ts
 * for the decoded canonical request (see decodeCountTokensRequest), so it is the same figure the service
 * reserves against rate limits; for non-OpenAI models it is an approximation.
 */
import { countRequestTokens } from '../../core/count-tokens.ts';
import type { GenerationRequest } from '../../core/generation.ts';
import type { AnthropicTokenCount } from './wire-types.ts';

/** `inputTokens`, when given, is the count already made (the route counts in event-loop slices). */
export function encodeCountTokensResponse(request: GenerationRequest, inputTokens = countRequestTokens(request)): AnthropicTokenCount {
  return { input_tokens: inputTokens };
}
