/**
 * POST /v1/embeddings: decode (formats/openai-embeddings), resolve the model (named, or the first
 * catalogue model with the `embeddings` capability), check each input against the model's context
 * window, admit the tokens against the caller's limits, embed (in slices of the model's
 * `maxBatchSize`), meter, encode as float or base64.
 *
 * Upstream failures are not retried here (the SDKs retry 429 and 5xx themselves); they reach the
 * client mapped by the provider (core/upstream-error.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { Capability, Config, ModelConfig } from '../config/index.ts';
import type { EmbeddingModel, EmbeddingResult } from '../core/language-model.ts';
import { invalidParameter, isServiceError } from '../core/service-error.ts';
import type { DecodeOptions } from '../formats/shared/decode-options.ts';
import { emptyUsage } from '../core/usage.ts';
import { checkEmbeddingInputTokens, decodeEmbeddingsRequest } from '../formats/openai-embeddings/decode-request.ts';
import { encodeEmbeddingsResponse } from '../formats/openai-embeddings/encode-response.ts';
import { defaultModelWith, ledgerContextFor } from './metering-context.ts';

export interface EmbeddingRouteDependencies {
  /** The catalogue: the default model is its first model with the `embeddings` capability. */
  config: Pick<Config, 'models'>;
  /** Model lookup by id or alias with a capability check (GenerationService.resolve). */
  models: { resolve(modelName: string, needs?: readonly Capability[], param?: string): { model: ModelConfig } };
  /** Backends (ProviderRegistry). */
  registry: { embeddingModel(model: ModelConfig): EmbeddingModel };
}

async function embedInSlices(model: EmbeddingModel, inputs: string[], options: Parameters<EmbeddingModel['embed']>[1]): Promise<EmbeddingResult> {
  const slice = Math.max(1, model.maxBatchSize);
  if (inputs.length <= slice) return model.embed(inputs, options);
  const results: EmbeddingResult[] = [];
  for (let start = 0; start < inputs.length; start += slice) results.push(await model.embed(inputs.slice(start, start + slice), options));
  return {
    embeddings: results.flatMap((result) => result.embeddings),
    inputTokens: results.reduce((sum, result) => sum + result.inputTokens, 0),
    estimated: results.some((result) => result.estimated),
  };
}

/**
 * The named model (or the catalogue's first embedding model). SPEC lists 400, 401, 429 and 500 for this
 * endpoint, so in `spec` validation an unknown model is 400 `invalid_parameter` (param `model`);
 * `compatible` keeps OpenAI's 404 `model_not_found`.
 */
function resolveEmbeddingModel(dependencies: EmbeddingRouteDependencies, name: string | null, options: DecodeOptions): { model: ModelConfig } {
  try {
    return dependencies.models.resolve(name ?? defaultModelWith(dependencies.config.models, 'embeddings', 'embedding'), ['embeddings']);
  } catch (error) {
    if (options.validation === 'spec' && isServiceError(error) && error.status === 404 && error.code === 'model_not_found') {
      throw invalidParameter('model', `${error.message} GET /v1/models lists the models.`);
    }
    throw error;
  }
}

export function registerEmbeddingRoutes(app: FastifyInstance, dependencies: EmbeddingRouteDependencies): void {
  app.post(
    '/v1/embeddings',
    { config: { switchyard: { permission: 'embeddings', limits: 'tokens', summary: 'Create embedding vectors for one text or a list of texts.' } } },
    async (request, reply) => {
      const decoded = decodeEmbeddingsRequest(request.body);
      const { model } = resolveEmbeddingModel(dependencies, decoded.model, request.decodeOptions);
      const tokens = checkEmbeddingInputTokens(decoded, model.contextWindow);
      const promptTokens = tokens.reduce((sum, count) => sum + count, 0);
      const admission = await request.admit(promptTokens);
      const ledger = ledgerContextFor(request, model, '/v1/embeddings');
      let result: EmbeddingResult;
      try {
        const options = { signal: request.clientSignal(), requestId: request.id, ...(decoded.dimensions === undefined ? {} : { dimensions: decoded.dimensions }) };
        result = await embedInSlices(dependencies.registry.embeddingModel(model), decoded.inputs, options);
      } catch (error) {
        await admission.settle(undefined, ledger, isServiceError(error) ? error.status : 500);
        throw error;
      }
      await admission.settle({ ...emptyUsage(), inputTokens: result.inputTokens, estimated: result.estimated }, ledger);
      return reply.sendData({
        ...encodeEmbeddingsResponse({ model: model.id, embeddings: result.embeddings, encodingFormat: decoded.encodingFormat, promptTokens: result.inputTokens }),
      });
    },
  );
}
