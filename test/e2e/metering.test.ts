// Metering end to end: reservations settle to real usage (complete, abandoned, failed streams),
// token 429s, the ledger and `switchyard usage`, and token exactness with streaming requests.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { runCli } from '../support/run-cli.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const tier = (overrides: Record<string, number>) => ({
  requestsPerMinute: 0,
  tokensPerMinute: 0,
  tokensPerDay: 0,
  tokensPerMonth: 0,
  concurrentBatches: 1,
  permissions: ['models', 'chat.completions', 'messages', 'responses', 'embeddings'],
  ...overrides,
});

async function dailyUsed(server: TestServer, key: string): Promise<number> {
  const status: any = await (await fetch(`${server.baseUrl}/auth/key`, { headers: { authorization: `Bearer ${key}` } })).json();
  return status.usage_info.daily.used;
}

/** Settlement of an abandoned stream happens after the client left: poll (bounded) until it shows. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail('condition not reached');
}

describe('metering end to end', () => {
  const upstream = new MockOpenAIServer();
  let server: TestServer;

  before(async () => {
    await upstream.start();
    server = await startTestServer({
      config: {
        tiers: { Developer: tier({ tokensPerDay: 100_000 }), Tight: tier({ tokensPerMinute: 50 }) } as never,
        providers: { up: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, maxRetries: 0 } },
        models: [
          { id: 'priced', provider: 'up', capabilities: ['chat', 'streaming'], pricing: { inputPerMillion: 1000, outputPerMillion: 2000 } },
        ],
      },
    });
  });
  after(async () => {
    await server.close();
    await upstream.close();
  });

  test('a completed request is charged its real usage, not the reservation', async () => {
    const { key } = await server.createKey({ organization: 'org-real-usage' });
    const client = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'switchyard-echo',
      max_tokens: 500,
      messages: [{ role: 'user', content: 'count me' }],
    });
    const used = completion.usage!.total_tokens;
    assert.ok(used > 0 && used < 500);
    assert.equal(await dailyUsed(server, key), used);
    const raw = await client.chat.completions
      .create({ model: 'switchyard-echo', max_tokens: 500, messages: [{ role: 'user', content: 'again' }] })
      .withResponse();
    const metadata = (raw.data as any)._metadata;
    assert.equal(metadata.user_total_usage.used, used + raw.data.usage!.total_tokens);
    assert.equal(raw.response.headers.get('x-ratelimit-limit-tokens'), null); // no per-minute token limit on this tier
  });

  test('a streamed request is settled to its usage when the stream ends', async () => {
    const { key } = await server.createKey({ organization: 'org-stream-usage' });
    const client = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'switchyard-echo',
      max_tokens: 500,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'stream me please' }],
    });
    let total = 0;
    for await (const chunk of stream) if (chunk.usage) total = chunk.usage.total_tokens;
    assert.ok(total > 0);
    await eventually(async () => (await dailyUsed(server, key)) === total);
  });

  test('a stream abandoned by the client releases what it did not use', async () => {
    const { key } = await server.createKey({ organization: 'org-abandon' });
    upstream.enqueue({ type: 'reply', reply: { text: 'one two three four five six seven eight nine ten' }, delayMs: 100 });
    const controller = new AbortController();
    const response = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'priced', max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'long answer' }] }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    // Charged: the prompt plus what was produced before the client left, far below the 1000 reserved.
    await eventually(async () => {
      const used = await dailyUsed(server, key);
      return used > 0 && used < 200;
    });
    assert.equal(await upstream.requests.at(-1)!.outcome, 'closed-by-client');
  });

  test('an upstream failure before the answer releases the whole reservation', async () => {
    const { key } = await server.createKey({ organization: 'org-failure' });
    upstream.enqueue({ type: 'error', status: 500, message: 'upstream broke' });
    const client = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create({ model: 'priced', max_tokens: 1000, messages: [{ role: 'user', content: 'x' }] }),
      OpenAI.InternalServerError,
    );
    assert.equal(await dailyUsed(server, key), 0);
  });

  test('a reservation above the per-minute token limit is a 429 tpm_exceeded', async () => {
    const { key } = await server.createKey({ tier: 'Tight', organization: 'org-tight' });
    const response = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'switchyard-echo', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(response.status, 429);
    const body: any = await response.json();
    assert.equal(body.error.code, 'tpm_exceeded');
    assert.equal(body.error.details.limit, 50);
    assert.equal(response.headers.get('x-ratelimit-limit-tokens'), '50');
    assert.ok(response.headers.get('retry-after'));
    const small = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'switchyard-echo', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(small.status, 200);
  });

  test('a request that names no maximum is capped to the budget left instead of refused', async () => {
    const { key } = await server.createKey({ tier: 'Tight', organization: 'org-tight' });
    const client = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
    // The model's default output (8,192 tokens) is far above the 50-token minute budget; the prompt fits.
    const completion = await client.chat.completions.create({ model: 'switchyard-echo', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(completion.choices[0]!.message.content, 'Echo: hi');
    assert.ok(completion.usage!.total_tokens <= 50);
    // A maximum the client names is honoured as given: too big for what is left is a 429.
    await assert.rejects(
      client.chat.completions.create({ model: 'switchyard-echo', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }),
      OpenAI.RateLimitError,
    );
  });

  test('the ledger records each request with its cost, and `switchyard usage` reports it after shutdown', async () => {
    const { key } = await server.createKey({ organization: 'org-ledger' });
    const client = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
    upstream.enqueue({
      type: 'reply',
      reply: { text: 'priced answer', usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 } },
    });
    await client.chat.completions.create({ model: 'priced', messages: [{ role: 'user', content: 'bill me' }] });
    upstream.enqueue({
      type: 'reply',
      reply: { text: 'priced answer', usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 } },
    });
    const stream = await client.chat.completions.create({
      model: 'priced',
      stream: true,
      messages: [{ role: 'user', content: 'bill me' }],
    });
    for await (const _chunk of stream) void _chunk;
    await client.chat.completions.create({ model: 'switchyard-echo', messages: [{ role: 'user', content: 'free' }] });

    const dataDir = server.dataDir;
    await server.runtime.close(); // graceful: flushes the ledger
    const report = await runCli(['usage', '--org', 'org-ledger', '--json'], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    assert.equal(report.code, 0, report.stderr);
    const { models } = JSON.parse(report.stdout) as {
      models: Array<{ model: string; requests: number; inputTokens: number; outputTokens: number; costUsd: number }>;
    };
    const priced = models.find((row) => row.model === 'priced')!;
    assert.equal(priced.requests, 2);
    assert.equal(priced.inputTokens, 200);
    assert.equal(priced.outputTokens, 100);
    // 200 input tokens at $1000/M plus 100 output tokens at $2000/M.
    assert.ok(Math.abs(priced.costUsd - (200 * 1000 + 100 * 2000) / 1e6) < 1e-9);
    assert.equal(models.find((row) => row.model === 'switchyard-echo')!.requests, 1);
  });
});

describe('quotas across a restart of a single instance', () => {
  test('the in-process counters are restored from the ledger: a restart does not reset daily or monthly usage', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-restart-'));
    const first = await startTestServer({ config: { dataDir } });
    const { key } = await first.createKey({ organization: 'org-restart' });
    const client = new OpenAI({ apiKey: key, baseURL: first.baseUrl, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'switchyard-echo',
      messages: [{ role: 'user', content: 'remember me' }],
    });
    const used = completion.usage!.total_tokens;
    await first.close();

    const second = await startTestServer({ config: { dataDir } });
    try {
      const status: any = await (await fetch(`${second.baseUrl}/auth/key`, { headers: { authorization: `Bearer ${key}` } })).json();
      assert.equal(status.usage_info.daily.used, used);
      assert.equal(status.usage_info.monthly.used, used);
    } finally {
      await second.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
