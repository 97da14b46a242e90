/**
 * The metered generation use case, shared by the HTTP routes and the batch worker: resolve the model
 * once, run the moderation pre-check when the tier or model asks for it (a flagged input is refused
 * before anything is reserved or sent upstream), admit against the caller's limits with the token
 * estimate (prompt counted locally plus the most the model may answer), start the generation, hold it
 * to its output cap (core/cap-output-tokens.ts) and meter it, so the reservation is settled with the real usage and the request recorded in the ledger however
 * the answer ends.
 */
import type { ModelConfig } from '../../config/index.ts';
import type { DecodeOptions } from '../../core/generation-format.ts';
import type { PriceCard } from '../../core/price-card.ts';
import { OutputCap } from '../../core/cap-output-tokens.ts';
import { countRequestTokensAsync, countShortRequestTokens, countTextTokens } from '../../core/count-tokens.ts';
import type { GenerationRequest, GenerationWarning } from '../../core/generation.ts';
import { isServiceError } from '../../core/service-error.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import { ledgerContextOf, type Caller } from '../caller.ts';
import type { Admission, MeteringService } from '../metering/metering-service.ts';
import type { InputModeration } from './input-moderation.ts';
import type { GenerationService, GenerationStream, GenerationStreamOptions } from './generation-service.ts';
import { SPAN_NAMES, traceStep } from '../../telemetry/trace-types.ts';
import type { BatchStage } from '../../core/batched.ts';
import type { CacheRecorder } from '../cache/cache-recorder.ts';
import type { CachedAnswer } from '../cache/cached-answer.ts';
import type { CacheOutcome, CacheRequest, GenerationCache } from '../cache/generation-cache.ts';
import { replayParts } from '../cache/replay.ts';
import { GenerationTraceStage } from '../trace-hooks.ts';
import type { WholeAnswer } from './whole-answer.ts';

export interface MeteredGenerationOptions extends Omit<GenerationStreamOptions, 'signal' | 'requestId'> {
  /** Request path for the ledger, e.g. `/v1/chat/completions`. */
  endpoint: string;
  /**
   * Completes the request once its model is known, before capabilities are checked and tokens reserved
   * (the responses endpoint prepends stored history and fits the context window here).
   */
  prepare?: (model: ModelConfig) => Promise<void> | void;
  /** The request as the response cache sees it (services/cache/); absent: the cache is not asked. */
  cache?: CacheRequest;
}

export interface MeteredGeneration {
  /** The canonical parts, metered: iterate once (or take `whole` instead). */
  parts: AsyncIterable<StreamPart>;
  /** The answer, settled, when the backend answered whole (a non-streamed request): take it instead of iterating `parts`. */
  whole?: WholeAnswer | undefined;
  /** The catalogue entry the requested name resolved to (the first candidate; fallbacks may answer). */
  model: ModelConfig;
  /** Prompt tokens counted locally, as reserved. */
  promptTokens: number;
  /** The caller's admission: rate-limit headers and usage figures for the answer's metadata. */
  admission: Admission;
  /** Request settings the answering backend did not honour. */
  warnings: readonly GenerationWarning[];
  /** The deployment that answered (provider id, `#n` for a provider's n-th key); '' for a cached answer. */
  deployment: string;
  /** What the response cache did (absent when it is off for the caller). */
  cache?: CacheOutcome;
}

const TOKEN_LIMIT_CODES = new Set(['tpm_exceeded', 'user_total_daily_limit_exceeded', 'user_total_monthly_limit_exceeded']);

export interface MeteredGenerationsDependencies {
  generation: Pick<GenerationService, 'resolve' | 'checkRequest' | 'streamResolved'>;
  metering: Pick<MeteringService, 'admit'>;
  inputModeration: Pick<InputModeration, 'applies' | 'check'>;
  /** The response cache, when configured (services/cache/generation-cache.ts). */
  cache?: Pick<GenerationCache, 'lookup' | 'chargeFor'> | undefined;
  /** How strictly request bodies are read (config `requestValidation`): handed to the format's decoder. */
  decodeOptions: DecodeOptions;
}

