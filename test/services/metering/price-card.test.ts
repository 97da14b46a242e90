// costMicroUsd and worstCaseCostMicroUsd: each usage category at its price, the fallbacks of absent
// prices, images, per-request fees, batch factors, long-context prices, the one rounding (half up), and
// the property the budgets rely on: the worst case bounds every usage within it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { answeredUsage, emptyUsage, type Usage } from '../../../src/core/usage.ts';
import { costMicroUsd, MICRO_USD_PER_USD, worstCaseCostMicroUsd, type PriceCard } from '../../../src/services/metering/price-card.ts';
import { seededRandom } from '../../support/seeded-random.ts';

const SYNC = { batch: false };
const BATCH = { batch: true };

// A price in USD per million tokens is also a price in micro-USD per token: the arithmetic below
// multiplies token counts by the prices as written.
const SONNET: PriceCard = Object.freeze({
  inputPerMillion: 3,
  outputPerMillion: 15,
  cachedInputPerMillion: 0.3,
  cacheWrite5mPerMillion: 3.75,
  cacheWrite1hPerMillion: 6,
  batchFactor: 0.5,
  longContext: [
    {
      aboveInputTokens: 200_000,
      inputPerMillion: 6,
      outputPerMillion: 22.5,
      cachedInputPerMillion: 0.6,
      cacheWrite5mPerMillion: 7.5,
      cacheWrite1hPerMillion: 12,
    },
  ],
});

