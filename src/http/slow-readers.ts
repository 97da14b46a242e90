/**
 * Slow readers are cut: a client must not hold a connection (and an open file, a buffered answer)
 * forever by reading an answer slowly. The send side of slow-clients.ts, for every answer but SSE
 * streams (those have their own stall rule, `streamStallTimeoutMs`, in sse-writer.ts):
 *
 * - Rate: an answer gets `sendTimeoutMs` from the moment it starts going out, plus one second per
 *   `sendMinBytesPerSecond` bytes the client has taken so far; past that the connection is closed.
 * - Idle: an answer whose client takes nothing for `sendIdleTimeoutMs` is closed too.
 * - Only the client's time counts: while nothing waits in the process for the client (the answer's
 *   source, a blob store or an upstream, is the slow one), neither clock runs.
 *
 * "Taken" is what left the process: the socket's bytes written minus what still waits in its buffers
 * (the stream's and libuv's queue). What sits in the kernel's send buffer counts as taken, so the rule
 * is generous for the first few hundred kilobytes and strict after. The status line is already out, so
 * there is nothing left to answer: the connection is destroyed and the event logged at info.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface SlowReaderOptions {
  sendTimeoutMs: number;
  sendMinBytesPerSecond: number;
  sendIdleTimeoutMs: number;
}

interface SendWatch {
  request: FastifyRequest;
  reply: FastifyReply;
  socket: Socket;
  startedAt: number;
  startTaken: number;
  taken: number;
  lastProgress: number;
  lastSweep: number;
}

/** Bytes of the socket still waiting in the process (the stream's buffer and libuv's write queue). */
function pendingBytes(socket: Socket): number {
  return socket.writableLength + ((socket as Socket & { _handle?: { writeQueueSize?: number } | null })._handle?.writeQueueSize ?? 0);
}

/** Bytes of the socket that left the process (written, not waiting in the stream's or libuv's buffers). */
function takenBytes(socket: Socket): number {
  return socket.bytesWritten - pendingBytes(socket);
}

function isEventStream(reply: FastifyReply): boolean {
  const type = reply.getHeader('content-type');
  return typeof type === 'string' && type.startsWith('text/event-stream');
}

/** Small answers fit the socket's buffers at once (idle keep-alive bounds the rest): only streams and large bodies are watched. */
function isLarge(payload: unknown): boolean {
  if (typeof payload === 'string') return payload.length > 64 * 1024;
  if (Buffer.isBuffer(payload)) return payload.length > 64 * 1024;
  return typeof (payload as { pipe?: unknown } | null)?.pipe === 'function';
}

export function installSlowReaderGuard(app: FastifyInstance, options: SlowReaderOptions): void {
  const sending = new Set<SendWatch>();
  let sweeper: NodeJS.Timeout | undefined;
  const interval = Math.max(25, Math.min(1000, Math.floor(Math.min(options.sendTimeoutMs, options.sendIdleTimeoutMs) / 4)));
  const sweep = (): void => {
    const now = Date.now();
    for (const watch of sending) {
      const { request, reply, socket } = watch;
      if (reply.raw.writableFinished || socket.destroyed) {
        sending.delete(watch);
        continue;
      }
      const taken = takenBytes(socket);
      const elapsed = now - watch.lastSweep;
      watch.lastSweep = now;
      if (taken !== watch.taken || pendingBytes(socket) === 0) {
        watch.taken = taken;
        watch.lastProgress = now;
      }
      // Nothing waiting for the client: the answer's own source is slow (a blob store, an upstream),
      // not the reader; that time does not count against the client.
      if (pendingBytes(socket) === 0) watch.startedAt += elapsed;
      const received = Math.max(0, watch.taken - watch.startTaken);
      const allowedMs = options.sendTimeoutMs + (received * 1000) / options.sendMinBytesPerSecond;
      const tooSlow = now - watch.startedAt > allowedMs;
      if (!tooSlow && now - watch.lastProgress < options.sendIdleTimeoutMs) continue;
      sending.delete(watch);
      request.log.info(
        { taken: received, sendTimeoutMs: options.sendTimeoutMs, sendMinBytesPerSecond: options.sendMinBytesPerSecond },
        tooSlow ? 'client reads the answer too slowly: connection closed' : 'client stopped reading the answer: connection closed',
      );
      socket.destroy();
    }
    if (sending.size === 0) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };
  // onSend: the answer is about to be written (its headers known, so SSE streams are told apart).
  app.addHook('onSend', (request, reply, payload, done) => {
    const socket = request.raw.socket as Socket | null;
    // In-process requests (app.inject, batch lines) have no socket; SSE streams have their own stall rule.
    if (socket === null || typeof socket.bytesWritten !== 'number' || isEventStream(reply) || !isLarge(payload)) return done(null, payload);
    const now = Date.now();
    const taken = takenBytes(socket);
    const watch: SendWatch = { request, reply, socket, startedAt: now, startTaken: taken, taken, lastProgress: now, lastSweep: now };
    sending.add(watch);
    reply.raw.once('finish', () => sending.delete(watch));
    if (sweeper === undefined) {
      sweeper = setInterval(sweep, interval);
      sweeper.unref();
    }
    done(null, payload);
  });
  app.addHook('onClose', (_instance, done) => {
    clearInterval(sweeper);
    sending.clear();
    done();
  });
}
