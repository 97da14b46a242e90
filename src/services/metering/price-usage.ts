/**
 * What a request cost. Prices are the model's, in USD per million tokens (config `models[].pricing`);
 * batch requests cost 50% (SPEC "Limits": batch price is 50% of the standard synchronous price).
 */
import type { Usage } from '../../core/usage.ts';

export interface ModelPricing {
  /** USD per million input tokens. */
  inputPerMillion: number;
  /** USD per million output tokens (reasoning included). */
  outputPerMillion: number;
  /** USD per million input tokens read from a prompt cache; absent: the input price. */
  cachedInputPerMillion?: number;
}

export interface PriceOptions {
  /** True for requests run by the batch engine (half price). */
  batch: boolean;
}

/** Price factor of batch requests (SPEC: 50% of the synchronous price). */
export const BATCH_PRICE_FACTOR = 0.5;

/** The unit costs are rounded to: one nano-dollar, far below any real price of one token, and free of 0.1 + 0.2 noise. */
const USD_DECIMALS = 1e9;

/**
 * Cost in USD of one request's usage. Input is the whole prompt (cached reads at the cached price when
 * the model has one, cache writes at the input price); output is the whole completion, reasoning included.
 */
export function priceUsage(
  usage: Pick<Usage, 'inputTokens' | 'cachedInputTokens' | 'outputTokens'>,
  pricing: ModelPricing,
  options: PriceOptions = { batch: false },
): number {
  const cachedTokens = pricing.cachedInputPerMillion === undefined ? 0 : Math.min(usage.cachedInputTokens, usage.inputTokens);
  const uncachedTokens = usage.inputTokens - cachedTokens;
  const fullPrice =
    (uncachedTokens * pricing.inputPerMillion +
      cachedTokens * (pricing.cachedInputPerMillion ?? 0) +
      usage.outputTokens * pricing.outputPerMillion) /
    1_000_000;
  const price = options.batch ? fullPrice * BATCH_PRICE_FACTOR : fullPrice;
  return Math.round(price * USD_DECIMALS) / USD_DECIMALS;
}
