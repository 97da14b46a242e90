// OPERATIONS_PORT, over real HTTP on both listeners of a `switchyard serve` process: the operations
// listener serves /metrics, /readyz with its detail and /healthz; the public one keeps /healthz and
// /readyz's verdict with `{status}` only (a balancer's probe) and answers /metrics 404, token or not.
// With OPERATIONS_TOKEN set too, the operations listener asks for the token. During a drain both
// listeners say `draining`; a start whose operations port is taken says so in one sentence.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/index.ts';
import { freePort } from '../support/free-port.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { until } from '../support/until.ts';
import { TYPESCRIPT_LOADER } from '../support/typescript-loader.ts';

const TOKEN = 'ops-token-0123456789abcdef';

describe('OPERATIONS_PORT: /metrics and /readyz detail on a listener of their own', () => {
  let dataDir: string;
  let server: ServerProcess;
  let operations: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'switchyard-operations-port-'));
    const operationsPort = await freePort();
    operations = `http://127.0.0.1:${operationsPort}`;
    server = await startServerProcess({
      DATA_DIR: dataDir,
      OPERATIONS_PORT: String(operationsPort),
      OPERATIONS_TOKEN: TOKEN,
      DRAIN_DELAY_SECONDS: '2',
    });
  });
  after(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('the public listener: /healthz, /readyz with {status} only (even with the token), /metrics 404', async () => {
    assert.equal((await fetch(`${server.origin}/healthz`)).status, 200);
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }]) {
      const ready = await fetch(`${server.origin}/readyz`, { headers });
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: 'ready' });
      const metrics = await fetch(`${server.origin}/metrics`, { headers });
      assert.equal(metrics.status, 404);
      assert.equal(((await metrics.json()) as { error: { code: string } }).error.code, 'not_found');
    }
    // The API itself is where it was.
    assert.equal((await fetch(`${server.origin}/v1/openapi.json`)).status, 200);
  });

  test('the operations listener: /metrics and /readyz detail behind OPERATIONS_TOKEN, /healthz open', async () => {
    assert.equal((await fetch(`${operations}/healthz`)).status, 200);
    const refused = await fetch(`${operations}/metrics`);
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('www-authenticate'), 'Bearer');
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'invalid_token');
    const metrics = await fetch(`${operations}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(metrics.status, 200);
    // The public listener's requests are counted (the figures are the service's, not this listener's).
    assert.match(await metrics.text(), /switchyard_http_requests_total\{[^}]*route="\/readyz"/);

    const anonymous = await fetch(`${operations}/readyz`);
    assert.equal(anonymous.status, 200);
    assert.deepEqual(await anonymous.json(), { status: 'ready' });
    const detailed = await fetch(`${operations}/readyz`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const body = (await detailed.json()) as { status: string; checks: Record<string, { ok: boolean }>; config: { hash: string } };
    assert.equal(body.status, 'ready');
    assert.deepEqual(body.checks['database'], { ok: true, critical: true });
    assert.match(body.config.hash, /^[0-9a-f]{64}$/);

    // Nothing else is served there: no API, no dashboard.
    const elsewhere = await fetch(`${operations}/v1/models`);
    assert.equal(elsewhere.status, 404);
    assert.equal(((await elsewhere.json()) as { error: { code: string } }).error.code, 'not_found');
  });

  test('during the drain both listeners answer 503 draining; the process exits 0', async () => {
    server.child.kill('SIGTERM');
    await until(async () => ((await fetch(`${server.origin}/readyz`)).status === 503 ? true : undefined), 'the public /readyz drains');
    const draining = await fetch(`${operations}/readyz`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(draining.status, 503);
    assert.equal(((await draining.json()) as { status: string }).status, 'draining');
    assert.equal(await server.stop(), 0);
  });
});

describe('OPERATIONS_PORT at start', () => {
  test('OPERATIONS_PORT and OPERATIONS_HOST are read; the same address as the public listener is refused', () => {
    assert.throws(() => loadConfig({ env: { PORT: '9090', OPERATIONS_PORT: '9090' } }), /OPERATIONS_PORT.*is the public PORT/);
    assert.doesNotThrow(() => loadConfig({ env: { PORT: '9090', OPERATIONS_PORT: '9090', OPERATIONS_HOST: '127.0.0.2' } }));
    assert.equal(loadConfig({ env: { OPERATIONS_PORT: '9091' } }).server.operationsPort, 9091);
    assert.throws(() => loadConfig({ env: { OPERATIONS_PORT: 'metrics' } }), /OPERATIONS_PORT=metrics is not an integer/);
    assert.equal(loadConfig({ env: {} }).server.operationsPort, undefined);
  });

  test('an operations port in use stops the start with one sentence naming OPERATIONS_PORT', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as { port: number }).port;
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-operations-port-taken-'));
    try {
      const result = spawnSync(process.execPath, [...TYPESCRIPT_LOADER, 'src/main.ts', 'serve'], {
        env: {
          PATH: process.env['PATH'],
          LOG_LEVEL: 'warn',
          DATA_DIR: dataDir,
          PORT: String(await freePort()),
          OPERATIONS_PORT: String(taken),
        },
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(result.status, 1, result.stdout + result.stderr);
      assert.match(result.stderr, new RegExp(`Port ${taken} on 127\\.0\\.0\\.1 is already in use.*set OPERATIONS_PORT to a free port`));
      assert.doesNotMatch(result.stderr, /EADDRINUSE|\n\s+at /);
    } finally {
      blocker.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
