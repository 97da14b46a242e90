import type { Usage } from '../../core/usage.ts';
import type { ChatCompletionUsage } from './wire-types.ts';

/** Canonical usage -> chat `usage` (docs/wire-contracts.md "usage"). */
export function encodeUsage(usage: Usage): ChatCompletionUsage {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedInputTokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
}
