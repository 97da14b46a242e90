/**
 * Canonical usage -> Anthropic usage, following docs/wire-contracts.md ("Anthropic SDK" response `usage`) and
 * Anthropic's accounting: `input_tokens` counts the prompt EXCLUDING cache reads and cache writes, so
 * input_tokens + cache_read_input_tokens + cache_creation_input_tokens is the whole prompt.
 */
import type { Usage } from '../../core/usage.ts';
import type { AnthropicUsage } from './wire-types.ts';

export function toAnthropicUsage(usage: Usage): AnthropicUsage {
  return {
    // Clamped at 0: a backend reporting more cached than total tokens must not produce a negative count.
    input_tokens: Math.max(0, usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteInputTokens),
    output_tokens: usage.outputTokens,
    cache_creation_input_tokens: usage.cacheWriteInputTokens,
    cache_read_input_tokens: usage.cachedInputTokens,
  };
}
