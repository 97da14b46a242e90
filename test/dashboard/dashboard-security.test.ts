// Dashboard security: only hashes at rest, no secret or session id in the logs (debug level, every
// request logged), brute-force sign-in throttled per account and per address across instances
// (attempts live in the database), and `switchyard owners create` / the first-start link.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import SqliteDatabase from 'better-sqlite3';
import { parseArguments } from '../../src/cli/arguments.ts';
import { ownersCommand } from '../../src/cli/owners.ts';
import { loadConfig } from '../../src/config/index.ts';
import { startRuntime, type FirstStartSecrets, type Runtime } from '../../src/runtime.ts';
import { DashboardClient } from '../support/dashboard-client.ts';
import { runCli } from '../support/run-cli.ts';

const PASSWORD = 'a long enough password';

describe('dashboard security', () => {
  let dataDir: string;
  let runtime: Runtime;
  let second: Runtime;
  let firstStart: FirstStartSecrets | undefined;
  let secondStart: FirstStartSecrets | undefined;
  let origin: string;
  const logLines: string[] = [];

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'switchyard-dashboard-security-'));
    const config = loadConfig({
      env: {},
      overrides: { dataDir, logLevel: 'debug', bootstrapKey: true, server: { port: 0, host: '127.0.0.1' } },
    });
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    runtime = await startRuntime(config, {
      logger: pino({ level: 'debug' }, sink),
      dashboardAccounts: { maxFailuresPerAccount: 3, maxFailuresPerAddress: 6 },
    });
    await runtime.app.listen({ host: '127.0.0.1', port: 0 });
    origin = `http://127.0.0.1:${(runtime.app.server.address() as { port: number }).port}`;
    // A second instance on the same database: throttling must count attempts made on either.
    second = await startRuntime(config, {
      logger: pino({ level: 'debug' }, sink),
      batchWorker: false,
      dashboardAccounts: { maxFailuresPerAccount: 3, maxFailuresPerAddress: 6 },
    });
    await second.app.listen({ host: '127.0.0.1', port: 0 });
    [firstStart, secondStart] = await Promise.all([runtime.createFirstStartSecrets(), second.createFirstStartSecrets()]);
    await runtime.accounts.createOwner({ organization: 'org-safe', email: 'safe@example.com', password: PASSWORD });
  });
  after(async () => {
    await second.close();
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('the first start of an empty database prints a set-password link for the default organization owner', async () => {
    assert.ok(firstStart !== undefined || secondStart !== undefined);
    const created = (firstStart ?? secondStart)!;
    assert.equal(created.ownerLink?.email, `owner@${runtime.config.defaultOrganization}.local`);
    assert.ok(firstStart === undefined || secondStart === undefined, 'only one of two instances starting together');
    assert.equal(await runtime.createFirstStartSecrets(), undefined, 'only the very first start');
    const client = new DashboardClient(origin);
    const set = await client.request('POST', 'set-password', { token: created.ownerLink!.token, password: PASSWORD });
    assert.equal(set.status, 200);
    assert.equal(set.body.organization, runtime.config.defaultOrganization);
  });

  test('passwords, key secrets, link and session tokens are stored only as hashes, and never logged', async () => {
    const client = new DashboardClient(origin);
    await client.signIn('safe@example.com', PASSWORD);
    const created = await client.request('POST', 'keys', { name: 'secret' });
    await client.request('GET', 'keys');
    await fetch(`${origin}/v1/models`, { headers: { authorization: `Bearer ${created.body.key}` } });
    const { linkToken } = await runtime.accounts.createOwner({ organization: 'org-safe', email: 'later@example.com' });
    await runtime.app.close();
    await second.app.close();
    const database = new SqliteDatabase(join(dataDir, 'switchyard.db'), { readonly: true });
    try {
      const everything = database
        .prepare("select name from sqlite_master where type = 'table'")
        .all()
        .map((row) => JSON.stringify(database.prepare(`select * from "${(row as { name: string }).name}"`).all()))
        .join('\n');
      for (const secret of [PASSWORD, created.body.key, client.cookie!, linkToken!, client.csrf!]) {
        assert.ok(!everything.includes(secret), `a secret is stored in clear: ${secret.slice(0, 6)}…`);
      }
      const hash = database.prepare("select password_hash from owners where email = 'safe@example.com'").get() as { password_hash: string };
      assert.match(hash.password_hash, /^scrypt\$32768\$8\$1\$/);
    } finally {
      database.close();
    }
    const logs = logLines.join('');
    assert.ok(logs.includes('/dashboard/api/keys'), 'requests were logged at debug level');
    for (const secret of [PASSWORD, created.body.key, client.cookie!, linkToken!, client.csrf!]) {
      assert.ok(!logs.includes(secret), `a secret reached the logs: ${secret.slice(0, 6)}…`);
    }
  });
});

