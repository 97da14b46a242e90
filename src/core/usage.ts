/**
 * Token usage, normalised once for every backend (docs/design.md convention 5). All figures are token counts.
 * `inputTokens` is the whole prompt, cached parts included; `cachedInputTokens` and
 * `cacheWriteInputTokens` are the parts of it read from / written to a prompt cache.
 * `outputTokens` is the whole completion, reasoning included; `reasoningTokens` is the part of it spent thinking.
 */
export interface Usage {
  /** Prompt tokens, cached read and cache write included. */
  inputTokens: number;
  /** Prompt tokens served from the backend's prompt cache. */
  cachedInputTokens: number;
  /** Prompt tokens written to the backend's prompt cache. */
  cacheWriteInputTokens: number;
  /** Completion tokens, reasoning included. */
  outputTokens: number;
  /** Completion tokens spent on reasoning/thinking. */
  reasoningTokens: number;
  /** True when the backend reported no usage and the figures were counted locally (core/count-tokens.ts). */
  estimated: boolean;
  /** The upstream's raw usage object, kept for audit. */
  raw?: unknown;
}

export function emptyUsage(): Usage {
  return { inputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: 0, reasoningTokens: 0, estimated: false };
}

export function totalTokens(usage: Usage): number {
  return usage.inputTokens + usage.outputTokens;
}
