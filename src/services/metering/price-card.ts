/**
 * What a request costs: the normalised usage (core/usage.ts) times the model's price card
 * (core/price-card.ts), in integer micro-USD, the unit every stored, summed or compared cost uses
 * (docs/design.md "Money").
 *
 * Exact arithmetic: a price per million tokens is also a price per token in micro-USD, so with at most
 * six decimals (config validation) it is a whole number of pico-USD per token; per-request and per-image
 * prices (at most twelve decimals) are whole pico-USD too. The sum of a request is taken in BigInt
 * pico-USD, multiplied by the batch factor in millionths, and rounded to micro-USD once, half up. No
 * float is ever added to another, so sums of costs never drift. Each card is converted once and kept
 * (cards from the config are frozen).
 */
import {
  BATCH_FACTOR_DECIMALS,
  DEFAULT_BATCH_FACTOR,
  effectiveTokenPrices,
  longContextPrices,
  scaledDecimal,
  TOKEN_PRICE_DECIMALS,
  USD_AMOUNT_DECIMALS,
  type PriceCard,
  type TokenPrices,
} from '../../core/price-card.ts';
import { usageCategories, type ImageUsage, type Usage } from '../../core/usage.ts';

export type { LongContextPrices, PriceCard, PriceCardSource, TokenPrices } from '../../core/price-card.ts';
export { DEFAULT_BATCH_FACTOR } from '../../core/price-card.ts';

export const MICRO_USD_PER_USD = 1_000_000;

/** Pico-USD per micro-USD times millionths of the batch factor: the divisor of the one rounding. */
const ROUNDING_DIVISOR = 10n ** BigInt(USD_AMOUNT_DECIMALS - 6 + BATCH_FACTOR_DECIMALS);
const FULL_PRICE_FACTOR = 10n ** BigInt(BATCH_FACTOR_DECIMALS);

/** One price per usage category, pico-USD per token, fallbacks applied. */
interface TokenRates {
  input: bigint;
  cacheRead: bigint;
  cacheWrite5m: bigint;
  cacheWrite1h: bigint;
  output: bigint;
  reasoning: bigint;
}

interface DearestRates {
  input: bigint;
  output: bigint;
}

interface ScaledCard {
  base: TokenRates;
  /** Long-context rates, ascending by `aboveInputTokens`. */
  longContext: { aboveInputTokens: number; rates: TokenRates }[];
  /**
   * The dearest input and output rates a prompt can be priced at: `base` for any prompt, then one per
   * long-context entry for prompts above its threshold (running maxima over the card and every entry up
   * to it, since an entry may price a category below the card).
   */
  dearest: { base: DearestRates; longContext: (DearestRates & { aboveInputTokens: number })[] };
  /** Pico-USD per backend call. */
  perRequest: bigint;
  /** Pico-USD per image by `perImage` key, with each key's size. */
  perImage: { key: string; size: string; price: bigint }[];
  /** Millionths of the full price a batch line pays. */
  batchFactor: bigint;
}

/** The cost of one request's usage, an integer number of micro-USD (rounded once, half up). */
export function costMicroUsd(usage: Usage, card: PriceCard, options: { batch: boolean }): number {
  const scaled = scaledCard(card);
  const rates = ratesFor(scaled, usage.inputTokens);
  const categories = usageCategories(usage);
  let picoUsd =
    BigInt(categories.uncachedInputTokens) * rates.input +
    BigInt(categories.cacheReadTokens) * rates.cacheRead +
    BigInt(categories.cacheWrite5mTokens) * rates.cacheWrite5m +
    BigInt(categories.cacheWrite1hTokens) * rates.cacheWrite1h +
    BigInt(categories.visibleOutputTokens) * rates.output +
    BigInt(categories.reasoningTokens) * rates.reasoning +
    BigInt(wholeCount(usage.requests)) * scaled.perRequest;
  if (usage.images !== undefined) picoUsd += BigInt(wholeCount(usage.images.count)) * imagePrice(scaled, usage.images);
  return roundToMicroUsd(picoUsd, scaled, options);
}

/**
 * An upper bound of costMicroUsd for any usage within these bounds (prompt at its dearest input price,
 * output cap at the dearest output price, per-request fee, images). Integer micro-USD.
 *
 * Within the bound: a prompt of at most `promptTokens` (however it splits into cache reads and 5-minute
 * or 1-hour writes), at most `maxOutputTokens` completion tokens (however many reasoning), one backend
 * call, and at most `images.count` images of that size and quality when named (any, when not).
 */
export function worstCaseCostMicroUsd(
  bound: { promptTokens: number; maxOutputTokens: number; images?: { count: number; size?: string; quality?: string } },
  card: PriceCard,
  options: { batch: boolean },
): number {
  const scaled = scaledCard(card);
  const promptTokens = wholeCount(bound.promptTokens);
  // Every rate a prompt of at most promptTokens can be priced at (long-context rates need a longer one).
  let dearest: DearestRates = scaled.dearest.base;
  for (const entry of scaled.dearest.longContext) if (promptTokens > entry.aboveInputTokens) dearest = entry;
  let picoUsd = BigInt(promptTokens) * dearest.input + BigInt(wholeCount(bound.maxOutputTokens)) * dearest.output + scaled.perRequest;
  if (bound.images !== undefined) picoUsd += BigInt(wholeCount(bound.images.count)) * dearestImagePrice(scaled, bound.images);
  return roundToMicroUsd(picoUsd, scaled, options);
}

