/**
 * A model's `pricing` as parsed -> its price card, once at config load: the maintained list's card when
 * `from` names it (genai-prices.ts), with every field written beside `from` overriding the list's, and the
 * batch factor defaulted (SPEC: 50%). Also checks what the schema alone cannot: image prices against the
 * model's `imageSizes`, and long-context thresholds listed once each.
 */
import { didYouMean } from '../core/closest-name.ts';
import { DEFAULT_BATCH_FACTOR, type PriceCard } from '../core/price-card.ts';
import { ConfigError } from './config-error.ts';
import { genaiPricesVersion, listedCard } from './genai-prices.ts';
import { PRICE_LIST, type PricingConfig } from './pricing-schema.ts';

/** What the resolution reads of the model besides its pricing. */
export interface PricedModel {
  /** Position in `models`, for messages. */
  index: number;
  id: string;
  upstreamModel?: string | undefined;
  imageSizes?: readonly string[] | undefined;
}

/** The model's price card; `at` is the moment dated list prices are read at (the config's load). */
export function resolvePricing(pricing: PricingConfig, model: PricedModel, at: Date = new Date()): PriceCard {
  const { from, provider, model: listedModel, ...written } = pricing;
  const where = `models[${model.index}] ("${model.id}").pricing`;
  const card: PriceCard =
    from === undefined
      ? { inputPerMillion: 0, outputPerMillion: 0 }
      : fromList(provider, listedModel ?? model.upstreamModel ?? model.id, where, at);
  for (const [field, value] of Object.entries(written)) {
    if (value !== undefined) (card as unknown as Record<string, unknown>)[field] = value;
  }
  card.batchFactor ??= DEFAULT_BATCH_FACTOR;
  checkLongContext(card, where);
  checkImagePrices(card, model, where);
  return card;
}

function fromList(provider: string | undefined, model: string, where: string, at: Date): PriceCard {
  let listed: ReturnType<typeof listedCard>;
  try {
    listed = listedCard(provider, model, at);
  } catch (error) {
    throw new ConfigError(
      `${where}: ${PRICE_LIST} could not price model "${model}": ${(error as Error).message}. Write the prices yourself (inputPerMillion, outputPerMillion, ...) without from.`,
    );
  }
  const version = genaiPricesVersion();
  if (!listed.found) {
    const entry = provider === undefined ? `model "${model}"` : `model "${model}" of provider "${provider}"`;
    const hint =
      provider !== undefined && !listed.providerKnown
        ? ` It has no provider "${provider}" (ids are lower-case, e.g. openai, anthropic, google).`
        : didYouMean(model, listed.knownModels);
    throw new ConfigError(
      `${where}: ${PRICE_LIST} ${version} has no price for ${entry}.${hint} Check the name (npx genai-prices list${provider === undefined ? '' : ` ${provider}`}), ` +
        `update the list (npm update @pydantic/genai-prices), or write the prices yourself (inputPerMillion, outputPerMillion, ...) without from.`,
    );
  }
  return { ...listed.card, source: { list: PRICE_LIST, version, provider: listed.provider, model: listed.model } };
}

function checkLongContext(card: PriceCard, where: string): void {
  const seen = new Set<number>();
  card.longContext?.forEach((entry, index) => {
    if (seen.has(entry.aboveInputTokens)) {
      throw new ConfigError(
        `${where}.longContext[${index}]: aboveInputTokens ${entry.aboveInputTokens} is listed twice. Give each threshold one entry with all its prices.`,
      );
    }
    seen.add(entry.aboveInputTokens);
  });
}

/** Every size the model offers has a price, and every priced size is one it offers (a typo would price nothing). */
function checkImagePrices(card: PriceCard, model: PricedModel, where: string): void {
  const keys = Object.keys(card.perImage ?? {});
  if (keys.length === 0 || model.imageSizes === undefined) return;
  const pricedSizes = new Set(keys.map((key) => key.split('/')[0]!));
  for (const key of keys) {
    const size = key.split('/')[0]!;
    if (!model.imageSizes.includes(size)) {
      throw new ConfigError(
        `${where}.perImage["${key}"]: ${size} is not one of the model's imageSizes (${model.imageSizes.join(', ')}). Fix the size or add it to imageSizes.`,
      );
    }
  }
  for (const size of model.imageSizes) {
    if (!pricedSizes.has(size)) {
      throw new ConfigError(
        `${where}.perImage has no price for ${size}, which the model's imageSizes offer. Add "${size}": <USD per image> (and "${size}/<quality>" for qualities priced apart).`,
      );
    }
  }
}
