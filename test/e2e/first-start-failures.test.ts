// A first start that fails cannot lose its one-time secrets: `switchyard serve` is made to fail at each
// step (port in use; Postgres refused; database missing), each failure is one sentence naming what to
// fix (no stack), nothing is left in the database, and the next start still prints the key, a curl line
// and the set-password link, built on PUBLIC_BASE_URL. Runs on SQLite, and on Postgres when
// TEST_DATABASE_URL is set (skipped LOUDLY otherwise).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';
import { freePort } from '../support/free-port.ts';
import { runCli } from '../support/run-cli.ts';
import { startServerProcess } from '../support/server-process.ts';
import { until } from '../support/until.ts';
import { TYPESCRIPT_LOADER } from '../support/typescript-loader.ts';

const PUBLIC_BASE_URL = 'https://ai.example.test';

/** Runs `switchyard serve` expecting it to fail; resolves with its exit code and what it printed. */
function failingStart(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...TYPESCRIPT_LOADER, 'src/main.ts', 'serve'], {
    env: { PATH: process.env['PATH'], LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A start that does not fail within the bound is a failure of this test, not a hang of the suite.
  const bound = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(bound);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** One line, no stack frames, no key, no link. */
function assertOneSentence(result: { code: number | null; stdout: string; stderr: string }, pattern: RegExp): void {
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, pattern);
  assert.equal(result.stderr.trim().split('\n').length, 1, `one line, got:\n${result.stderr}`);
  assert.doesNotMatch(result.stderr, /\n\s+at /);
  assert.doesNotMatch(result.stdout + result.stderr, /sk-sy-|set-password/);
}

for (const backend of storageBackends()) {
  describe(`a failed first start loses nothing (${backend})`, () => {
    let database: TestDatabase;
    let dataDir: string;
    let env: NodeJS.ProcessEnv;
    let occupier: Server;
    let busyPort: number;

    before(async () => {
      database = await createTestDatabase(backend);
      dataDir = mkdtempSync(join(tmpdir(), 'switchyard-first-failure-'));
      env = { DATA_DIR: dataDir, DATABASE_URL: database.url, PUBLIC_BASE_URL, BATCH_LEASE_MS: '9000' };
      occupier = createServer();
      await new Promise<void>((resolve) => occupier.listen(0, '127.0.0.1', resolve));
      busyPort = (occupier.address() as { port: number }).port;
    });
    after(async () => {
      await new Promise((resolve) => occupier.close(resolve));
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    test('port in use: one sentence naming the port and PORT, and no key created', async () => {
      const failed = await failingStart({ ...env, PORT: String(busyPort) });
      assertOneSentence(failed, new RegExp(`^Port ${busyPort} on 127\\.0\\.0\\.1 is already in use by another program: .*set PORT`));
      const keys = await runCli(['keys', 'list', '--json'], env);
      assert.equal(keys.code, 0, keys.stderr);
      assert.deepEqual(JSON.parse(keys.stdout), [], 'the failed start created no key');
    });

    if (backend === 'postgres') {
      test('Postgres refused: the start waits for it (one line) and leaves nothing; database missing: one sentence', async () => {
        // Issue 29: an instance started while Postgres is down waits and retries instead of exiting, so a
        // supervisor does not crash-loop it; stopped meanwhile, it leaves no key behind.
        const closedPort = await freePort();
        const child = spawn(process.execPath, [...TYPESCRIPT_LOADER, 'src/main.ts', 'serve'], {
          env: {
            PATH: process.env['PATH'],
            LOG_LEVEL: 'warn',
            ...env,
            PORT: String(await freePort()),
            DATABASE_URL: `postgres://postgres@127.0.0.1:${closedPort}/x`,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        try {
          await until(async () => (output.includes('waiting for it') ? true : undefined), 'the waiting line', 30_000);
          await new Promise((resolve) => setTimeout(resolve, 2_500));
          assert.equal(child.exitCode, null, 'still waiting, not exited');
          assert.equal(output.split('\n').filter((line) => line.includes('waiting for it')).length, 1, `logged once:\n${output}`);
          assert.doesNotMatch(output, /sk-sy-|set-password/);
        } finally {
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(killer);
        }
        const missingUrl = new URL(database.url);
        missingUrl.pathname = '/switchyard_no_such_database';
        const missing = await failingStart({ ...env, PORT: String(await freePort()), DATABASE_URL: missingUrl.toString() });
        assertOneSentence(
          missing,
          /^The database "switchyard_no_such_database" does not exist on .*: create it \(createdb switchyard_no_such_database\)/,
        );
      });
    } else {
      test('a data directory that cannot be written: one sentence naming DATA_DIR', async () => {
        // The database's folder would be inside a file (ENOTDIR), as with a mistyped DATA_DIR.
        writeFileSync(join(dataDir, 'a-file'), '');
        const failed = await failingStart({
          ...env,
          PORT: String(await freePort()),
          DATABASE_URL: `sqlite:${join(dataDir, 'a-file/db/x.db')}`,
        });
        assertOneSentence(failed, /^Cannot open the SQLite database sqlite:.*a-file\/db\/x\.db \(ENOTDIR.*make DATA_DIR .* writable/);
      });
    }

    test('the next start prints the key, a curl line and the set-password link on PUBLIC_BASE_URL; they work', async () => {
      const server = await startServerProcess(env);
      try {
        // /healthz answers once the listener is up; the secrets are created and printed right after.
        const output = await until(
          async () => (server.output().includes('set-password#token=') ? server.output() : undefined),
          'the printed link',
          30_000,
        );
        const key = /\b(sk-sy-[A-Za-z0-9]+)/.exec(output)?.[1];
        assert.ok(key, `the first-start key was printed:\n${output}`);
        assert.ok(output.includes(`try: curl ${PUBLIC_BASE_URL}/v1/models -H "Authorization: Bearer ${key}"`), output);
        const link = new RegExp(`${PUBLIC_BASE_URL.replace(/\./g, '\\.')}/dashboard/set-password#token=([A-Za-z0-9_-]+)`).exec(output);
        assert.ok(link, `the set-password link was printed:\n${output}`);
        const models = await fetch(`${server.origin}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
        assert.equal(models.status, 200);
        const setPassword = await fetch(`${server.origin}/dashboard/api/set-password`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ token: link[1], password: 'a long enough passphrase 42' }),
        });
        assert.equal(setPassword.status, 200, await setPassword.text());
      } finally {
        assert.equal(await server.stop(), 0, server.output());
      }
      const again = await startServerProcess(env);
      try {
        assert.doesNotMatch(again.output(), /sk-sy-|set-password/, 'shown once, on the start that succeeded');
      } finally {
        await again.stop();
      }
    });

    test('owners create builds its link on PUBLIC_BASE_URL', async () => {
      const created = await runCli(['owners', 'create', '--org', 'org-links', '--email', 'links@example.com'], env);
      assert.equal(created.code, 0, created.stderr);
      assert.match(created.stdout, new RegExp(`^${PUBLIC_BASE_URL.replace(/\./g, '\\.')}/dashboard/set-password#token=`, 'm'));
    });
  });
}
