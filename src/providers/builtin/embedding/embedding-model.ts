/**
 * The built-in `EmbeddingModel`: the Universal Sentence Encoder lite run by a `SentenceEncoder` (worker
 * thread, batched). Vectors have 512 dimensions and unit length. Token usage is counted with
 * core/count-tokens.ts (the encoder's own sentencepiece count is not what callers are billed on) and is
 * therefore marked `estimated`.
 */
import type { CallOptions, EmbeddingModel, EmbeddingResult } from '../../../core/language-model.ts';
import { countTextTokens } from '../../../core/count-tokens.ts';
import { invalidParameter } from '../../../core/service-error.ts';
import { leaseSharedSentenceEncoder } from './embedding-sentence-encoder.ts';
import type { SentenceEncoder } from './embedding-sentence-encoder.ts';

/**
 * Shortens unit vectors to `dimensions` values and restores unit length. The encoder was not trained
 * for shortened vectors (unlike OpenAI's text-embedding-3 models), so this is an approximation that
 * keeps cosine similarities meaningful but less precise; it exists so that clients sending
 * `dimensions` get what they asked for.
 */
export function shortenVector(vector: Float32Array, dimensions: number): number[] {
  const shortened = Array.from(vector.subarray(0, dimensions));
  const length = Math.hypot(...shortened);
  return length === 0 ? shortened : shortened.map((value) => value / length);
}

export function createBuiltinEmbeddingModel(encoder: SentenceEncoder): EmbeddingModel {
  return {
    // The encoder batches internally; this only bounds one call's memory.
    maxBatchSize: 2048,
    async embed(inputs: string[], options: CallOptions & { dimensions?: number }): Promise<EmbeddingResult> {
      const dimensions = options.dimensions ?? encoder.dimensions;
      if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > encoder.dimensions) {
        throw invalidParameter(
          'dimensions',
          `This model produces vectors of at most ${encoder.dimensions} dimensions; 'dimensions' must be an integer from 1 to ${encoder.dimensions}.`,
        );
      }
      const vectors = await encoder.embed(inputs, options.signal, options.tenant);
      return {
        embeddings: vectors.map((vector) => (dimensions === encoder.dimensions ? Array.from(vector) : shortenVector(vector, dimensions))),
        inputTokens: inputs.reduce((sum, input) => sum + countTextTokens(input), 0),
        estimated: true,
      };
    },
  };
}

/**
 * The engine the built-in provider plugs in (engine name `universal-sentence-encoder-lite`): the model
 * on the encoder shared by every built-in engine of `owner` (the provider's context object).
 * `close()` releases this engine's hold on the encoder.
 */
export function createBuiltinEmbeddingEngine(owner: object): EmbeddingModel & { close(): Promise<void> } {
  const lease = leaseSharedSentenceEncoder(owner);
  return { ...createBuiltinEmbeddingModel(lease.encoder), close: () => lease.release() };
}
