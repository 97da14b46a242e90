/**
 * Issue 40 item 2 (attack report F10), on raw sockets against a running server: the minimum body rate
 * applies from a request's first byte, so an anonymous client trickling a body is cut by the rate rule
 * like a keyed one (it was held until the whole-request timeout); a client that stops reading a large
 * download is cut (it was served for as long as it liked); and connections are capped per client
 * address and in total.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { until } from '../support/until.ts';

async function openSocket(
  server: TestServer,
  localAddress = '127.0.0.1',
): Promise<{ socket: Socket; received: Promise<string>; closed: () => boolean }> {
  const { port } = new URL(server.origin);
  const socket = connect({ port: Number(port), host: '127.0.0.1', localAddress });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let isClosed = false;
  const received = new Promise<string>((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('close', () => {
      isClosed = true;
      resolve(text);
    });
  });
  return { socket, received, closed: () => isClosed };
}

const sleep = (milliseconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, milliseconds));

describe('slow clients before authentication, slow readers, connection caps', () => {
  let server: TestServer;
  const logLines: string[] = [];

  before(async () => {
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    server = await startTestServer({
      logger: pino({ level: 'info' }, sink),
      config: {
        server: {
          bodyTimeoutMs: 1000,
          bodyMinBytesPerSecond: 500,
          bodyIdleTimeoutMs: 60_000,
          // Old code held the anonymous trickle until this; the rate rule must answer long before.
          requestTimeoutMs: 120_000,
          sendTimeoutMs: 1000,
          sendMinBytesPerSecond: 64 * 1024,
          sendIdleTimeoutMs: 1000,
          maxConnections: 6,
          maxConnectionsPerAddress: 3,
        },
      },
    });
  });
  after(() => server.close());

  // First, while no other connection is open (a fetch below keeps its connection alive).
  test('connections are capped per address and in total', async () => {
    const first = await Promise.all([openSocket(server), openSocket(server), openSocket(server)]);
    const fourth = await openSocket(server);
    await until(async () => (fourth.closed() ? true : undefined), 'the fourth connection from one address being closed', 20_000);
    const others = await Promise.all(['127.0.0.2', '127.0.0.3', '127.0.0.4'].map((address) => openSocket(server, address)));
    const over = await openSocket(server, '127.0.0.5');
    await until(async () => (over.closed() ? true : undefined), 'the seventh connection being closed (global cap 6)', 20_000);
    // The connections within the caps are served.
    for (const { socket, received } of [...first, ...others]) {
      socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      assert.match(await received, /^HTTP\/1\.1 200/);
    }
    // Closed connections free their places.
    const again = await openSocket(server);
    again.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    assert.match(await again.received, /^HTTP\/1\.1 200/);
  });

  test('an anonymous body sent a byte at a time is cut by the rate rule (408), not held until the request timeout', async () => {
    const { socket, received, closed } = await openSocket(server);
    socket.write(
      'POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n',
    );
    // One byte every 300 ms: never idle for the idle rule, far below 500 bytes per second.
    for (let index = 0; index < 400 && !closed(); index++) {
      socket.write('{');
      await Promise.race([sleep(300), received]);
    }
    const text = await received;
    assert.match(text, /^HTTP\/1\.1 408/);
    const body = JSON.parse(text.split('\r\n\r\n', 2)[1]!) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'request_timeout');
    assert.match(body.error.message, /500 bytes per second/, 'the minimum-rate rule cut it, not the whole-request timeout');
  });

  test('a client that stops reading a large download is cut', async () => {
    const form = new FormData();
    form.append('purpose', 'user_data');
    form.append('file', new Blob([Buffer.alloc(48 * 1024 * 1024, 'a')]), 'big.txt');
    const uploaded = await fetch(`${server.baseUrl}/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}` },
      body: form,
    });
    assert.equal(uploaded.status, 200, await uploaded.clone().text());
    const { id } = (await uploaded.json()) as { id: string };
    const { socket, received } = await openSocket(server);
    socket.pause(); // read nothing: the server's writes back up
    socket.write(`GET /v1/files/${id}/content HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${server.key}\r\n\r\n`);
    await until(
      async () => (logLines.some((line) => line.includes('client stopped reading the answer')) ? true : undefined),
      'the server cutting the reader',
      60_000,
    );
    socket.resume();
    const text = await received;
    assert.match(text, /^HTTP\/1\.1 200/);
    assert.ok(text.length < 48 * 1024 * 1024, `only part of the file was sent (${text.length} bytes)`);
  });
});
