/**
 * The upstream call on undici's dispatch interface (providers/shared/upstream-body.ts, through
 * UpstreamHttpClient.postJson), against a real node:http server the test drives step by step: whole
 * bodies and reads as bytes arrive, the connection kept for the next call, the caller's cancellation
 * before the request leaves, before the headers and mid-body, release of an unfinished body, a reset
 * connection, and backpressure (a reader that stops reading pauses the socket instead of buffering).
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { CancellationSource } from '../../../src/core/cancellation.ts';
import { isUpstreamError } from '../../../src/core/upstream-error.ts';
import { UpstreamHttpClient } from '../../../src/providers/shared/http-client.ts';
import { BodyReleasedError, UpstreamBody } from '../../../src/providers/shared/upstream-body.ts';
import { until } from '../../support/until.ts';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

let server: Server;
let handler: Handler = (_request, response) => response.end();
let connections = 0;
const requests: string[] = [];
let client: UpstreamHttpClient;

before(async () => {
  server = createServer((request, response) => {
    requests.push(request.url ?? '');
    handler(request, response);
  });
  server.on('connection', () => connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  client = new UpstreamHttpClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, timeoutMs: 10_000 });
});

after(async () => {
  await client.close();
  server.closeAllConnections();
  server.close();
});

/** Resolves when the server sees the client's side of the request's connection close. */
function closedByClient(request: IncomingMessage): Promise<void> {
  return new Promise((resolve) => (request.socket.destroyed ? resolve() : request.socket.once('close', () => resolve())));
}

