// Sign-in throttling as the attack of issue 33 tried it (docs: README "Security"), on SQLite and on
// Postgres, with two instances on one database: 30 parallel wrong passwords evaluate at most the limit
// (the rest 429 without a password check), per account and per address; a third party's failures do not
// lock the owner's known device out (an address the owner signed in from, or a valid session cookie):
// it is only slowed; an address's count is not reset by another account's success; failed sign-ins
// are aggregated in the audit log. Addresses are told apart with X-Forwarded-For behind `trustProxy`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/index.ts';
import { startRuntime, type Runtime } from '../../src/runtime.ts';
import { createTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';
import { DashboardClient, type DashboardResponse } from '../support/dashboard-client.ts';

const PASSWORD = 'the right password';
const SLOWED_MS = 400;
/** The throttle's counting window (dashboard-accounts.ts's default): failed sign-ins are one audit row per window. */
const THROTTLE_WINDOW_MS = 15 * 60_000;

/** Signs in as if from `address` (X-Forwarded-For), optionally carrying a session cookie. */
async function signInFrom(
  origin: string,
  address: string,
  email: string,
  password: string,
  cookie?: string,
): Promise<DashboardResponse & { client: DashboardClient; elapsedMs: number }> {
  const client = new DashboardClient(origin);
  const started = performance.now();
  const response = await client.request(
    'POST',
    'sign-in',
    { email, password },
    { csrf: false, cookie: cookie ?? null, headers: { 'x-forwarded-for': address } },
  );
  if (response.status === 200) {
    client.cookie = /switchyard_session=([^;]+)/.exec(response.headers.get('set-cookie') ?? '')?.[1];
    client.csrf = response.body.csrf_token;
  }
  return { ...response, client, elapsedMs: performance.now() - started };
}

function tally(responses: readonly DashboardResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const response of responses) counts[response.status] = (counts[response.status] ?? 0) + 1;
  return counts;
}

