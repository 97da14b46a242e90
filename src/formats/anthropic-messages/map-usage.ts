/**
 * Canonical usage -> Anthropic usage, following docs/wire-contracts.md ("Anthropic SDK" response `usage`) and
 * Anthropic's accounting (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching#tracking-cache-performance):
 * `input_tokens` counts the prompt EXCLUDING cache reads and cache writes, so
 * input_tokens + cache_read_input_tokens + cache_creation_input_tokens is the whole prompt, and
 * `cache_creation` splits the writes by lifetime (5 minutes, 1 hour). Built from the categories of
 * core/usage.ts, so the figures always add up, whatever the backend reported.
 */
import { usageCategories, type Usage } from '../../core/usage.ts';
import type { AnthropicUsage } from './wire-types.ts';

export function toAnthropicUsage(usage: Usage): AnthropicUsage {
  const categories = usageCategories(usage);
  return {
    input_tokens: categories.uncachedInputTokens,
    output_tokens: usage.outputTokens,
    cache_creation_input_tokens: categories.cacheWrite5mTokens + categories.cacheWrite1hTokens,
    cache_read_input_tokens: categories.cacheReadTokens,
    cache_creation: { ephemeral_5m_input_tokens: categories.cacheWrite5mTokens, ephemeral_1h_input_tokens: categories.cacheWrite1hTokens },
  };
}

/** The usage of `message_start` and `message_delta`: the same figures without the `cache_creation` split (wire-types.ts). */
export function toAnthropicStreamUsage(usage: Usage): AnthropicUsage {
  const { cache_creation: _lifetimes, ...figures } = toAnthropicUsage(usage);
  return figures;
}