describe('dashboard sign-in throttling across instances', () => {
  let dataDir: string;
  let first: Runtime;
  let second: Runtime;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'switchyard-dashboard-throttle-'));
    const config = loadConfig({
      env: {},
      overrides: { dataDir, logLevel: 'silent', bootstrapKey: false, server: { port: 0, host: '127.0.0.1' } },
    });
    const options = {
      logger: pino({ level: 'silent' }),
      batchWorker: false,
      dashboardAccounts: { maxFailuresPerAccount: 3, maxFailuresPerAddress: 5 },
    } as const;
    first = await startRuntime(config, options);
    second = await startRuntime(config, options);
    await first.app.listen({ host: '127.0.0.1', port: 0 });
    await second.app.listen({ host: '127.0.0.1', port: 0 });
    await first.accounts.createOwner({ organization: 'org-t', email: 'target@example.com', password: PASSWORD });
    await first.accounts.createOwner({ organization: 'org-t', email: 'other@example.com', password: PASSWORD });
  });
  after(async () => {
    await second.close();
    await first.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('brute force is refused with 429 after the per-account limit, whichever instance is asked', async () => {
    const origins = [first, second].map((runtime) => `http://127.0.0.1:${(runtime.app.server.address() as { port: number }).port}`);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      statuses.push((await new DashboardClient(origins[attempt % 2]!).signIn('target@example.com', `guess ${attempt}`)).status);
    }
    assert.deepEqual(statuses, [401, 401, 401, 429]);
    const correct = await new DashboardClient(origins[1]!).signIn('target@example.com', PASSWORD);
    assert.equal(correct.status, 429, 'even the right password waits once throttled');
    assert.equal(correct.body.error.type, 'rate_limit_exceeded');
    assert.ok(Number(correct.headers.get('retry-after')) > 0);
    // Per address: guesses spread over accounts are throttled too (5 failures from 127.0.0.1: 3 + 2,
    // while the other account itself has only 2).
    assert.equal((await new DashboardClient(origins[0]!).signIn('other@example.com', 'guess a')).status, 401);
    assert.equal((await new DashboardClient(origins[0]!).signIn('other@example.com', 'guess b')).status, 401);
    assert.equal((await new DashboardClient(origins[1]!).signIn('other@example.com', PASSWORD)).status, 429);
  });
});

describe('switchyard owners create', () => {
  test('prints a one-time set-password link, or sets the password from stdin', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-owners-cli-'));
    try {
      const env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
      const created = await runCli(
        ['owners', 'create', '--org', 'org-cli', '--email', 'cli@example.com', '--base-url', 'https://sy.example'],
        env,
      );
      assert.equal(created.code, 0, created.stderr);
      assert.match(created.stdout, /https:\/\/sy\.example\/dashboard\/set-password#token=[A-Za-z0-9]{43}/);
      const duplicate = await runCli(['owners', 'create', '--org', 'org-cli', '--email', 'cli@example.com'], env);
      assert.equal(duplicate.code, 1);
      assert.match(duplicate.stderr, /already exists/);
      const usage = await runCli(['owners', 'create', '--org', 'org-cli'], env);
      assert.equal(usage.code, 1);
      assert.match(usage.stderr, /--email/);
      const printed: string[] = [];
      const config = loadConfig({ env: {}, overrides: { dataDir, logLevel: 'silent' } });
      await ownersCommand(
        config,
        parseArguments(['create', '--org', 'org-cli', '--email', 'stdin@example.com', '--password-stdin']),
        (line) => printed.push(line),
        Readable.from(['typed on stdin 123\n']),
      );
      assert.match(printed.join('\n'), /Password set/);
      const runtime = await startRuntime(config, { logger: pino({ level: 'silent' }), batchWorker: false });
      try {
        await runtime.app.listen({ host: '127.0.0.1', port: 0 });
        const client = new DashboardClient(`http://127.0.0.1:${(runtime.app.server.address() as { port: number }).port}`);
        assert.equal((await client.signIn('stdin@example.com', 'typed on stdin 123')).status, 200);
      } finally {
        await runtime.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