export class MeteredGenerations {
  constructor(private readonly dependencies: MeteredGenerationsDependencies) {}

  /** How strictly request bodies are read (run-generation-endpoint.ts decodes with it). */
  get decodeOptions(): DecodeOptions {
    return this.dependencies.decodeOptions;
  }

  /**
   * Starts a metered generation. Throws a ServiceError (404/400 model, 400 moderation, 429 limits, or
   * the upstream's final error before the first byte); once it resolves, failures come as parts.
   */
  async start(caller: Caller, request: GenerationRequest, options: MeteredGenerationOptions): Promise<MeteredGeneration> {
    const { generation, inputModeration } = this.dependencies;
    const trace = caller.trace;
    trace?.generationRequest('chat', request);
    const named = generation.resolve(request.model);
    // Each `await` costs promises even on a value that is already there: only the steps that are really
    // asynchronous here are awaited (a prepare step, the moderation check, a long prompt's count).
    if (options.prepare !== undefined) await options.prepare(named.model);
    const resolved = generation.checkRequest(named, request, options);
    const { model } = resolved;
    if (inputModeration.applies(caller.auth, model))
      await traceStep(trace, SPAN_NAMES.moderation, inputModeration.check(caller.auth, model, request, { signal: caller.signal }));
    const cache = this.dependencies.cache;
    if (cache === undefined || options.cache === undefined) return this.generate(caller, request, options, resolved);
    const lookup = await cache.lookup(caller, model, request, options.endpoint, options.cache);
    if (lookup?.answer !== undefined) return this.answerFromCache(caller, model, options.endpoint, lookup.answer, lookup.outcome);
    try {
      const started = await this.generate(caller, request, options, resolved, lookup?.recorder);
      if (lookup !== undefined) started.cache = lookup.outcome;
      return started;
    } catch (error) {
      // Followers waiting on this request go on their own.
      await lookup?.recorder?.abandon();
      throw error;
    }
  }

  /** A hit: admitted (it counts against the per-minute request limit, with no tokens), settled at once as a cache hit, replayed. */
  private async answerFromCache(
    caller: Caller,
    model: ModelConfig,
    endpoint: string,
    answer: CachedAnswer,
    outcome: CacheOutcome,
  ): Promise<MeteredGeneration> {
    const admission = await this.dependencies.metering.admit(caller.auth, 0, { batch: caller.batch, ledgerSink: caller.ledgerSink });
    const ledger = ledgerContextOf(caller, model, endpoint);
    ledger.cacheHit = this.dependencies.cache!.chargeFor(answer, model);
    await admission.settle(undefined, ledger);
    const parts = replayParts(answer);
    return { parts, model, promptTokens: answer.promptTokens, admission, warnings: answer.warnings, deployment: '', cache: outcome };
  }