/** Pico-USD as micro-USD, the batch factor applied; the one rounding, half up. */
function roundToMicroUsd(picoUsd: bigint, scaled: ScaledCard, options: { batch: boolean }): number {
  const scaledTotal = picoUsd * (options.batch ? scaled.batchFactor : FULL_PRICE_FACTOR);
  return Number((scaledTotal + ROUNDING_DIVISOR / 2n) / ROUNDING_DIVISOR);
}

/** The rates of the highest long-context entry the prompt is above, else the card's. */
function ratesFor(scaled: ScaledCard, inputTokens: number): TokenRates {
  let rates = scaled.base;
  for (const entry of scaled.longContext) if (inputTokens > entry.aboveInputTokens) rates = entry.rates;
  return rates;
}

/**
 * The price of one image: its `WxH/quality` key; at no named quality, its `WxH` key. A size or quality
 * the card does not list costs the dearest price of that size, else the card's dearest: never nothing.
 */
function imagePrice(scaled: ScaledCard, image: ImageUsage): bigint {
  const exactKey = image.size === undefined ? undefined : image.quality === undefined ? image.size : `${image.size}/${image.quality}`;
  const exact = scaled.perImage.find((entry) => entry.key === exactKey);
  return exact?.price ?? dearestImagePrice(scaled, { size: image.size });
}

/** The dearest price an image of this size and quality (each when named) can cost. */
function dearestImagePrice(scaled: ScaledCard, image: { size?: string | undefined; quality?: string | undefined }): bigint {
  if (image.size !== undefined && image.quality !== undefined) {
    const exact = scaled.perImage.find((entry) => entry.key === `${image.size}/${image.quality}`);
    if (exact !== undefined) return exact.price;
  }
  const sameSize = scaled.perImage.filter((entry) => entry.size === image.size);
  return max(0n, ...(sameSize.length > 0 ? sameSize : scaled.perImage).map((entry) => entry.price));
}

const scaledCards = new WeakMap<PriceCard, ScaledCard>();

/** The card in exact units, converted once per frozen card (a card still being changed is converted each time). */
function scaledCard(card: PriceCard): ScaledCard {
  const known = scaledCards.get(card);
  if (known !== undefined) return known;
  const base = tokenRates(card);
  const longContext = [...(card.longContext ?? [])]
    .sort((left, right) => left.aboveInputTokens - right.aboveInputTokens)
    .map((entry) => ({ aboveInputTokens: entry.aboveInputTokens, rates: tokenRates(longContextPrices(card, entry)) }));
  const scaled: ScaledCard = {
    base,
    longContext,
    dearest: dearestRates(base, longContext),
    perRequest: exactUnits(card.perRequest ?? 0, USD_AMOUNT_DECIMALS),
    perImage: Object.entries(card.perImage ?? {}).map(([key, price]) => ({
      key,
      size: key.split('/')[0]!,
      price: exactUnits(price, USD_AMOUNT_DECIMALS),
    })),
    batchFactor: exactUnits(card.batchFactor ?? DEFAULT_BATCH_FACTOR, BATCH_FACTOR_DECIMALS),
  };
  if (Object.isFrozen(card)) scaledCards.set(card, scaled);
  return scaled;
}

/** Running maxima of the input and output rates: over the card, then over each long-context entry up to it. */
function dearestRates(base: TokenRates, longContext: ScaledCard['longContext']): ScaledCard['dearest'] {
  let running: DearestRates = { input: 0n, output: 0n };
  const widen = (rates: TokenRates): DearestRates => ({
    input: max(running.input, rates.input, rates.cacheRead, rates.cacheWrite5m, rates.cacheWrite1h),
    output: max(running.output, rates.output, rates.reasoning),
  });
  running = widen(base);
  const dearestBase = running;
  return {
    base: dearestBase,
    longContext: longContext.map((entry) => {
      running = widen(entry.rates);
      return { aboveInputTokens: entry.aboveInputTokens, ...running };
    }),
  };
}

function tokenRates(prices: TokenPrices): TokenRates {
  const effective = effectiveTokenPrices(prices);
  const rate = (value: number): bigint => exactUnits(value, TOKEN_PRICE_DECIMALS);
  return {
    input: rate(effective.inputPerMillion),
    cacheRead: rate(effective.cachedInputPerMillion),
    cacheWrite5m: rate(effective.cacheWrite5mPerMillion),
    cacheWrite1h: rate(effective.cacheWrite1hPerMillion),
    output: rate(effective.outputPerMillion),
    reasoning: rate(effective.reasoningPerMillion),
  };
}

/**
 * A decimal in exact units of 10^-decimals. The config refuses prices with more decimals; a card built
 * elsewhere with more is rounded to the unit here, and a negative or non-finite price counts as 0.
 */
function exactUnits(value: number, decimals: number): bigint {
  const exact = scaledDecimal(value, decimals);
  if (exact !== undefined) return exact;
  return Number.isFinite(value) && value > 0 ? BigInt(Math.round(value * 10 ** decimals)) : 0n;
}

function wholeCount(count: number): number {
  return Number.isFinite(count) && count > 0 ? Math.floor(count) : 0;
}

function max(first: bigint, ...rest: bigint[]): bigint {
  let largest = first;
  for (const value of rest) if (value > largest) largest = value;
  return largest;
}
