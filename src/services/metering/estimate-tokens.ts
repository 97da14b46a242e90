/**
 * The token amount reserved against the limits before a call (issue 7): the prompt counted locally
 * with gpt-tokenizer plus the most the model may answer. Settlement later replaces it by the real
 * usage, so an over-estimate only holds budget for the duration of the call.
 */
import { countRequestTokens, countTextTokens } from '../../core/count-tokens.ts';
import type { GenerationRequest } from '../../core/generation.ts';

/**
 * Tokens to reserve for a generation: estimated prompt tokens plus `request.maxOutputTokens`, or the
 * model's `maxOutputTokens` (config `models[].maxOutputTokens`) when the client named no maximum.
 */
export function estimateGenerationTokens(request: GenerationRequest, modelMaxOutputTokens: number): number {
  return countRequestTokens(request) + (request.maxOutputTokens ?? modelMaxOutputTokens);
}

/** Tokens to reserve for an embeddings request: the inputs' tokens (embeddings produce no output tokens). */
export function estimateEmbeddingTokens(inputs: readonly string[]): number {
  return inputs.reduce((sum, input) => sum + countTextTokens(input), 0);
}
