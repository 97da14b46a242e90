/**
 * Slow clients are cut: a client must not hold a connection (and the request's buffers)
 * forever by sending its headers or its body slowly.
 *
 * - Headers: Node's `headersTimeout` (the server is created with it, and with a connection check
 *   interval short enough to honour it); Node reports the timeout as a `clientError`, answered here
 *   with 408 in the SPEC envelope (no request exists yet, so its metadata has no request id).
 * - Body: one periodic sweep over the requests whose body is still arriving: when no byte arrives for `bodyIdleTimeoutMs` while
 *   the body is incomplete, the request is answered 408 in the SPEC envelope (`connection: close`)
 *   and the connection is closed once the answer is out. Progress is read from the socket's byte
 *   count, so the watchdog works whoever consumes the body (JSON parser or multipart uploads).
 * - Body rate: the same sweep cuts a body that trickles in, as Apache's mod_reqtimeout
 *   (`body=20,MinRate=500`) does: a body gets `bodyTimeoutMs` from its request's start, plus one second
 *   per `bodyMinBytesPerSecond` bytes received so far; past that, 408 as above. One byte every few
 *   seconds never goes silent long enough for the idle rule, but falls behind this one.
 * - The whole request: Node's `requestTimeout` bounds a body that trickles in just fast enough.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../core/service-error.ts';
import { renderError } from './error-envelope.ts';
import { buildMetadata, type Metadata, type MetadataSource } from './metadata.ts';

export interface SlowClientOptions extends MetadataSource {
  /** Longest silence while a body arrives, milliseconds. */
  bodyIdleTimeoutMs: number;
  /** Time a body gets before the rate rule applies, milliseconds (default 20 s). */
  bodyTimeoutMs?: number;
  /** Each this many bytes received extends `bodyTimeoutMs` by one second (default 500). */
  bodyMinBytesPerSecond?: number;
}

function requestTimeoutError(what: string, detail = 'Send the whole request without long pauses.'): ServiceError {
  return new ServiceError({
    status: 408,
    type: 'invalid_request_error',
    code: 'request_timeout',
    message: `The client took too long to send the request ${what}. ${detail}`,
  });
}

/** True when the request announces a body (a length above zero, or a chunked body). */
function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return request.headers['transfer-encoding'] !== undefined;
}

/** How often the body watchdog looks at the socket, milliseconds. */
function checkInterval(timeoutMs: number): number {
  return Math.max(25, Math.min(1000, Math.floor(timeoutMs / 4)));
}

/** A request whose body is still arriving, with the socket progress last seen. */
interface UploadWatch {
  request: FastifyRequest;
  reply: FastifyReply;
  socket: Socket;
  bytesRead: number;
  lastProgress: number;
  /** When the watch began, and the socket's byte count then: the rate rule's origin. */
  startedAt: number;
  startBytes: number;
}

/** Where a request keeps its UploadWatch while it is watched. */
const UPLOAD = Symbol('upload watch');
type WatchedRequest = FastifyRequest & { [UPLOAD]?: UploadWatch | undefined };

