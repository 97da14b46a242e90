// Golden pricing: recorded (and recorded-shape) upstream answers replayed by the mock upstreams over
// real HTTP, read by the real providers, normalised once (map-*-usage.ts), priced by costMicroUsd and
// recorded by createLedgerRecord. Each expected cost is worked out by hand beside it, to the micro-USD.
//
// A price in USD per million tokens is a price in micro-USD per token, so each line below is
// "tokens x price". The cards are written here (the prices genai-prices 0.1.8 lists for these models)
// so that a newer price list never changes what these tests check: the normalisation and the arithmetic.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { LanguageModel, ProviderInstance } from '../../../src/core/language-model.ts';
import type { Usage } from '../../../src/core/usage.ts';
import { createAnthropicProvider } from '../../../src/providers/anthropic/anthropic-provider.ts';
import { createOpenAICompatibleProvider } from '../../../src/providers/openai-compatible/openai-compatible-provider.ts';
import { costMicroUsd, type PriceCard } from '../../../src/services/metering/price-card.ts';
import { createLedgerRecord } from '../../../src/services/metering/usage-ledger.ts';
import {
  anthropicFixtureEvents,
  MockAnthropicServer,
  MockOpenAIServer,
  openAIFixtureEvents,
  readJsonFixture,
  type MockAnthropicReply,
  type MockBehaviour,
  type MockOpenAIReply,
} from '../../support/mock-upstreams/index.ts';
import { collect, finishOf, userRequest } from '../../providers/helpers.ts';

const GPT_4_1: PriceCard = { inputPerMillion: 2, cachedInputPerMillion: 0.5, outputPerMillion: 8 };
const O3: PriceCard = { inputPerMillion: 2, cachedInputPerMillion: 0.5, outputPerMillion: 8 };
const GROK_3_MINI: PriceCard = { inputPerMillion: 0.3, cachedInputPerMillion: 0.075, outputPerMillion: 0.5 };
const SELF_HOSTED: PriceCard = { inputPerMillion: 0.2, cachedInputPerMillion: 0.05, outputPerMillion: 0.6 };
const SONNET_4_5: PriceCard = {
  inputPerMillion: 3,
  cachedInputPerMillion: 0.3,
  cacheWrite5mPerMillion: 3.75,
  cacheWrite1hPerMillion: 6,
  outputPerMillion: 15,
};

const SYNC = { batch: false };

