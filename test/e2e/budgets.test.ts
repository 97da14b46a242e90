// Money budgets end to end on one instance (in-process store): the worst case is reserved before the
// call and the real cost settled after it, a request that would pass the budget is the SPEC 429
// `budget_exceeded` (scope, period, integer micro-USD, the reset in the message), spend appears in
// /v1/auth/key and `_metadata`, a key budget above the organization's is refused, a month budget spent
// on the last day admits again at 00:00:00.5 of the next month (the clock moves, not the calendar),
// and 100 keys of a Free organization together stay within its per-minute limit.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomHex } from '../../src/core/ids.ts';
import { MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/** 1 USD per million input tokens (1 micro-USD each), 2 per million output tokens. */
const PRICES = { inputPerMillion: 1, outputPerMillion: 2 };
/** Long enough that the counted prompt is above the 10 prompt tokens the mock reports. */
const PROMPT = 'Please summarise the following sentence in a few words: budgets are promises, not estimates, in this gateway.';

describe('money budgets over HTTP (in-process store)', () => {
  const upstream = new MockOpenAIServer();
  let server: TestServer;
  let nowMs = Date.now();
  const clock = { now: () => nowMs };

  before(async () => {
    await upstream.start();
    server = await startTestServer({
      clock,
      config: {
        // The Free plan's cap of 10 active keys is lifted here: the organization-wide minute limit is
        // tested with 100 keys (the cap has its own tests, test/e2e/key-cap.test.ts).
        tiers: { Free: { maxActiveKeys: 0 } },
        providers: { up: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, maxRetries: 0 } },
        models: [{ id: 'priced', provider: 'up', capabilities: ['chat', 'streaming'], maxOutputTokens: 4096, pricing: PRICES }],
      } as never,
    });
  });
  after(async () => {
    await server.close();
    await upstream.close();
  });

  async function chat(key: string, maxTokens: number, stream = false): Promise<{ status: number; body: any }> {
    const response = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'priced', max_tokens: maxTokens, stream, messages: [{ role: 'user', content: PROMPT }] }),
    });
    const text = await response.text();
    return { status: response.status, body: stream && response.status === 200 ? text : JSON.parse(text) };
  }

  /** The upstream answers each of the next `count` requests with this usage (after `delayMs`). */
  function enqueueUsage(count: number, usage: { prompt_tokens: number; completion_tokens: number }, delayMs = 0): void {
    upstream.reset();
    for (let index = 0; index < count; index++) upstream.enqueue({ type: 'reply', reply: { text: 'ok', usage }, delayMs });
  }

  test('concurrent requests: the worst case is reserved, those that would pass the budget get budget_exceeded', async () => {
    const organization = `org-budget-${randomHex(6)}`;
    const { key } = await server.createKey({ organization });
    // Worst case of one request: the counted prompt (~25 tokens) x 1 + 100 output x 2 = ~225 micro-USD:
    // four fit in 1,000, five do not. The upstream holds each answer 5 s, so all ten are in flight at once.
    await server.runtime.budgets.setOrganizationBudget(organization, { period: 'month', amountMicroUsd: 1_000 }, 'test');
    enqueueUsage(10, { prompt_tokens: 10, completion_tokens: 100 }, 5_000);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, index) => chat(key, 100, index % 2 === 1)));
    const statuses = answers.map((answer) => answer.status);
    assert.equal(statuses.filter((status) => status === 200).length, 4, statuses.join(','));
    assert.equal(statuses.filter((status) => status === 429).length, 6, statuses.join(','));
    assert.equal(upstream.requests.length, 4, 'a refused request never reaches the upstream');
    const refusal = answers.find((answer) => answer.status === 429)!.body;
    assert.equal(refusal.error.type, 'rate_limit_exceeded');
    assert.equal(refusal.error.code, 'budget_exceeded');
    assert.equal(refusal.error.details.scope, 'organization');
    assert.equal(refusal.error.details.period, 'month');
    assert.equal(refusal.error.details.limit, 1_000);
    assert.ok(Number.isInteger(refusal.error.details.remaining) && refusal.error.details.remaining < 250);
    const reset = new Date(nowMs);
    const nextMonth = new Date(Date.UTC(reset.getUTCFullYear(), reset.getUTCMonth() + 1, 1)).toISOString();
    assert.equal(refusal.error.details.reset, nextMonth);
    assert.ok(Number.isInteger(refusal.error.details.retry_after));
    assert.match(refusal.error.message, /organization's budget of \$0\.001 per month is reached/);
    assert.ok(refusal.error.message.includes(`resets at ${nextMonth}`), refusal.error.message);
    // Settled: four times the real cost (10 x 1 + 100 x 2), and /v1/auth/key shows it.
    const status: any = await (await fetch(`${server.baseUrl}/auth/key`, { headers: { authorization: `Bearer ${key}` } })).json();
    assert.deepEqual(status.budgets, [
      {
        scope: 'organization',
        period: 'month',
        limit_micro_usd: 1_000,
        spent_micro_usd: 840,
        remaining_micro_usd: 160,
        reset_at: nextMonth,
      },
    ]);
    await server.runtime.app.inject({ method: 'GET', url: '/healthz' });
  });

  test('_metadata carries the budgets the request was reserved against; a key budget above the organization is refused', async () => {
    const organization = `org-meta-${randomHex(6)}`;
    const { key, id } = await server.createKey({ organization });
    await server.runtime.budgets.setOrganizationBudget(organization, { period: 'day', amountMicroUsd: 50_000 }, 'test');
    await assert.rejects(
      server.runtime.budgets.setKeyBudget(organization, 'Developer', id, { period: 'day', amountMicroUsd: 60_000 }, 'test'),
      (error: any) => error.status === 400 && error.code === 'invalid_parameter' && /above its organization/.test(error.message),
    );
    await server.runtime.budgets.setKeyBudget(organization, 'Developer', id, { period: 'week', amountMicroUsd: 1_000 }, 'test');
    // Each answer really costs 10 x 1 + 200 x 2 = 410; the worst case of max_tokens 200 is ~425.
    enqueueUsage(10, { prompt_tokens: 10, completion_tokens: 200 });
    const answer = await chat(key, 200);
    assert.equal(answer.status, 200);
    const budgets = answer.body._metadata.budgets;
    assert.deepEqual(
      budgets.map((budget: any) => [
        budget.scope,
        budget.period,
        budget.limit_micro_usd,
        budget.spent_micro_usd,
        budget.remaining_micro_usd,
      ]),
      [
        ['organization', 'day', 50_000, 410, 49_590],
        ['key', 'week', 1_000, 410, 590],
      ],
    );
    assert.equal((await chat(key, 200)).status, 200);
    const refused = await chat(key, 200);
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'budget_exceeded');
    assert.equal(refused.body.error.details.scope, 'key');
    assert.equal(refused.body.error.details.period, 'week');
    assert.equal(refused.body.error.details.remaining, 180);
    assert.match(refused.body.error.message, /API key's budget of \$0\.001 per week is reached: \$0\.00018 remains/);
  });

  test('a month budget spent on the last day admits again at 00:00:00.5 of the next month', async () => {
    const organization = `org-month-${randomHex(6)}`;
    const { key } = await server.createKey({ organization });
    nowMs = Date.UTC(2030, 0, 31, 23, 59, 59, 0);
    try {
      // One answer really costs 210 and reserves ~225: the second request no longer fits 300.
      await server.runtime.budgets.setOrganizationBudget(organization, { period: 'month', amountMicroUsd: 300 }, 'test');
      enqueueUsage(3, { prompt_tokens: 10, completion_tokens: 100 });
      const before = [await chat(key, 100), await chat(key, 100)].map((answer) => answer.status);
      assert.deepEqual(before, [200, 429]);
      nowMs = Date.UTC(2030, 1, 1, 0, 0, 0, 500);
      const afterBoundary = await chat(key, 100);
      assert.equal(afterBoundary.status, 200, JSON.stringify(afterBoundary.body));
      assert.equal(afterBoundary.body._metadata.budgets[0].reset_at, '2030-03-01T00:00:00.000Z');
    } finally {
      nowMs = Date.now();
    }
  });

  test('100 keys of a Free organization together stay within its 20 requests per minute', async () => {
    const organization = `org-free-${randomHex(6)}`;
    const keys: string[] = [];
    for (let index = 0; index < 100; index++) keys.push((await server.createKey({ organization, tier: 'Free' })).key);
    const second = new Date().getUTCSeconds();
    if (second >= 45) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000));
    const answers = await Promise.all(
      Array.from({ length: 200 }, async (_, index) => {
        const response = await fetch(`${server.baseUrl}/models`, { headers: { authorization: `Bearer ${keys[index % 100]}` } });
        return { status: response.status, body: response.status === 429 ? ((await response.json()) as any) : undefined };
      }),
    );
    assert.equal(answers.filter((answer) => answer.status === 200).length, 20);
    const refused = answers.filter((answer) => answer.status === 429);
    assert.equal(refused.length, 180);
    assert.ok(refused.every((answer) => answer.body.error.code === 'rpm_exceeded' && answer.body.error.details.scope === 'organization'));
    assert.match(refused[0]!.body.error.message, /20 requests per minute for this organization \(all its keys together\)/);
  });
});
