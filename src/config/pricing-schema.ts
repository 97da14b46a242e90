/**
 * `models[].pricing`: a model's price card as the operator writes it (README "Prices"), validated so that
 * every mistake names the field and the fix. Either the prices themselves, or `from: genai-prices` (a
 * maintained price list, resolve-pricing.ts) with any field written beside it overriding the list's.
 */
import { z } from 'zod';
import { closestName } from '../core/closest-name.ts';
import {
  BATCH_FACTOR_DECIMALS,
  PRICE_IMAGE_KEY_PATTERN,
  scaledDecimal,
  TOKEN_PRICE_DECIMALS,
  TOKEN_PRICE_FIELDS,
  USD_AMOUNT_DECIMALS,
} from '../core/price-card.ts';

/** The one price list `from` may name: the npm package `@pydantic/genai-prices` (README "Prices"). */
export const PRICE_LIST = 'genai-prices';

/** "has more than N decimal places" with the rounded value to write instead. */
function tooPrecise(decimals: number, what: string) {
  return {
    error: (issue: { input?: unknown }): string =>
      `${String(issue.input)} has more than ${decimals} decimal places; ${what} are exact to ${decimals}: write ${Number(Number(issue.input).toFixed(decimals))}`,
  };
}

/** A price in USD per million tokens: never negative, exact to six decimals. */
const usdPerMillion = z
  .number({ error: 'expected a number: USD per million tokens, e.g. 2.5' })
  .nonnegative({ error: 'a price cannot be negative: write USD per million tokens, 0 for free, e.g. 2.5', abort: true })
  .refine(
    (value) => scaledDecimal(value, TOKEN_PRICE_DECIMALS) !== undefined,
    tooPrecise(TOKEN_PRICE_DECIMALS, 'prices per million tokens'),
  );

/** A price in USD (per request, per image): never negative, exact to twelve decimals. */
const usdAmount = z
  .number({ error: 'expected a number: USD, e.g. 0.04' })
  .nonnegative({ error: 'a price cannot be negative: write USD, 0 for free, e.g. 0.04', abort: true })
  .refine((value) => scaledDecimal(value, USD_AMOUNT_DECIMALS) !== undefined, tooPrecise(USD_AMOUNT_DECIMALS, 'USD amounts'));

const BATCH_FACTOR_RANGE = 'the batch factor is the share of the price a batch line pays: from 0 to 1, e.g. 0.5 (SPEC: 50%)';
const IMAGE_KEY_FORMAT = 'image price keys are "WxH" or "WxH/quality" (lower case), e.g. "1024x1024" or "1024x1024/hd"';

const tokenPriceShape = {
  /** USD per million uncached prompt tokens. */
  inputPerMillion: usdPerMillion.optional(),
  /** USD per million completion tokens (reasoning too unless `reasoningPerMillion`). */
  outputPerMillion: usdPerMillion.optional(),
  /** USD per million prompt tokens read from a prompt cache; absent: the input price. */
  cachedInputPerMillion: usdPerMillion.optional(),
  /** USD per million prompt tokens written to a 5-minute cache; absent: the input price. */
  cacheWrite5mPerMillion: usdPerMillion.optional(),
  /** USD per million prompt tokens written to a 1-hour cache; absent: the 5-minute write price. */
  cacheWrite1hPerMillion: usdPerMillion.optional(),
  /** USD per million reasoning tokens; absent: the output price. */
  reasoningPerMillion: usdPerMillion.optional(),
};

/** `unknown field "x"` with the closest known field and the full list: the fix is in the message. */
function unknownFields(known: readonly string[], what: string) {
  return (issue: { code?: string; keys?: string[] }): string | undefined => {
    if (issue.code !== 'unrecognized_keys' || issue.keys === undefined) return undefined;
    const named = issue.keys.map((key) => {
      const closest = closestName(key, known);
      return closest === undefined ? `"${key}"` : `"${key}" (did you mean "${closest}"?)`;
    });
    return `unknown field ${named.join(', ')}; ${what} takes ${known.join(', ')}`;
  };
}

const LONG_CONTEXT_FIELDS = ['aboveInputTokens', ...TOKEN_PRICE_FIELDS] as const;

const longContextSchema = z.strictObject(
  {
    /** These prices apply to requests whose whole prompt is above this many tokens. */
    aboveInputTokens: z
      .number({ error: 'expected a whole number of prompt tokens, e.g. 200000' })
      .int('expected a whole number of prompt tokens, e.g. 200000')
      .positive('expected a whole number of prompt tokens above 0, e.g. 200000'),
    ...tokenPriceShape,
  },
  { error: unknownFields(LONG_CONTEXT_FIELDS, 'a long-context entry') },
);

export const PRICING_FIELDS = [
  'from',
  'provider',
  'model',
  ...TOKEN_PRICE_FIELDS,
  'perRequest',
  'perImage',
  'batchFactor',
  'longContext',
] as const;

export const pricingSchema = z
  .strictObject(
    {
      /** `genai-prices`: start from the maintained list's card for `provider` / `model`; fields beside it override. */
      from: z.literal(PRICE_LIST, { error: `the one price list is "${PRICE_LIST}" (the npm package @pydantic/genai-prices)` }).optional(),
      /** The list's provider id, e.g. `openai`, `anthropic`, `google` (absent: matched from the model name). */
      provider: z.string().min(1).optional(),
      /** The list's model id; absent: the model's `upstreamModel`, else its `id`. */
      model: z.string().min(1).optional(),
      ...tokenPriceShape,
      /** USD per backend call. */
      perRequest: usdAmount.optional(),
      /** USD per image by `WxH` or `WxH/quality`. */
      perImage: z
        .record(z.string().regex(PRICE_IMAGE_KEY_PATTERN, IMAGE_KEY_FORMAT), usdAmount, {
          error: (issue) => (issue.code === 'invalid_key' ? `"${String(issue.input)}": ${IMAGE_KEY_FORMAT}` : undefined),
        })
        .optional(),
      /** Share of the price batch lines pay, 0 to 1; default 0.5 (SPEC: batches cost 50%). */
      batchFactor: z
        .number({ error: 'expected a number from 0 to 1: the share of the price a batch line pays, e.g. 0.5' })
        .min(0, { error: BATCH_FACTOR_RANGE, abort: true })
        .max(1, { error: BATCH_FACTOR_RANGE, abort: true })
        .refine((value) => scaledDecimal(value, BATCH_FACTOR_DECIMALS) !== undefined, tooPrecise(BATCH_FACTOR_DECIMALS, 'batch factors'))
        .optional(),
      /** Prices for prompts above a size (long-context pricing). */
      longContext: z.array(longContextSchema).optional(),
    },
    { error: unknownFields(PRICING_FIELDS, 'pricing') },
  )
  .superRefine((pricing, context) => {
    if (pricing.from !== undefined) return;
    for (const field of ['provider', 'model'] as const) {
      if (pricing[field] !== undefined) {
        context.addIssue({
          code: 'custom',
          path: [field],
          message: `${field} names an entry of a price list: add from: "${PRICE_LIST}", or remove ${field} and write the prices`,
        });
      }
    }
  })
  .prefault({});

/** `models[].pricing` as parsed, before the price list is read (resolve-pricing.ts). */
export type PricingConfig = z.infer<typeof pricingSchema>;
