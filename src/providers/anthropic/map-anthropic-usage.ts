/**
 * Normalises the `usage` object of the Anthropic Messages API
 * (https://docs.anthropic.com/en/api/messages#response-usage, and the prompt-caching guide
 * https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching#tracking-cache-performance) into the
 * canonical Usage (docs/design.md convention 5). Anthropic's `input_tokens` EXCLUDES cache reads and
 * writes, so the canonical whole prompt is `input_tokens + cache_creation_input_tokens +
 * cache_read_input_tokens`. `cache_creation.ephemeral_1h_input_tokens` is the part of the writes kept one
 * hour (priced 2x input, against 1.25x for the 5-minute default); without the `cache_creation` breakdown
 * every write is a 5-minute one. Thinking is counted inside `output_tokens` without a separate figure,
 * so `reasoningTokens` stays 0.
 */
import type { Usage } from '../../core/usage.ts';
import type { AnthropicUsageView } from './anthropic-wire.ts';

/** Usage figures seen so far in a stream: `message_start` first, then `message_delta` updates. */
export interface AnthropicUsageTotals {
  inputTokens: number;
  outputTokens: number;
  /** Cache writes of every lifetime; undefined until reported. */
  cacheCreationInputTokens: number | undefined;
  cacheReadInputTokens: number;
  cacheCreation5mInputTokens: number | undefined;
  cacheCreation1hInputTokens: number | undefined;
  raw: Record<string, unknown>;
}

export function emptyAnthropicUsageTotals(): AnthropicUsageTotals {
  return {
    inputTokens: 0,
    outputTokens: 0,
    cacheCreationInputTokens: undefined,
    cacheReadInputTokens: 0,
    cacheCreation5mInputTokens: undefined,
    cacheCreation1hInputTokens: undefined,
    raw: {},
  };
}

/** Later reports win field by field (message_delta carries the final `output_tokens`). */
export function mergeAnthropicUsage(totals: AnthropicUsageTotals, update: AnthropicUsageView): AnthropicUsageTotals {
  return {
    inputTokens: update.inputTokens ?? totals.inputTokens,
    outputTokens: update.outputTokens ?? totals.outputTokens,
    cacheCreationInputTokens: update.cacheCreationInputTokens ?? totals.cacheCreationInputTokens,
    cacheReadInputTokens: update.cacheReadInputTokens ?? totals.cacheReadInputTokens,
    cacheCreation5mInputTokens: update.cacheCreation5mInputTokens ?? totals.cacheCreation5mInputTokens,
    cacheCreation1hInputTokens: update.cacheCreation1hInputTokens ?? totals.cacheCreation1hInputTokens,
    raw: { ...totals.raw, ...update.raw },
  };
}

export function mapAnthropicUsage(totals: AnthropicUsageTotals): Usage {
  const oneHour = totals.cacheCreation1hInputTokens ?? 0;
  // The total is authoritative; a reply with only the breakdown is summed from it.
  const cacheWrite = totals.cacheCreationInputTokens ?? (totals.cacheCreation5mInputTokens ?? 0) + oneHour;
  return {
    inputTokens: totals.inputTokens + cacheWrite + totals.cacheReadInputTokens,
    cachedInputTokens: totals.cacheReadInputTokens,
    cacheWriteInputTokens: cacheWrite,
    cacheWrite1hInputTokens: Math.min(oneHour, cacheWrite),
    outputTokens: totals.outputTokens,
    reasoningTokens: 0,
    requests: 1,
    estimated: false,
    raw: totals.raw,
  };
}
