import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { SseEvent } from '../../src/core/sse-event.ts';
import { writeSse } from '../../src/http/sse-writer.ts';

/** A real HTTP server whose one route writes `source()` with writeSse. */
describe('writeSse', () => {
  let server: Server;
  let origin: string;
  let source: () => AsyncIterable<SseEvent>;
  let stallTimeoutMs: number | undefined;

  before(async () => {
    server = createServer((_request, response) => {
      void writeSse(response, source(), {
        headers: { 'x-test': 'yes' },
        keepAliveMs: 60_000,
        ...(stallTimeoutMs === undefined ? {} : { stallTimeoutMs }),
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('events that are ready at once leave with the head: status, headers and every event, then the end', async () => {
    source = async function* () {
      yield { data: { n: 1 } };
      yield { event: 'done', data: '[DONE]' };
    };
    const response = await fetch(origin);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(response.headers.get('x-test'), 'yes');
    assert.equal(await response.text(), 'data: {"n":1}\n\nevent: done\ndata: [DONE]\n\n');
  });

  test(
    'a source that is not ready yet does not hold the head back: the client has the status before the first event',
    { timeout: 10_000 },
    async () => {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      source = async function* () {
        await released; // only once the client has seen the head
        yield { data: 'first' };
      };
      const response = await fetch(origin); // would wait for ever if the head waited for the first event
      assert.equal(response.status, 200);
      release();
      assert.equal(await response.text(), 'data: first\n\n');
    },
  );

  test(
    'a full socket buffer that drains while the source is quiet is not taken for a client that stopped reading',
    { timeout: 20_000 },
    async () => {
      // A 40 KB burst fills the response's buffer (its write returns false) without reaching the writer's
      // own flush threshold; the client reads it all while the source waits before its next event. Missing
      // that `drain` used to hold the stream until the stall timeout, then cut it.
      stallTimeoutMs = 5_000;
      const burst = 'x'.repeat(1000);
      source = async function* () {
        for (let index = 0; index < 40; index++) yield { data: burst };
        await new Promise((resolve) => setTimeout(resolve, 200));
        yield { data: 'last' };
      };
      try {
        const response = await fetch(origin);
        const text = await response.text();
        assert.equal(text.split('\n\n').filter((event) => event !== '').length, 41);
        assert.equal(text.endsWith('data: last\n\n'), true);
      } finally {
        stallTimeoutMs = undefined;
      }
    },
  );

  test('an empty source still ends the response properly', async () => {
    source = async function* () {};
    const response = await fetch(origin);
    assert.equal(response.status, 200);
    assert.equal(await response.text(), '');
  });
});

describe('writeSse and a slow reader', () => {
  const LISTENED = ['close', 'error', 'drain', 'finish'] as const;
  const listeners = (response: ServerResponse): number => LISTENED.reduce((sum, name) => sum + response.listenerCount(name), 0);

  test(
    '1,000 writes that each wait for drain leave no listener behind and raise no MaxListenersExceededWarning',
    { timeout: 60_000 },
    async () => {
      const warnings: string[] = [];
      const onWarning = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`);
      process.on('warning', onWarning);
      // Each event is larger than the response's high-water mark (16 KiB up to Node 20, 64 KiB from Node
      // 22), so every write returns false and the writer waits for `drain`: one wait per event, 1,000
      // waits in one stream.
      let event = '';
      const WRITES = 1000;
      let baseline = -1;
      let most = 0;
      let waits = 0;
      const closed = new Promise<ServerResponse>((resolve) => {
        const server = createServer((_request, response) => {
          response.on('close', () => setImmediate(() => resolve(response)));
          baseline = listeners(response);
          event = 'y'.repeat(response.writableHighWaterMark + 1024);
          const write = response.write.bind(response) as (chunk: string) => boolean;
          response.write = ((chunk: string) => {
            const ready = write(chunk);
            if (!ready) waits++;
            most = Math.max(most, listeners(response));
            return ready;
          }) as typeof response.write;
          void writeSse(
            response,
            (async function* () {
              for (let index = 0; index < WRITES; index++) {
                await nextTurn(); // one event per turn: each is its own write
                yield { data: event };
              }
            })(),
            { headers: {}, keepAliveMs: 60_000, stallTimeoutMs: 30_000 },
          ).finally(() => server.close());
        });
        server.listen(0, '127.0.0.1', () => {
          // A raw socket reads slowly: it pauses after every chunk it receives.
          const socket = connect((server.address() as AddressInfo).port, '127.0.0.1', () => {
            socket.write('GET / HTTP/1.1\r\nhost: test\r\nconnection: close\r\n\r\n');
          });
          socket.on('data', () => {
            socket.pause();
            void sleep(1).then(() => socket.resume());
          });
          socket.on('error', () => undefined);
        });
      });
      try {
        const response = await closed;
        assert.ok(waits >= WRITES - 1, `every write but the last (it ends the body) waited for drain: ${waits} waits`);
        // The writer holds its own `close` listener and at most one wait (drain, close, error) at a time.
        assert.ok(most <= baseline + 4, `listeners during the stream: at most ${most} against a baseline of ${baseline}`);
        assert.equal(listeners(response), baseline, 'listeners once the stream has ended');
        await nextTurn();
        assert.deepEqual(
          warnings.filter((warning) => warning.includes('MaxListenersExceeded')),
          [],
        );
      } finally {
        process.off('warning', onWarning);
      }
    },
  );
});