  /** The generation itself: count the prompt, admit, start, meter (and record for the cache when `recorder` is given). */
  private async generate(
    caller: Caller,
    request: GenerationRequest,
    options: MeteredGenerationOptions,
    resolved: ReturnType<MeteredGenerationsDependencies['generation']['checkRequest']>,
    recorder?: CacheRecorder,
  ): Promise<MeteredGeneration> {
    const trace = caller.trace;
    const { generation } = this.dependencies;
    const { model } = resolved;
    // A long prompt is counted in slices that yield to the event loop: it cannot stall the instance.
    const promptTokens = countShortRequestTokens(request) ?? (await countRequestTokensAsync(request));
    const admitted = await traceStep(
      trace,
      SPAN_NAMES.admit,
      this.admitWithinBudget(caller, request.maxOutputTokens, promptTokens, model.maxOutputTokens, model.pricing),
    );
    const { admission, cappedMaxOutputTokens } = admitted;
    // A budget that fits only part of the default output caps the answer: the backend is asked for that much.
    const upstreamRequest = cappedMaxOutputTokens === undefined ? request : { ...request, maxOutputTokens: cappedMaxOutputTokens };
    const ledger = ledgerContextOf(caller, model, options.endpoint);
    // The prompt is counted once, here: the service takes the count (deployments' token limits, usage a backend did not report).
    const streamOptions: GenerationStreamOptions = { signal: caller.signal, requestId: caller.requestId, promptTokens };
    if (options.capabilities !== undefined) streamOptions.capabilities = options.capabilities;
    if (options.capabilityParams !== undefined) streamOptions.capabilityParams = options.capabilityParams;
    if (options.preferWholeResponse === true) streamOptions.preferWholeResponse = true;
    if (trace !== undefined) streamOptions.requestTrace = trace;
    // Switchyard enforces the cap itself: an upstream that ignores it is cut, never charged past it. The
    // cap and the meter run as stages of the service's own loop (core/batched.ts), not as layers.
    const cap = new OutputCap(upstreamRequest.maxOutputTokens ?? model.maxOutputTokens, countTextTokens, { inputTokens: promptTokens });
    // The stages, in order: the cap, the meter (settles the admission when the stream is over), the trace, the cache recorder.
    const stages: BatchStage<StreamPart>[] = [cap, admission.meter(ledger, promptTokens)];
    if (trace?.recording === true) stages.push(new GenerationTraceStage(trace));
    if (recorder !== undefined) {
      recorder.promptTokens = promptTokens;
      stages.push(recorder);
    }
    streamOptions.stages = stages;
    let stream: GenerationStream;
    try {
      stream = await generation.streamResolved(resolved, upstreamRequest, streamOptions);
    } catch (error) {
      // Nothing was used: the reservation is released and the failure recorded, then the caller gets the error.
      await admission.settleFailedStart(error, ledger);
      throw error;
    }
    // The meter settles later, from the stream's end: the ledger row names the deployment that answered.
    ledger.deployment = stream.deployment;
    const started: MeteredGeneration = {
      parts: stream,
      model,
      promptTokens,
      admission,
      warnings: stream.warnings,
      deployment: stream.deployment,
    };
    if (stream.whole !== undefined) started.whole = stream.whole;
    return started;
  }

  /**
   * Admits the request reserving its prompt plus its most output. A request that named no maximum
   * reserves the model's default (often thousands of tokens); when that no longer fits a token budget
   * but the prompt and some output still do, the answer is capped to what is left (it may end with
   * finish reason `length`) instead of refused: otherwise a 10,000-token monthly plan would refuse
   * default requests after a few thousand tokens. A maximum the client named is never lowered.
   * Returns the admission and, when it capped the answer, the cap (the request itself is not touched).
   */
  private async admitWithinBudget(
    caller: Caller,
    named: number | undefined,
    promptTokens: number,
    defaultMaxOutputTokens: number,
    pricing: PriceCard,
  ): Promise<{ admission: Admission; cappedMaxOutputTokens?: number }> {
    const { metering } = this.dependencies;
    // Budgets reserve the worst case: the counted prompt at its dearest input price plus the output cap at the output price.
    const admitOptions = (maxOutputTokens: number) => ({
      batch: caller.batch,
      ledgerSink: caller.ledgerSink,
      cost: { pricing, promptTokens, maxOutputTokens },
    });
    const maxOutput = named ?? defaultMaxOutputTokens;
    try {
      return { admission: await metering.admit(caller.auth, promptTokens + maxOutput, admitOptions(maxOutput)) };
    } catch (error) {
      const remaining = isServiceError(error) && TOKEN_LIMIT_CODES.has(error.code) ? error.details?.['remaining'] : undefined;
      if (named !== undefined || typeof remaining !== 'number' || remaining <= promptTokens) throw error;
      const cappedMaxOutputTokens = remaining - promptTokens;
      return { admission: await metering.admit(caller.auth, remaining, admitOptions(cappedMaxOutputTokens)), cappedMaxOutputTokens };
    }
  }
}
