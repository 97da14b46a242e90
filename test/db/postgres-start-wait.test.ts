/**
 * An instance started while Postgres cannot be reached (issue 39: it logged 20 false "database is
 * back" lines, its breaker's probe always succeeding): the probe is real from the first moment (a
 * fresh connection and `SELECT 1`), so nothing says "back" until the server answers, and the whole
 * wait is at most 4 lines (waiting, down, back, starting) however long it lasts. Postgres is reached
 * through a fault proxy that resets every connection, then lets them through; the shared server
 * itself is never touched (an isolated database on TEST_DATABASE_URL).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { loadConfig } from '../../src/config/load-config.ts';
import { DependencyBreakers } from '../../src/core/circuit-breaker.ts';
import { openRuntimeDatabase } from '../../src/runtime/open-database.ts';
import { createPostgresTestDatabase, type TestDatabase } from '../support/databases.ts';
import { FaultProxy } from '../support/chaos/fault-proxy.ts';
import { until } from '../support/until.ts';

const postgresConfigured = (process.env['TEST_DATABASE_URL'] ?? '') !== '';
if (!postgresConfigured) console.warn('\n*** SKIPPED: Postgres start-up wait (set TEST_DATABASE_URL) ***\n');

describe('start-up wait for Postgres', { skip: !postgresConfigured }, () => {
  let database: TestDatabase;
  let proxy: FaultProxy;
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-start-wait-'));

  before(async () => {
    database = (await createPostgresTestDatabase())!;
    const url = new URL(database.url);
    proxy = await FaultProxy.start(Number(url.port || 5432), url.hostname);
  });

  after(async () => {
    await proxy?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('no "back" before the server answers; at most 4 lines for the whole wait', async () => {
    const lines: string[] = [];
    const keep = (_details: object, message: string) => void lines.push(message);
    const logger = { warn: keep, info: keep, error: keep, debug: () => undefined } as unknown as Logger;
    const proxied = new URL(database.url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    const config = loadConfig({ env: {}, overrides: { databaseUrl: proxied.toString(), dataDir } });
    const breakers = new DependencyBreakers();
    proxy.reset();
    const opening = openRuntimeDatabase(config, logger, breakers, true);
    // Several start-up attempts and probes meet the reset.
    await until(async () => (proxy.accepted >= 8 ? true : undefined), 'eight connection attempts through the proxy', 60_000);
    assert.equal(
      lines.some((line) => / is back/.test(line)),
      false,
      lines.join('\n'),
    );
    proxy.pass();
    const { database: opened } = await opening;
    try {
      assert.ok(lines.length <= 4, lines.join('\n'));
      assert.equal(lines.filter((line) => / is back/.test(line)).length <= 1, true, lines.join('\n'));
      assert.match(lines.at(-1)!, /the database answers; starting/);
      assert.equal(await opened.ping(), true);
    } finally {
      breakers.stop();
      await opened.close();
    }
  });
});
