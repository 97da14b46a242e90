// The dashboard's money budgets API on a real server (SQLite): owners and members read the
// organization's budget and every key's with spend (the ledger's, after real requests through the
// mock upstream), remaining and reset; owners set and clear a key budget, refused above the
// organization's with a message naming it; bad amounts and periods are the SPEC 400 naming the field;
// another organization's key is 404; members cannot change budgets; operators list every
// organization's budget and spend and set or clear the override; every change is audited.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { until } from '../support/until.ts';

const PASSWORD = 'correct horse battery';
const PRICES = { inputPerMillion: 1, outputPerMillion: 2 };

function nextMonthIso(): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
}

describe('budgets API', () => {
  const upstream = new MockOpenAIServer();
  let server: TestServer;
  let owner: DashboardClient;
  let member: DashboardClient;
  let operator: DashboardClient;
  let keyA: { key: string; id: string };
  let keyB: { key: string; id: string };
  let foreignKey: { key: string; id: string };

  before(async () => {
    await upstream.start();
    server = await startTestServer({
      config: {
        providers: { up: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, maxRetries: 0 } },
        models: [{ id: 'priced', provider: 'up', capabilities: ['chat'], maxOutputTokens: 4096, pricing: PRICES }],
      } as never,
    });
    await createOwner(server.runtime, 'org-money', 'olga@money.test', PASSWORD);
    await createOwner(server.runtime, 'org-money', 'mia@money.test', PASSWORD, { role: 'member' });
    await createOwner(server.runtime, 'org-other', 'otto@other.test', PASSWORD);
    keyA = await server.createKey({ organization: 'org-money' });
    keyB = await server.createKey({ organization: 'org-money' });
    foreignKey = await server.createKey({ organization: 'org-other' });
    owner = new DashboardClient(server.origin);
    assert.equal((await owner.signIn('olga@money.test', PASSWORD)).status, 200);
    member = new DashboardClient(server.origin);
    assert.equal((await member.signIn('mia@money.test', PASSWORD)).status, 200);
    const issued = await server.runtime.people.createOperator('ops@money.test', server.origin);
    operator = new DashboardClient(server.origin);
    const token = /#token=([A-Za-z0-9]+)$/.exec(issued.link)![1]!;
    assert.equal((await operator.request('POST', 'set-password', { token, password: PASSWORD }, { csrf: false })).status, 200);
    assert.equal((await operator.signIn('ops@money.test', PASSWORD)).status, 200);
  });
  after(async () => {
    await server?.close();
    await upstream.close();
  });

  test('operators set an organization budget; bad input is the SPEC 400 naming the field; unknown organization 404', async () => {
    const bad: [unknown, string][] = [
      [{ period: 'month', amount_micro_usd: -5 }, 'amount_micro_usd'],
      [{ period: 'month', amount_micro_usd: 0 }, 'amount_micro_usd'],
      [{ period: 'month', amount_micro_usd: '10' }, 'amount_micro_usd'],
      [{ period: 'month', amount_micro_usd: 1.5 }, 'amount_micro_usd'],
      [{ period: 'fortnight', amount_micro_usd: 10 }, 'period'],
      [{ amount_micro_usd: 10 }, 'period'],
    ];
    for (const [body, param] of bad) {
      const response = await operator.request('PUT', 'operator/organizations/org-money/budget', body);
      assert.equal(response.status, 400, JSON.stringify(response.body));
      assert.equal(response.body.error.type, 'invalid_request_error');
      assert.equal(response.body.error.param, param);
    }
    assert.equal(
      (await operator.request('PUT', 'operator/organizations/org-nowhere/budget', { period: 'month', amount_micro_usd: 1 })).status,
      404,
    );
    const set = await operator.request('PUT', 'operator/organizations/org-money/budget', { period: 'month', amount_micro_usd: 5_000_000 });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.source, 'override');
    assert.equal(set.body.limit_micro_usd, 5_000_000);
    assert.equal(set.body.reset_at, nextMonthIso());
    // Owners cannot reach the operator's route.
    assert.equal(
      (await owner.request('PUT', 'operator/organizations/org-money/budget', { period: 'month', amount_micro_usd: 1 })).status,
      403,
    );
  });

  test('owners set a key budget, never above the organization; members read only; another organization key is 404', async () => {
    const above = await owner.request('PUT', `budgets/keys/${keyA.id}`, { period: 'month', amount_micro_usd: 5_000_001 });
    assert.equal(above.status, 400);
    assert.equal(above.body.error.type, 'invalid_request_error');
    assert.match(above.body.error.message, /cannot be above its organization's \(5000000 micro-USD per month\)/);
    for (const [body, param] of [
      [{ period: 'month', amount_micro_usd: -1 }, 'amount_micro_usd'],
      [{ period: 'month', amount_micro_usd: 'lots' }, 'amount_micro_usd'],
      [{ period: 'year', amount_micro_usd: 100 }, 'period'],
    ] as const) {
      const response = await owner.request('PUT', `budgets/keys/${keyA.id}`, body);
      assert.equal(response.status, 400);
      assert.equal(response.body.error.param, param);
    }
    const foreign = await owner.request('PUT', `budgets/keys/${foreignKey.id}`, { period: 'month', amount_micro_usd: 100 });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.type, 'invalid_request_error');
    assert.equal(foreign.body.error.code, 'not_found');
    assert.equal((await owner.request('DELETE', `budgets/keys/${foreignKey.id}`)).status, 404);
    assert.equal((await owner.request('PUT', 'budgets/keys/key_missing', { period: 'month', amount_micro_usd: 100 })).status, 404);
    const memberTry = await member.request('PUT', `budgets/keys/${keyA.id}`, { period: 'month', amount_micro_usd: 100 });
    assert.equal(memberTry.status, 403, JSON.stringify(memberTry.body));

    const set = await owner.request('PUT', `budgets/keys/${keyA.id}`, { period: 'day', amount_micro_usd: 2_000_000 });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.budget.limit_micro_usd, 2_000_000);
    // Without the CSRF header, nothing changes.
    const noCsrf = await owner.request('DELETE', `budgets/keys/${keyA.id}`, undefined, { csrf: false });
    assert.equal(noCsrf.status, 401);
    assert.equal(noCsrf.body.error.code, 'invalid_token');

    // Real spend on key A: one request, 10 prompt x 1 + 100 output x 2 = 210 micro-USD.
    upstream.reset();
    upstream.enqueue({ type: 'reply', reply: { text: 'ok', usage: { prompt_tokens: 10, completion_tokens: 100 } } });
    const chat = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keyA.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'priced', max_tokens: 100, messages: [{ role: 'user', content: 'Hello there, how are you?' }] }),
    });
    assert.equal(chat.status, 200, await chat.text());

    const overview = await until(async () => {
      const response = await member.request('GET', 'budgets');
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body.organization.spent_micro_usd === 210 ? response.body : undefined;
    }, 'the ledger shows the spend');
    assert.equal(overview.organization.source, 'override');
    assert.equal(overview.organization.limit_micro_usd, 5_000_000);
    assert.equal(overview.organization.remaining_micro_usd, 5_000_000 - 210);
    assert.equal(overview.organization.reset_at, nextMonthIso());
    const rowA = overview.keys.find((row: any) => row.key === keyA.id);
    const rowB = overview.keys.find((row: any) => row.key === keyB.id);
    assert.equal(overview.keys.length, 2, 'only this organization keys');
    const tomorrow = new Date(Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000).toISOString();
    assert.deepEqual(rowA.budget, {
      period: 'day',
      limit_micro_usd: 2_000_000,
      spent_micro_usd: 210,
      remaining_micro_usd: 2_000_000 - 210,
      reset_at: tomorrow,
    });
    assert.equal(rowB.budget, null);

    const cleared = await owner.request('DELETE', `budgets/keys/${keyA.id}`);
    assert.equal(cleared.status, 200);
    const after = await owner.request('GET', 'budgets');
    assert.equal(after.body.keys.find((row: any) => row.key === keyA.id).budget, null);

    const audit = await owner.request('GET', 'audit');
    const actions = audit.body.data.map((row: any) => row.action);
    assert.ok(actions.includes('budget.set') && actions.includes('budget.cleared'), actions.join(','));
  });

  test('operators list every organization budget and spend, and clear an override', async () => {
    const listed = await operator.request('GET', 'operator/budgets');
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const money = listed.body.data.find((row: any) => row.organization === 'org-money');
    const other = listed.body.data.find((row: any) => row.organization === 'org-other');
    assert.equal(money.source, 'override');
    assert.equal(money.spent_micro_usd, 210);
    assert.equal(other.spent_micro_usd === undefined || other.spent_micro_usd === 0, true);
    assert.equal((await owner.request('GET', 'operator/budgets')).status, 403);
    const cleared = await operator.request('DELETE', 'operator/organizations/org-money/budget');
    assert.equal(cleared.status, 200);
    assert.notEqual(cleared.body.source, 'override');
    const audit = await operator.request('GET', 'operator/audit');
    const actions = (audit.body.data ?? []).map((row: any) => row.action);
    assert.ok(actions.includes('budget.set') && actions.includes('budget.cleared'), JSON.stringify(audit.body).slice(0, 300));
  });
});
