// What a load balancer relies on: /readyz names every dependency and which one failed, answers 503
// while draining, and signed links are built from publicBaseUrl or trusted forwarded headers, never
// from a Host header a client made up.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../support/free-port.ts';
import { startServerProcess } from '../support/server-process.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface RawAnswer {
  status: number;
  body: any;
}

/** A request with headers fetch() will not send as given (Host, X-Forwarded-*). */
function send(server: TestServer, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<RawAnswer> {
  const url = new URL(path, server.origin);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: url.hostname, port: url.port, method, path: url.pathname, headers }, (incoming) => {
      let text = '';
      incoming.setEncoding('utf8');
      incoming.on('data', (chunk: string) => (text += chunk));
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) }));
    });
    outgoing.on('error', reject);
    outgoing.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function imageUrl(server: TestServer, headers: Record<string, string> = {}): Promise<string> {
  const answer = await send(
    server,
    'POST',
    '/v1/images/generations',
    { 'content-type': 'application/json', authorization: `Bearer ${server.key}`, ...headers },
    {
      model: 'switchyard-images',
      prompt: 'a lighthouse',
      size: '256x256',
      response_format: 'url',
    },
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.data[0].url as string;
}

describe('operations behind a load balancer', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  test('/readyz names each dependency it checked; draining turns it 503 while the API still answers', async () => {
    const ready = await send(server, 'GET', '/readyz', {});
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, {
      status: 'ready',
      checks: { database: { ok: true, critical: true }, files: { ok: true, critical: true }, keys: { ok: true, critical: true } },
    });
    server.runtime.startDraining();
    const draining = await send(server, 'GET', '/readyz', {});
    assert.equal(draining.status, 503);
    assert.equal(draining.body.status, 'draining');
    assert.equal((await send(server, 'GET', '/v1/models', { authorization: `Bearer ${server.key}` })).status, 200);
  });

  test('without publicBaseUrl or trustProxy a made-up Host header does not reach signed links', async () => {
    const url = await imageUrl(server, { host: 'attacker.example', 'x-forwarded-host': 'attacker.example', 'x-forwarded-proto': 'https' });
    assert.ok(url.startsWith(`${server.origin}/v1/files/`), url);
  });
});

describe('signed links behind a TLS-terminating balancer', () => {
  test('publicBaseUrl is the origin of every link, whatever the request said', async () => {
    const server = await startTestServer({ config: { server: { publicBaseUrl: 'https://ai.example.com/switchyard/' } } });
    try {
      const url = await imageUrl(server, { host: 'internal-10-0-0-7:8080' });
      assert.match(url, /^https:\/\/ai\.example\.com\/switchyard\/v1\/files\/file-[^/]+\/signed-content\?expires=\d+&signature=/);
    } finally {
      await server.close();
    }
  });

  test('with trustProxy the forwarded scheme and host make the link', async () => {
    const server = await startTestServer({ env: { TRUST_PROXY: '127.0.0.1' } });
    try {
      const url = await imageUrl(server, { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'ai.example.com' });
      assert.ok(url.startsWith('https://ai.example.com/v1/files/'), url);
      // The link is fetched straight from the instance, as the balancer would forward it.
      const download = await fetch(`${server.origin}${new URL(url).pathname}${new URL(url).search}`);
      assert.equal(download.status, 200);
      assert.equal(download.headers.get('content-type'), 'image/png');
    } finally {
      await server.close();
    }
  });
});

describe('/readyz with an unreachable Redis', () => {
  test('200 `degraded` naming redis: a shared dependency is reported, and the instance keeps serving on local limits', async () => {
    const server = await startTestServer({ config: { redisUrl: `redis://127.0.0.1:${await freePort()}` } });
    try {
      const answer = await send(server, 'GET', '/readyz', {});
      assert.equal(answer.status, 200);
      assert.equal(answer.body.status, 'degraded');
      assert.deepEqual(answer.body.degraded, ['redis']);
      assert.equal(answer.body.failed, undefined);
      assert.equal(answer.body.checks.database.ok, true);
      assert.equal(answer.body.checks.redis.ok, false);
      assert.equal(answer.body.checks.redis.critical, false);
      // Request-only and metered routes alike are admitted on this instance's own counters.
      assert.equal((await send(server, 'GET', '/v1/models', { authorization: `Bearer ${server.key}` })).status, 200);
      const chat = await send(
        server,
        'POST',
        '/v1/chat/completions',
        { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
        { model: 'switchyard-echo', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 },
      );
      assert.equal(chat.status, 200, JSON.stringify(chat.body));
      const metrics = await (await fetch(`${server.origin}/metrics`)).text();
      assert.match(metrics, /switchyard_dependency_up\{dependency="redis"\} 0/);
      assert.match(metrics, /switchyard_dependency_breaker_state\{dependency="redis"\} [12]/);
      // The reason (it names internal addresses) goes to the log, never to the caller.
      assert.equal('error' in answer.body.checks.redis, false);
    } finally {
      await server.close();
    }
  });
});

describe('drain on SIGTERM', () => {
  test('/readyz fails first while requests are still served; then the process stops and exits 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-drain-'));
    try {
      const server = await startServerProcess({ DATA_DIR: dataDir, DRAIN_DELAY_SECONDS: '5' });
      const key = /(sk-\S+)/.exec(server.output())![1]!;
      assert.equal((await fetch(`${server.origin}/readyz`)).status, 200);
      const exited = server.stop();
      let readiness = 200;
      for (let attempt = 0; attempt < 400 && readiness === 200; attempt++) {
        readiness = (await fetch(`${server.origin}/readyz`)).status;
        if (readiness === 200) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal(readiness, 503);
      // Still draining: the balancer's in-flight and late requests are answered, not refused.
      assert.equal((await fetch(`${server.origin}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status, 200);
      assert.equal((await fetch(`${server.origin}/healthz`)).status, 200);
      assert.equal(await exited, 0);
      await assert.rejects(fetch(`${server.origin}/healthz`));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
