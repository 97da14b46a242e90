// models[].pricing: every field of the price card, the errors that name the field and the fix, and
// cards started from the maintained price list (@pydantic/genai-prices), read offline and priced as the
// list's own calculator prices them.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import { calcPrice } from '@pydantic/genai-prices';
import { ConfigError, loadConfig, type ConfigInput } from '../../src/config/index.ts';
import { answeredUsage } from '../../src/core/usage.ts';
import { costMicroUsd, type PriceCard } from '../../src/services/metering/price-card.ts';
import { TYPESCRIPT_LOADER } from '../support/typescript-loader.ts';

const PROVIDERS = { up: { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/v1' } } as const;

/** The resolved card of one configured model with this `pricing` (and these extra model fields). */
function cardOf(pricing: unknown, model: Record<string, unknown> = {}): PriceCard {
  const config = loadConfig({
    env: {},
    overrides: { providers: PROVIDERS, models: [{ id: 'm', provider: 'up', capabilities: ['chat'], ...model, pricing }] } as ConfigInput,
  });
  return config.models[0]!.pricing;
}

/** The ConfigError message of loading a model with this `pricing`. */
function errorOf(pricing: unknown, model: Record<string, unknown> = {}): string {
  try {
    cardOf(pricing, model);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail('the config loaded');
}

describe('models[].pricing', () => {
  test('every field of the card, as written; the batch factor defaults to the SPEC 50%', () => {
    const pricing = {
      inputPerMillion: 3,
      outputPerMillion: 15,
      cachedInputPerMillion: 0.3,
      cacheWrite5mPerMillion: 3.75,
      cacheWrite1hPerMillion: 6,
      reasoningPerMillion: 20,
      perRequest: 0.005,
      perImage: { '1024x1024': 0.04, '1024x1024/hd': 0.08 },
      longContext: [{ aboveInputTokens: 200_000, inputPerMillion: 6, outputPerMillion: 22.5 }],
    };
    assert.deepEqual(cardOf(pricing, { capabilities: ['chat', 'image_generation'], imageSizes: ['1024x1024'] }), {
      ...pricing,
      batchFactor: 0.5,
    });
    assert.equal(cardOf({ inputPerMillion: 1, outputPerMillion: 1, batchFactor: 0.25 }).batchFactor, 0.25);
    // No pricing: free, still with the batch factor shown.
    assert.deepEqual(cardOf(undefined), { inputPerMillion: 0, outputPerMillion: 0, batchFactor: 0.5 });
  });

  test('mistakes name the field and the fix', () => {
    assert.match(
      errorOf({ inputPerMillion: -1 }),
      /models\[0\]\.pricing\.inputPerMillion: a price cannot be negative: write USD per million tokens, 0 for free/,
    );
    assert.match(errorOf({ cacheWrite1hPerMillion: 'six' }), /pricing\.cacheWrite1hPerMillion: expected a number: USD per million tokens/);
    assert.match(
      errorOf({ inputPrice: 3 }),
      /models\[0\]\.pricing: unknown field "inputPrice"; pricing takes from, provider, model, inputPerMillion/,
    );
    assert.match(errorOf({ cachedInputPerMilion: 3 }), /unknown field "cachedInputPerMilion" \(did you mean "cachedInputPerMillion"\?\)/);
    assert.match(
      errorOf({ batchFactor: 1.5 }),
      /pricing\.batchFactor: the batch factor is the share of the price a batch line pays: from 0 to 1, e\.g\. 0\.5/,
    );
    assert.match(errorOf({ batchFactor: -0.5 }), /pricing\.batchFactor: .*from 0 to 1/);
    assert.match(
      errorOf({ inputPerMillion: 0.08333333 }),
      /pricing\.inputPerMillion: 0\.08333333 has more than 6 decimal places; .*write 0\.083333/,
    );
    assert.match(errorOf({ perRequest: -0.01 }), /pricing\.perRequest: a price cannot be negative: write USD/);
    assert.match(errorOf({ provider: 'openai' }), /pricing\.provider: provider names an entry of a price list: add from: "genai-prices"/);
    assert.match(errorOf({ from: 'litellm' }), /pricing\.from: the one price list is "genai-prices"/);
    assert.match(errorOf({ perImage: { large: 0.1 } }), /pricing\.perImage\.large: "large": image price keys are "WxH" or "WxH\/quality"/);
    assert.match(
      errorOf({ longContext: [{ aboveInputTokens: 0 }] }),
      /longContext\[0\]\.aboveInputTokens: expected a whole number of prompt tokens above 0/,
    );
    assert.match(
      errorOf({ longContext: [{ aboveInputTokens: 10, input: 1 }] }),
      /longContext\[0\]: unknown field "input"; a long-context entry takes aboveInputTokens/,
    );
    assert.match(
      errorOf({
        longContext: [
          { aboveInputTokens: 10, inputPerMillion: 1 },
          { aboveInputTokens: 10, outputPerMillion: 1 },
        ],
      }),
      /longContext\[1\]: aboveInputTokens 10 is listed twice/,
    );
  });

  test("image prices match the model's imageSizes both ways", () => {
    const image = { capabilities: ['image_generation'], imageSizes: ['1024x1024', '1792x1024'] };
    assert.match(
      errorOf({ perImage: { '1024x1024': 0.04 } }, image),
      /pricing\.perImage has no price for 1792x1024, which the model's imageSizes offer\. Add "1792x1024": <USD per image>/,
    );
    assert.match(
      errorOf({ perImage: { '1024x1024': 0.04, '1792x1024': 0.08, '512x512/hd': 0.02 } }, image),
      /pricing\.perImage\["512x512\/hd"\]: 512x512 is not one of the model's imageSizes/,
    );
    assert.deepEqual(cardOf({ perImage: { '1024x1024': 0.04, '1792x1024/hd': 0.12 } }, image).perImage, {
      '1024x1024': 0.04,
      '1792x1024/hd': 0.12,
    });
  });
});

describe('pricing from the maintained list (genai-prices)', () => {
  test('a card with cache reads, both cache writes and long-context prices, and where it came from', () => {
    const card = cardOf({ from: 'genai-prices', provider: 'anthropic', model: 'claude-sonnet-4-5' });
    assert.equal(card.source?.list, 'genai-prices');
    assert.equal(card.source?.provider, 'anthropic');
    assert.equal(card.source?.model, 'claude-sonnet-4-5');
    assert.match(card.source?.version ?? '', /^\d+\.\d+\.\d+/);
    // Anthropic's ratios: cache reads 0.1x input, 5-minute writes 1.25x, 1-hour writes 2x.
    const times = (factor: number) => Number((card.inputPerMillion * factor).toFixed(6));
    assert.equal(card.cachedInputPerMillion, times(0.1));
    assert.equal(card.cacheWrite5mPerMillion, times(1.25));
    assert.equal(card.cacheWrite1hPerMillion, times(2));
    assert.ok((card.longContext?.length ?? 0) >= 1, 'prompts above 200,000 tokens have prices of their own');
    assert.equal(card.batchFactor, 0.5);
  });

  test('fields beside `from` override the list; the model defaults to upstreamModel, then the id', () => {
    const listed = cardOf({ from: 'genai-prices', provider: 'openai', model: 'gpt-4.1' });
    const overridden = cardOf({ from: 'genai-prices', provider: 'openai', model: 'gpt-4.1', outputPerMillion: 7.5, batchFactor: 0.4 });
    assert.deepEqual(overridden, { ...listed, outputPerMillion: 7.5, batchFactor: 0.4 });
    assert.deepEqual(cardOf({ from: 'genai-prices', provider: 'openai' }, { id: 'gpt-4.1' }), listed);
    assert.deepEqual(cardOf({ from: 'genai-prices', provider: 'openai' }, { upstreamModel: 'gpt-4.1' }), listed);
  });

  test('a model the list lacks: the error names it, suggests the closest, and says how to update or write the prices', () => {
    const message = errorOf({ from: 'genai-prices', provider: 'anthropic', model: 'claude-sonet-4-5' });
    assert.match(
      message,
      /models\[0\] \("m"\)\.pricing: genai-prices \d+\.\d+\.\d+ has no price for model "claude-sonet-4-5" of provider "anthropic"\./,
    );
    assert.match(message, /Did you mean 'claude-sonnet-4-5'\?/);
    assert.match(message, /npm update @pydantic\/genai-prices/);
    assert.match(message, /write the prices yourself \(inputPerMillion, outputPerMillion, \.\.\.\) without from/);
    assert.match(errorOf({ from: 'genai-prices', provider: 'antropic', model: 'claude-sonnet-4-5' }), /It has no provider "antropic"/);
  });

  test("each card prices a usage exactly as the list's own calculator does (at the dearest hour of a time-of-day price)", () => {
    // 12:00 UTC today: DeepSeek's peak hours (00:30-16:30 UTC), the price its card holds.
    const noon = new Date(`${new Date().toISOString().slice(0, 10)}T12:00:00Z`);
    const usages = [
      { input: 10_000, read: 0, write: 0, write1h: 0, output: 500 },
      { input: 12_000, read: 8_000, write: 3_000, write1h: 1_000, output: 900 },
      { input: 250_000, read: 100_000, write: 50_000, write1h: 20_000, output: 4_000 }, // long context
    ];
    const models: Array<[string, string, boolean]> = [
      ['anthropic', 'claude-sonnet-4-5', true],
      ['anthropic', 'claude-opus-4-1', true],
      ['openai', 'gpt-4.1', false],
      ['openai', 'gpt-4o-mini', false],
      ['google', 'gemini-2.5-pro', false],
      ['deepseek', 'deepseek-chat', false],
    ];
    for (const [provider, model, writes] of models) {
      const card = cardOf({ from: 'genai-prices', provider, model });
      for (const figures of usages) {
        // A provider without cache writes reports none.
        const write = writes ? figures.write : 0;
        const write1h = writes ? figures.write1h : 0;
        const listed = calcPrice(
          {
            input_tokens: figures.input,
            cache_read_tokens: figures.read,
            cache_write_tokens: write,
            cache_write_1h_tokens: write1h,
            output_tokens: figures.output,
          },
          model,
          { providerId: provider, timestamp: noon },
        );
        const ours = costMicroUsd(
          answeredUsage({
            inputTokens: figures.input,
            cachedInputTokens: figures.read,
            cacheWriteInputTokens: write,
            cacheWrite1hInputTokens: write1h,
            outputTokens: figures.output,
          }),
          card,
          { batch: false },
        );
        // The list computes in floating point; ours is exact and rounded once: at most half a micro-USD apart.
        const theirs = listed!.total_price * 1_000_000;
        assert.ok(
          Math.abs(ours - theirs) <= 0.5 + 1e-6,
          `${provider}/${model} ${JSON.stringify(figures)}: ours ${ours}, the list ${theirs}`,
        );
      }
    }
  });

  test('the list is read offline: no fetch, socket or DNS lookup while the card is resolved', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [...TYPESCRIPT_LOADER, 'test/config/support/load-prices-offline.ts'], {
      env: { PATH: process.env['PATH'] },
    });
    const { card, attempts } = JSON.parse(stdout) as { card: PriceCard; attempts: string[] };
    assert.deepEqual(attempts, []);
    assert.ok(card.inputPerMillion > 0 && card.source?.list === 'genai-prices');
  });
});
