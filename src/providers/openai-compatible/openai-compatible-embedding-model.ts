/**
 * An EmbeddingModel over any OpenAI-compatible `/v1/embeddings` upstream (OpenAI, vLLM, Ollama, TEI,
 * LocalAI), following the OpenAI API reference "Embeddings > Create embeddings": request
 * `{model, input: string[], encoding_format, dimensions?, user?}`, response
 * `{data: [{embedding, index}], usage: {prompt_tokens, total_tokens}}`.
 *
 * Large input arrays are split into upstream-sized batches (`maxBatchSize`, default 256: OpenAI takes
 * 2048 but many self-hosted servers take far fewer), sent a few at a time, and reassembled in input
 * order by each item's `index`. Usage is summed over the batches; when the upstream reports none it is
 * counted locally and marked estimated.
 */
import type { CallOptions, EmbeddingModel, EmbeddingResult } from '../../core/language-model.ts';
import { countTextTokens } from '../../core/count-tokens.ts';
import { upstreamConnectionError } from '../../core/upstream-error.ts';
import type { UpstreamHttpClient } from '../shared/http-client.ts';
import { asArray, asNumber, asObject } from '../shared/lenient-json.ts';
import { postForUpstreamJson } from '../shared/post-to-upstream.ts';
import { openAICompatibleStatusError } from './openai-compatible-error.ts';
import { abortSignalOf } from '../../core/cancellation.ts';

/**
 * POSTs JSON to an OpenAI-compatible endpoint and returns the parsed JSON reply
 * (shared/post-to-upstream.ts, with this folder's status errors). Throws the mapped UpstreamError for an
 * error status (openai-compatible-error.ts), a transport failure or a body that is not JSON; rejects with
 * the signal's reason when aborted. Shared by the embedding, moderation and image models of this folder.
 */
export function postOpenAICompatibleJson(
  client: UpstreamHttpClient,
  path: string,
  payload: unknown,
  headers: Record<string, string>,
  options: CallOptions,
): Promise<unknown> {
  return postForUpstreamJson(client, path, payload, headers, options, openAICompatibleStatusError);
}

/** Decodes an OpenAI `base64` embedding: standard base64 of little-endian float32 values. */
export function decodeBase64Embedding(encoded: string): number[] {
  const bytes = Buffer.from(encoded, 'base64');
  const values: number[] = new Array<number>(Math.floor(bytes.length / 4));
  for (let index = 0; index < values.length; index++) values[index] = bytes.readFloatLE(index * 4);
  return values;
}

export interface OpenAICompatibleEmbeddingSettings {
  /** Model name sent upstream. */
  upstreamModel: string;
  /** Headers sent with every request (authorization and the provider's configured headers). */
  headers: Record<string, string>;
  /** Most inputs per upstream request (a count). Default 256. */
  maxBatchSize?: number;
  /** Upstream requests in flight at once for one call (a count). Default 4. */
  maxConcurrentBatches?: number;
}

interface BatchResult {
  embeddings: number[][];
  /** Null when the upstream reported no usage. */
  promptTokens: number | null;
}

export class OpenAICompatibleEmbeddingModel implements EmbeddingModel {
  readonly maxBatchSize: number;
  private readonly maxConcurrentBatches: number;

  constructor(
    private readonly client: UpstreamHttpClient,
    private readonly settings: OpenAICompatibleEmbeddingSettings,
  ) {
    this.maxBatchSize = settings.maxBatchSize ?? 256;
    this.maxConcurrentBatches = settings.maxConcurrentBatches ?? 4;
  }

  async embed(inputs: string[], options: CallOptions & { dimensions?: number }): Promise<EmbeddingResult> {
    const batches: string[][] = [];
    for (let start = 0; start < inputs.length; start += this.maxBatchSize) batches.push(inputs.slice(start, start + this.maxBatchSize));
    const results = new Array<BatchResult>(batches.length);
    // A small pool of workers takes batches in order; results land at their batch position.
    let next = 0;
    const controller = new AbortController();
    const signal = AbortSignal.any([abortSignalOf(options.signal), controller.signal]);
    const work = async (): Promise<void> => {
      while (next < batches.length) {
        const position = next++;
        results[position] = await this.embedBatch(batches[position]!, { ...options, signal });
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(this.maxConcurrentBatches, batches.length) }, work));
    } catch (error) {
      // One failed batch makes the whole call fail: stop the others instead of paying for them.
      controller.abort(error);
      throw options.signal.aborted ? options.signal.reason : error;
    }
    const reported = results.every((result) => result.promptTokens !== null);
    return {
      embeddings: results.flatMap((result) => result.embeddings),
      inputTokens: reported
        ? results.reduce((sum, result) => sum + result.promptTokens!, 0)
        : inputs.reduce((sum, input) => sum + countTextTokens(input), 0),
      estimated: !reported,
    };
  }

  private async embedBatch(inputs: string[], options: CallOptions & { dimensions?: number }): Promise<BatchResult> {
    const payload: Record<string, unknown> = { model: this.settings.upstreamModel, input: inputs, encoding_format: 'float' };
    if (options.dimensions !== undefined) payload['dimensions'] = options.dimensions;
    const body = asObject(await postOpenAICompatibleJson(this.client, '/embeddings', payload, this.settings.headers, options));
    const data = asArray(body?.['data']) ?? [];
    // Filled with undefined, not sparse: `some` below must see every slot.
    const embeddings = Array.from<number[] | undefined>({ length: inputs.length });
    data.forEach((value, position) => {
      const item = asObject(value);
      const index = asNumber(item?.['index']) ?? position;
      const embedding = item?.['embedding'];
      const vector =
        typeof embedding === 'string' ? decodeBase64Embedding(embedding) : asArray(embedding)?.map((number) => asNumber(number) ?? 0);
      if (vector !== undefined && Number.isInteger(index) && index >= 0 && index < inputs.length) embeddings[index] = vector;
    });
    if (embeddings.some((vector) => vector === undefined)) {
      throw upstreamConnectionError(`the provider returned ${data.length} embeddings for ${inputs.length} inputs`);
    }
    const promptTokens = asNumber(asObject(body?.['usage'])?.['prompt_tokens']);
    return { embeddings: embeddings as number[][], promptTokens: promptTokens ?? null };
  }
}