describe('golden pricing: recorded upstream answers, normalised once, priced to the micro-USD', () => {
  const openai = new MockOpenAIServer();
  const anthropic = new MockAnthropicServer();
  let openaiProvider: ProviderInstance;
  let anthropicProvider: ProviderInstance;
  let openaiModel: LanguageModel;
  let anthropicModel: LanguageModel;

  before(async () => {
    await Promise.all([openai.start(), anthropic.start()]);
    openaiProvider = createOpenAICompatibleProvider(
      {
        kind: 'openai-compatible',
        id: 'openai',
        baseUrl: openai.baseUrl,
        apiKeyValue: 'sk-test',
        timeoutMs: 10_000,
        maxRetries: 0,
        headers: {},
      },
      {},
    );
    anthropicProvider = createAnthropicProvider(
      {
        kind: 'anthropic',
        id: 'anthropic',
        baseUrl: anthropic.baseUrl,
        apiKeyValue: 'sk-ant-test',
        anthropicVersion: '2023-06-01',
        timeoutMs: 10_000,
        maxRetries: 0,
        headers: {},
      },
      {},
    );
    openaiModel = openaiProvider.languageModel!('upstream-model');
    anthropicModel = anthropicProvider.languageModel!('claude-upstream', { defaultMaxOutputTokens: 1000 });
  });
  after(async () => {
    await Promise.all([openaiProvider.close?.(), anthropicProvider.close?.()]);
    await Promise.all([openai.close(), anthropic.close()]);
  });
  beforeEach(() => {
    openai.reset();
    anthropic.reset();
  });

  /** The normalised usage of one answer the upstream gives as `behaviour`. */
  async function usageOf(model: LanguageModel): Promise<Usage> {
    return finishOf(await collect(model.stream(userRequest('price me'), { signal: new AbortController().signal }))).usage;
  }
  const openaiUsage = (behaviour: MockBehaviour<MockOpenAIReply>) => {
    openai.enqueue(behaviour);
    return usageOf(openaiModel);
  };
  const anthropicUsage = (behaviour: MockBehaviour<MockAnthropicReply>) => {
    anthropic.enqueue(behaviour);
    return usageOf(anthropicModel);
  };

  test('OpenAI chat, cached prompt (body and stream): cached tokens are inside prompt_tokens', async () => {
    for (const usage of [
      await openaiUsage({ type: 'json', body: readJsonFixture('openai-cached-prompt') }),
      await openaiUsage({ type: 'events', events: openAIFixtureEvents('openai-cached-prompt') }),
    ]) {
      assert.deepEqual(
        {
          input: usage.inputTokens,
          read: usage.cachedInputTokens,
          write: usage.cacheWriteInputTokens,
          output: usage.outputTokens,
          requests: usage.requests,
        },
        { input: 2006, read: 1920, write: 0, output: 300, requests: 1 },
      );
      // 86 uncached x 2 = 172; 1920 read x 0.5 = 960; 300 output x 8 = 2400. Total 3532.
      assert.equal(costMicroUsd(usage, GPT_4_1, SYNC), 3532);
    }
  });

  test('batch lines at the batch factor (SPEC 50%) and at a per-model override, in the ledger record', async () => {
    const usage = await openaiUsage({ type: 'json', body: readJsonFixture('openai-cached-prompt') });
    const record = (pricing: PriceCard, batch: boolean) =>
      createLedgerRecord({
        requestId: 'req_golden',
        organizationId: 'org-golden',
        keyId: 'key_golden',
        model: 'gpt-4.1',
        endpoint: '/v1/chat/completions',
        usage,
        pricing,
        batch,
        statusCode: 200,
        latencyMs: 1,
        createdAtMs: 0,
      });
    // 3532 synchronous; a batch line pays half: 1766.
    assert.equal(record(GPT_4_1, false).costMicroUsd, 3532);
    assert.equal(record(GPT_4_1, true).costMicroUsd, 1766);
    assert.equal(record(GPT_4_1, true).costUsd, 0.001766);
    // A model whose batch price is a quarter: 3532 x 0.25 = 883.
    assert.equal(record({ ...GPT_4_1, batchFactor: 0.25 }, true).costMicroUsd, 883);
    assert.equal(record({ ...GPT_4_1, batchFactor: 0.25 }, false).costMicroUsd, 3532);
  });

  test('an OpenAI reasoning model: reasoning inside completion_tokens, at the output price or its own', async () => {
    const usage = await openaiUsage({ type: 'json', body: readJsonFixture('openai-reasoning') });
    assert.deepEqual(
      { input: usage.inputTokens, output: usage.outputTokens, reasoning: usage.reasoningTokens },
      { input: 75, output: 1186, reasoning: 1024 },
    );
    // 75 x 2 = 150; 1186 output x 8 = 9488. Total 9638.
    assert.equal(costMicroUsd(usage, O3, SYNC), 9638);
    // Reasoning at 10: 150 + 162 visible x 8 = 1296 + 1024 x 10 = 10240. Total 11686.
    assert.equal(costMicroUsd(usage, { ...O3, reasoningPerMillion: 10 }, SYNC), 11686);
  });

  test('an OpenAI-compatible server reporting reasoning beside completion_tokens (xAI, recorded body and stream)', async () => {
    const body = await openaiUsage({ type: 'json', body: readJsonFixture('xai-tool-call') });
    // prompt 307 (244 cached), completion 26 + reasoning 255 (total_tokens 588 = 307 + 26 + 255).
    assert.deepEqual(
      { input: body.inputTokens, read: body.cachedInputTokens, output: body.outputTokens, reasoning: body.reasoningTokens },
      { input: 307, read: 244, output: 281, reasoning: 255 },
    );
    // 63 uncached x 0.3 = 18.9; 244 read x 0.075 = 18.3; 281 output x 0.5 = 140.5. Total 177.7 -> 178.
    assert.equal(costMicroUsd(body, GROK_3_MINI, SYNC), 178);
    const stream = await openaiUsage({ type: 'events', events: openAIFixtureEvents('xai-text') });
    // prompt 12 (11 cached), completion 2 + reasoning 340: 1 x 0.3 + 11 x 0.075 + 342 x 0.5 = 0.3 + 0.825 + 171 = 172.125 -> 172.
    assert.equal(costMicroUsd(stream, GROK_3_MINI, SYNC), 172);
  });

  test('an OpenAI-compatible server with no cache fields: every prompt token uncached; a per-request fee on top', async () => {
    const usage = await openaiUsage({ type: 'json', body: readJsonFixture('openai-compatible-no-cache') });
    assert.deepEqual(
      { input: usage.inputTokens, read: usage.cachedInputTokens, output: usage.outputTokens },
      { input: 17, read: 0, output: 100 },
    );
    // 17 x 0.2 = 3.4; 100 x 0.6 = 60. Total 63.4 -> 63 (the card's cache price never applies).
    assert.equal(costMicroUsd(usage, SELF_HOSTED, SYNC), 63);
    // A $0.005 fee per request: 17 x 1 + 100 x 1 + 5000 = 5117.
    assert.equal(costMicroUsd(usage, { inputPerMillion: 1, outputPerMillion: 1, perRequest: 0.005 }, SYNC), 5117);
  });

  test('Anthropic with a cache read and 5-minute and 1-hour writes (body and stream): input_tokens excludes them', async () => {
    for (const usage of [
      await anthropicUsage({ type: 'json', body: readJsonFixture('anthropic-cache-1h') }),
      await anthropicUsage({ type: 'events', events: anthropicFixtureEvents('anthropic-cache-1h') }),
    ]) {
      assert.deepEqual(
        {
          input: usage.inputTokens,
          read: usage.cachedInputTokens,
          write: usage.cacheWriteInputTokens,
          write1h: usage.cacheWrite1hInputTokens,
          output: usage.outputTokens,
        },
        { input: 14 + 2048 + 1200, read: 2048, write: 1200, write1h: 1000, output: 12 },
      );
      // 14 uncached x 3 = 42; 2048 read x 0.3 = 614.4; 200 5-minute writes x 3.75 = 750; 1000 1-hour writes x 6 = 6000;
      // 12 output x 15 = 180. Total 7586.4 -> 7586.
      assert.equal(costMicroUsd(usage, SONNET_4_5, SYNC), 7586);
    }
  });

  test('Anthropic with 5-minute writes only (no cache_creation split) and without any cache (recorded body)', async () => {
    const cached = await anthropicUsage({ type: 'events', events: anthropicFixtureEvents('anthropic-stop-sequence-cache') });
    // 14 x 3 = 42; 2048 read x 0.3 = 614.4; 1200 5-minute writes x 3.75 = 4500; 12 x 15 = 180. Total 5336.4 -> 5336.
    assert.equal(costMicroUsd(cached, SONNET_4_5, SYNC), 5336);
    const plain = await anthropicUsage({ type: 'json', body: readJsonFixture('anthropic-text') });
    // 12 x 3 = 36; 29 x 15 = 435. Total 471.
    assert.equal(costMicroUsd(plain, SONNET_4_5, SYNC), 471);
  });
});
