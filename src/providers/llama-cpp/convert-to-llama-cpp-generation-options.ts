/**
 * Converts the canonical sampling fields into node-llama-cpp's generation options (node-llama-cpp 3.x,
 * `dist/evaluator/LlamaChat/LlamaChat.d.ts`, `LLamaChatGenerateResponseOptions`).
 *
 * - `temperature` defaults to 1.0 (the SPEC default of chat completions and messages); 0 is greedy.
 * - `top_p`, `top_k` and `seed` are passed through (llama.cpp applies them only when temperature > 0).
 * - No repeat penalty: the SPEC has no such field and clients expect the model's own distribution
 *   (llama.cpp's server also defaults to none).
 * - Stop sequences become custom stop triggers: node-llama-cpp holds back text that may be the start of
 *   one, so a stop sequence never reaches the client, even split across tokens.
 * - The thinking budget caps thought-segment tokens of models whose template has them.
 * - The completion is capped by the tokens left in the sequence's context, so that llama.cpp never has
 *   to shift (silently drop) the start of the conversation; reaching that cap finishes with `length`.
 */
import type { GenerationRequest } from '../../core/generation.ts';
import type { LanguageModelSettings } from '../../core/language-model.ts';

/** Sampling temperature when the request names none (SPEC default of chat completions and messages). */
export const DEFAULT_TEMPERATURE = 1;

export interface LlamaCppSamplingOptions {
  temperature: number;
  topP?: number;
  topK?: number;
  seed?: number;
  repeatPenalty: false;
  customStopTriggers?: string[];
  budgets?: { thoughtTokens: number };
}

export function convertToLlamaCppSamplingOptions(request: GenerationRequest): LlamaCppSamplingOptions {
  const options: LlamaCppSamplingOptions = { temperature: request.temperature ?? DEFAULT_TEMPERATURE, repeatPenalty: false };
  if (request.topP !== undefined) options.topP = request.topP;
  if (request.topK !== undefined) options.topK = request.topK;
  if (request.seed !== undefined) options.seed = request.seed;
  const stops = (request.stopSequences ?? []).filter((sequence) => sequence !== '');
  if (stops.length > 0) options.customStopTriggers = stops;
  if (request.thinking !== undefined) options.budgets = { thoughtTokens: request.thinking.budgetTokens };
  return options;
}

/**
 * Completion tokens allowed for this request: the request's cap, else the model config's, but never
 * more than the context has left after the prompt. Tokens.
 */
export function resolveMaxOutputTokens(
  request: GenerationRequest,
  settings: LanguageModelSettings,
  promptTokens: number,
  contextTokens: number,
): number {
  const requested = request.maxOutputTokens ?? settings.defaultMaxOutputTokens ?? Number.POSITIVE_INFINITY;
  return Math.max(1, Math.min(requested, contextTokens - promptTokens));
}