describe('costMicroUsd', () => {
  test('each category at its own price; a price per million tokens is micro-USD per token', () => {
    const usage = answeredUsage({
      inputTokens: 14 + 2048 + 1200,
      cachedInputTokens: 2048,
      cacheWriteInputTokens: 1200,
      cacheWrite1hInputTokens: 1000,
      outputTokens: 12,
    });
    // 14 uncached x 3 = 42; 2048 read x 0.3 = 614.4; 200 5-minute writes x 3.75 = 750; 1000 1-hour writes x 6 = 6000;
    // 12 output x 15 = 180. Total 7586.4 -> 7586.
    assert.equal(costMicroUsd(usage, SONNET, SYNC), 7586);
    assert.equal(MICRO_USD_PER_USD, 1_000_000);
  });

  test('absent prices fall back: cache reads and 5-minute writes at input, 1-hour writes at the 5-minute price, reasoning at output', () => {
    const usage = answeredUsage({
      inputTokens: 1000,
      cachedInputTokens: 400,
      cacheWriteInputTokens: 300,
      cacheWrite1hInputTokens: 100,
      outputTokens: 500,
      reasoningTokens: 200,
    });
    // Everything at input 2 / output 8: 1000 x 2 + 500 x 8 = 6000.
    assert.equal(costMicroUsd(usage, { inputPerMillion: 2, outputPerMillion: 8 }, SYNC), 6000);
    // 5-minute writes at 2.5, so 1-hour writes too: 300 x 0.5 more = 6150.
    assert.equal(costMicroUsd(usage, { inputPerMillion: 2, outputPerMillion: 8, cacheWrite5mPerMillion: 2.5 }, SYNC), 6150);
    // Reasoning at 10: 200 x 2 more = 6400.
    assert.equal(costMicroUsd(usage, { inputPerMillion: 2, outputPerMillion: 8, reasoningPerMillion: 10 }, SYNC), 6400);
  });

  test('rounded once, half up, after the batch factor', () => {
    assert.equal(costMicroUsd(answeredUsage({ inputTokens: 1 }), { inputPerMillion: 0.5, outputPerMillion: 0 }, SYNC), 1); // 0.5 -> 1
    assert.equal(costMicroUsd(answeredUsage({ inputTokens: 1 }), { inputPerMillion: 0.499999, outputPerMillion: 0 }, SYNC), 0);
    assert.equal(costMicroUsd(answeredUsage({ inputTokens: 3 }), { inputPerMillion: 0.5, outputPerMillion: 0 }, SYNC), 2); // 1.5 -> 2
    // 1 token at 0.6 in a batch: 0.3 -> 0. Rounding twice would give round(round(0.6) x 0.5) = round(0.5) = 1.
    assert.equal(costMicroUsd(answeredUsage({ inputTokens: 1 }), { inputPerMillion: 0.6, outputPerMillion: 0 }, BATCH), 0);
    // Decimals that are not exact in binary still add exactly: 1,000,001 x 0.1 + 1,000,001 x 0.2 = 300,000.3 -> 300,000.
    assert.equal(
      costMicroUsd(
        answeredUsage({ inputTokens: 1_000_001, outputTokens: 1_000_001 }),
        { inputPerMillion: 0.1, outputPerMillion: 0.2 },
        SYNC,
      ),
      300_000,
    );
  });

  test("batch lines pay the batch factor: 50% by default (SPEC), or the card's own", () => {
    const usage = answeredUsage({ inputTokens: 1000, outputTokens: 500 });
    // 1000 x 2.5 + 500 x 10 = 7500; batch 3750; at a factor of 0.4, 3000.
    assert.equal(costMicroUsd(usage, { inputPerMillion: 2.5, outputPerMillion: 10 }, SYNC), 7500);
    assert.equal(costMicroUsd(usage, { inputPerMillion: 2.5, outputPerMillion: 10 }, BATCH), 3750);
    assert.equal(costMicroUsd(usage, { inputPerMillion: 2.5, outputPerMillion: 10, batchFactor: 0.4 }, BATCH), 3000);
    assert.equal(costMicroUsd(usage, { inputPerMillion: 2.5, outputPerMillion: 10, batchFactor: 1 }, BATCH), 7500);
  });

  test('long-context prices apply to every token of a prompt above the threshold', () => {
    const at = (inputTokens: number) => costMicroUsd(answeredUsage({ inputTokens, outputTokens: 1000 }), SONNET, SYNC);
    assert.equal(at(200_000), 200_000 * 3 + 1000 * 15); // at the threshold: not above it
    assert.equal(at(200_001), 200_001 * 6 + 1000 * 22.5);
    // An entry that leaves a price out keeps the card's.
    const partial: PriceCard = { inputPerMillion: 1, outputPerMillion: 2, longContext: [{ aboveInputTokens: 10, inputPerMillion: 4 }] };
    assert.equal(costMicroUsd(answeredUsage({ inputTokens: 11, outputTokens: 10 }), partial, SYNC), 11 * 4 + 10 * 2);
  });

  test('per-request fee per backend call: none when nothing reached a backend', () => {
    const card: PriceCard = { inputPerMillion: 1, outputPerMillion: 1, perRequest: 0.005 };
    assert.equal(costMicroUsd(answeredUsage({ inputTokens: 100, outputTokens: 100 }), card, SYNC), 5000 + 200);
    assert.equal(costMicroUsd(emptyUsage(), card, SYNC), 0);
  });

  test('images by size and quality; an unlisted quality or size costs the dearest that can apply, never nothing', () => {
    const card: PriceCard = {
      inputPerMillion: 0,
      outputPerMillion: 0,
      perImage: { '1024x1024': 0.04, '1024x1024/hd': 0.08, '1792x1024': 0.08, '1792x1024/hd': 0.12 },
    };
    const images = (count: number, size?: string, quality?: string): Usage =>
      answeredUsage({ images: { count, ...(size === undefined ? {} : { size }), ...(quality === undefined ? {} : { quality }) } });
    assert.equal(costMicroUsd(images(1, '1024x1024'), card, SYNC), 40_000);
    assert.equal(costMicroUsd(images(2, '1792x1024', 'hd'), card, SYNC), 240_000);
    assert.equal(costMicroUsd(images(1, '1024x1024', 'ultra'), card, SYNC), 80_000); // dearest of the size
    assert.equal(costMicroUsd(images(1, '512x512'), card, SYNC), 120_000); // dearest of the card
    assert.equal(costMicroUsd(images(1), card, SYNC), 120_000);
    // Images and tokens add up (an image model may bill both).
    const both: PriceCard = { ...card, inputPerMillion: 5 };
    assert.equal(costMicroUsd({ ...images(1, '1024x1024'), inputTokens: 100 }, both, SYNC), 40_000 + 500);
  });

  test('figures a backend over-reports are held to their whole; nonsense counts as nothing', () => {
    const card: PriceCard = { inputPerMillion: 1, outputPerMillion: 10, cachedInputPerMillion: 0, reasoningPerMillion: 100 };
    // 900 cached of a 100-token prompt: the whole prompt is a cache read (0); 50 reasoning of 20 output: all 20.
    assert.equal(
      costMicroUsd(answeredUsage({ inputTokens: 100, cachedInputTokens: 900, outputTokens: 20, reasoningTokens: 50 }), card, SYNC),
      2000,
    );
    assert.equal(costMicroUsd(answeredUsage({ inputTokens: -5, outputTokens: Number.NaN }), card, SYNC), 0);
  });

  test('a frozen card is converted once; a card still changing is read as it is now', () => {
    const card: PriceCard = { inputPerMillion: 1, outputPerMillion: 1 };
    const usage = answeredUsage({ inputTokens: 10 });
    assert.equal(costMicroUsd(usage, card, SYNC), 10);
    card.inputPerMillion = 2;
    assert.equal(costMicroUsd(usage, card, SYNC), 20);
  });
});

