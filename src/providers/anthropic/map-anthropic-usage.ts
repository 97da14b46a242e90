/**
 * Normalises the `usage` object of the Anthropic Messages API
 * (https://docs.anthropic.com/en/api/messages#response-usage) into the canonical Usage (docs/design.md
 * convention 5). Anthropic's `input_tokens` excludes the cached parts, so the canonical input is
 * `input_tokens + cache_creation_input_tokens + cache_read_input_tokens`. Thinking is counted inside
 * `output_tokens` without a separate figure, so `reasoningTokens` stays 0.
 */
import type { Usage } from '../../core/usage.ts';
import type { AnthropicUsageView } from './anthropic-wire.ts';

/** Usage figures seen so far in a stream: `message_start` first, then `message_delta` updates. */
export interface AnthropicUsageTotals {
  inputTokens: number;
  outputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
  raw: Record<string, unknown>;
}

export function emptyAnthropicUsageTotals(): AnthropicUsageTotals {
  return { inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0, raw: {} };
}

/** Later reports win field by field (message_delta carries the final `output_tokens`). */
export function mergeAnthropicUsage(totals: AnthropicUsageTotals, update: AnthropicUsageView): AnthropicUsageTotals {
  return {
    inputTokens: update.inputTokens ?? totals.inputTokens,
    outputTokens: update.outputTokens ?? totals.outputTokens,
    cacheCreationInputTokens: update.cacheCreationInputTokens ?? totals.cacheCreationInputTokens,
    cacheReadInputTokens: update.cacheReadInputTokens ?? totals.cacheReadInputTokens,
    raw: { ...totals.raw, ...update.raw },
  };
}

export function mapAnthropicUsage(totals: AnthropicUsageTotals): Usage {
  return {
    inputTokens: totals.inputTokens + totals.cacheCreationInputTokens + totals.cacheReadInputTokens,
    cachedInputTokens: totals.cacheReadInputTokens,
    cacheWriteInputTokens: totals.cacheCreationInputTokens,
    outputTokens: totals.outputTokens,
    reasoningTokens: 0,
    estimated: false,
    raw: totals.raw,
  };
}
