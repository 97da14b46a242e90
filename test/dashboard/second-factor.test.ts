// The dashboard's second factor, as the attack of issue 33 tried it: a TOTP code used once is refused
// when replayed; turning TOTP on or off needs the current password (or, to turn it off, a current
// code) and ends the owner's other sessions; the secret is the server's (a client-chosen one is not
// taken); recovery codes are issued at enrolment, stored hashed, and each works once.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { Secret, TOTP } from 'otpauth';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/index.ts';
import { startRuntime, type Runtime } from '../../src/runtime.ts';
import { DashboardClient } from '../support/dashboard-client.ts';

const PASSWORD = 'second factor password';
const EMAIL = 'tess@example.com';
const STEP_MS = 30_000;

describe('dashboard second factor', () => {
  let dataDir: string;
  let runtime: Runtime;
  let server: { origin: string; dataDir: string };
  let owner: DashboardClient;
  let other: DashboardClient;
  let totp: TOTP;
  // The accounts' clock: a new code needs a later 30-second step than the last one used, so each
  // fresh code moves the clock one step on rather than waiting for it.
  let clock = Date.now();
  const freshCode = (): string => totp.generate({ timestamp: (clock += STEP_MS) });

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'switchyard-second-factor-'));
    const config = loadConfig({
      env: {},
      overrides: { dataDir, logLevel: 'silent', bootstrapKey: false, server: { port: 0, host: '127.0.0.1' } },
    });
    runtime = await startRuntime(config, {
      logger: pino({ level: 'silent' }),
      batchWorker: false,
      dashboardAccounts: { now: () => clock },
    });
    await runtime.app.listen({ host: '127.0.0.1', port: 0 });
    server = { origin: `http://127.0.0.1:${(runtime.app.server.address() as { port: number }).port}`, dataDir };
    await runtime.accounts.createOwner({ organization: 'org-tess', email: EMAIL, password: PASSWORD });
    owner = new DashboardClient(server.origin);
    other = new DashboardClient(server.origin);
    assert.equal((await owner.signIn(EMAIL, PASSWORD)).status, 200);
    assert.equal((await other.signIn(EMAIL, PASSWORD)).status, 200);
  });
  after(async () => {
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('turning TOTP on needs the password, takes only the server-made secret, and ends the other sessions', async () => {
    const enrolment = await owner.request('POST', 'totp/enrol');
    assert.equal(enrolment.status, 200);
    assert.match(enrolment.body.secret, /^[A-Z2-7]{32}$/);
    totp = new TOTP({ secret: Secret.fromBase32(enrolment.body.secret), digits: 6, period: 30 });

    const withoutPassword = await owner.request('POST', 'totp/enable', { code: totp.generate({ timestamp: clock }) });
    assert.equal(withoutPassword.status, 400);
    assert.equal(withoutPassword.body.error.param, 'password');
    const wrongPassword = await owner.request('POST', 'totp/enable', {
      code: totp.generate({ timestamp: clock }),
      password: 'not my password',
    });
    assert.equal(wrongPassword.status, 400);
    assert.equal(wrongPassword.body.error.param, 'password');
    const chosen = new Secret({ size: 20 });
    const clientSecret = await owner.request('POST', 'totp/enable', {
      secret: chosen.base32,
      code: new TOTP({ secret: chosen, digits: 6, period: 30 }).generate(),
      password: PASSWORD,
    });
    assert.equal(clientSecret.status, 400, 'a code of a secret the client chose does not turn TOTP on');
    assert.equal(clientSecret.body.error.param, 'code');

    const enabled = await owner.request('POST', 'totp/enable', { code: totp.generate({ timestamp: clock }), password: PASSWORD });
    assert.equal(enabled.status, 200);
    assert.equal(enabled.body.recovery_codes.length, 10);
    assert.equal((await owner.request('GET', 'session')).body.totp_enabled, true, 'this session goes on');
    const ended = await other.request('GET', 'session');
    assert.equal(ended.status, 401, 'the other session was ended');
    assert.equal(ended.body.error.code, 'invalid_token');

    // Recovery codes are stored as hashes only.
    const database = new SqliteDatabase(join(server.dataDir, 'switchyard.db'), { readonly: true });
    try {
      const stored = JSON.stringify(database.prepare('select * from owner_recovery_codes').all());
      for (const code of enabled.body.recovery_codes as string[]) {
        assert.ok(!stored.includes(code) && !stored.includes(code.replaceAll('-', '')), 'a recovery code is stored in clear');
      }
    } finally {
      database.close();
    }
    recoveryCodes = enabled.body.recovery_codes;
  });

  let recoveryCodes: string[] = [];

  test('a TOTP code works once: its replay is refused, and of two sign-ins racing with one new code one wins', async () => {
    const code = freshCode();
    const first = await new DashboardClient(server.origin).signIn(EMAIL, PASSWORD, { totp: code });
    assert.equal(first.status, 200);
    const replay = await new DashboardClient(server.origin).signIn(EMAIL, PASSWORD, { totp: code });
    assert.equal(replay.status, 401);
    assert.equal(replay.body.error.code, 'invalid_credentials');
    assert.match(replay.body.error.message, /used already/);
    // Two sign-ins racing with one new code: one wins.
    const racing = freshCode();
    const statuses = await Promise.all(
      [0, 1].map(async () => (await new DashboardClient(server.origin).signIn(EMAIL, PASSWORD, { totp: racing })).status),
    );
    assert.deepEqual(statuses.sort(), [200, 401]);
  });

  test('a recovery code signs in once', async () => {
    const code = recoveryCodes[0]!;
    assert.equal((await new DashboardClient(server.origin).signIn(EMAIL, PASSWORD, { totp: code })).status, 200);
    const again = await new DashboardClient(server.origin).signIn(EMAIL, PASSWORD, { totp: code.toUpperCase() });
    assert.equal(again.status, 401, 'used');
  });

  test('turning TOTP off without the password (or a code) fails; with it, TOTP is off and other sessions end', async () => {
    other = new DashboardClient(server.origin);
    assert.equal((await other.signIn(EMAIL, PASSWORD, { totp: freshCode() })).status, 200);

    const bare = await owner.request('POST', 'totp/disable');
    assert.equal(bare.status, 400, 'a session and its CSRF token are not enough');
    assert.equal(bare.body.error.param, 'password');
    const wrong = await owner.request('POST', 'totp/disable', { password: 'not my password' });
    assert.equal(wrong.status, 400);
    const usedCode = await owner.request('POST', 'totp/disable', { code: recoveryCodes[0]! });
    assert.equal(usedCode.status, 400, 'a used recovery code proves nothing');
    assert.equal((await owner.request('GET', 'session')).body.totp_enabled, true, 'still on');
    assert.equal((await other.request('GET', 'session')).status, 200);

    const disabled = await owner.request('POST', 'totp/disable', { code: freshCode() });
    assert.equal(disabled.status, 200, 'a current code is enough');
    assert.equal((await owner.request('GET', 'session')).body.totp_enabled, false);
    assert.equal((await other.request('GET', 'session')).status, 401, 'the other session was ended');
    assert.equal((await new DashboardClient(server.origin).signIn(EMAIL, PASSWORD)).status, 200, 'no code needed any more');

    const audit = (await owner.request('GET', 'audit')).body.data.map((entry: { action: string }) => entry.action);
    for (const action of ['totp.enabled', 'totp.disabled', 'reauthentication.failed']) assert.ok(audit.includes(action), action);
  });

  test('the password re-check is throttled like sign-in', async () => {
    const statuses: number[] = [];
    // Three failed re-checks were counted above (a wrong password on and off, a used code); two more reach the limit of 5.
    for (let attempt = 0; attempt < 3; attempt++)
      statuses.push((await owner.request('POST', 'totp/disable', { password: `wrong ${attempt}` })).status);
    assert.deepEqual(statuses, [400, 400, 429]);
  });
});
