// Dashboard hardening from issue 33: every /dashboard/api answer (a new key's secret, the session with
// its CSRF token, CSV, errors) is `cache-control: no-store` and `nosniff`; CSV exports neutralise
// spreadsheet formulas; the retention timer of a running instance deletes old sign-in attempts, audit
// entries and long-expired sessions.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/index.ts';
import { csvTextCell, usageCsv } from '../../src/dashboard/usage-report.ts';
import { openDatabase } from '../../src/db/database.ts';
import { OwnersRepository } from '../../src/db/repositories/owners-repository.ts';
import { startRuntime } from '../../src/runtime.ts';
import { DashboardClient, eventually, type DashboardResponse } from '../support/dashboard-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'hardening password';

describe('dashboard API answers are never cached or sniffed', () => {
  let server: TestServer;
  let owner: DashboardClient;

  before(async () => {
    server = await startTestServer();
    await server.runtime.accounts.createOwner({ organization: 'org-hard', email: 'hard@example.com', password: PASSWORD });
    owner = new DashboardClient(server.origin);
  });
  after(async () => {
    await server.close();
  });

  test('cache-control: no-store and x-content-type-options: nosniff on answers, downloads and errors', async () => {
    const answers: Array<[string, DashboardResponse]> = [];
    answers.push(['sign-in 401', await new DashboardClient(server.origin).signIn('hard@example.com', 'wrong password')]);
    answers.push(['sign-in', await owner.signIn('hard@example.com', PASSWORD)]);
    answers.push(['session', await owner.request('GET', 'session')]);
    const created = await owner.request('POST', 'keys', { name: 'shown once' });
    assert.equal(created.status, 201);
    answers.push(['new key', created]);
    answers.push(['rotate', await owner.request('POST', `keys/${created.body.id}/rotate`, { grace_seconds: 0 })]);
    answers.push(['keys', await owner.request('GET', 'keys')]);
    answers.push(['sessions', await owner.request('GET', 'sessions')]);
    answers.push(['usage.csv', await owner.request('GET', 'usage.csv?days=7')]);
    answers.push(['no session', await owner.request('GET', 'keys', undefined, { cookie: null })]);
    answers.push(['no csrf', await owner.request('POST', 'keys', { name: 'x' }, { csrf: false })]);
    answers.push(['bad body', await owner.request('POST', 'keys', { name: '' })]);
    answers.push(['unknown route', await owner.request('GET', 'nothing-here')]);
    assert.deepEqual(
      answers.map(([name, response]) => [name, response.status]),
      [
        ['sign-in 401', 401],
        ['sign-in', 200],
        ['session', 200],
        ['new key', 201],
        ['rotate', 201],
        ['keys', 200],
        ['sessions', 200],
        ['usage.csv', 200],
        ['no session', 401],
        ['no csrf', 401],
        ['bad body', 400],
        ['unknown route', 404],
      ],
    );
    for (const [name, response] of answers) {
      assert.equal(response.headers.get('cache-control'), 'no-store', name);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', name);
    }
  });
});

describe('CSV exports neutralise spreadsheet formulas', () => {
  test('a text cell starting with = + - @ tab or CR gets a leading apostrophe; others are quoted as they are', () => {
    assert.equal(csvTextCell('=HYPERLINK("http://evil.example","x")'), `"'=HYPERLINK(""http://evil.example"",""x"")"`);
    for (const start of ['=', '+', '-', '@', '\t', '\r']) assert.equal(csvTextCell(`${start}1+1`), `"'${start}1+1"`, JSON.stringify(start));
    assert.equal(csvTextCell('gpt-4o'), '"gpt-4o"');
    assert.equal(csvTextCell('a "quoted", name'), '"a ""quoted"", name"');
    const csv = usageCsv([
      {
        dayStart: Date.UTC(2026, 10, 1),
        model: '=HYPERLINK("http://evil.example","x")',
        requests: 1,
        inputTokens: 2,
        outputTokens: 3,
        cachedTokens: 0,
        reasoningTokens: 0,
        costUsd: 0.5,
      },
    ]);
    assert.equal(csv.split('\n')[1], `2026-11-01,"'=HYPERLINK(""http://evil.example"",""x"")",1,2,3,0,0,0.500000`);
  });
});

describe('dashboard retention timer', () => {
  test('a running instance deletes old sign-in attempts, audit entries and long-expired sessions; recent rows stay', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-retention-'));
    const config = loadConfig({ env: {}, overrides: { dataDir, logLevel: 'silent', bootstrapKey: false } });
    const runtime = await startRuntime(config, {
      logger: pino({ level: 'silent' }),
      batchWorker: false,
      dashboardRetention: { intervalMs: 100, batchSize: 7, signInAttemptsMs: 60_000, auditMs: 120_000, expiredSessionsMs: 60_000 },
    });
    const database = openDatabase(config.databaseUrl);
    try {
      const owners = new OwnersRepository(database.db, database.dialect);
      const { owner } = await runtime.accounts.createOwner({ organization: 'org-old', email: 'old@example.com', password: PASSWORD });
      const now = Date.now();
      for (let index = 0; index < 20; index++) {
        await owners.attempts.reserve([{ subject: `address:old-${index}`, limit: 1 }], 0, now - 90_000);
        await owners.appendAudit({
          organizationId: 'org-old',
          actor: 'a',
          action: 'key.created',
          target: null,
          address: null,
          createdAt: now - 200_000,
        });
      }
      await owners.attempts.reserve([{ subject: 'address:recent', limit: 1 }], 0, now);
      await owners.appendAudit({
        organizationId: 'org-old',
        actor: 'a',
        action: 'key.revoked',
        target: null,
        address: null,
        createdAt: now - 90_000,
      });
      const session = { ownerId: owner.id, organizationId: 'org-old', userAgent: null, address: null, lastSeenAt: 0, revokedAt: null };
      await owners.createSession({
        ...session,
        id: 'ses_gone',
        tokenHash: 'gone',
        createdAt: 0,
        idleExpiresAt: 1,
        absoluteExpiresAt: now - 70_000,
      });
      await owners.createSession({
        ...session,
        id: 'ses_kept',
        tokenHash: 'kept',
        createdAt: 0,
        idleExpiresAt: 1,
        absoluteExpiresAt: now - 30_000,
      });

      await eventually(async () => ((await owners.attempts.failures('address:old-19', 0)) === 0 ? true : undefined), 50, 100);
      await eventually(async () => ((await owners.listAudit('org-old', 100)).length === 1 ? true : undefined), 50, 100);
      assert.deepEqual(
        (await owners.listAudit('org-old', 100)).map((entry) => entry.action),
        ['key.revoked'],
      );
      assert.equal(await owners.attempts.failures('address:recent', 0), 1);
      assert.equal(await owners.findSessionByTokenHash('gone'), undefined);
      assert.equal((await owners.findSessionByTokenHash('kept'))?.id, 'ses_kept');
    } finally {
      await database.close();
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