export function installSlowClientGuards(app: FastifyInstance, options: SlowClientOptions): void {
  // One sweep over every request still uploading, instead of a timer and two listeners per request:
  // almost every body is complete by the first sweep, and the per-request timer showed in profiles.
  const uploading = new Set<UploadWatch>();
  let sweeper: NodeJS.Timeout | undefined;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? 20_000;
  const bodyMinBytesPerSecond = options.bodyMinBytesPerSecond ?? 500;
  const cut = (upload: UploadWatch, error: ServiceError, details: object, message: string): void => {
    const { request, reply, socket } = upload;
    uploading.delete(upload);
    request.log.info(details, message);
    // The rest of the body will not be read: the connection cannot carry another request.
    reply.raw.once('finish', () => socket.destroy());
    void buildMetadata(request, options, false).then((metadata) => {
      if (reply.sent || socket.destroyed) return;
      void reply.code(408).header('connection', 'close').type('application/json; charset=utf-8').send(renderError(error, metadata));
    });
  };
  const sweep = (): void => {
    const now = Date.now();
    for (const upload of uploading) {
      const { request, reply, socket } = upload;
      if (request.raw.complete || socket.destroyed || reply.sent) {
        uploading.delete(upload);
        continue;
      }
      if (socket.bytesRead !== upload.bytesRead) {
        upload.bytesRead = socket.bytesRead;
        upload.lastProgress = now;
      }
      const received = upload.bytesRead - upload.startBytes;
      const allowedMs = bodyTimeoutMs + (received * 1000) / bodyMinBytesPerSecond;
      if (now - upload.startedAt > allowedMs) {
        cut(
          upload,
          requestTimeoutError(
            'body',
            `A body must arrive at ${bodyMinBytesPerSecond} bytes per second or more after its first ${bodyTimeoutMs} ms.`,
          ),
          { bodyTimeoutMs, bodyMinBytesPerSecond, received },
          'request body too slow: answering 408 and closing the connection',
        );
        continue;
      }
      if (now - upload.lastProgress < options.bodyIdleTimeoutMs) continue;
      cut(
        upload,
        requestTimeoutError('body'),
        { bodyIdleTimeoutMs: options.bodyIdleTimeoutMs },
        'request body stalled: answering 408 and closing the connection',
      );
    }
    if (uploading.size === 0) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };
  app.addHook('onRequest', (request, reply, done) => {
    if (!hasBody(request) || request.raw.complete) return done();
    const socket = request.raw.socket as Socket | null;
    // In-process requests (app.inject, batch lines) have no real socket to watch. `bytesRead` is a
    // getter that asks libuv's handle: read once (three reads were 1% of a chat request's CPU).
    const bytesRead = socket?.bytesRead;
    if (socket === null || typeof bytesRead !== 'number') return done();
    const now = Date.now();
    const upload: UploadWatch = { request, reply, socket, bytesRead, lastProgress: now, startedAt: now, startBytes: bytesRead };
    uploading.add(upload);
    (request as WatchedRequest)[UPLOAD] = upload;
    if (sweeper === undefined) {
      sweeper = setInterval(sweep, checkInterval(Math.min(options.bodyIdleTimeoutMs, bodyTimeoutMs)));
      sweeper.unref();
    }
    done();
  });
  // A JSON body has been read by the time the handler is about to run: stop watching at once, so that the
  // set does not hold every request of the last sweep interval (they would outlive young-generation
  // collections). A multipart upload is read by its handler: the sweep keeps watching it.
  app.addHook('preHandler', (request, _reply, done) => {
    const watched = request as WatchedRequest;
    const upload = watched[UPLOAD];
    if (upload !== undefined && request.raw.complete) {
      uploading.delete(upload);
      watched[UPLOAD] = undefined;
    }
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    clearInterval(sweeper);
    uploading.clear();
    done();
  });
}

function socketMetadata(operator: string): Metadata {
  return {
    creator: operator,
    status: false,
    timestamp: new Date().toISOString(),
    request_id: null,
    processing_time: null,
    tier: null,
    user_total_usage: null,
  };
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/**
 * Fastify's `clientErrorHandler`: Node found a broken or too slow request before Fastify saw one.
 * Answers it in the SPEC envelope where the socket can still carry an answer, and logs at info (a
 * misbehaving client is not a server error).
 */
export function clientErrorHandler(operator: string) {
  return function handleClientError(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    let serviceError: ServiceError;
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      serviceError = requestTimeoutError('headers');
    } else if (error.code === 'HPE_HEADER_OVERFLOW') {
      serviceError = new ServiceError({
        status: 431,
        type: 'invalid_request_error',
        code: 'request_too_large',
        message: 'The request headers are larger than this server accepts.',
      });
    } else {
      serviceError = new ServiceError({
        status: 400,
        type: 'invalid_request_error',
        code: 'invalid_request',
        message: 'The request is not valid HTTP.',
      });
    }
    this.log.info({ code: error.code, status: serviceError.status }, 'client error: answered and closed');
    if (socket.writable) {
      const body = JSON.stringify(renderError(serviceError, socketMetadata(operator)));
      socket.write(
        `HTTP/1.1 ${serviceError.status} ${STATUS_TEXT[serviceError.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      // End (not destroy) so that the answer is flushed; a client that never closes is cut shortly after.
      socket.end();
      setTimeout(() => socket.destroy(), 1000).unref();
      return;
    }
    socket.destroy();
  };
}
