import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyUsage } from '../../../src/core/usage.ts';
import { priceUsage } from '../../../src/services/metering/price-usage.ts';

const usage = (inputTokens: number, outputTokens: number, cachedInputTokens = 0) => ({
  ...emptyUsage(),
  inputTokens,
  outputTokens,
  cachedInputTokens,
});

describe('priceUsage', () => {
  test('prices input and output per million tokens', () => {
    assert.equal(priceUsage(usage(1_000_000, 0), { inputPerMillion: 2.5, outputPerMillion: 10 }), 2.5);
    assert.equal(priceUsage(usage(1000, 500), { inputPerMillion: 2.5, outputPerMillion: 10 }), 0.0075);
  });

  test('batch requests cost 50%', () => {
    assert.equal(priceUsage(usage(1000, 500), { inputPerMillion: 2.5, outputPerMillion: 10 }, { batch: true }), 0.00375);
  });

  test('cached input uses the cached price when the model has one, else the input price', () => {
    assert.equal(priceUsage(usage(1000, 0, 400), { inputPerMillion: 2, outputPerMillion: 8 }), 0.002);
    assert.equal(priceUsage(usage(1000, 0, 400), { inputPerMillion: 2, outputPerMillion: 8, cachedInputPerMillion: 0.5 }), 0.0014);
  });

  test('free models and empty usage cost nothing; results carry no float noise', () => {
    assert.equal(priceUsage(usage(123, 456), { inputPerMillion: 0, outputPerMillion: 0 }), 0);
    assert.equal(priceUsage(emptyUsage(), { inputPerMillion: 3, outputPerMillion: 15 }), 0);
    assert.equal(priceUsage(usage(100_000, 200_000), { inputPerMillion: 1, outputPerMillion: 1 }), 0.3);
  });
});
