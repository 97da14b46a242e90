/**
 * POST /v1/embeddings (also a batch endpoint): decode (formats/openai-embeddings), resolve the model (named, or the first
 * catalogue model with the `embeddings` capability), check each input against the model's context
 * window, admit the tokens against the caller's limits, embed (in slices of the model's
 * `maxBatchSize`), meter, encode as float or base64.
 *
 * Upstream failures are not retried here (the SDKs retry 429 and 5xx themselves); they reach the
 * client mapped by the provider (core/upstream-error.ts).
 */
import { startModelCallTrace } from '../services/trace-hooks.ts';
import { SPAN_NAMES, spanUntil, traceStep } from '../telemetry/trace-types.ts';
import type { FastifyInstance } from 'fastify';
import type { Capability, Config, ModelConfig } from '../config/index.ts';
import type { EmbeddingModel, EmbeddingResult } from '../core/language-model.ts';
import type { DecodeOptions } from '../core/generation-format.ts';
import { invalidParameter, isServiceError } from '../core/service-error.ts';
import { emptyUsage } from '../core/usage.ts';
import { checkEmbeddingInputTokens, decodeEmbeddingsRequest } from '../formats/openai-embeddings/decode-request.ts';
import { encodeEmbeddingsResponse } from '../formats/openai-embeddings/encode-response.ts';
import { ledgerContextOf, type Caller } from '../services/caller.ts';
import type { Admission, MeteringService } from '../services/metering/metering-service.ts';
import { callerOf, defaultModelWith } from './metering-context.ts';

export interface EmbeddingRouteDependencies {
  /** The catalogue: the default model is its first model with the `embeddings` capability. */
  config: Pick<Config, 'models' | 'providers'>;
  /** Model lookup by id or alias with a capability check (GenerationService.resolve). */
  models: { resolve(modelName: string, needs?: readonly Capability[], param?: string): { model: ModelConfig } };
  /** Backends (ProviderRegistry). */
  registry: { embeddingModel(model: ModelConfig): EmbeddingModel };
  /** Rate limits, quotas and the ledger. */
  metering: Pick<MeteringService, 'admit'>;
  /** Config `requestValidation`. */
  decodeOptions: DecodeOptions;
}

/**
 * The named model (or the catalogue's first embedding model). SPEC lists 400, 401, 429 and 500 for this
 * endpoint, so in `spec` validation an unknown model is 400 `invalid_parameter` (param `model`);
 * `compatible` keeps OpenAI's 404 `model_not_found`.
 */
function resolveEmbeddingModel(dependencies: EmbeddingRouteDependencies, name: string | null): { model: ModelConfig } {
  try {
    return dependencies.models.resolve(name ?? defaultModelWith(dependencies.config.models, 'embeddings', 'embedding'), ['embeddings']);
  } catch (error) {
    if (
      dependencies.decodeOptions.validation === 'spec' &&
      isServiceError(error) &&
      error.status === 404 &&
      error.code === 'model_not_found'
    ) {
      throw invalidParameter('model', `${error.message} GET /v1/models lists the models.`);
    }
    throw error;
  }
}

async function embedInSlices(
  model: EmbeddingModel,
  inputs: string[],
  options: Parameters<EmbeddingModel['embed']>[1],
): Promise<EmbeddingResult> {
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

/** What an embeddings request yields: the body to send and the admission that metered it. */
export interface EmbeddingsAnswer {
  body: Record<string, unknown>;
  admission: Admission;
}

/** The embeddings use case from body to answer; the route and the batch worker both call it. */
export function createEmbeddingsHandler(
  dependencies: EmbeddingRouteDependencies,
): (caller: Caller, body: unknown) => Promise<EmbeddingsAnswer> {
  return async (caller, body) => {
    const decoded = decodeEmbeddingsRequest(body);
    const { model } = resolveEmbeddingModel(dependencies, decoded.model);
    const tokens = checkEmbeddingInputTokens(decoded, model.contextWindow);
    const promptTokens = tokens.reduce((sum, count) => sum + count, 0);
    const admission = await traceStep(
      caller.trace,
      SPAN_NAMES.admit,
      dependencies.metering.admit(caller.auth, promptTokens, { batch: caller.batch, ledgerSink: caller.ledgerSink }),
    );
    const ledger = ledgerContextOf(caller, model, '/v1/embeddings');
    let result: EmbeddingResult;
    try {
      const call =
        caller.trace === undefined
          ? undefined
          : startModelCallTrace(caller.trace, 'embeddings', model, dependencies.config.providers[model.provider]);
      const options = {
        signal: caller.signal,
        requestId: caller.requestId,
        tenant: caller.auth.organizationId,
        ...(decoded.dimensions === undefined ? {} : { dimensions: decoded.dimensions }),
        ...(call === undefined ? {} : { trace: call }),
      };
      result = await spanUntil(call, embedInSlices(dependencies.registry.embeddingModel(model), decoded.inputs, options));
    } catch (error) {
      await admission.settle(undefined, ledger, isServiceError(error) ? error.status : 500);
      throw error;
    }
    const usage = { ...emptyUsage(), inputTokens: result.inputTokens, estimated: result.estimated };
    caller.trace?.usage(usage);
    await admission.settle(usage, ledger);
    const encoded = encodeEmbeddingsResponse({
      model: model.id,
      embeddings: result.embeddings,
      encodingFormat: decoded.encodingFormat,
      promptTokens: result.inputTokens,
    });
    return { body: { ...encoded }, admission };
  };
}

export function registerEmbeddingRoutes(app: FastifyInstance, dependencies: EmbeddingRouteDependencies): void {
  const embed = createEmbeddingsHandler(dependencies);
  app.post(
    '/v1/embeddings',
    {
      config: {
        switchyard: { permission: 'embeddings', limits: 'tokens', summary: 'Create embedding vectors for one text or a list of texts.' },
      },
    },
    async (request, reply) => {
      const answer = await embed(callerOf(request), request.body);
      request.admission = answer.admission;
      request.extraHeaders = { ...request.extraHeaders, ...answer.admission.headers };
      return reply.sendData(answer.body);
    },
  );
}
