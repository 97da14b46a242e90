/**
 * The request span's HTTP side (tracing on): what the server span is started with, from the Fastify
 * request, and its end when the answer is complete or the client left. The edge calls these only when
 * the service has a `Tracing`; with tracing off no request carries a trace.
 */
import type { FastifyRequest } from 'fastify';
import type { RequestTrace, Tracing } from '../telemetry/trace-types.ts';
import { routeFacts } from './route-facts.ts';

/** Probes a load balancer or Prometheus sends every few seconds: not traced (they would drown the traces). */
const UNTRACED_ROUTES: ReadonlySet<string | undefined> = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Starts the request's server span, the child of the caller's `traceparent` when it sent one; undefined
 * for the health, readiness and metrics probes.
 */
export function startRequestTrace(tracing: Tracing, request: FastifyRequest): RequestTrace | undefined {
  const route = routeFacts(request).url;
  if (UNTRACED_ROUTES.has(route)) return undefined;
  const url = request.url;
  const query = url.indexOf('?');
  const socket = request.raw.socket as FastifyRequest['raw']['socket'] | null;
  return tracing.startServerRequest({
    method: request.method,
    route,
    path: query === -1 ? url : url.slice(0, query),
    scheme: request.protocol,
    serverAddress: socket?.localAddress,
    serverPort: socket?.localPort,
    clientAddress: request.ip,
    userAgent: request.headers['user-agent'],
    requestId: request.id,
    headers: request.headers,
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's trace when tracing is on (http/request-trace.ts), else undefined. */
    trace: RequestTrace | undefined;
  }
}