describe('worstCaseCostMicroUsd', () => {
  test('the prompt at its dearest input price (a 1-hour write), the output cap at the dearest output price, the fee, the images', () => {
    // 1000 x 6 (1-hour write) + 500 x 15 = 13,500.
    assert.equal(worstCaseCostMicroUsd({ promptTokens: 1000, maxOutputTokens: 500 }, SONNET, SYNC), 13_500);
    assert.equal(worstCaseCostMicroUsd({ promptTokens: 1000, maxOutputTokens: 500 }, SONNET, BATCH), 6750);
    // Above the long-context threshold: 300,000 x 12 + 500 x 22.5 = 3,611,250.
    assert.equal(worstCaseCostMicroUsd({ promptTokens: 300_000, maxOutputTokens: 500 }, SONNET, SYNC), 3_611_250);
    const card: PriceCard = {
      inputPerMillion: 1,
      outputPerMillion: 2,
      reasoningPerMillion: 3,
      perRequest: 0.001,
      perImage: { '1024x1024': 0.04, '1024x1024/hd': 0.08 },
    };
    // 10 x 1 + 10 x 3 + 1000 + 2 images: 80,000 each when the quality is not named, 40,000 at the standard key.
    assert.equal(
      worstCaseCostMicroUsd({ promptTokens: 10, maxOutputTokens: 10, images: { count: 2, size: '1024x1024' } }, card, SYNC),
      40 + 1000 + 160_000,
    );
    assert.equal(
      worstCaseCostMicroUsd({ promptTokens: 10, maxOutputTokens: 10, images: { count: 2, size: '1024x1024', quality: 'hd' } }, card, SYNC),
      40 + 1000 + 160_000,
    );
  });

  test('property: never below the cost of any usage within the bound (random cards and usages, cache writes above input included)', () => {
    // Seeded: the same rounds on every run, so a failure reproduces.
    const random = seededRandom(0x5eed_37);
    let tight = 0;
    for (let round = 0; round < 5000; round++) {
      const card = randomCard(random);
      const batch = random() < 0.3;
      const bound = {
        promptTokens: randomInt(random, 0, 300_000),
        maxOutputTokens: randomInt(random, 0, 64_000),
        ...(random() < 0.3 ? { images: randomImages(random) } : {}),
      };
      const worst = worstCaseCostMicroUsd(bound, card, { batch });
      assert.ok(Number.isSafeInteger(worst) && worst >= 0);
      for (let sample = 0; sample < 8; sample++) {
        const usage = randomUsageWithin(random, bound);
        const cost = costMicroUsd(usage, card, { batch });
        assert.ok(cost <= worst, `round ${round}: cost ${cost} > worst case ${worst}\n${JSON.stringify({ card, bound, usage, batch })}`);
      }
      // The bound is reached: the whole prompt as the dearest input category, every output token as the dearest output one.
      if (costMicroUsd(extremeUsage(card, bound), card, { batch }) === worst) tight++;
    }
    // Not a bound so loose it proves nothing: it is the exact cost of some usage in most rounds.
    assert.ok(tight > 4000, `the worst case was reached in only ${tight} of 5000 rounds`);
  });
});

function randomInt(random: () => number, low: number, high: number): number {
  return low + Math.floor(random() * (high - low + 1));
}

/** A price with up to 6 decimals (what the config accepts), 0 to 100 USD per million. */
function randomPrice(random: () => number): number {
  return randomInt(random, 0, 100_000_000) / 1_000_000;
}

const SIZES = ['256x256', '1024x1024', '1792x1024'];
const QUALITIES = ['standard', 'hd', 'low'];

