/**
 * Usage, normalised once for every backend (docs/design.md convention 5) by the provider's
 * `map-*-usage.ts`; prices apply to this record only (services/metering/price-card.ts).
 *
 * The figures nest, so that the rest of the code can keep reading `inputTokens` as the whole prompt:
 *   inputTokens  = uncached input + cachedInputTokens (cache reads) + cacheWriteInputTokens (cache writes)
 *   cacheWriteInputTokens = 5-minute writes + cacheWrite1hInputTokens
 *   outputTokens = visible output + reasoningTokens
 * `usageCategories` splits a record into those disjoint categories, each priced once.
 */
export interface Usage {
  /** Prompt tokens, the whole prompt: uncached, cache reads and cache writes together. */
  inputTokens: number;
  /** Prompt tokens read from the backend's prompt cache (part of `inputTokens`). */
  cachedInputTokens: number;
  /** Prompt tokens written to the backend's prompt cache, every lifetime (part of `inputTokens`). */
  cacheWriteInputTokens: number;
  /** Of `cacheWriteInputTokens`, the tokens written with a one-hour lifetime; the rest were 5-minute writes. */
  cacheWrite1hInputTokens: number;
  /** Completion tokens, reasoning included. */
  outputTokens: number;
  /** Completion tokens spent on reasoning/thinking (part of `outputTokens`). */
  reasoningTokens: number;
  /** Images the request produced (image generation); absent when none. */
  images?: ImageUsage;
  /**
   * Backend calls this usage covers: 1 for a request a backend answered (even partly), 0 when no backend
   * was reached (nothing used). A price card's per-request fee is charged per call.
   */
  requests: number;
  /** True when the backend reported no usage and the figures were counted locally (core/count-tokens.ts). */
  estimated: boolean;
  /** The upstream's raw usage object, kept for audit. */
  raw?: unknown;
}

/** Images a request produced, priced per image by size and quality (price card `perImage`). */
export interface ImageUsage {
  /** Number of images. */
  count: number;
  /** Size as `WxH` pixels (e.g. `1024x1024`); absent when unknown. */
  size?: string;
  /** Quality the backend generated at (`standard`, `hd`, `low`...); absent: the backend's default. */
  quality?: string;
}

/** Nothing used: no tokens, no images, no backend call. */
export function emptyUsage(): Usage {
  return {
    inputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteInputTokens: 0,
    cacheWrite1hInputTokens: 0,
    outputTokens: 0,
    reasoningTokens: 0,
    requests: 0,
    estimated: false,
  };
}

/** A request a backend answered with these token counts (one call); the rest of the figures zero. */
export function answeredUsage(figures: Partial<Usage> = {}): Usage {
  return { ...emptyUsage(), requests: 1, ...figures };
}

export function totalTokens(usage: Usage): number {
  return usage.inputTokens + usage.outputTokens;
}

/** A usage record split into disjoint categories, each priced at one price. All token counts. */
export interface UsageCategories {
  /** Prompt tokens neither read from nor written to a cache. */
  uncachedInputTokens: number;
  cacheReadTokens: number;
  cacheWrite5mTokens: number;
  cacheWrite1hTokens: number;
  /** Completion tokens that are not reasoning. */
  visibleOutputTokens: number;
  reasoningTokens: number;
}

/**
 * The disjoint categories of `usage`. A part larger than its whole (a backend reporting more cached than
 * prompt tokens) is held to the whole, so the categories always add up to `inputTokens` and `outputTokens`.
 */
export function usageCategories(usage: Usage): UsageCategories {
  const input = nonNegative(usage.inputTokens);
  const cacheRead = Math.min(nonNegative(usage.cachedInputTokens), input);
  const cacheWrite = Math.min(nonNegative(usage.cacheWriteInputTokens), input - cacheRead);
  const cacheWrite1h = Math.min(nonNegative(usage.cacheWrite1hInputTokens), cacheWrite);
  const output = nonNegative(usage.outputTokens);
  const reasoning = Math.min(nonNegative(usage.reasoningTokens), output);
  return {
    uncachedInputTokens: input - cacheRead - cacheWrite,
    cacheReadTokens: cacheRead,
    cacheWrite5mTokens: cacheWrite - cacheWrite1h,
    cacheWrite1hTokens: cacheWrite1h,
    visibleOutputTokens: output - reasoning,
    reasoningTokens: reasoning,
  };
}

/** Counts are whole and never negative; anything else a backend sends counts as 0. */
function nonNegative(count: number): number {
  return Number.isFinite(count) && count > 0 ? Math.floor(count) : 0;
}
