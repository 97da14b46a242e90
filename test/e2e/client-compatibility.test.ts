// Over HTTP: unlimited quotas never read as exhausted (key status and _metadata.user_total_usage), a
// compatible-mode response without max_output_tokens echoes null, and a configured model without
// `created` shows the same `created` after a restart.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { UNLIMITED_TOKENS } from '../../src/services/metering/usage-info.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const UNLIMITED_TIER = {
  requestsPerMinute: 0,
  tokensPerMinute: 0,
  tokensPerDay: 0,
  tokensPerMonth: 0,
  concurrentBatches: 1,
  permissions: ['models', 'chat.completions', 'messages', 'responses', 'embeddings'],
} as const;

async function getJson(server: TestServer, path: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, any> }> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${server.key}`,
      'content-type': 'application/json',
      ...(init.headers as Record<string, string> | undefined),
    },
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

describe('client compatibility over HTTP', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      config: {
        requestValidation: 'compatible',
        tiers: { Developer: { ...UNLIMITED_TIER } } as never,
        providers: { local: { kind: 'builtin' } },
        models: [{ id: 'configured-echo', provider: 'local', upstreamModel: 'echo', capabilities: ['chat', 'streaming'] }],
      },
    });
  });
  after(async () => {
    await server.close();
  });

  test('an unlimited tier reads 2^31-1 limit and remaining, with the real used count', async () => {
    const chat = await getJson(server, '/chat/completions', {
      method: 'POST',
      body: JSON.stringify({ model: 'switchyard-echo', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    assert.equal(chat.status, 200);
    const total = chat.body['_metadata'].user_total_usage;
    assert.deepEqual([total.limit, total.remaining], [UNLIMITED_TOKENS, UNLIMITED_TOKENS]);
    assert.ok(total.used > 0);
    const status = await getJson(server, '/auth/key');
    for (const window of [status.body['usage_info'].daily, status.body['usage_info'].monthly]) {
      assert.deepEqual([window.limit, window.remaining], [UNLIMITED_TOKENS, UNLIMITED_TOKENS]);
      assert.ok(Number.isInteger(window.used) && window.used > 0);
    }
  });

  test('compatible: a response without max_output_tokens is generated and echoes null', async () => {
    const created = await getJson(server, '/responses', {
      method: 'POST',
      body: JSON.stringify({ model: 'switchyard-echo', input: 'Hello', temperature: 1.5, reasoning: { effort: 'minimal' } }),
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body['max_output_tokens'], null);
    assert.equal(created.body['temperature'], 1.5);
    assert.equal(created.body['reasoning'].effort, 'minimal');
    assert.equal(created.body['output'].at(-1).content[0].text, 'Echo: Hello');
  });

  test('a configured model without created keeps its created across a restart', async () => {
    const before = await getJson(server, '/models/configured-echo');
    const again = await startTestServer({
      config: {
        providers: { local: { kind: 'builtin' } },
        models: [{ id: 'configured-echo', provider: 'local', upstreamModel: 'echo', capabilities: ['chat'] }],
      },
    });
    try {
      const response = await fetch(`${again.baseUrl}/models/configured-echo`, { headers: { authorization: `Bearer ${again.key}` } });
      assert.equal(((await response.json()) as { created: number }).created, before.body['created']);
    } finally {
      await again.close();
    }
  });
});
