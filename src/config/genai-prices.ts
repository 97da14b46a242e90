/**
 * Price cards from the maintained list `@pydantic/genai-prices` (https://github.com/pydantic/genai-prices,
 * MIT): its data is bundled in the npm package and read offline. This file never calls the package's
 * `updatePrices` (its only network path), so nothing is fetched at run time: the prices are those of the
 * installed version (`npm update @pydantic/genai-prices` brings newer ones). The package is loaded, through
 * its CommonJS build, only when a model names it: it costs about 130 ms and 22 MB at start.
 *
 * The list's price keys (https://github.com/pydantic/genai-prices/blob/main/prices/units.yml) map onto
 * the card as LISTED_PRICE_FIELDS says; tiered prices (a higher price above a prompt size) become
 * `longContext` entries. Keys Switchyard does not meter (audio, image and video tokens, web searches)
 * are reported in `ignored`. A price that changes on a date is read as of the config's load; one that
 * depends on the time of day (DeepSeek's peak and off-peak hours) is read at its dearest: a card holds one
 * price per category, and a budget must never be charged less than the upstream bills.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as GenaiPrices from '@pydantic/genai-prices';
import type { LongContextPrices, PriceCard, TokenPrices } from '../core/price-card.ts';

/** List price key -> card field, with the divisor from the list's unit (`_kcount` is per 1,000). */
export const LISTED_PRICE_FIELDS: Readonly<Record<string, { field: keyof TokenPrices | 'perRequest'; per: number }>> = {
  input_mtok: { field: 'inputPerMillion', per: 1 },
  output_mtok: { field: 'outputPerMillion', per: 1 },
  cache_read_mtok: { field: 'cachedInputPerMillion', per: 1 },
  cache_write_mtok: { field: 'cacheWrite5mPerMillion', per: 1 },
  cache_write_1h_mtok: { field: 'cacheWrite1hPerMillion', per: 1 },
  output_reasoning_mtok: { field: 'reasoningPerMillion', per: 1 },
  requests_kcount: { field: 'perRequest', per: 1000 },
};

/** The listed card of one model, or why there is none. */
export type ListedCard =
  | {
      found: true;
      card: Pick<PriceCard, keyof TokenPrices | 'perRequest' | 'longContext'>;
      /** The list's own provider and model ids that matched. */
      provider: string;
      model: string;
      /** List price keys with no card field (not metered here). */
      ignored: string[];
    }
  | { found: false; providerKnown: boolean; knownModels: string[] };

type PriceValue = number | { base: number; tiers: { start: number; price: number }[] };
type ModelPrice = Record<string, PriceValue | undefined>;

let loaded: typeof GenaiPrices | undefined;

function genaiPrices(): typeof GenaiPrices {
  loaded ??= createRequire(import.meta.url)('@pydantic/genai-prices') as typeof GenaiPrices;
  return loaded;
}

/** The installed package's version (shown with every card read from it). */
export function genaiPricesVersion(): string {
  const entry = createRequire(import.meta.url).resolve('@pydantic/genai-prices');
  const manifest = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
}

/** The list's card for `model` (of `provider`, when named) as of `at`. Throws the list's own error on bad data. */
export function listedCard(provider: string | undefined, model: string, at: Date): ListedCard {
  const prices = genaiPrices();
  const match = prices.calcPrice({}, model, { ...(provider === undefined ? {} : { providerId: provider }), timestamp: at });
  if (match === null) {
    const known = provider === undefined ? undefined : prices.findProvider({ providerId: provider });
    return { found: false, providerKnown: known !== undefined, knownModels: known?.models.map((entry) => entry.id) ?? [] };
  }
  const { card, ignored } = cardOf(pricesInForce(match.model, at) as ModelPrice);
  return { found: true, card, provider: match.provider.id, model: match.model.id, ignored };
}

/**
 * The prices in force at `at`: the latest entry already started (undated, or dated at or before `at`),
 * each price raised to the dearest of the time-of-day entries (which apply only during their hours).
 */
function pricesInForce(model: GenaiPrices.ModelInfo, at: Date): GenaiPrices.ModelPrice {
  if (!Array.isArray(model.prices)) return model.prices;
  const timeOfDay = model.prices.filter((entry) => entry.constraint !== undefined && 'start_time' in entry.constraint);
  const dated = model.prices.filter((entry) => !timeOfDay.includes(entry));
  const started = dated.filter((entry) => {
    const startDate = (entry.constraint as Record<string, unknown> | undefined)?.['start_date'];
    return typeof startDate !== 'string' || at >= new Date(startDate);
  });
  const prices: GenaiPrices.ModelPrice = { ...(started.at(-1) ?? dated[0] ?? model.prices[0]!).prices };
  for (const entry of timeOfDay) {
    for (const [key, value] of Object.entries(entry.prices)) {
      if (value !== undefined && (prices[key] === undefined || basePrice(value) > basePrice(prices[key]))) prices[key] = value;
    }
  }
  return prices;
}

function basePrice(value: PriceValue | undefined): number {
  return value === undefined ? 0 : typeof value === 'number' ? value : value.base;
}

/** List prices -> card fields; tiers -> long-context entries (every tiered field priced at each threshold). */
function cardOf(listed: ModelPrice): { card: Pick<PriceCard, keyof TokenPrices | 'perRequest' | 'longContext'>; ignored: string[] } {
  const card: Record<string, number> = { inputPerMillion: 0, outputPerMillion: 0 };
  const tiered: { field: string; per: number; tiers: { start: number; price: number }[] }[] = [];
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(listed)) {
    const mapping = LISTED_PRICE_FIELDS[key];
    if (value === undefined) continue;
    if (mapping === undefined) {
      ignored.push(key);
      continue;
    }
    const base = typeof value === 'number' ? value : value.base;
    card[mapping.field] = roundPrice(base / mapping.per, mapping.field);
    if (typeof value !== 'number' && value.tiers.length > 0) {
      tiered.push({ field: mapping.field, per: mapping.per, tiers: [...value.tiers].sort((left, right) => left.start - right.start) });
    }
  }
  const starts = [...new Set(tiered.flatMap((entry) => entry.tiers.map((tier) => tier.start)))].sort((left, right) => left - right);
  const longContext: LongContextPrices[] = starts.map((start) => {
    const entry: Record<string, number> = { aboveInputTokens: start };
    for (const { field, per, tiers } of tiered) {
      const price = tiers.filter((tier) => tier.start <= start).at(-1)?.price;
      if (price !== undefined) entry[field] = roundPrice(price / per, field);
    }
    return entry as unknown as LongContextPrices;
  });
  return {
    card: { ...(card as unknown as Pick<PriceCard, keyof TokenPrices | 'perRequest'>), ...(longContext.length > 0 ? { longContext } : {}) },
    ignored: ignored.sort(),
  };
}

/** A listed price to the card's precision: 6 decimals per million tokens, 12 for USD amounts (a few list prices are thirds). */
function roundPrice(value: number, field: string): number {
  const scale = field === 'perRequest' ? 1e12 : 1e6;
  return Math.round(value * scale) / scale;
}