describe('upstream call on undici dispatch', () => {
  test('a body read whole, status and headers as sent; a body read to its end leaves its connection for the next call', async () => {
    handler = (_request, response) => {
      response.writeHead(201, { 'content-type': 'application/json', 'x-seen': 'yes' });
      response.write('{"text":"héllo ');
      response.end('wörld"}');
    };
    const before = connections;
    const first = await client.postJson('/chat/completions', { a: 1 }, {}, new CancellationSource());
    assert.equal(first.status, 201);
    assert.equal(first.headers['x-seen'], 'yes');
    assert.equal(await first.body.text(), '{"text":"héllo wörld"}');
    assert.equal(first.body.done, true);
    // undici hands a socket back to its pool one event-loop turn after the answer (as with request()).
    await new Promise((resolve) => setImmediate(resolve));
    const second = await client.postJson('/chat/completions', { a: 2 }, {}, new CancellationSource());
    assert.equal(await second.body.text(), '{"text":"héllo wörld"}');
    assert.equal(connections - before, 1, 'both calls went over one connection');
    assert.equal(requests.at(-1), '/v1/chat/completions');
  });

  test('read() gives what has arrived, before the rest is sent, then undefined at the end', async () => {
    let respond: ServerResponse | undefined;
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: one\n\n');
      respond = response;
    };
    const answer = await client.postJson('/chat/completions', {}, {}, new CancellationSource());
    assert.equal((await answer.body.read())?.toString(), 'data: one\n\n');
    respond!.end('data: two\n\n');
    assert.equal((await answer.body.read())?.toString(), 'data: two\n\n');
    assert.equal(await answer.body.read(), undefined);
    assert.equal(await answer.body.read(), undefined, 'the end stays the end');
  });

  test('a cancellation before the headers rejects with its reason and closes the connection', async () => {
    let held: IncomingMessage | undefined;
    handler = (request) => {
      held = request;
    };
    const cancellation = new CancellationSource();
    const call = client.postJson('/chat/completions', {}, {}, cancellation);
    await until(async () => held, 'the request to reach the server');
    const closed = closedByClient(held!);
    const reason = new Error('client left');
    cancellation.abort(reason);
    await assert.rejects(call, (error) => error === reason);
    await closed;
  });

  test('a call whose cancellation is already aborted never reaches the server', async () => {
    handler = (_request, response) => response.end('ok');
    const count = requests.length;
    const cancellation = new CancellationSource();
    const reason = new Error('gone already');
    cancellation.abort(reason);
    await assert.rejects(client.postJson('/chat/completions', {}, {}, cancellation), (error) => error === reason);
    const next = await client.postJson('/chat/completions', {}, {}, new CancellationSource());
    assert.equal(await next.body.text(), 'ok');
    assert.equal(requests.length, count + 1, 'only the second call was sent');
  });

  test('a cancellation mid-body fails the pending read with its reason and closes the connection', async () => {
    let held: IncomingMessage | undefined;
    handler = (request, response) => {
      held = request;
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
    };
    const cancellation = new CancellationSource();
    const answer = await client.postJson('/chat/completions', {}, {}, cancellation);
    assert.equal((await answer.body.read())?.toString(), 'data: first\n\n');
    const pending = answer.body.read();
    const closed = closedByClient(held!);
    const reason = new Error('client left mid-stream');
    cancellation.abort(reason);
    await assert.rejects(pending, (error) => error === reason);
    await assert.rejects(answer.body.read(), (error) => error === reason, 'later reads see the same reason');
    await closed;
  });

  test('destroy() releases an unfinished body: the read fails, the connection closes, the next call works', async () => {
    let held: IncomingMessage | undefined;
    handler = (request, response) => {
      held = request;
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
    };
    const answer = await client.postJson('/chat/completions', {}, {}, new CancellationSource());
    await answer.body.read();
    const pending = answer.body.read();
    const closed = closedByClient(held!);
    answer.body.destroy();
    await assert.rejects(pending, BodyReleasedError);
    await closed;
    answer.body.destroy();
    handler = (_request, response) => response.end('again');
    const next = await client.postJson('/chat/completions', {}, {}, new CancellationSource());
    assert.equal(await next.body.text(), 'again');
  });

  test('a connection reset mid-body fails the read with an error the client maps to an upstream connection error', async () => {
    handler = (request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n', () => setImmediate(() => request.socket.destroy()));
    };
    const cancellation = new CancellationSource();
    const answer = await client.postJson('/chat/completions', {}, {}, cancellation);
    let failure: unknown;
    try {
      for (let bytes = await answer.body.read(); bytes !== undefined; bytes = await answer.body.read());
    } catch (error) {
      failure = error;
    }
    assert.ok(failure !== undefined, 'the read failed');
    const mapped = client.transportError(failure, cancellation);
    assert.ok(isUpstreamError(mapped));
    assert.match(mapped.message, /unavailable/);
  });

  test('a reader that stops reading pauses the socket: unread bytes stay bounded, and everything arrives once it reads', async () => {
    const total = 64 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let written = 0;
    let waitingForDrain = false;
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      const pump = (): void => {
        while (written < total) {
          written += chunk.length;
          if (!response.write(chunk)) {
            waitingForDrain = true;
            response.once('drain', () => {
              waitingForDrain = false;
              pump();
            });
            return;
          }
        }
        response.end();
      };
      pump();
    };
    const answer = await client.postJson('/chat/completions', {}, {}, new CancellationSource());
    let received = (await answer.body.read())!.length;
    // Not reading now. The server either blocks (the socket was paused) or, were nothing paused,
    // writes all 64 MiB into the client's memory.
    let lastWritten = -1;
    await until(async () => {
      const settled = written >= total || (waitingForDrain && written === lastWritten);
      lastWritten = written;
      return settled ? true : undefined;
    }, 'the server to block or finish');
    assert.ok(written < total, 'the server could not write the whole body while nobody read');
    assert.ok(answer.body.bufferedBytes <= 256 * 1024, `unread bytes held: ${answer.body.bufferedBytes}`);
    for (let bytes = await answer.body.read(); bytes !== undefined; bytes = await answer.body.read()) received += bytes.length;
    assert.equal(received, total);
  });

  test('UpstreamBody.of is a complete body', async () => {
    const body = UpstreamBody.of('{"a":1}');
    assert.equal(body.done, true);
    assert.equal(await body.text(), '{"a":1}');
    assert.equal(await body.read(), undefined);
  });
});
