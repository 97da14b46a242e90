/**
 * Small pieces every metered route shares: which model answers when a request names none, and what
 * the usage ledger records about a request besides its usage.
 */
import type { FastifyRequest } from 'fastify';
import type { Capability, ModelConfig } from '../config/index.ts';
import { notFound } from '../core/service-error.ts';
import type { LedgerContext } from '../services/metering/metering-service.ts';

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

/** What the usage ledger records about a request of one of these routes. */
export function ledgerContextFor(request: FastifyRequest, model: ModelConfig, endpoint: string): LedgerContext {
  return { requestId: request.id, model: model.id, endpoint, pricing: model.pricing, batch: request.isBatch, startedAt: request.startedAt };
}
