/**
 * Installs the edge on a Fastify instance: request ids, auth and permission checks, JSON parsing,
 * `_metadata` on successes, the SPEC envelope on every error (404 and 405 included), CORS for browser
 * SDK use, the SSE writer and metrics. It decorates each request with what the routes read (`auth`,
 * `startedAt`, `trace`, the client's cancellation, ...), never with an admission: every route's use
 * case admits the request itself and returns its admission with the answer (`reply.sendAnswer`), or
 * with its failure (`AnswerFailure`), and the edge takes `_metadata` and the rate-limit headers from
 * there, and settles an admission the answer left open (a JSON answer's when it is sent, a stream's
 * when the stream ends), so that a reservation never leaks.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, onResponseHookHandler } from 'fastify';
import type { AuthContext, Authenticator } from '../accounts/authenticator.ts';
import { CancellationSource } from '../core/cancellation.ts';
import { DependencyUnavailableError, isUnreachableError } from '../core/circuit-breaker.ts';
import { permissionDenied, ServiceError } from '../core/service-error.ts';
import { buffer } from 'node:stream/consumers';
import { AnswerFailure, type Answer, type ContentAnswer, type EventsAnswer } from '../services/answer.ts';
import type { Admission } from '../services/metering/metering-service.ts';
import { renderError, toServiceError } from './error-envelope.ts';
import { buildMetadata, metadataWith, usageInHand, type Metadata, type MetadataSource } from './metadata.ts';
import type { HttpMetrics } from './metrics.ts';
import { routeFacts } from './route-facts.ts';
import { unknownRouteError, unusableAuthorization } from './route-hints.ts';
import { RouteTable } from './route-table.ts';
import { writeSse } from './sse-writer.ts';
import { drainRequestBody } from './drain-request-body.ts';
import { installJsonParser } from './json-body-parser.ts';
import { startRequestTrace } from './request-trace.ts';
import { SPAN_NAMES, type Tracing } from '../telemetry/trace-types.ts';
import { SWITCHYARD } from '../telemetry/gen-ai-attributes.ts';

export interface EdgeOptions extends MetadataSource {
  authenticator: Authenticator;
  metrics: HttpMetrics;
  /** Seconds of silence before an SSE keep-alive. */
  keepAliveSeconds: number;
  /** Longest wait for a client that stopped reading a stream, milliseconds (then it is cut). */
  streamStallTimeoutMs?: number;
  /** Traces (undefined: tracing off, and no request carries a trace). */
  tracing?: Tracing | undefined;
}

/** True when the client is gone: its request or response was closed before the answer was complete. */
function clientGone(request: FastifyRequest): boolean {
  const socket = request.raw.socket as FastifyRequest['raw']['socket'] | null;
  return socket === null || socket.destroyed;
}

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers':
    'x-request-id, request-id, retry-after, x-ratelimit-limit-requests, x-ratelimit-remaining-requests, x-ratelimit-reset-requests, x-ratelimit-limit-tokens, x-ratelimit-remaining-tokens, x-ratelimit-reset-tokens, x-switchyard-ignored-parameters, deprecation, warning',
};

const BEARER = /^Bearer\s+(.+)$/i;
const RESPONSE = Symbol('raw response');
const CANCELLATION = Symbol('client cancellation');

/** The key from `Authorization: Bearer <key>`, else from `x-api-key`. */
export function presentedKey(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const match = BEARER.exec(authorization.trim());
    if (match !== null) return match[1]!.trim();
  }
  const apiKey = request.headers['x-api-key'];
  return typeof apiKey === 'string' ? apiKey.trim() : undefined;
}

