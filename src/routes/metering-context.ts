/**
 * Small pieces every metered route shares: which model answers when a request names none, and the
 * plain caller the use cases take.
 */
import type { FastifyRequest } from 'fastify';
import type { Capability, ModelConfig } from '../config/index.ts';
import { notFound } from '../core/service-error.ts';
import type { Caller } from '../services/caller.ts';

/**
 * The model used when a request names none: the first catalogue model with `capability`. Configured
 * models come before the built-in ones, so an operator's own model wins; on a fresh install it is the
 * built-in engine. 404 on `model` when there is none.
 */
export function defaultModelWith(models: readonly ModelConfig[], capability: Capability, what: string): string {
  const model = models.find((candidate) => candidate.capabilities.includes(capability));
  if (model === undefined) throw notFound('model_not_found', `No ${what} model is configured; name one in 'model'.`, 'model');
  return model.id;
}

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
  };
}
