/**
 * Issue 16: slow clients are cut. Raw sockets against a running server with short configured
 * timeouts: slow headers and a body that trickles in get 408 in the SPEC envelope and a closed
 * connection; a client that stops reading a long stream is cut and the upstream request aborted.
 * The minimum body rate (mod_reqtimeout's rule): a body that never goes silent for long but arrives
 * a byte every few seconds is cut too, and a steady body is not.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { MockOpenAIServer, type MockSseEvent } from '../support/mock-upstreams/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/** Connects to the server; resolves with the socket and a promise of everything it receives until closed. */
async function openSocket(server: TestServer): Promise<{ socket: Socket; received: Promise<string> }> {
  const { port } = new URL(server.origin);
  const socket = connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const received = new Promise<string>((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    socket.once('close', () => resolve(text));
  });
  return { socket, received };
}

function parseResponse(text: string): { status: number; headers: string; body: unknown } {
  const [head = '', body = ''] = text.split('\r\n\r\n', 2);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  return { status, headers: head.toLowerCase(), body: body === '' ? undefined : (JSON.parse(body) as unknown) };
}

const sleep = (milliseconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, milliseconds));

describe('slow clients', () => {
  let upstream: MockOpenAIServer;
  let server: TestServer;

  before(async () => {
    upstream = await new MockOpenAIServer().start();
    server = await startTestServer({
      config: {
        server: { headersTimeoutMs: 300, bodyIdleTimeoutMs: 300, streamStallTimeoutMs: 300 },
        providers: { mock: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, maxRetries: 0 } },
        // Room for the 64 MB answer below: without it Switchyard's own max_tokens cap would end the
        // stream (with [DONE]) long before the client's buffers fill, and no stall would be exercised.
        tiers: {
          Developer: {
            requestsPerMinute: 0,
            tokensPerMinute: 0,
            tokensPerDay: 0,
            tokensPerMonth: 0,
            concurrentBatches: 0,
            permissions: ['chat.completions', 'models', 'files'],
          },
        },
        models: [
          {
            id: 'mock-model',
            provider: 'mock',
            upstreamModel: 'gpt-mock',
            capabilities: ['chat', 'streaming'],
            maxOutputTokens: 100_000_000,
          },
        ],
      },
    });
  });
  after(async () => {
    await server.close();
    await upstream.close();
  });

  test('headers that never complete are answered 408 in the SPEC envelope and the connection is closed', async () => {
    const { socket, received } = await openSocket(server);
    socket.write('POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n');
    // ... and nothing more: the server must not wait forever.
    const response = parseResponse(await received);
    assert.equal(response.status, 408);
    assert.match(response.headers, /connection: close/);
    const body = response.body as { error: { type: string; code: string; message: string }; info_metadata: { status: boolean } };
    assert.equal(body.error.type, 'invalid_request_error');
    assert.equal(body.error.code, 'request_timeout');
    assert.equal(body.info_metadata.status, false);
  });

  test('a body that trickles in (a byte per second, 300 ms allowed) is answered 408 and the connection closed', async () => {
    const { socket, received } = await openSocket(server);
    const body = JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'Hello' }] });
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${server.key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    );
    let closed = false;
    void received.then(() => (closed = true));
    for (let index = 0; index < body.length && !closed; index++) {
      socket.write(body[index]!);
      await Promise.race([sleep(1000), received]);
    }
    const response = parseResponse(await received);
    assert.equal(response.status, 408);
    assert.match(response.headers, /connection: close/);
    const envelope = response.body as { error: { code: string }; info_metadata: { request_id: string } };
    assert.equal(envelope.error.code, 'request_timeout');
    assert.match(envelope.info_metadata.request_id, /^req_/);
    // The model was never called.
    assert.equal(upstream.requests.length, 0);
  });

  test('a file upload that stalls half way (its handler reads the body) is answered 408 and the connection closed', async () => {
    const { socket, received } = await openSocket(server);
    const boundary = 'switchyard-stalled-upload';
    const head =
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="lines.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n`;
    const sent = '{"custom_id":"a"}\n'.repeat(100);
    const declaredLength = Buffer.byteLength(head) + 2 * Buffer.byteLength(sent) + Buffer.byteLength(`\r\n--${boundary}--\r\n`);
    socket.write(
      `POST /v1/files HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${server.key}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${declaredLength}\r\n\r\n${head}${sent}`,
    );
    // ... and the second half never comes. (Bounded: a guard that stopped watching would leave this
    // request waiting forever, and the test must fail rather than hang the run.)
    const response = parseResponse(await Promise.race([received, sleep(10_000).then(() => 'no answer within 10 s')]));
    assert.equal(response.status, 408);
    assert.match(response.headers, /connection: close/);
    assert.equal((response.body as { error: { code: string } }).error.code, 'request_timeout');
  });

  test('a client that stops reading a long stream is cut and its upstream request aborted', async () => {
    // About 64 MB of answer: far more than the socket buffers between the server and the client hold.
    const piece = 'x'.repeat(32 * 1024);
    const events: MockSseEvent[] = [];
    for (let index = 0; index < 2000; index++) events.push({ data: { id: 'c1', choices: [{ index: 0, delta: { content: piece } }] } });
    events.push({ data: { id: 'c1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] } }, { data: '[DONE]' });
    // A short pause per event keeps the upstream streaming while the client's buffers fill up.
    upstream.enqueue({ type: 'events', events, delayMs: 2 });
    const { socket, received } = await openSocket(server);
    const body = JSON.stringify({ model: 'mock-model', stream: true, messages: [{ role: 'user', content: 'Hello' }] });
    socket.pause(); // never read: the server's writes back up
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${server.key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await upstream.waitForRequests(1);
    // Switchyard gave up on the client and closed the upstream request before it was complete.
    assert.equal(await upstream.requests[0]!.outcome, 'closed-by-client');
    socket.resume();
    const text = await received;
    assert.ok(!text.includes('[DONE]'), 'the stream must not have been completed');
  });
});

describe('minimum body rate', () => {
  let server: TestServer;

  before(async () => {
    // 1 s for the body, plus a second per 500 bytes; the idle rule far away, so only the rate rule can cut.
    server = await startTestServer({ config: { server: { bodyTimeoutMs: 1000, bodyMinBytesPerSecond: 500, bodyIdleTimeoutMs: 60_000 } } });
  });
  after(async () => {
    await server.close();
  });

  function requestHead(body: string): string {
    return (
      // connection: close, so that everything received is the one answer.
      `POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAuthorization: Bearer ${server.key}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`
    );
  }

  test('a body sent one byte every 2 s (never idle for the idle rule) is cut with 408 by the rate rule', async () => {
    const { socket, received } = await openSocket(server);
    const body = JSON.stringify({ model: 'switchyard-echo', messages: [{ role: 'user', content: 'Hello' }] });
    const started = Date.now();
    socket.write(requestHead(body));
    let closed = false;
    void received.then(() => (closed = true));
    let sent = 0;
    for (; sent < body.length && !closed; sent++) {
      socket.write(body[sent]!);
      await Promise.race([sleep(2000), received]);
    }
    const response = parseResponse(await received);
    const elapsed = Date.now() - started;
    assert.equal(response.status, 408);
    assert.match(response.headers, /connection: close/);
    const envelope = response.body as { error: { type: string; code: string; message: string }; info_metadata: { status: boolean } };
    assert.equal(envelope.error.type, 'invalid_request_error');
    assert.equal(envelope.error.code, 'request_timeout');
    assert.match(envelope.error.message, /500 bytes per second/);
    assert.equal(envelope.info_metadata.status, false);
    // Cut after about a second (the bound plus a few ms per byte), long before the body was complete:
    // counted in bytes sent 2 s apart, not in wall-clock ms (a loaded machine stretches those).
    assert.ok(sent <= 2, `cut after ${sent} bytes (${elapsed} ms)`);
  });

  test('a body that arrives steadily above the rate is served, even past the first second', async () => {
    const { socket, received } = await openSocket(server);
    const body = JSON.stringify({ model: 'switchyard-echo', messages: [{ role: 'user', content: 'x'.repeat(1500) }], max_tokens: 5 });
    socket.write(requestHead(body));
    // About 1,000 bytes per second, for about 1.6 s.
    for (let offset = 0; offset < body.length; offset += 100) {
      socket.write(body.slice(offset, offset + 100));
      await sleep(100);
    }
    const text = await Promise.race([received, sleep(10_000).then(() => 'no answer within 10 s')]);
    assert.equal(parseResponse(text).status, 200, text.slice(0, 300));
  });
});
