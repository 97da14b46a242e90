/**
 * The shared start of every text-generation route (chat completions, messages, responses): resolve the
 * model (404 before anything is reserved), run the moderation pre-check when the tier or model asks for
 * it (a flagged input is refused before anything is reserved or sent upstream), admit the request against the caller's limits with its
 * token estimate (prompt counted locally plus the most the model may answer), then start the generation
 * metered by that admission, so the reservation is settled with the real usage and the request recorded
 * in the ledger however the answer ends.
 */
import type { FastifyRequest } from 'fastify';
import type { ModelConfig } from '../config/index.ts';
import { countRequestTokens } from '../core/count-tokens.ts';
import type { GenerationRequest } from '../core/generation.ts';
import type { StreamPart } from '../core/stream-parts.ts';
import type { GenerationService, GenerationStreamOptions } from '../services/generation/generation-service.ts';
import type { InputModeration } from '../services/moderation/input-moderation.ts';
import { ledgerContextFor } from './metering-context.ts';

/** What a text-generation route needs. */
export interface GenerationRouteServices {
  generation: Pick<GenerationService, 'stream' | 'resolve'>;
  inputModeration: Pick<InputModeration, 'check'>;
}

export interface MeteredGeneration {
  parts: AsyncIterable<StreamPart>;
  /** The catalogue entry the requested name resolved to (the first candidate; fallbacks may answer). */
  model: ModelConfig;
  /** Prompt tokens counted locally, as reserved. */
  promptTokens: number;
}

export async function startMeteredGeneration(
  request: FastifyRequest,
  services: GenerationRouteServices,
  generationRequest: GenerationRequest,
  options: GenerationStreamOptions,
  endpoint: string,
): Promise<MeteredGeneration> {
  const { generation } = services;
  const { model } = generation.resolve(generationRequest.model);
  await services.inputModeration.check(request.auth!, model, generationRequest, { signal: options.signal });
  const promptTokens = countRequestTokens(generationRequest);
  const admission = await request.admit(promptTokens + (generationRequest.maxOutputTokens ?? model.maxOutputTokens));
  const parts = await admission.start(() => generation.stream(generationRequest, options), ledgerContextFor(request, model, endpoint), promptTokens);
  return { parts, model, promptTokens };
}
