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
 * - The whole request: Node's `requestTimeout` bounds a body that trickles in just fast enough.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../core/service-error.ts';
import { renderError } from './error-envelope.ts';
import { buildMetadata, type Metadata, type MetadataSource } from './metadata.ts';

export interface SlowClientOptions extends MetadataSource {
  bodyIdleTimeoutMs: number;
}

function requestTimeoutError(what: string): ServiceError {
  return new ServiceError({
    status: 408,
    type: 'invalid_request_error',
    code: 'request_timeout',
    message: `The client took too long to send the request ${what}. Send the whole request without long pauses.`,
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
}

/** Where a request keeps its UploadWatch while it is watched. */
const UPLOAD = Symbol('upload watch');
type WatchedRequest = FastifyRequest & { [UPLOAD]?: UploadWatch | undefined };

export function installSlowClientGuards(app: FastifyInstance, options: SlowClientOptions): void {
  // One sweep over every request still uploading, instead of a timer and two listeners per request:
  // almost every body is complete by the first sweep, and the per-request timer showed in profiles.
  const uploading = new Set<UploadWatch>();
  let sweeper: NodeJS.Timeout | undefined;
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
        continue;
      }
      if (now - upload.lastProgress < options.bodyIdleTimeoutMs) continue;
      uploading.delete(upload);
      request.log.info({ bodyIdleTimeoutMs: options.bodyIdleTimeoutMs }, 'request body stalled: answering 408 and closing the connection');
      // The rest of the body will not be read: the connection cannot carry another request.
      reply.raw.once('finish', () => socket.destroy());
      void buildMetadata(request, options, false).then((metadata) => {
        if (reply.sent || socket.destroyed) return;
        void reply
          .code(408)
          .header('connection', 'close')
          .type('application/json; charset=utf-8')
          .send(renderError(requestTimeoutError('body'), metadata));
      });
    }
    if (uploading.size === 0) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };
  app.addHook('onRequest', (request, reply, done) => {
    if (!hasBody(request) || request.raw.complete) return done();
    const socket = request.raw.socket as Socket | null;
    // In-process requests (app.inject, batch lines) have no real socket to watch.
    if (socket === null || typeof socket.bytesRead !== 'number') return done();
    const upload: UploadWatch = { request, reply, socket, bytesRead: socket.bytesRead, lastProgress: Date.now() };
    uploading.add(upload);
    (request as WatchedRequest)[UPLOAD] = upload;
    if (sweeper === undefined) {
      sweeper = setInterval(sweep, checkInterval(options.bodyIdleTimeoutMs));
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
