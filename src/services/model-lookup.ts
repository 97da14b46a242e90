/**
 * How the one-shot model endpoints (embeddings, moderations, images) find their model: the one the
 * request names, checked for the endpoint's capability, or the catalogue's first model that has it.
 */
import type { Capability, ModelConfig } from '../config/index.ts';
import { notFound } from '../core/service-error.ts';

/** Model lookup by id or alias with a capability check (`GenerationService.resolve`). */
export interface ModelResolver {
  resolve(modelName: string, needs?: readonly Capability[], param?: string): { model: ModelConfig };
}

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
