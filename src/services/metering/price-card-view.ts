/**
 * A price card as JSON (`pricing` of `GET /v1/models` and of the dashboard's Models page): snake_case,
 * prices in USD decimals as configured, and every token price shown as it applies (an absent cache or
 * reasoning price shows the price it falls back to), so a reader never has to know the fallback rules.
 */
import { DEFAULT_BATCH_FACTOR, effectiveTokenPrices, longContextPrices, type PriceCard, type TokenPrices } from '../../core/price-card.ts';

/** Token prices on the wire, USD per million tokens each. */
export interface TokenPricesView {
  input_per_million: number;
  output_per_million: number;
  cached_input_per_million: number;
  cache_write_5m_per_million: number;
  cache_write_1h_per_million: number;
  reasoning_per_million: number;
}

export interface PriceCardView extends TokenPricesView {
  /** USD per backend call; 0 when the card has none. */
  per_request: number;
  /** USD per image by `WxH` or `WxH/quality`; empty when the model is not priced per image. */
  per_image: Record<string, number>;
  /** Share of the price a batch line pays (0 to 1). */
  batch_factor: number;
  /** Prices of requests whose prompt is above `above_input_tokens` tokens, ascending. */
  long_context: (TokenPricesView & { above_input_tokens: number })[];
  /** The price list entry the card was read from; null when the operator wrote the prices. */
  source: { list: string; version: string; provider: string; model: string } | null;
}

export function priceCardView(card: PriceCard): PriceCardView {
  return {
    ...tokenPricesView(card),
    per_request: card.perRequest ?? 0,
    per_image: { ...card.perImage },
    batch_factor: card.batchFactor ?? DEFAULT_BATCH_FACTOR,
    long_context: [...(card.longContext ?? [])]
      .sort((left, right) => left.aboveInputTokens - right.aboveInputTokens)
      .map((entry) => ({ above_input_tokens: entry.aboveInputTokens, ...tokenPricesView(longContextPrices(card, entry)) })),
    source: card.source === undefined ? null : { ...card.source },
  };
}

function tokenPricesView(prices: TokenPrices): TokenPricesView {
  const effective = effectiveTokenPrices(prices);
  return {
    input_per_million: effective.inputPerMillion,
    output_per_million: effective.outputPerMillion,
    cached_input_per_million: effective.cachedInputPerMillion,
    cache_write_5m_per_million: effective.cacheWrite5mPerMillion,
    cache_write_1h_per_million: effective.cacheWrite1hPerMillion,
    reasoning_per_million: effective.reasoningPerMillion,
  };
}
