// `switchyard budgets` run as separate processes against the database of a running server (as an
// operator would): an organization's budget set from the command line is what the server enforces
// (seen in /v1/auth/key); a key budget above it is one clear refusal; show and list report it;
// bad amounts and periods are refused; clear returns to the plan's budget (none here). Plus the
// budget calendar: ISO weeks start on Monday 00:00 UTC, months on the 1st.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomHex } from '../../src/core/ids.ts';
import { budgetWindow } from '../../src/services/budgets/budget-periods.ts';
import { runCli } from '../support/run-cli.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

describe('budgets CLI', () => {
  let server: TestServer;
  let env: NodeJS.ProcessEnv;
  const organization = `org-cli-${randomHex(6)}`;
  let key = { key: '', id: '' };

  before(async () => {
    server = await startTestServer();
    env = { DATA_DIR: server.dataDir, LOG_LEVEL: 'silent' };
    key = await server.createKey({ organization });
  });
  after(async () => server?.close());

  test('set, show, list, a key above the organization refused, clear', async () => {
    const set = await runCli(['budgets', 'set', '--org', organization, '--period', 'month', '--usd', '2.5'], env);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /set: \$2\.50 per month/);
    const above = await runCli(['budgets', 'set', '--org', organization, '--key', key.id, '--period', 'month', '--usd', '3'], env);
    assert.notEqual(above.code, 0);
    assert.match(above.stderr, /cannot be above its organization's \(2500000 micro-USD per month\)/);
    const keySet = await runCli(['budgets', 'set', '--org', organization, '--key', key.id, '--period', 'day', '--usd', '0.000125'], env);
    assert.equal(keySet.code, 0, keySet.stderr);
    const shown = JSON.parse((await runCli(['budgets', 'show', '--org', organization, '--json'], env)).stdout);
    assert.deepEqual(shown.organization, { period: 'month', amountMicroUsd: 2_500_000, source: 'override' });
    assert.deepEqual(
      shown.keys.map((row: any) => [row.keyId, row.period, row.amountMicroUsd]),
      [[key.id, 'day', 125]],
    );
    const listed = JSON.parse((await runCli(['budgets', 'list', '--json'], env)).stdout);
    assert.ok(listed.some((row: any) => row.organization === organization && row.budget.amountMicroUsd === 2_500_000));
    // The running server enforces what the CLI wrote (its cache is read again within 5 s).
    const status = await (async () => {
      for (let attempt = 0; attempt < 100; attempt++) {
        const body: any = await (await fetch(`${server.baseUrl}/auth/key`, { headers: { authorization: `Bearer ${key.key}` } })).json();
        if (body.budgets.length === 2) return body;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      throw new Error('the server never saw the budgets');
    })();
    assert.deepEqual(
      status.budgets.map((budget: any) => [budget.scope, budget.period, budget.limit_micro_usd]),
      [
        ['organization', 'month', 2_500_000],
        ['key', 'day', 125],
      ],
    );
    const cleared = await runCli(['budgets', 'clear', '--org', organization], env);
    assert.equal(cleared.code, 0, cleared.stderr);
    const after = JSON.parse((await runCli(['budgets', 'show', '--org', organization, '--json'], env)).stdout);
    assert.equal(after.organization, null);
  });

  test('bad amounts and periods are one clear line', async () => {
    const tooPrecise = await runCli(['budgets', 'set', '--org', organization, '--period', 'month', '--usd', '0.0000001'], env);
    assert.notEqual(tooPrecise.code, 0);
    assert.match(tooPrecise.stderr, /at most 6 decimals/);
    const period = await runCli(['budgets', 'set', '--org', organization, '--period', 'year', '--usd', '1'], env);
    assert.notEqual(period.code, 0);
    assert.match(period.stderr, /period must be one of: day, week, month, total/);
  });

  test('the budget calendar: ISO weeks from Monday, months from the 1st, total never resets', () => {
    // Sunday 2026-11-29 23:59:59.999 is in the week of Monday 2026-11-23; Monday 00:00:00.5 starts a new one.
    const sunday = budgetWindow('week', Date.UTC(2026, 10, 29, 23, 59, 59, 999));
    assert.equal(new Date(sunday.startMs).toISOString(), '2026-11-23T00:00:00.000Z');
    assert.equal(new Date(sunday.endMs!).toISOString(), '2026-11-30T00:00:00.000Z');
    const monday = budgetWindow('week', Date.UTC(2026, 10, 30, 0, 0, 0, 500));
    assert.equal(monday.startMs, sunday.endMs);
    assert.notEqual(monday.label, sunday.label);
    const december = budgetWindow('month', Date.UTC(2026, 11, 31, 12));
    assert.equal(new Date(december.endMs!).toISOString(), '2027-01-01T00:00:00.000Z');
    assert.equal(budgetWindow('day', Date.UTC(2026, 1, 28, 23)).endMs, Date.UTC(2026, 2, 1));
    assert.deepEqual(budgetWindow('total', Date.now()), { startMs: 0, endMs: null, label: 'total' });
  });
});
