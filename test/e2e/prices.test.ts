// Prices end to end: a real server over OpenAI-compatible and Anthropic mock upstreams replaying
// recorded-shape answers, the official SDKs, and the usage ledger. Cached tokens are reported in each
// client's wire as that wire counts them (OpenAI: inside the prompt; Anthropic: beside it), whichever
// upstream answered; each request is recorded at its hand-computed cost (micro-USD per token = USD per
// million tokens); images are priced by size and quality; batch lines at the card's batch factor;
// `/v1/models` shows every resolved card.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { encodePngRgb } from '../../src/providers/builtin/image/image-png-encoder.ts';
import type { PriceCardView } from '../../src/services/metering/price-card-view.ts';
import { startBatchTestServer, type BatchTestServer } from '../batches/support/batch-test-server.ts';
import {
  anthropicFixtureEvents,
  MockAnthropicServer,
  MockOpenAIServer,
  openAIFixtureEvents,
  readJsonFixture,
} from '../support/mock-upstreams/index.ts';
import { until } from '../support/until.ts';

const GPT = 'gpt-cached';
const GPT_QUARTER_BATCH = 'gpt-quarter-batch';
const CLAUDE = 'claude-cached';
const LISTED = 'claude-listed';
const DALLE = 'dall-e-priced';

const GPT_PRICES = { inputPerMillion: 2, cachedInputPerMillion: 0.5, outputPerMillion: 8 };
const CLAUDE_PRICES = {
  inputPerMillion: 3,
  cachedInputPerMillion: 0.3,
  cacheWrite5mPerMillion: 3.75,
  cacheWrite1hPerMillion: 6,
  outputPerMillion: 15,
};

// openai-cached-prompt: prompt 2006 (1920 cached), completion 300.
// 86 x 2 = 172; 1920 x 0.5 = 960; 300 x 8 = 2400. Total 3532 micro-USD.
const OPENAI_CACHED_COST = 3532;
// anthropic-cache-1h: input_tokens 14, 2048 read, 1200 written (200 for 5 minutes, 1000 for 1 hour), output 12.
// 14 x 3 = 42; 2048 x 0.3 = 614.4; 200 x 3.75 = 750; 1000 x 6 = 6000; 12 x 15 = 180. Total 7586.4 -> 7586.
const ANTHROPIC_CACHED_COST = 7586;

