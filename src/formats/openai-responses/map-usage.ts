/** Canonical usage -> the Response object's `usage` (docs/spec.md "Response object"). */
import type { Usage } from '../../core/usage.ts';
import type { ResponseUsage } from './wire-types.ts';

/**
 * Canonical usage -> SPEC response usage, with OpenAI's `cache_write_tokens` (its ResponseUsage requires
 * it beside `cached_tokens`; docs/wire-contracts.md "Responses"). All input is text here: no audio tokens.
 */
export function encodeUsage(usage: Usage): ResponseUsage {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: {
      cached_tokens: usage.cachedInputTokens,
      cache_write_tokens: usage.cacheWriteInputTokens,
      text_tokens: usage.inputTokens,
      audio_tokens: 0,
    },
    output_tokens: usage.outputTokens,
    output_tokens_details: {
      reasoning_tokens: usage.reasoningTokens,
      text_tokens: Math.max(0, usage.outputTokens - usage.reasoningTokens),
      audio_tokens: 0,
    },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}
