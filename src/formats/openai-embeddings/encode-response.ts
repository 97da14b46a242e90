/**
 * Encodes an embeddings result as the OpenAI `CreateEmbeddingResponse` body (docs/spec.md "Embeddings
 * response": object `list`, data[] of `{object: "embedding", embedding, index}` in input order, model,
 * usage `{prompt_tokens, total_tokens}`). `_metadata` is added by the HTTP edge.
 *
 * `base64` follows the OpenAI API and SDK (docs/wire-contracts.md "Embeddings"): standard base64 of the
 * vector as little-endian float32 bytes; the SDK decodes it back to numbers.
 */
import type { EmbeddingEncodingFormat } from './decode-request.ts';

export interface EmbeddingObject {
  object: 'embedding';
  /** The vector as numbers, or as base64 of little-endian float32 bytes. */
  embedding: number[] | string;
  /** Position of the input, starting at 0. */
  index: number;
}

export interface EmbeddingsResponseBody {
  object: 'list';
  data: EmbeddingObject[];
  model: string;
  usage: {
    /** Tokens of all inputs. */
    prompt_tokens: number;
    /** Equal to prompt_tokens: embeddings produce no output tokens. */
    total_tokens: number;
  };
}

/** Standard base64 of the vector as little-endian float32 bytes (explicit, whatever the machine's endianness). */
export function encodeEmbeddingBase64(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
  return bytes.toString('base64');
}

export interface EmbeddingsResponseInput {
  /** Model id shown to the client (the catalogue id). */
  model: string;
  /** One vector per input, in input order. */
  embeddings: number[][];
  encodingFormat: EmbeddingEncodingFormat;
  /** Prompt tokens of the whole request. */
  promptTokens: number;
}

export function encodeEmbeddingsResponse(input: EmbeddingsResponseInput): EmbeddingsResponseBody {
  return {
    object: 'list',
    data: input.embeddings.map((vector, index) => ({
      object: 'embedding',
      // Float output is rounded through float32 too, so that both formats give identical numbers.
      embedding: input.encodingFormat === 'base64' ? encodeEmbeddingBase64(vector) : Array.from(Float32Array.from(vector)),
      index,
    })),
    model: input.model,
    usage: { prompt_tokens: input.promptTokens, total_tokens: input.promptTokens },
  };
}