describe('prices end to end', () => {
  const openaiUpstream = new MockOpenAIServer();
  const anthropicUpstream = new MockAnthropicServer();
  let server: BatchTestServer;
  let organizationSequence = 0;

  before(async () => {
    await Promise.all([openaiUpstream.start(), anthropicUpstream.start()]);
    server = await startBatchTestServer({
      config: {
        providers: {
          openai: { kind: 'openai-compatible', baseUrl: openaiUpstream.baseUrl, maxRetries: 0 },
          anthropic: { kind: 'anthropic', baseUrl: anthropicUpstream.baseUrl, maxRetries: 0 },
        },
        models: [
          { id: GPT, provider: 'openai', capabilities: ['chat', 'streaming'], pricing: GPT_PRICES },
          { id: GPT_QUARTER_BATCH, provider: 'openai', capabilities: ['chat'], pricing: { ...GPT_PRICES, batchFactor: 0.25 } },
          { id: CLAUDE, provider: 'anthropic', capabilities: ['chat', 'streaming'], pricing: CLAUDE_PRICES },
          {
            id: LISTED,
            provider: 'anthropic',
            capabilities: ['chat'],
            pricing: { from: 'genai-prices', provider: 'anthropic', model: 'claude-sonnet-4-5', outputPerMillion: 14 },
          },
          {
            id: DALLE,
            provider: 'openai',
            upstreamModel: 'dall-e-3',
            capabilities: ['image_generation'],
            imageSizes: ['1024x1024', '1792x1024'],
            pricing: { perImage: { '1024x1024': 0.04, '1024x1024/hd': 0.08, '1792x1024': 0.08, '1792x1024/hd': 0.12 } },
          },
        ],
      },
    });
  });
  after(async () => {
    await server?.close();
    await Promise.all([openaiUpstream.close(), anthropicUpstream.close()]);
  });
  beforeEach(() => {
    openaiUpstream.reset();
    anthropicUpstream.reset();
  });

  /** A key in an organization of its own, so that the test reads only its own ledger rows. */
  async function freshKey(): Promise<{ key: string; organization: string }> {
    const organization = `org-prices-${++organizationSequence}`;
    return { key: (await server.createKey({ organization })).key, organization };
  }

  /** The organization's ledger rows once `count` are written: cost back in micro-USD (the `cost_usd` column holds costMicroUsd / 1e6). */
  function ledgerOf(organization: string, count: number) {
    return until(async () => {
      const rows = await server.runtime.database.db
        .selectFrom('usage_ledger')
        .select(['model', 'endpoint', 'batch', 'cost_usd', 'input_tokens', 'cached_tokens'])
        .where('organization_id', '=', organization)
        .orderBy('id')
        .execute();
      if (rows.length < count) return undefined;
      return rows.map((row) => ({ ...row, costMicroUsd: Math.round(Number(row.cost_usd) * 1_000_000) }));
    }, `${count} ledger rows of ${organization}`);
  }

  test('/v1/messages from an OpenAI upstream: cached tokens come out of input_tokens into cache_read_input_tokens', async () => {
    const { key, organization } = await freshKey();
    const anthropic = new Anthropic({ apiKey: key, baseURL: server.origin, maxRetries: 0 });
    openaiUpstream.enqueue({ type: 'json', body: readJsonFixture('openai-cached-prompt') });
    const message = await anthropic.messages.create({ model: GPT, max_tokens: 400, messages: [{ role: 'user', content: 'refunds?' }] });
    assert.deepEqual(message.usage, {
      input_tokens: 86,
      output_tokens: 300,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 1920,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    });
    openaiUpstream.enqueue({ type: 'events', events: openAIFixtureEvents('openai-cached-prompt') });
    const streamed = await anthropic.messages
      .stream({ model: GPT, max_tokens: 400, messages: [{ role: 'user', content: 'refunds?' }] })
      .finalMessage();
    assert.equal(streamed.usage.input_tokens, 86);
    assert.equal(streamed.usage.cache_read_input_tokens, 1920);
    assert.equal(streamed.usage.cache_creation_input_tokens, 0);
    assert.deepEqual(
      (await ledgerOf(organization, 2)).map((row) => [row.input_tokens, row.cached_tokens, row.costMicroUsd]),
      [
        [2006, 1920, OPENAI_CACHED_COST],
        [2006, 1920, OPENAI_CACHED_COST],
      ],
    );
  });

  test('/v1/messages from an Anthropic upstream: the cache writes keep their split by lifetime', async () => {
    const { key, organization } = await freshKey();
    const anthropic = new Anthropic({ apiKey: key, baseURL: server.origin, maxRetries: 0 });
    anthropicUpstream.enqueue({ type: 'json', body: readJsonFixture('anthropic-cache-1h') });
    const message = await anthropic.messages.create({ model: CLAUDE, max_tokens: 400, messages: [{ role: 'user', content: 'refunds?' }] });
    assert.deepEqual(message.usage, {
      input_tokens: 14,
      output_tokens: 12,
      cache_creation_input_tokens: 1200,
      cache_read_input_tokens: 2048,
      cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 1000 },
    });
    assert.equal((await ledgerOf(organization, 1))[0]!.costMicroUsd, ANTHROPIC_CACHED_COST);
  });

  test('/v1/chat/completions from an Anthropic upstream: the whole prompt in prompt_tokens, reads in cached_tokens (JSON and stream)', async () => {
    const { key, organization } = await freshKey();
    const openai = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
    anthropicUpstream.enqueue({ type: 'json', body: readJsonFixture('anthropic-cache-1h') });
    const completion = await openai.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'refunds?' }] });
    assert.equal(completion.usage?.prompt_tokens, 14 + 2048 + 1200);
    assert.equal(completion.usage?.prompt_tokens_details?.cached_tokens, 2048);
    assert.equal(completion.usage?.completion_tokens, 12);
    anthropicUpstream.enqueue({ type: 'events', events: anthropicFixtureEvents('anthropic-cache-1h') });
    const stream = await openai.chat.completions.create({
      model: CLAUDE,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'refunds?' }],
    });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    assert.equal(usage?.prompt_tokens, 3262);
    assert.equal(usage?.prompt_tokens_details?.cached_tokens, 2048);
    assert.deepEqual(
      (await ledgerOf(organization, 2)).map((row) => row.costMicroUsd),
      [ANTHROPIC_CACHED_COST, ANTHROPIC_CACHED_COST],
    );
  });

  test('/v1/responses from an OpenAI upstream: cached tokens inside input_tokens', async () => {
    const { key, organization } = await freshKey();
    const openai = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
    openaiUpstream.enqueue({ type: 'json', body: readJsonFixture('openai-cached-prompt') });
    const response = await openai.responses.create({ model: GPT, input: 'refunds?', max_output_tokens: 400 });
    assert.equal(response.usage?.input_tokens, 2006);
    assert.equal(response.usage?.input_tokens_details.cached_tokens, 1920);
    assert.equal(response.usage?.output_tokens, 300);
    assert.equal((await ledgerOf(organization, 1))[0]!.costMicroUsd, OPENAI_CACHED_COST);
  });

  test('images by size and quality: the quality goes upstream and prices the images', async () => {
    const { key, organization } = await freshKey();
    const openai = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
    const png = encodePngRgb(2, 2, new Uint8Array(12).fill(90)).toString('base64');
    openaiUpstream.enqueue({ type: 'json', body: { created: 1, data: [{ b64_json: png }, { b64_json: png }] } });
    await openai.images.generate({
      model: DALLE,
      prompt: 'a lighthouse',
      n: 2,
      size: '1792x1024',
      quality: 'hd',
      response_format: 'b64_json',
    });
    assert.equal((openaiUpstream.requests[0]!.body as { quality?: string }).quality, 'hd');
    openaiUpstream.enqueue({ type: 'json', body: { created: 1, data: [{ b64_json: png }] } });
    await openai.images.generate({ model: DALLE, prompt: 'a lighthouse', size: '1024x1024', response_format: 'b64_json' });
    // 2 x $0.12 (1792x1024/hd) = 240,000 micro-USD; 1 x $0.04 (1024x1024 at the default quality) = 40,000.
    assert.deepEqual(
      (await ledgerOf(organization, 2)).map((row) => row.costMicroUsd),
      [240_000, 40_000],
    );
  });

  test("batch lines at the batch factor: the SPEC 50%, or the model's own", async () => {
    const { key, organization } = await freshKey();
    const openai = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
    openaiUpstream.enqueue(
      { type: 'json', body: readJsonFixture('openai-cached-prompt') },
      { type: 'json', body: readJsonFixture('openai-cached-prompt') },
    );
    const lines = [GPT, GPT_QUARTER_BATCH].map((model) =>
      JSON.stringify({
        custom_id: model,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model, max_tokens: 400, messages: [{ role: 'user', content: 'refunds?' }] },
      }),
    );
    const file = await openai.files.create({ file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'lines.jsonl'), purpose: 'batch' });
    const batch = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await until(async () => ((await openai.batches.retrieve(batch.id)).status === 'completed' ? true : undefined), 'the batch to complete');
    const rows = await ledgerOf(organization, 2);
    const costOf = (model: string) => rows.find((row) => row.model === model && row.batch === 1)?.costMicroUsd;
    // 3532 x 0.5 = 1766; 3532 x 0.25 = 883.
    assert.equal(costOf(GPT), 1766);
    assert.equal(costOf(GPT_QUARTER_BATCH), 883);
  });

  test('/v1/models shows each resolved card: prices as they apply, the batch factor, and the list it came from', async () => {
    const openai = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
    const pricingOf = async (id: string) => ((await openai.models.retrieve(id)) as unknown as { pricing: PriceCardView }).pricing;
    assert.deepEqual(await pricingOf(GPT), {
      input_per_million: 2,
      output_per_million: 8,
      cached_input_per_million: 0.5,
      cache_write_5m_per_million: 2, // no write price: the input price
      cache_write_1h_per_million: 2,
      reasoning_per_million: 8,
      per_request: 0,
      per_image: {},
      batch_factor: 0.5,
      long_context: [],
      source: null,
    });
    const listed = await pricingOf(LISTED);
    assert.equal(listed.output_per_million, 14); // the override
    assert.equal(listed.cache_write_1h_per_million, 2 * listed.input_per_million);
    assert.equal(listed.source?.list, 'genai-prices');
    assert.equal(listed.source?.model, 'claude-sonnet-4-5');
    assert.ok(listed.long_context.length >= 1);
    const all = await openai.models.list();
    for (const model of all.data) assert.ok('pricing' in model, `${model.id} has its card`);
    assert.deepEqual((await pricingOf(DALLE)).per_image, {
      '1024x1024': 0.04,
      '1024x1024/hd': 0.08,
      '1792x1024': 0.08,
      '1792x1024/hd': 0.12,
    });
  });
});
