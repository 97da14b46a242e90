/**
 * The plain caller (services/caller.ts) the use cases take, from an authenticated Fastify request.
 */
import type { FastifyRequest } from 'fastify';
import type { Caller } from '../services/caller.ts';

/** The plain caller (services/caller.ts) of an authenticated request. */
export function callerOf(request: FastifyRequest): Caller {
  const auth = request.auth;
  // The edge authenticates every route registered with a permission before its handler runs.
  if (auth === undefined) throw new Error(`${request.url} reached without authentication`);
  return {
    auth,
    requestId: request.id,
    batch: false,
    startedAt: request.startedAt,
    signal: request.clientCancellation(),
    trace: request.trace,
    cacheControl: request.headers['cache-control'],
  };
}