function randomCard(random: () => number): PriceCard {
  const card: PriceCard = { inputPerMillion: randomPrice(random), outputPerMillion: randomPrice(random) };
  if (random() < 0.6) card.cachedInputPerMillion = randomPrice(random);
  // Anthropic's shape: writes dearer than input (1.25x and 2x), or anything else.
  if (random() < 0.6) card.cacheWrite5mPerMillion = random() < 0.5 ? card.inputPerMillion * 1.25 : randomPrice(random);
  if (random() < 0.6) card.cacheWrite1hPerMillion = random() < 0.5 ? card.inputPerMillion * 2 : randomPrice(random);
  if (random() < 0.4) card.reasoningPerMillion = randomPrice(random);
  if (random() < 0.3) card.perRequest = randomInt(random, 0, 100_000) / 1_000_000;
  if (random() < 0.4) {
    card.perImage = {};
    for (const size of SIZES)
      if (random() < 0.7)
        card.perImage[random() < 0.5 ? size : `${size}/${QUALITIES[randomInt(random, 0, 2)]}`] = randomInt(random, 0, 200_000) / 1_000_000;
  }
  if (random() < 0.5) card.batchFactor = randomInt(random, 0, 1_000_000) / 1_000_000;
  if (random() < 0.3) {
    card.longContext = [
      {
        aboveInputTokens: randomInt(random, 1, 250_000),
        inputPerMillion: randomPrice(random),
        ...(random() < 0.5 ? { outputPerMillion: randomPrice(random) } : {}),
        ...(random() < 0.5 ? { cacheWrite1hPerMillion: randomPrice(random) } : {}),
      },
    ];
  }
  // Round the 1.25x and 2x products to the card's precision, as the config requires.
  for (const field of ['cacheWrite5mPerMillion', 'cacheWrite1hPerMillion'] as const) {
    const value = card[field];
    if (value !== undefined) card[field] = Math.round(value * 1_000_000) / 1_000_000;
  }
  return random() < 0.5 ? Object.freeze(card) : card;
}

function randomImages(random: () => number): { count: number; size?: string; quality?: string } {
  return {
    count: randomInt(random, 0, 10),
    ...(random() < 0.7 ? { size: SIZES[randomInt(random, 0, 2)]! } : {}),
    ...(random() < 0.5 ? { quality: QUALITIES[randomInt(random, 0, 2)]! } : {}),
  };
}

/** Any usage of one backend call within the bound: the prompt split at random into uncached, read and written (5 minutes, 1 hour). */
function randomUsageWithin(
  random: () => number,
  bound: { promptTokens: number; maxOutputTokens: number; images?: { count: number; size?: string; quality?: string } },
): Usage {
  const inputTokens = randomInt(random, 0, bound.promptTokens);
  const cachedInputTokens = randomInt(random, 0, inputTokens);
  const cacheWriteInputTokens = randomInt(random, 0, inputTokens - cachedInputTokens);
  const outputTokens = randomInt(random, 0, bound.maxOutputTokens);
  const usage = answeredUsage({
    inputTokens,
    cachedInputTokens,
    cacheWriteInputTokens,
    cacheWrite1hInputTokens: randomInt(random, 0, cacheWriteInputTokens),
    outputTokens,
    reasoningTokens: randomInt(random, 0, outputTokens),
    requests: randomInt(random, 0, 1),
  });
  if (bound.images !== undefined) {
    const size = bound.images.size ?? (random() < 0.8 ? SIZES[randomInt(random, 0, 2)] : undefined);
    const quality = bound.images.quality ?? (random() < 0.5 ? QUALITIES[randomInt(random, 0, 2)] : undefined);
    usage.images = {
      count: randomInt(random, 0, bound.images.count),
      ...(size === undefined ? {} : { size }),
      ...(quality === undefined ? {} : { quality }),
    };
  }
  return usage;
}

/** The usage that costs the most within the bound when the card's dearest input and output categories are known. */
function extremeUsage(
  card: PriceCard,
  bound: { promptTokens: number; maxOutputTokens: number; images?: { count: number; size?: string; quality?: string } },
): Usage {
  const input = bound.promptTokens;
  const rates =
    card.longContext?.[0] !== undefined && input > card.longContext[0].aboveInputTokens ? { ...card, ...card.longContext[0] } : card;
  const write5m = rates.cacheWrite5mPerMillion ?? rates.inputPerMillion;
  const inputPrices = {
    uncached: rates.inputPerMillion,
    read: rates.cachedInputPerMillion ?? rates.inputPerMillion,
    write5m,
    write1h: rates.cacheWrite1hPerMillion ?? write5m,
  };
  const dearest = Object.entries(inputPrices).sort((left, right) => right[1] - left[1])[0]![0];
  const output = bound.maxOutputTokens;
  const reasoning = (rates.reasoningPerMillion ?? rates.outputPerMillion) > rates.outputPerMillion ? output : 0;
  return answeredUsage({
    inputTokens: input,
    cachedInputTokens: dearest === 'read' ? input : 0,
    cacheWriteInputTokens: dearest === 'write5m' || dearest === 'write1h' ? input : 0,
    cacheWrite1hInputTokens: dearest === 'write1h' ? input : 0,
    outputTokens: output,
    reasoningTokens: reasoning,
    // Without images in the bound the tightness check needs none; with them it is counted as not tight when it differs.
    ...(bound.images === undefined
      ? {}
      : {
          images: {
            count: bound.images.count,
            ...(bound.images.size === undefined ? {} : { size: bound.images.size }),
            ...(bound.images.quality === undefined ? {} : { quality: bound.images.quality }),
          },
        }),
  });
}
