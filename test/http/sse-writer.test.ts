import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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
