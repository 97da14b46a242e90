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
import { isServiceError } from '../core/service-error.ts';
import type { StreamPart } from '../core/stream-parts.ts';
import type { GenerationService, GenerationStreamOptions } from '../services/generation/generation-service.ts';
import type { Admission } from '../services/metering/metering-service.ts';
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

const TOKEN_LIMIT_CODES = new Set(['tpm_exceeded', 'user_total_daily_limit_exceeded', 'user_total_monthly_limit_exceeded']);

/**
 * Admits the request reserving its prompt plus its most output. A request that named no maximum
 * reserves the model's default (often thousands of tokens); when that no longer fits a token budget
 * but the prompt and some output still do, the answer is capped to what is left (it may end with
 * finish reason `length`) instead of refused: otherwise a 10,000-token monthly plan would refuse
 * default requests after a few thousand tokens. A maximum the client named is never lowered.
 */
async function admitWithinBudget(request: FastifyRequest, generationRequest: GenerationRequest, promptTokens: number, defaultMaxOutputTokens: number): Promise<Admission> {
  const named = generationRequest.maxOutputTokens;
  try {
    return await request.admit(promptTokens + (named ?? defaultMaxOutputTokens));
  } catch (error) {
    const remaining = isServiceError(error) && TOKEN_LIMIT_CODES.has(error.code) ? error.details?.['remaining'] : undefined;
    if (named !== undefined || typeof remaining !== 'number' || remaining <= promptTokens) throw error;
    generationRequest.maxOutputTokens = remaining - promptTokens;
    return request.admit(remaining);
  }
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
  const admission = await admitWithinBudget(request, generationRequest, promptTokens, model.maxOutputTokens);
  const parts = await admission.start(() => generation.stream(generationRequest, options), ledgerContextFor(request, model, endpoint), promptTokens);
  return { parts, model, promptTokens };
}
