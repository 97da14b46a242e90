/**
 * Issue 16: logs never carry any part of a key, a session token or an upstream key, at any level.
 * Runs `switchyard serve` at LOG_LEVEL=trace through JSON, streamed, multipart and x-api-key requests,
 * an upstream call with an upstream key and a client that disconnects mid-stream, then scans
 * everything the process wrote. Also checks that the disconnect is one info line, not an error.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { MockOpenAIServer, type MockSseEvent } from '../support/mock-upstreams/index.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';

const UPSTREAM_KEY = 'sk-upstream-logscan-7f3a9c2e5b1d4f60';

let upstream: MockOpenAIServer;
let server: ServerProcess;
let dataDir: string;
let key: string;

before(async () => {
  upstream = await new MockOpenAIServer().start();
  dataDir = mkdtempSync(join(tmpdir(), 'switchyard-log-scan-'));
  const configFile = join(dataDir, 'config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      bootstrapKey: true,
      providers: { up: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, apiKey: UPSTREAM_KEY, maxRetries: 0 } },
      models: [{ id: 'up-model', provider: 'up', upstreamModel: 'gpt-mock', capabilities: ['chat', 'streaming'] }],
    }),
  );
  server = await startServerProcess({ LOG_LEVEL: 'trace', DATA_DIR: dataDir, SWITCHYARD_CONFIG: configFile });
  const match = /\b(sk-sy-[A-Za-z0-9]+)/.exec(server.output());
  assert.ok(match, 'the bootstrap key was printed');
  key = match[1]!;
});

after(async () => {
  await server?.stop();
  await upstream?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test('no key, key prefix or upstream key appears in trace-level logs', async () => {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', cookie: `session=${key}` };
  const chat = (stream: boolean, signal?: AbortSignal): Promise<Response> =>
    fetch(`${server.origin}/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'up-model', stream, messages: [{ role: 'user', content: 'Hello' }] }),
      ...(signal === undefined ? {} : { signal }),
    });

  // JSON, through the upstream (which receives the upstream key).
  const plain = await chat(false);
  assert.equal(plain.status, 200, await plain.clone().text());
  await plain.arrayBuffer();
  assert.equal(upstream.requests.at(-1)?.headers['authorization'], `Bearer ${UPSTREAM_KEY}`);

  // Streamed.
  const streamed = await chat(true);
  assert.equal(streamed.status, 200);
  await streamed.arrayBuffer();

  // Multipart upload (@fastify/multipart logs its busboy options, request headers included, at trace).
  const form = new FormData();
  form.append('purpose', 'batch');
  const line = JSON.stringify({
    custom_id: 'a',
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'up-model', messages: [{ role: 'user', content: 'Hi' }] },
  });
  form.append('file', new Blob([`${line}\n`], { type: 'application/jsonl' }), 'input.jsonl');
  const upload = await fetch(`${server.origin}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  assert.equal(upload.status, 200, await upload.clone().text());

  // The key in x-api-key, and a wrong key (refused).
  assert.equal((await fetch(`${server.origin}/v1/models`, { headers: { 'x-api-key': key } })).status, 200);
  assert.equal((await fetch(`${server.origin}/v1/models`, { headers: { authorization: `Bearer ${key}x` } })).status, 401);

  // A client that disconnects mid-stream.
  const slow: MockSseEvent[] = Array.from({ length: 40 }, () => ({
    data: { id: 'c1', choices: [{ index: 0, delta: { content: 'word ' } }] },
  }));
  upstream.enqueue({ type: 'events', events: slow, delayMs: 50 });
  const controller = new AbortController();
  const leaving = await chat(true, controller.signal);
  const reader = leaving.body!.getReader();
  await reader.read();
  controller.abort();
  await reader.read().catch(() => undefined);
  assert.equal(await upstream.requests.at(-1)!.outcome, 'closed-by-client');

  await server.stop();
  const output = server.output();
  const secrets = {
    key,
    'key prefix': key.slice('sk-sy-'.length, 'sk-sy-'.length + 8),
    'upstream key': UPSTREAM_KEY,
    'upstream key prefix': UPSTREAM_KEY.slice(0, 16),
  };
  for (const [name, secret] of Object.entries(secrets)) {
    const at = output.indexOf(secret);
    // The bootstrap key is printed once on purpose at first start (stdout, not a log line): skip that line.
    const logLines = output.split('\n').filter((text) => text.startsWith('{'));
    const leaking = logLines.filter((text) => text.includes(secret));
    assert.deepEqual(leaking, [], `${name} found in the logs (first at ${at})`);
  }
  const records = output
    .split('\n')
    .filter((text) => text.startsWith('{'))
    .map((text) => JSON.parse(text) as { level: number; msg?: string; err?: unknown });
  assert.ok(records.length > 10, 'trace logging produced records');
  // The multipart plugin did log the request headers, censored.
  const busboy = records.find((record) => record.msg === 'Providing options to busboy') as
    { busboyOptions?: { headers?: Record<string, string> } } | undefined;
  assert.equal(busboy?.busboyOptions?.headers?.['authorization'], '[redacted]');
  const disconnects = records.filter((record) => /disconnect/i.test(record.msg ?? ''));
  assert.equal(disconnects.length, 1, JSON.stringify(disconnects));
  assert.equal(disconnects[0]!.level, 30);
  assert.deepEqual(
    records.filter((record) => record.level >= 50),
    [],
    'no error-level lines',
  );
});
