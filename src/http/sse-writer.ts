/**
 * The one SSE writer of the server (docs/design.md convention 3). It sends headers at once (no delay before
 * the first byte), serialises events, respects backpressure (waits for `drain`), sends keep-alives while
 * the source is silent, and stops pulling from the source when the client goes away (the source's
 * `return()` runs, which aborts the upstream call). A client that stops reading (its socket buffer stays
 * full for `stallTimeoutMs`) is treated as gone: the connection is closed and the upstream aborted,
 * so that it cannot hold an upstream request and its buffers forever.
 */
import type { ServerResponse } from 'node:http';
import { batchesOf } from '../core/batched.ts';
import type { SseEvent } from '../core/sse-event.ts';

/** Serialises one event: optional `event:` line, one `data:` line per line of the payload. */
export function serializeSseEvent(event: SseEvent): string {
  if (typeof event.data !== 'string') {
    // JSON.stringify never writes a raw line break, so the payload is one `data:` line as it is.
    const json = JSON.stringify(event.data);
    return event.event === undefined ? `data: ${json}\n\n` : `event: ${event.event}\ndata: ${json}\n\n`;
  }
  const payload = event.data;
  const data = payload.includes('\n')
    ? payload
        .split('\n')
        .map((line) => `data: ${line}`)
        .join('\n')
    : `data: ${payload}`;
  return event.event === undefined ? `${data}\n\n` : `event: ${event.event}\n${data}\n\n`;
}

const KEEP_ALIVE_COMMENT = ': keep-alive\n\n';

/** Events held for one write are written at once beyond this many characters. */
const FLUSH_CHARACTERS = 64 * 1024;

export interface WriteSseOptions {
  headers: Record<string, string>;
  keepAliveMs: number;
  keepAlive?: SseEvent;
  /** Longest wait for a full socket buffer to drain, milliseconds; then the client is cut. Default: no limit. */
  stallTimeoutMs?: number;
  /** Told once when a client that stopped reading is cut. */
  onStall?: () => void;
}

/**
 * Resolves on `drain` or `close`, or after `timeoutMs` (true: the wait timed out). Every listener and the
 * timer it sets are removed when the wait ends, whichever way it ends: a slow reader makes one wait per
 * full buffer, and listeners left behind would pile up on the response for the whole stream.
 */
function waitForDrain(response: ServerResponse, timeoutMs: number | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const finish = (stalledWaiting: boolean): void => {
      response.off('drain', onDrain);
      response.off('close', onDrain);
      response.off('error', onDrain);
      if (timer !== undefined) clearTimeout(timer);
      resolve(stalledWaiting);
    };
    // `error` ends the wait like `close` (the response is gone either way; `close` follows it).
    const onDrain = (): void => finish(false);
    response.on('drain', onDrain);
    response.on('close', onDrain);
    response.on('error', onDrain);
    if (timeoutMs !== undefined) timer = setTimeout(() => finish(true), timeoutMs);
  });
}

/** How a stream ended: the source finished, the client went away, or the client stopped reading and was cut. */
export type SseOutcome = 'completed' | 'client-left' | 'stalled';

/** Writes the stream to `response`; resolves when the source ends or the client leaves. */
export async function writeSse(response: ServerResponse, events: AsyncIterable<SseEvent>, options: WriteSseOptions): Promise<SseOutcome> {
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    ...options.headers,
  });
  // The head leaves with the first events (one write, one syscall): the generation service resolves a
  // stream only once its first batch is ready. Should that batch not be there within this turn of the
  // event loop, the head goes out alone, so the client learns the status at once either way.
  let wroteOnce = false;
  setImmediate(() => {
    if (!wroteOnce && !response.destroyed && !response.writableEnded) response.flushHeaders();
  });
  const keepAliveText = options.keepAlive === undefined ? KEEP_ALIVE_COMMENT : serializeSseEvent(options.keepAlive);
  let closed = response.destroyed;
  let stalled = false;
  const onClose = (): void => {
    closed = true;
  };
  response.once('close', onClose);
  // One timer, pushed back (refresh) by every event: a keep-alive goes out only after a silence.
  const timer = setTimeout(function keepAlive() {
    if (closed) return;
    response.write(keepAliveText);
    timer.refresh();
  }, options.keepAliveMs);
  timer.unref();
  // Events that are ready together (an upstream read often carries many) leave as one write, one
  // HTTP chunk and one syscall: they are joined in `pending` and written once the current burst of
  // promise jobs has run (process.nextTick runs after the microtask queue drains), so the first byte
  // is not delayed. A burst larger than FLUSH_CHARACTERS is written at once.
  let pending = '';
  let flushScheduled = false;
  /**
   * Set when a write finds the socket buffer full: the wait for `drain` starts at that write, not when
   * the loop next looks, so a `drain` that comes while the loop awaits the source is not missed.
   */
  let drained: Promise<boolean> | undefined;
  const flush = (): void => {
    flushScheduled = false;
    if (pending === '' || closed) return;
    const chunk = pending;
    pending = '';
    wroteOnce = true;
    if (!response.write(chunk) && drained === undefined) {
      drained = waitForDrain(response, options.stallTimeoutMs);
    }
  };
  // A batched source (core/batched.ts) hands over every event one upstream read produced at once.
  const iterator = batchesOf(events)[Symbol.asyncIterator]();
  try {
    while (!closed) {
      const next = await iterator.next();
      if (next.done === true) break;
      if (closed) break;
      timer.refresh();
      for (const event of next.value) pending += serializeSseEvent(event);
      if (pending.length >= FLUSH_CHARACTERS) flush();
      else if (!flushScheduled) {
        flushScheduled = true;
        process.nextTick(flush);
      }
      if (drained !== undefined && !closed) {
        const stalledWaiting = await drained;
        drained = undefined;
        if (stalledWaiting) {
          options.onStall?.();
          stalled = true;
          closed = true;
          response.destroy();
        }
      }
    }
  } finally {
    clearTimeout(timer);
    response.off('close', onClose);
    if (closed) {
      // The client left: let the source clean up (aborts the upstream request).
      await iterator.return?.();
    }
    // What the last burst left (also when the source failed: the events before the failure count),
    // written with the end of the body in one write.
    if (!response.writableEnded) {
      const last = closed ? '' : pending;
      pending = '';
      wroteOnce = true;
      response.end(last);
    }
  }
  return stalled ? 'stalled' : closed ? 'client-left' : 'completed';
}
