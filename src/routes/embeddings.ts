/**
 * POST /v1/embeddings: decode (formats/openai-embeddings), resolve the model (named, or the first
 * catalogue model with the `embeddings` capability), check each input against the model's context
 * window, admit the tokens against the caller's limits, embed (in slices of the model's
 * `maxBatchSize`), meter, encode as float or base64.
 *
 * Upstream failures are not retried here (the SDKs retry 429 and 5xx themselves); they reach the
 * client mapped by the provider (core/upstream-error.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Capability, Config, ModelConfig } from '../config/index.ts';
import type { EmbeddingModel, EmbeddingResult } from '../core/language-model.ts';
import { isServiceError, notFound } from '../core/service-error.ts';
import { emptyUsage } from '../core/usage.ts';
import { checkEmbeddingInputTokens, decodeEmbeddingsRequest } from '../formats/openai-embeddings/decode-request.ts';
import { encodeEmbeddingsResponse } from '../formats/openai-embeddings/encode-response.ts';
import type { LedgerContext } from '../services/metering/metering-service.ts';

export interface EmbeddingRouteDependencies {
  /** The catalogue: the default model is its first model with the `embeddings` capability. */
  config: Pick<Config, 'models'>;
  /** Model lookup by id or alias with a capability check (GenerationService.resolve). */
  models: { resolve(modelName: string, needs?: readonly Capability[], param?: string): { model: ModelConfig } };
  /** Backends (ProviderRegistry). */
  registry: { embeddingModel(model: ModelConfig): EmbeddingModel };
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

/** What the usage ledger records about a request of one of these routes. */
export function ledgerContextFor(request: FastifyRequest, model: ModelConfig, endpoint: string): LedgerContext {
  return { requestId: request.id, model: model.id, endpoint, pricing: model.pricing, batch: request.isBatch, startedAt: request.startedAt };
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

export function registerEmbeddingRoutes(app: FastifyInstance, dependencies: EmbeddingRouteDependencies): void {
  app.post(
    '/v1/embeddings',
    { config: { switchyard: { permission: 'embeddings', limits: 'tokens', summary: 'Create embedding vectors for one text or a list of texts.' } } },
    async (request, reply) => {
      const decoded = decodeEmbeddingsRequest(request.body);
      const { model } = dependencies.models.resolve(
        decoded.model ?? defaultModelWith(dependencies.config.models, 'embeddings', 'embedding'),
        ['embeddings'],
      );
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