/** A short description of why a request ended, without a stack. */
function describeReason(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

export function installEdge(app: FastifyInstance, options: EdgeOptions): void {
  const routes = new RouteTable();
  app.addHook('onRoute', (route) => routes.add(route.method, route.url, route.config?.switchyard?.format));
  decorateRequests(app);
  decorateReplies(app, options);
  installJsonParser(app);
  // The per-request hooks use callbacks, not async functions: on the common path (a cached key, a
  // token route) they finish synchronously, and skipping a promise per hook shows in the gateway's CPU.
  app.addHook('onRequest', authenticationHook(options));
  app.addHook('onResponse', responseEndHook(options));
  app.setErrorHandler(errorHandler(options));
  app.setNotFoundHandler(notFoundHandler(options, routes));
}

/** What the edge attaches to every request: auth, timing, the trace, the client's cancellation. */
function decorateRequests(app: FastifyInstance): void {
  app.decorateRequest('auth', undefined);
  app.decorateRequest('startedAt', 0n);
  app.decorateRequest('usageSnapshot', undefined);
  app.decorateRequest('routeFactsCache', undefined);
  app.decorateRequest('trace', undefined);
  // A CancellationSource, not an AbortController: no EventTarget per request (core/cancellation.ts).
  app.decorateRequest('clientCancellation', function clientCancellation(this: FastifyRequest) {
    const state = this as FastifyRequest & { [RESPONSE]?: ServerResponse; [CANCELLATION]?: CancellationSource };
    let cancellation = state[CANCELLATION];
    if (cancellation === undefined) {
      const created = new CancellationSource();
      cancellation = created;
      state[CANCELLATION] = created;
      const response = state[RESPONSE];
      // `close` on the response fires both when the answer is complete and when the client leaves
      // early; only the latter leaves it unfinished. It fires once (node guards it), so `on`: `once`
      // wraps and later removes the listener, for every request.
      response?.on('close', () => {
        if (!response.writableFinished) created.abort();
      });
    }
    return cancellation;
  });
  app.decorateRequest('clientSignal', function clientSignal(this: FastifyRequest) {
    return this.clientCancellation().signal;
  });
}

/** `reply.sendData` (a body of a route without an admission) and `reply.sendAnswer` (a use case's answer). */
function decorateReplies(app: FastifyInstance, options: EdgeOptions): void {
  app.decorateReply('sendData', function sendData(this: FastifyReply, body: Record<string, unknown>, statusCode = 200) {
    const request = this.request;
    const usage = usageInHand(request);
    if (usage !== undefined) return sendJson(this, body, statusCode, metadataWith(request, options, true, usage));
    return buildMetadata(request, options, true).then((metadata) => sendJson(this, body, statusCode, metadata));
  });
  // Synchronous for a JSON answer (its admission has the usage figures): no promise per answer.
  app.decorateReply('sendAnswer', function sendAnswer(this: FastifyReply, answer: Answer) {
    if (answer.stream) return streamEvents(this, answer, options);
    // The safety net: an admission must never keep its reservation (a use case settles its own; one
    // left open is settled with nothing used). A request-only admission has nothing to settle.
    if (answer.admission !== undefined && !answer.admission.isSettled) void settleLeftOpen(this.request, answer.admission);
    if ('content' in answer) return sendContent(this, answer);
    void this.headers(answer.headers);
    const metadata = metadataWith(this.request, options, true, answer.admission.totalUsage, answer.admission);
    if (answer.cache !== undefined) metadata.cache = answer.cache;
    return sendJson(this, answer.body, 200, metadata);
  });
}

function settleLeftOpen(request: FastifyRequest, admission: Admission): Promise<void> {
  return admission.settle(undefined).catch((error: unknown) => request.log.warn({ err: error }, 'settling an open admission failed'));
}

/** Files up to this size are read whole and sent in one write; larger ones are streamed. */
const BUFFERED_CONTENT_BYTES = 1024 * 1024;

/**
 * Raw bytes, not wrapped in `_metadata`. Small files go out in one write so the answer is complete
 * the moment its last byte is sent (a streamed answer ends one read later, after the client may
 * already have everything, which keeps the connection busy a little longer than needed).
 */
async function sendContent(reply: FastifyReply, answer: ContentAnswer): Promise<FastifyReply> {
  const { content } = answer;
  void reply.type(content.mediaType).headers(answer.headers);
  if (content.bytes <= BUFFERED_CONTENT_BYTES) return reply.send(await buffer(content.data));
  return reply.header('content-length', content.bytes).send(content.data);
}

function sendJson(reply: FastifyReply, body: Record<string, unknown>, statusCode: number, metadata: Metadata): FastifyReply {
  // Bodies are built fresh for each answer, so `_metadata` is added in place rather than by copying.
  body['_metadata'] = metadata;
  return reply.code(statusCode).type('application/json; charset=utf-8').send(body);
}

/** Streams an answer's events through the single SSE writer. Resolves when the stream ends. */
async function streamEvents(reply: FastifyReply, answer: EventsAnswer, options: EdgeOptions): Promise<void> {
  const request = reply.request;
  reply.hijack();
  const writeOptions = {
    headers: {
      ...(request.headers.origin === undefined ? {} : CORS_HEADERS),
      'x-request-id': request.id,
      'request-id': request.id,
      ...answer.headers,
    },
    keepAliveMs: options.keepAliveSeconds * 1000,
    ...(answer.keepAlive === undefined ? {} : { keepAlive: answer.keepAlive }),
    ...(options.streamStallTimeoutMs === undefined ? {} : { stallTimeoutMs: options.streamStallTimeoutMs }),
    onStall: () =>
      request.log.info(
        { stallTimeoutMs: options.streamStallTimeoutMs },
        'client stopped reading the stream: closed it and aborted the upstream',
      ),
  };
  // Metrics: the onResponse hook still runs for a hijacked reply, when the stream has ended.
  try {
    const outcome = await writeSse(reply.raw, answer.events, writeOptions);
    if (outcome === 'client-left') {
      request.log.info('client disconnected during the stream');
      request.trace?.end(499);
    }
  } catch (error) {
    // A client that left mid-stream is not a server failure: one line at info, no stack.
    if (clientGone(request)) {
      request.log.info({ reason: describeReason(error) }, 'client disconnected during the stream');
      request.trace?.end(499);
    } else {
      request.log.error({ err: error }, 'stream failed');
      request.trace?.fail(error, 500);
    }
    if (!reply.raw.writableEnded) reply.raw.end();
  } finally {
    // The stream's meter settles when the stream ends; one never pulled (the client left first) is settled here.
    if (!answer.admission.isSettled) await settleLeftOpen(request, answer.admission);
  }
}

/** onRequest: request id and CORS headers, the request's trace, then the key and the route's permission. */
function authenticationHook(options: EdgeOptions): onRequestHookHandler {
  const tracing = options.tracing;
  return (request, reply, done) => {
    request.startedAt = process.hrtime.bigint();
    (request as FastifyRequest & { [RESPONSE]?: ServerResponse })[RESPONSE] = reply.raw;
    void reply.header('x-request-id', request.id).header('request-id', request.id);
    // Only browsers send Origin and read CORS headers; SDK and server clients get none of those bytes.
    if (request.headers.origin !== undefined) void reply.headers(CORS_HEADERS);
    if (tracing !== undefined) {
      const trace = (request.trace = startRequestTrace(tracing, request));
      // A client that leaves before the answer is complete: no `finish`, so onResponse may never run.
      // Only a recorded trace has a span to end (no listener for the requests the sampler left out).
      if (trace?.recording === true) {
        const response = reply.raw;
        response.on('close', () => {
          if (!response.writableFinished) trace.end(499);
        });
      }
    }
    const routeConfig = routeFacts(request).settings;
    if (routeConfig === undefined || routeConfig.permission === null) return done();
    const permission = routeConfig.permission;
    const accept = (auth: AuthContext): void => {
      request.auth = auth;
      if (permission !== 'authenticated' && !auth.permissions.has(permission)) throw permissionDenied(permission);
    };
    const next = request.trace?.recording === true ? tracedAuthentication(request, done) : done;
    try {
      const secret = presentedKey(request);
      if (secret === undefined) {
        const refusal = unusableAuthorization(request.headers.authorization);
        if (refusal !== undefined) throw refusal;
      }
      const cached = options.authenticator.authenticateCached(secret);
      if (cached !== undefined) {
        accept(cached);
        return next();
      }
      options.authenticator
        .authenticate(secret)
        .then((auth) => accept(auth))
        .then(() => next(), next);
    } catch (error) {
      next(error as Error);
    }
  };
}

/** onResponse: the trace and metrics. */
function responseEndHook(options: EdgeOptions): onResponseHookHandler {
  return (request, reply, done) => {
    request.trace?.end(reply.statusCode);
    options.metrics.observe(request.method, routeFacts(request).url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  };
}

/** Every error answer: the SPEC envelope in the route's client format, with `info_metadata`. */
function errorHandler(options: EdgeOptions) {
  return async (thrown: unknown, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    // A use case that failed after its admission: the error answer carries the admission's headers and figures.
    const admission = thrown instanceof AnswerFailure ? thrown.admission : undefined;
    const error = thrown instanceof AnswerFailure ? thrown.failure : thrown;
    if (clientGone(request)) {
      // Nothing can reach the client any more: log it once at info, without a stack.
      request.log.info({ reason: describeReason(error) }, 'client disconnected before the answer was complete');
      return reply.code(499).send();
    }
    const serviceError = toServiceError(error);
    // A dependency that is down is logged once by its circuit breaker (down, then back with the counts),
    // not once per refused request.
    if (serviceError instanceof DependencyUnavailableError || isUnreachableError(error)) {
      request.log.debug({ err: serviceError.cause ?? error }, 'request refused: a dependency is unavailable');
    } else if (serviceError.status >= 500) request.log.error({ err: serviceError.cause ?? error }, 'request failed');
    request.trace?.fail(serviceError, serviceError.status);
    const metadata = await buildMetadata(request, options, false, admission);
    void reply.headers(admission === undefined ? serviceError.headers : { ...admission.headers, ...serviceError.headers });
    // The client may still be uploading (a 413, or a refusal before the body was read): let it finish,
    // so that it reads this answer rather than a broken pipe.
    await drainRequestBody(request.raw);
    // The body watch (slow-clients.ts) may have answered 408 meanwhile, for a body below the minimum rate.
    if (reply.sent) return reply;
    return reply
      .code(serviceError.status)
      .type('application/json; charset=utf-8')
      .send(renderError(serviceError, metadata, routeFacts(request).settings?.format));
  };
}

/** 404 and 405 (and CORS preflights of known paths), in the SPEC envelope. */
function notFoundHandler(options: EdgeOptions, routes: RouteTable) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const path = request.url.split('?')[0] ?? request.url;
    const allowed = routes.methodsFor(path);
    if (allowed.length > 0 && request.method === 'OPTIONS') {
      return reply
        .code(204)
        .headers({
          'access-control-allow-methods': allowed.join(', '),
          'access-control-allow-headers': request.headers['access-control-request-headers'] ?? '*',
          'access-control-max-age': '86400',
        })
        .send();
    }
    // A path near a known one (`/v1` missing or doubled) says which, in that route's client format.
    const unknown = allowed.length > 0 ? undefined : unknownRouteError(request.method, path, routes);
    const error =
      unknown?.error ??
      new ServiceError({
        status: 405,
        type: 'invalid_request_error',
        code: 'method_not_allowed',
        message: `${request.method} is not allowed on ${path}. Allowed: ${allowed.join(', ')}.`,
        headers: { allow: allowed.join(', ') },
      });
    const format = unknown?.intended === undefined ? undefined : routes.formatFor(unknown.intended);
    const metadata = await buildMetadata(request, options, false);
    return reply
      .code(error.status)
      .headers(error.headers)
      .type('application/json; charset=utf-8')
      .send(renderError(error, metadata, format));
  };
}

/** Wraps the auth hook's `done` in the authentication span: it ends with the verdict (a refusal fails it). */
function tracedAuthentication(request: FastifyRequest, done: (error?: Error) => void): (error?: Error) => void {
  const span = request.trace!.startStep(SPAN_NAMES.auth);
  return (error?: Error) => {
    const auth = request.auth;
    if (auth !== undefined) {
      for (const traced of [span, request.trace!]) {
        traced.setAttribute(SWITCHYARD.keyId, auth.keyId);
        traced.setAttribute(SWITCHYARD.organizationId, auth.organizationId);
        traced.setAttribute(SWITCHYARD.tier, auth.tier);
      }
    }
    if (error !== undefined) span.fail(error);
    span.end();
    done(error);
  };
}
