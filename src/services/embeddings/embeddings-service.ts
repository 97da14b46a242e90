/**
 * The embeddings use case (POST /v1/embeddings and its batch lines): decode (the wire format the
 * composition root gives, formats/openai-embeddings), resolve the model (named, or the first catalogue
 * model with the `embeddings` capability), check each input against the model's context window, admit
 * the tokens against the caller's limits, embed (in slices of the model's `maxBatchSize`), meter,
 * encode.
 *
 * Upstream failures are not retried here (the SDKs retry 429 and 5xx themselves); they reach the
 * client mapped by the provider (core/upstream-error.ts).
 */
import type { Config, ModelConfig } from '../../config/index.ts';
import type { DecodeOptions } from '../../core/generation-format.ts';
import type { EmbeddingModel, EmbeddingResult } from '../../core/language-model.ts';
import { invalidParameter, isServiceError } from '../../core/service-error.ts';
import { answeredUsage, emptyUsage } from '../../core/usage.ts';
import { addCacheHeaders } from '../cache/cache-headers.ts';
import { directivesOf } from '../cache/cache-policy.ts';
import type { GenerationCache } from '../cache/generation-cache.ts';
import { spanUntil } from '../../telemetry/trace-types.ts';
import type { JsonAnswer } from '../answer.ts';
import { ledgerContextOf, type Caller } from '../caller.ts';
import { metered } from '../metering/metered.ts';
import type { MeteringService } from '../metering/metering-service.ts';
import { defaultModelWith, type ModelResolver } from '../model-lookup.ts';
import { startModelCallTrace } from '../trace-hooks.ts';

/** What the use case reads of a decoded request. */
export interface EmbeddingsRequest {
  /** The model as the client named it, or null for the catalogue's first embedding model. */
  model: string | null;
  /** The texts, in request order. */
  inputs: string[];
  /** Requested vector length; absent for the model's full length. */
  dimensions?: number;
}

/** The endpoint's wire format (formats/openai-embeddings), given by the composition root. */
export interface EmbeddingsWire<Request extends EmbeddingsRequest> {
  decode(body: unknown): Request;
  /** Tokens per input, refusing (400 naming the input) one longer than `maxInputTokens`. */
  countInputTokens(request: Request, maxInputTokens: number): number[];
  encode(request: Request, model: ModelConfig, result: EmbeddingResult): Record<string, unknown>;
}

export interface EmbeddingsDependencies<Request extends EmbeddingsRequest> {
  /** The catalogue: the default model is its first model with the `embeddings` capability. */
  config: Pick<Config, 'models' | 'providers'>;
  models: ModelResolver;
  /** Backends (ProviderRegistry). */
  registry: { embeddingModel(model: ModelConfig): EmbeddingModel };
  /** Rate limits, quotas and the ledger. */
  metering: Pick<MeteringService, 'admit'>;
  /** Config `requestValidation`. */
  decodeOptions: DecodeOptions;
  wire: EmbeddingsWire<Request>;
  /** The response cache (services/cache/): embeddings are deterministic, so a repeated request may be answered from it. */
  cache?: Pick<GenerationCache, 'lookupJson' | 'chargeFor'> | undefined;
}

export class EmbeddingsService<Request extends EmbeddingsRequest = EmbeddingsRequest> {
  constructor(private readonly dependencies: EmbeddingsDependencies<Request>) {}

  /** One embeddings request from body to answer; the route and the batch worker both call it. */
  async run(caller: Caller, body: unknown): Promise<JsonAnswer> {
    const { wire } = this.dependencies;
    const decoded = wire.decode(body);
    const model = this.resolveModel(decoded.model);
    const promptTokens = wire.countInputTokens(decoded, model.contextWindow).reduce((sum, count) => sum + count, 0);
    const ledger = ledgerContextOf(caller, model, '/v1/embeddings');
    const cache = this.dependencies.cache;
    const lookup =
      cache === undefined || typeof body !== 'object' || body === null
        ? undefined
        : await cache.lookupJson(caller, model, '/v1/embeddings', {
            body: body as Record<string, unknown>,
            directives: directivesOf(caller.cacheControl, body),
          });
    const cached = lookup?.answer;
    if (cache !== undefined && cached?.body !== undefined) {
      // A hit: one request against the per-minute limit, no tokens, recorded as a cache hit.
      ledger.cacheHit = cache.chargeFor(cached, model);
      const { admission } = await metered(this.dependencies.metering, caller, 0, ledger, async () => ({ value: 0, usage: emptyUsage() }));
      const headers = { ...admission.headers };
      addCacheHeaders(headers, lookup!.outcome);
      return { stream: false, body: structuredClone(cached.body), headers, admission, cache: 'hit' };
    }
    let usage = emptyUsage();
    let answer: JsonAnswer;
    try {
      const { value: result, admission } = await metered(this.dependencies.metering, caller, promptTokens, ledger, async () => {
        const result = await this.embed(caller, model, decoded);
        usage = answeredUsage({ inputTokens: result.inputTokens, estimated: result.estimated });
        caller.trace?.usage(usage);
        return { value: result, usage };
      });
      answer = { stream: false, body: wire.encode(decoded, model, result), headers: admission.headers, admission };
    } catch (error) {
      await lookup?.recorder?.abandon();
      throw error;
    }
    if (lookup !== undefined) {
      answer.headers = { ...answer.headers };
      addCacheHeaders(answer.headers, lookup.outcome);
      answer.cache = lookup.outcome.status;
      if (lookup.recorder !== undefined) {
        lookup.recorder.promptTokens = promptTokens;
        void lookup.recorder.storeJson(answer.body, usage);
      }
    }
    return answer;
  }

  /**
   * The named model (or the catalogue's first embedding model). SPEC lists 400, 401, 429 and 500 for
   * this endpoint, so in `spec` validation an unknown model is 400 `invalid_parameter` (param `model`);
   * `compatible` keeps OpenAI's 404 `model_not_found`.
   */
  private resolveModel(name: string | null): ModelConfig {
    const { models, config, decodeOptions } = this.dependencies;
    try {
      return models.resolve(name ?? defaultModelWith(config.models, 'embeddings', 'embedding'), ['embeddings']).model;
    } catch (error) {
      if (decodeOptions.validation === 'spec' && isServiceError(error) && error.status === 404 && error.code === 'model_not_found') {
        throw invalidParameter('model', `${error.message} GET /v1/models lists the models.`);
      }
      throw error;
    }
  }

  private embed(caller: Caller, model: ModelConfig, decoded: Request): Promise<EmbeddingResult> {
    const { config, registry } = this.dependencies;
    const call =
      caller.trace === undefined ? undefined : startModelCallTrace(caller.trace, 'embeddings', model, config.providers[model.provider]);
    const options = {
      signal: caller.signal,
      requestId: caller.requestId,
      tenant: caller.auth.organizationId,
      ...(decoded.dimensions === undefined ? {} : { dimensions: decoded.dimensions }),
      ...(call === undefined ? {} : { trace: call }),
    };
    return spanUntil(call, embedInSlices(registry.embeddingModel(model), decoded.inputs, options));
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
