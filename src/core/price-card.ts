/**
 * A model's price card: what each usage category (core/usage.ts) costs, in USD decimals as the operator
 * configures them (config `models[].pricing`, README "Prices"). The arithmetic is
 * services/metering/price-card.ts; the card lives here because the config produces it and core is all
 * the config may import.
 */

/** Token prices of a card, each in USD per million tokens. */
export interface TokenPrices {
  /** USD per million prompt tokens neither read from nor written to a prompt cache. */
  inputPerMillion: number;
  /** USD per million completion tokens (reasoning too, unless `reasoningPerMillion`). */
  outputPerMillion: number;
  /** USD per million prompt tokens read from a prompt cache; absent: `inputPerMillion`. */
  cachedInputPerMillion?: number;
  /** USD per million prompt tokens written to a cache kept 5 minutes; absent: `inputPerMillion`. */
  cacheWrite5mPerMillion?: number;
  /** USD per million prompt tokens written to a cache kept 1 hour; absent: `cacheWrite5mPerMillion`, then `inputPerMillion`. */
  cacheWrite1hPerMillion?: number;
  /** USD per million reasoning tokens; absent: `outputPerMillion`. */
  reasoningPerMillion?: number;
}

export interface PriceCard extends TokenPrices {
  /** USD per backend call (a request's `usage.requests`), on top of its tokens and images. */
  perRequest?: number;
  /**
   * USD per generated image, keyed `WxH` (e.g. `1024x1024`: that size at the backend's default quality)
   * or `WxH/quality` (e.g. `1024x1024/hd`). Added to the token prices (PRICE_IMAGE_KEY_PATTERN).
   */
  perImage?: Record<string, number>;
  /** Share of the price a batch line pays, 0 to 1; absent: DEFAULT_BATCH_FACTOR (SPEC: 50%). */
  batchFactor?: number;
  /**
   * Long-context prices: when a request's whole prompt is above `aboveInputTokens`, every token of it is
   * priced at that entry's prices (fields it leaves out keep the card's). The highest entry that applies
   * wins. Anthropic's and Google's prompts above 200,000 tokens are priced this way.
   */
  longContext?: readonly LongContextPrices[];
  /** Where the prices came from when the config imported them (display only; never read when pricing). */
  source?: PriceCardSource;
}

export interface LongContextPrices extends Partial<TokenPrices> {
  /** Prompt size, tokens: these prices apply to requests whose whole prompt is above it. */
  aboveInputTokens: number;
}

/** The price list entry a card was resolved from (config `pricing.from`). */
export interface PriceCardSource {
  /** The list: the npm package `@pydantic/genai-prices`. */
  list: 'genai-prices';
  /** The package version whose bundled data was read. */
  version: string;
  /** The list's provider id (e.g. `anthropic`). */
  provider: string;
  /** The list's model id that matched (e.g. `claude-sonnet-4-5`). */
  model: string;
}

/** Batch lines pay half the synchronous price (SPEC "Limits": batch price is 50%). */
export const DEFAULT_BATCH_FACTOR = 0.5;

/** Decimal places a price per million tokens may have: exact to one pico-USD per token. */
export const TOKEN_PRICE_DECIMALS = 6;
/** Decimal places a USD amount (per request, per image) may have: exact to one pico-USD. */
export const USD_AMOUNT_DECIMALS = 12;
/** Decimal places of a batch factor. */
export const BATCH_FACTOR_DECIMALS = 6;

/** `WxH` or `WxH/quality`: the keys of `perImage`. */
export const PRICE_IMAGE_KEY_PATTERN = /^\d+x\d+(\/[a-z0-9_-]+)?$/;

/** The token price fields of a card, in the order the README lists them. */
export const TOKEN_PRICE_FIELDS = [
  'inputPerMillion',
  'outputPerMillion',
  'cachedInputPerMillion',
  'cacheWrite5mPerMillion',
  'cacheWrite1hPerMillion',
  'reasoningPerMillion',
] as const satisfies readonly (keyof TokenPrices)[];

/**
 * `value` times 10^`decimals` as an exact integer, read from the number's shortest decimal form (what the
 * operator wrote); undefined when `value` has more decimal places than that, or is negative or not finite.
 */
export function scaledDecimal(value: number, decimals: number): bigint | undefined {
  if (!Number.isFinite(value) || value < 0) return undefined;
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
  if (match === null) return undefined;
  const fraction = match[2] ?? '';
  const shift = decimals - fraction.length + Number(match[3] ?? 0);
  const digits = BigInt(`${match[1]}${fraction}`);
  if (shift >= 0) return digits * 10n ** BigInt(shift);
  const divisor = 10n ** BigInt(-shift);
  return digits % divisor === 0n ? digits / divisor : undefined;
}

/** Every token price with the fallbacks of an absent one applied (see each field of TokenPrices). */
export function effectiveTokenPrices(prices: TokenPrices): Required<TokenPrices> {
  const cacheWrite5m = prices.cacheWrite5mPerMillion ?? prices.inputPerMillion;
  return {
    inputPerMillion: prices.inputPerMillion,
    outputPerMillion: prices.outputPerMillion,
    cachedInputPerMillion: prices.cachedInputPerMillion ?? prices.inputPerMillion,
    cacheWrite5mPerMillion: cacheWrite5m,
    cacheWrite1hPerMillion: prices.cacheWrite1hPerMillion ?? cacheWrite5m,
    reasoningPerMillion: prices.reasoningPerMillion ?? prices.outputPerMillion,
  };
}

/** The card's token prices with a long-context entry's over them (fields the entry leaves out keep the card's). */
export function longContextPrices(card: TokenPrices, entry: LongContextPrices): TokenPrices {
  const prices: TokenPrices = { ...card };
  for (const field of TOKEN_PRICE_FIELDS) {
    const value = entry[field];
    if (value !== undefined) prices[field] = value;
  }
  return prices;
}
