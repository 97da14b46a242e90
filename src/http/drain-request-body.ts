/**
 * Reads and discards what is left of a request body before an early answer (413, 401, ...) is sent.
 *
 * An answer sent while the client is still uploading is followed by closing the connection (Fastify adds
 * `connection: close`); the client's next write then fails with EPIPE or ECONNRESET, and HTTP clients
 * such as undici report that instead of the answer. Draining first lets the client finish its upload
 * and read the status. The drain is bounded in bytes and in idle time, so a client cannot keep the
 * server reading forever: past the bound the answer is sent and the connection closed as before.
 */
import type { IncomingMessage } from 'node:http';

export interface DrainBounds {
  /** Most bytes read and discarded, bytes. */
  maxBytes: number;
  /** Longest wait for the next chunk, milliseconds. */
  idleTimeoutMs: number;
}

/** Default bounds: 256 MiB, and 10 s without a byte. */
export const DEFAULT_DRAIN_BOUNDS: DrainBounds = Object.freeze({ maxBytes: 256 * 1024 * 1024, idleTimeoutMs: 10_000 });

/** Resolves when the body has ended, the bound is reached or the connection is gone; never rejects. */
export function drainRequestBody(raw: IncomingMessage, bounds: DrainBounds = DEFAULT_DRAIN_BOUNDS): Promise<void> {
  if (raw.complete || raw.destroyed || raw.readableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    let received = 0;
    let timer: NodeJS.Timeout | undefined;
    const finish = (): void => {
      clearTimeout(timer);
      raw.removeListener('data', onData);
      raw.removeListener('end', finish);
      raw.removeListener('error', finish);
      raw.removeListener('close', finish);
      resolve();
    };
    const armTimer = (): void => {
      clearTimeout(timer);
      timer = setTimeout(finish, bounds.idleTimeoutMs);
      timer.unref();
    };
    const onData = (chunk: Buffer | string): void => {
      received += chunk.length;
      if (received > bounds.maxBytes) finish();
      else armTimer();
    };
    raw.on('data', onData);
    raw.once('end', finish);
    raw.once('error', finish);
    raw.once('close', finish);
    armTimer();
    raw.resume();
  });
}
