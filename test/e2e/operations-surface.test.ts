// The operator's view: one access line per request at info, token and cost counters per model in
// /metrics (no organization labels), OPERATIONS_TOKEN in front of /metrics and /readyz detail, and a
// /readyz that never answers a dependency's error text (it is logged, once per change).
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { pino, type Logger } from 'pino';
import { loadConfig } from '../../src/config/index.ts';
import { freePort } from '../support/free-port.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

type LogLine = Record<string, unknown>;

/** A pino logger at `info` whose lines the test reads. */
function capturedLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as LogLine);
      callback();
    },
  });
  const logger: Logger = pino({ level: 'info' }, sink);
  return { logger, lines };
}

/** Lines are written once the answer has ended: wait for the one of `requestId`. */
async function accessLine(lines: LogLine[], requestId: string): Promise<LogLine> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const line = lines.find((entry) => entry['msg'] === 'access' && entry['request_id'] === requestId);
    if (line !== undefined) return line;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no access line for ${requestId}`);
}

function metricValue(exposition: string, name: string, labels: string): number {
  const line = exposition.split('\n').find((entry) => entry.startsWith(`${name}{${labels}}`));
  assert.ok(line !== undefined, `${name}{${labels}} in\n${exposition}`);
  return Number(line.split(' ').at(-1));
}

describe('access log and per-model metrics', () => {
  let server: TestServer;
  let keyId: string;
  let key: string;
  const captured = capturedLogger();

  before(async () => {
    server = await startTestServer({ logger: captured.logger });
    ({ key, id: keyId } = await server.createKey());
  });
  after(() => server.close());

  test('one info line per request: method, route, status, ms, model, tokens, key id, request id; never the key', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
    const { data: completion, response } = await client.chat.completions
      .create({ model: 'switchyard-echo', messages: [{ role: 'user', content: 'count these words please' }], max_tokens: 32 })
      .withResponse();
    const requestId = response.headers.get('x-request-id')!;
    const line = await accessLine(captured.lines, requestId);
    assert.equal(line['level'], 30);
    assert.equal(line['method'], 'POST');
    assert.equal(line['route'], '/v1/chat/completions');
    assert.equal(line['status'], 200);
    assert.equal(typeof line['ms'], 'number');
    assert.equal(line['model'], 'switchyard-echo');
    assert.equal(line['input_tokens'], completion.usage!.prompt_tokens);
    assert.equal(line['output_tokens'], completion.usage!.completion_tokens);
    assert.equal(line['key_id'], keyId);
    assert.equal(JSON.stringify(captured.lines).includes(key), false, 'the key never reaches the log');
  });

  test('a stream, a refused key and an unknown route each get their line; successful probes do not', async () => {
    const stream = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'switchyard-echo', messages: [{ role: 'user', content: 'stream me' }], max_tokens: 16, stream: true }),
    });
    await stream.text();
    const streamed = await accessLine(captured.lines, stream.headers.get('x-request-id')!);
    assert.equal(streamed['model'], 'switchyard-echo');
    assert.ok((streamed['output_tokens'] as number) > 0);

    const refused = await fetch(`${server.baseUrl}/models`, { headers: { authorization: 'Bearer sk-sy-wrong' } });
    const refusedLine = await accessLine(captured.lines, refused.headers.get('x-request-id')!);
    assert.equal(refusedLine['status'], 401);
    assert.equal(refusedLine['key_id'], null);
    assert.equal(refusedLine['model'], null);

    const unknown = await fetch(`${server.origin}/nowhere?secret=1`);
    const unknownLine = await accessLine(captured.lines, unknown.headers.get('x-request-id')!);
    assert.equal(unknownLine['route'], 'unmatched /nowhere');

    const probe = await fetch(`${server.origin}/healthz`);
    await probe.text();
    const probeId = probe.headers.get('x-request-id');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(
      captured.lines.some((entry) => entry['msg'] === 'access' && entry['request_id'] === probeId),
      false,
    );
  });

  test('/metrics counts tokens and cost per model, with no organization or key label', async () => {
    const before = await (await fetch(`${server.origin}/metrics`)).text();
    const inputBefore = metricValue(before, 'switchyard_tokens_total', 'model="switchyard-echo",direction="input"');
    const requestsBefore = metricValue(before, 'switchyard_metered_requests_total', 'model="switchyard-echo"');
    const client = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'switchyard-echo',
      messages: [{ role: 'user', content: 'one two three four' }],
      max_tokens: 16,
    });
    const after = await (await fetch(`${server.origin}/metrics`)).text();
    assert.equal(
      metricValue(after, 'switchyard_tokens_total', 'model="switchyard-echo",direction="input"') - inputBefore,
      completion.usage!.prompt_tokens,
    );
    assert.equal(metricValue(after, 'switchyard_metered_requests_total', 'model="switchyard-echo"') - requestsBefore, 1);
    assert.ok(metricValue(after, 'switchyard_cost_usd_total', 'model="switchyard-echo"') >= 0);
    assert.ok(metricValue(after, 'switchyard_tokens_total', 'model="switchyard-echo",direction="output"') > 0);
    assert.doesNotMatch(after, /organization=|org-|key_id=|key=/);
  });
});

describe('LOG_ACCESS=off', () => {
  test('silences the access log (and is read from the environment)', async () => {
    assert.equal(loadConfig({ env: { LOG_ACCESS: 'off' } }).server.accessLog, false);
    assert.equal(loadConfig({ env: {} }).server.accessLog, true);
    assert.throws(() => loadConfig({ env: { LOG_ACCESS: 'maybe' } }), /LOG_ACCESS=maybe is not on or off/);
    const captured = capturedLogger();
    const server = await startTestServer({ logger: captured.logger, config: { server: { accessLog: false } } });
    try {
      const answer = await fetch(`${server.baseUrl}/models`, { headers: { authorization: `Bearer ${server.key}` } });
      assert.equal(answer.status, 200);
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(
        captured.lines.some((entry) => entry['msg'] === 'access'),
        false,
      );
    } finally {
      await server.close();
    }
  });
});

describe('OPERATIONS_TOKEN and /readyz detail', () => {
  const token = 'ops-token-0123456789abcdef';
  let server: TestServer;
  const captured = capturedLogger();

  before(async () => {
    // A Redis nothing listens on: the readiness check fails with a text naming the address.
    const redisPort = await freePort();
    server = await startTestServer({
      logger: captured.logger,
      config: { server: { operationsToken: token }, redisUrl: `redis://127.0.0.1:${redisPort}` },
    });
  });
  after(() => server.close());

  test('/metrics needs the token (SPEC 401 otherwise); /v1/openapi.json and /healthz stay public', async () => {
    const refused = await fetch(`${server.origin}/metrics`);
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('www-authenticate'), 'Bearer');
    const body = (await refused.json()) as { error: { type: string; code: string; message: string } };
    assert.equal(body.error.type, 'auth_error');
    assert.equal(body.error.code, 'invalid_token');
    assert.equal((await fetch(`${server.origin}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status, 401);
    assert.equal((await fetch(`${server.origin}/metrics`, { headers: { authorization: token } })).status, 401);
    const allowed = await fetch(`${server.origin}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(allowed.status, 200);
    assert.match(await allowed.text(), /switchyard_http_requests_total/);
    assert.equal((await fetch(`${server.origin}/v1/openapi.json`)).status, 200);
    assert.equal((await fetch(`${server.origin}/healthz`)).status, 200);
  });

  test('/readyz: the status for everyone, the checks with the token, and never the error text', async () => {
    const anonymous = await fetch(`${server.origin}/readyz`);
    const anonymousBody = (await anonymous.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(anonymousBody), ['status']);

    const detailed = await fetch(`${server.origin}/readyz`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(detailed.status, anonymous.status, 'the token changes the body, not the verdict');
    const text = await detailed.text();
    const body = JSON.parse(text) as { checks: Record<string, Record<string, unknown>> };
    assert.deepEqual(body.checks['redis'], { ok: false, critical: false });
    assert.deepEqual(body.checks['database'], { ok: true, critical: true });
    assert.doesNotMatch(text, /127\.0\.0\.1|ECONNREFUSED|connect|error/i);

    // The text is in the log, once while it stays the same.
    await fetch(`${server.origin}/readyz`);
    const logged = captured.lines.filter((entry) => entry['msg'] === 'readiness check failed' && entry['check'] === 'redis');
    assert.equal(logged.length, 1, JSON.stringify(logged));
    assert.equal(logged[0]!['level'], 40);
    assert.ok(typeof logged[0]!['error'] === 'string' && (logged[0]!['error'] as string).length > 0);
  });

  test('a token shorter than 16 characters is refused at start with how to make one', () => {
    assert.throws(() => loadConfig({ env: { OPERATIONS_TOKEN: 'short' } }), /at least 16 characters.*openssl rand/s);
    assert.equal(loadConfig({ env: { OPERATIONS_TOKEN: token } }).server.operationsToken, token);
  });
});