for (const backend of storageBackends()) {
  describe(`dashboard sign-in throttling on ${backend}, two instances`, () => {
    let testDatabase: TestDatabase;
    let dataDir: string;
    let first: Runtime;
    let second: Runtime;
    let origins: [string, string];

    before(async () => {
      testDatabase = await createTestDatabase(backend);
      dataDir = mkdtempSync(join(tmpdir(), 'switchyard-sign-in-throttle-'));
      const config = loadConfig({
        env: {},
        overrides: {
          dataDir,
          databaseUrl: testDatabase.url,
          logLevel: 'silent',
          bootstrapKey: false,
          server: { port: 0, host: '127.0.0.1', trustProxy: true },
        },
      });
      const options = {
        logger: pino({ level: 'silent' }),
        batchWorker: false,
        dashboardAccounts: { lockedAccountDelayMs: SLOWED_MS },
      } as const;
      first = await startRuntime(config, options);
      second = await startRuntime(config, options);
      const listen = async (runtime: Runtime): Promise<string> => {
        await runtime.app.listen({ host: '127.0.0.1', port: 0 });
        return `http://127.0.0.1:${(runtime.app.server.address() as { port: number }).port}`;
      };
      origins = [await listen(first), await listen(second)];
      for (const email of ['race@example.com', 'victim@example.com', 'own@example.com'])
        await first.accounts.createOwner({ organization: `org-${email.split('@')[0]}`, email, password: PASSWORD });
    });
    after(async () => {
      await second.close();
      await first.close();
      await testDatabase.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    test('30 parallel wrong passwords for one account evaluate 5 (the limit); the rest are 429 without a check', async () => {
      const responses = await Promise.all(
        Array.from({ length: 30 }, (_, index) =>
          signInFrom(origins[index % 2]!, `198.51.100.${index + 1}`, 'race@example.com', `guess ${index}`),
        ),
      );
      assert.deepEqual(tally(responses), { 401: 5, 429: 25 });
      const refused = responses.find((response) => response.status === 429)!;
      assert.equal(refused.body.error.code, 'too_many_sign_in_attempts');
      assert.equal(refused.body.error.type, 'rate_limit_exceeded');
      const retryAfter = Number(refused.headers.get('retry-after'));
      assert.ok(retryAfter > 800 && retryAfter <= 900, `retry-after ${retryAfter}`);
      // The right password from an address the owner never signed in from waits too.
      assert.equal((await signInFrom(origins[1], '198.51.100.200', 'race@example.com', PASSWORD)).status, 429);
      // The five evaluated failures, racing on two instances, are one audit row per throttle window (one
      // row; two if the burst straddled a window's edge): the row is an upsert on a unique window key.
      const failed = (await first.accounts.listAudit('org-race')).filter((entry) => entry.action === 'sign_in.failed');
      const windows = new Set(failed.map((entry) => Math.floor(entry.createdAt / THROTTLE_WINDOW_MS)));
      assert.equal(failed.length, windows.size, `one row per window: ${JSON.stringify(failed)}`);
      assert.ok(failed.length >= 1 && failed.length <= 2, `${failed.length} rows`);
      assert.equal(
        failed.reduce((sum, entry) => sum + entry.occurrences, 0),
        5,
      );
    });

    test('30 parallel wrong passwords from one address over 30 accounts evaluate 20 (the per-address limit)', async () => {
      const responses = await Promise.all(
        Array.from({ length: 30 }, (_, index) => signInFrom(origins[index % 2]!, '203.0.113.20', `spray-${index}@example.com`, 'guess')),
      );
      assert.deepEqual(tally(responses), { 401: 20, 429: 10 });
    });

    test("a third party's failures slow the owner's known device but do not refuse it; unknown devices wait", async () => {
      const home = await signInFrom(origins[0], '192.0.2.10', 'victim@example.com', PASSWORD);
      assert.equal(home.status, 200);
      for (let attempt = 0; attempt < 5; attempt++)
        assert.equal((await signInFrom(origins[attempt % 2]!, '203.0.113.66', 'victim@example.com', `guess ${attempt}`)).status, 401);
      assert.equal((await signInFrom(origins[0], '203.0.113.66', 'victim@example.com', PASSWORD)).status, 429, 'the attacker is refused');
      assert.equal((await signInFrom(origins[1], '192.0.2.77', 'victim@example.com', PASSWORD)).status, 429, 'so is any unknown device');

      const fromHome = await signInFrom(origins[1], '192.0.2.10', 'victim@example.com', PASSWORD);
      assert.equal(fromHome.status, 200, 'the address the owner signed in from');
      assert.ok(fromHome.elapsedMs >= SLOWED_MS, `slowed while the account is over its limit (${fromHome.elapsedMs.toFixed(0)} ms)`);
      const withCookie = await signInFrom(origins[0], '192.0.2.88', 'victim@example.com', PASSWORD, home.client.cookie);
      assert.equal(withCookie.status, 200, 'a new address carrying a valid session cookie of the account');

      // A known device has a limit of its own: it cannot be used to guess more.
      const guesses = [];
      for (let attempt = 0; attempt < 6; attempt++)
        guesses.push((await signInFrom(origins[0], '192.0.2.10', 'victim@example.com', `wrong ${attempt}`)).status);
      assert.deepEqual(guesses, [401, 401, 401, 401, 401, 429]);
      // A cookie of a revoked session proves nothing.
      await home.client.request('POST', 'sign-out');
      assert.equal((await signInFrom(origins[1], '192.0.2.89', 'victim@example.com', PASSWORD, home.client.cookie)).status, 429);
    });

    test("an address's failures are not reset by another account's success", async () => {
      const address = '203.0.113.77';
      const failures = await Promise.all(
        Array.from({ length: 19 }, (_, index) => signInFrom(origins[index % 2]!, address, `nobody-${index}@example.com`, 'guess')),
      );
      assert.deepEqual(tally(failures), { 401: 19 });
      assert.equal((await signInFrom(origins[0], address, 'own@example.com', PASSWORD)).status, 200, "the attacker's own account");
      assert.equal((await signInFrom(origins[1], address, 'nobody-x@example.com', 'guess')).status, 401, 'the 20th failure');
      assert.equal((await signInFrom(origins[0], address, 'nobody-y@example.com', 'guess')).status, 429, 'the 21st is refused');
    });
  });
}
