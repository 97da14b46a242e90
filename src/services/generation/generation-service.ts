/**
 * The generation use case, shared by every text endpoint (chat completions, messages, responses,
 * batches): resolve the model, check its capabilities, call its backend with per-attempt timeout,
 * retries and fallbacks, and hand back the canonical stream of parts with normalised usage.
 *
 * Routing: each attempt goes to one of the model's deployments, chosen by its router (routing/).
 *
 * The commit point: `stream()` resolves only once the backend produced its first content part (any
 * part but `response-metadata`). Until then nothing can have reached the client, so a failure moves
 * to another deployment of the model not yet tried (at once), then is retried (connection errors,
 * 408, 429, 5xx; jittered exponential backoff, or the upstream's retry-after, capped), then the
 * model's fallbacks are tried in order, and if all fail `stream()`
 * REJECTS with a ServiceError: the HTTP layer answers a normal JSON error. Once it has resolved, a
 * failure comes as a final `error` part and nothing follows it.
 *
 * Timeouts: the provider's `timeoutMs` bounds each wait for the backend, the first part as well as
 * every later one (an idle timeout): a stream that keeps producing is never cut, a silent one is.
 */
import { didYouMean } from '../../core/closest-name.ts';
import type { Capability, Config, DeploymentTarget, ModelConfig, ResolvedProviderConfig } from '../../config/index.ts';
import { CancellationSource, type Cancellation } from '../../core/cancellation.ts';
import { countRequestTokens, countTextTokens } from '../../core/count-tokens.ts';
import type { GenerationRequest, GenerationWarning } from '../../core/generation.ts';
import type { CallOptions, LanguageModel } from '../../core/language-model.ts';
import { invalidParameter, isServiceError, notFound, serverError, type ServiceError } from '../../core/service-error.ts';
import { batched, batchesOf, closeIterator, closeStages, pushThroughStages, type Batched, type BatchStage } from '../../core/batched.ts';
import { BlockSequencer } from '../../core/sequence-blocks.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import { isUpstreamError, upstreamTimeoutError } from '../../core/upstream-error.ts';
import { totalTokens, type Usage } from '../../core/usage.ts';
import { inProcessDeploymentState } from '../../limits/create-deployment-state.ts';
import { requiredCapabilities, type CapabilityNeed } from './required-capabilities.ts';
import { DEFAULT_RETRY_POLICY, retryDelay, sleep as defaultSleep, type RetryPolicy } from './retry-policy.ts';
import { deploymentTable } from './routing/deployment-table.ts';
import { Router, type Lease } from './routing/router.ts';
import type { AttemptTrace, RequestTrace } from '../../telemetry/trace-types.ts';
import { startAttemptTrace } from './attempt-trace.ts';

/** Where the service gets model objects from; `providers/registry.ts` ProviderRegistry is one. */
export interface LanguageModelSource {
  /** The chat model of `model` on one of its deployments (the router's choice). */
  languageModel(model: ModelConfig, deployment?: DeploymentTarget): LanguageModel;
}

/** The pino logger methods the service uses. */
export interface GenerationLogger {
  warn(object: Record<string, unknown>, message: string): void;
  error(object: Record<string, unknown>, message: string): void;
}

export interface GenerationServiceOptions {
  /** The catalogue and provider settings (timeouts, retries) from the loaded config. */
  config: Pick<Config, 'models' | 'providers'>;
  registry: LanguageModelSource;
  /** Picks a deployment per attempt (routing/router.ts); default: one over in-process state. */
  router?: Router;
  retryPolicy?: Partial<RetryPolicy>;
  logger?: GenerationLogger;
  /** Waits between retries; tests pass a recorder instead of really waiting. */
  sleep?: (milliseconds: number, signal: Cancellation) => Promise<void>;
  /** Source of jitter in [0, 1). */
  random?: () => number;
}

/** A catalogue model with the config of the provider that serves it. */
export interface ResolvedModel {
  model: ModelConfig;
  provider: ResolvedProviderConfig;
}

/** The model a generation request resolved to, with the capabilities it needs (fallbacks need them too). */
export interface ResolvedGeneration extends ResolvedModel {
  needs: readonly CapabilityNeed[];
}

export interface GenerationStreamOptions extends CallOptions {
  /** Capabilities the caller needs beyond what the request itself shows, e.g. `['streaming']`. */
  capabilities?: readonly Capability[];
  /**
   * Request field named in the 400 when the model lacks a capability, per capability, in the caller's
   * wire format (e.g. `{ vision: 'messages[1].content[0].image_url.url', json_mode: 'text.format' }`).
   * Defaults: chat completions names (`tools`, `response_format`, `thinking`, `stream`) and
   * `messages[i].content[j]` of the canonical request for images.
   */
  capabilityParams?: Partial<Record<Capability, string>>;
  /**
   * Synchronous stages run over the committed stream inside the service's own loop, in order, after
   * sequencing (core/batched.ts): the output cap and the usage meter. A stage that ends the stream
   * releases the backend; every stage is closed once when the stream is over.
   */
  stages?: readonly BatchStage<StreamPart>[];
  /** The request's trace (tracing on): each upstream attempt is a client span under it. */
  requestTrace?: RequestTrace | undefined;
}

/** The canonical parts of one generation (item by item or in batches), plus which model is answering. Read it once. */
export interface GenerationStream extends Batched<StreamPart> {
  /** The catalogue model that is answering: the one asked for, or the fallback that took over. */
  readonly model: ModelConfig;
  /** The catalogue model the request named (after alias resolution). */
  readonly requestedModel: ModelConfig;
  /** Upstream attempts made, over all models, up to and including the one that is answering (>= 1). */
  readonly attempts: number;
  /** Request settings the answering backend did not honour (from its `response-metadata`). */
  readonly warnings: readonly GenerationWarning[];
  /** The answering deployment: its provider id (`#n` for the n-th key of a provider with several). */
  readonly deployment: string;
}

export class GenerationService {
  private readonly modelsByName = new Map<string, ModelConfig>();
  private readonly providers: Readonly<Record<string, ResolvedProviderConfig>>;
  private readonly registry: LanguageModelSource;
  private readonly router: Router;
  private readonly retryPolicy: RetryPolicy;
  private readonly logger: GenerationLogger | undefined;
  private readonly sleep: (milliseconds: number, signal: Cancellation) => Promise<void>;
  private readonly random: () => number;

  constructor(options: GenerationServiceOptions) {
    for (const model of options.config.models) {
      for (const name of [model.id, ...model.aliases]) if (!this.modelsByName.has(name)) this.modelsByName.set(name, model);
    }
    this.providers = options.config.providers;
    this.registry = options.registry;
    this.router = options.router ?? new Router({ models: deploymentTable(options.config), state: inProcessDeploymentState() });
    this.retryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retryPolicy };
    this.logger = options.logger;
    this.sleep = options.sleep ?? defaultSleep;
    this.random = options.random ?? Math.random;
  }

  /**
   * Finds a model by id or alias and checks it has every capability in `needs`.
   * Unknown name: 404 `model_not_found` (param `model`). Missing capability: 400 `invalid_parameter`
   * naming the capability, with `param` (default `model`) as the blamed request field.
   */
  resolve(modelName: string, needs: readonly Capability[] = [], param = 'model'): ResolvedModel {
    return this.resolveNeeds(
      modelName,
      needs.map((capability) => ({ capability, param })),
    );
  }

  /**
   * Resolves the request's model and checks every capability the request needs (404 unknown model,
   * 400 naming the field that needs a missing capability). Done once per request: `streamResolved`
   * takes the result.
   */
  resolveRequest(
    request: GenerationRequest,
    options: Pick<GenerationStreamOptions, 'capabilities' | 'capabilityParams'>,
  ): ResolvedGeneration {
    return this.checkRequest(this.resolve(request.model), request, options);
  }

  /**
   * Checks that a resolved model has every capability the request needs (400 naming the field that
   * needs a missing one). For callers that must see the model before the request is complete (stored
   * conversation history, context-window truncation).
   */
  checkRequest(
    resolved: ResolvedModel,
    request: GenerationRequest,
    options: Pick<GenerationStreamOptions, 'capabilities' | 'capabilityParams'>,
  ): ResolvedGeneration {
    const needs = requiredCapabilities(request, options.capabilities, options.capabilityParams);
    for (const need of needs) assertCapability(resolved.model, need);
    // Written out: a spread with an added field takes V8's slow path (it showed in the gateway's profile).
    return { model: resolved.model, provider: resolved.provider, needs };
  }

  /** Resolves and starts: `resolveRequest` then `streamResolved`. */
  async stream(request: GenerationRequest, options: GenerationStreamOptions): Promise<GenerationStream> {
    return this.streamResolved(this.resolveRequest(request, options), request, options);
  }

  /**
   * Starts a generation on a resolved model; see the file header for the commit point. Rejects with a
   * ServiceError when every attempt failed before producing output; rejects with
   * `options.signal.reason` when the caller aborts first.
   */
  async streamResolved(
    requested: ResolvedGeneration,
    request: GenerationRequest,
    options: GenerationStreamOptions,
  ): Promise<GenerationStream> {
    const needs = requested.needs;
    const candidates: ResolvedModel[] =
      requested.model.fallbacks.length === 0 ? [requested] : [requested, ...this.fallbacksOf(requested.model, needs)];
    let lastError: ServiceError | undefined;
    let attempts = 0;
    let promptTokens: number | undefined;
    // Counted only when a deployment limits tokens per minute, and once for all candidates.
    const countPrompt = (): number => (promptTokens ??= countRequestTokens(request));
    for (const candidate of candidates) {
      const route = this.router.route(candidate.model);
      const maxRetries = candidate.provider.maxRetries;
      /** The last upstream failure on this model: what its retries are decided on. */
      let modelError: ServiceError | undefined;
      for (let retryIndex = 0; ;) {
        if (options.signal.aborted) throw options.signal.reason;
        // A retry has waited its backoff (or the upstream's retry-after): it may probe a cooling deployment.
        const step = await route.next(countPrompt, retryIndex > 0);
        if (step.lease === undefined) {
          // No deployment can take the request now (all cooling or at their limits). Not tried yet: on to
          // the fallbacks at once; otherwise the deployments were all tried: decide on a retry below.
          if (modelError === undefined) {
            lastError = step.error;
            this.logger?.warn(
              { model: candidate.model.id, status: step.error.status, code: step.error.code },
              'no deployment of the model is available',
            );
            break;
          }
        } else {
          attempts++;
          const lease = step.lease;
          let outcome: AttemptOutcome;
          try {
            outcome = await this.startAttempt(candidate, lease, request, options, attempts, retryIndex);
          } catch (thrown) {
            lease.end();
            throw thrown;
          }
          if (outcome.stream !== undefined) {
            return new AnsweringStream(outcome.stream, candidate.model, requested.model, attempts, outcome.warnings, lease.deployment.id);
          }
          const error = outcome.error;
          route.failed(lease, error);
          modelError = error;
          lastError = error;
          // Another deployment of the same model first: at once, and not counted as a retry.
          if (route.hasUntried && isUpstreamError(error) && error.fallbackEligible) {
            this.logger?.warn(
              { model: candidate.model.id, deployment: lease.deployment.id, attempts, status: error.status, code: error.code },
              'model deployment failed; trying another deployment',
            );
            continue;
          }
        }
        const error = modelError;
        const details = { model: candidate.model.id, attempts, status: error.status, code: error.code };
        const retryable = isUpstreamError(error) && error.retryable;
        if (!retryable || retryIndex >= maxRetries) {
          this.logger?.warn(details, 'model backend failed before producing output');
          break;
        }
        const delay = retryDelay(this.retryPolicy, retryIndex, isUpstreamError(error) ? error.retryAfterMs : null, this.random);
        this.logger?.warn({ ...details, delayMs: delay }, 'model backend failed; retrying');
        retryIndex++;
        await this.sleep(delay, options.signal);
        route.resetTried();
      }
      if (!(isUpstreamError(lastError) && lastError.fallbackEligible)) break;
    }
    throw lastError ?? serverError('internal_error', 'No model could be tried.');
  }

  private resolveNeeds(modelName: string, needs: readonly CapabilityNeed[]): ResolvedModel {
    const model = this.modelsByName.get(modelName);
    if (model === undefined) {
      const hint = didYouMean(modelName, this.modelsByName.keys());
      throw notFound('model_not_found', `The model '${modelName}' does not exist or you do not have access to it.${hint}`, 'model');
    }
    for (const need of needs) assertCapability(model, need);
    const provider = this.providers[model.provider];
    if (provider === undefined) throw serverError('internal_error', `The model '${model.id}' has no configured provider.`);
    return { model, provider };
  }

  /** The model's fallbacks that exist and have every needed capability, in configured order. */
  private fallbacksOf(model: ModelConfig, needs: readonly CapabilityNeed[]): ResolvedModel[] {
    const fallbacks: ResolvedModel[] = [];
    const seen = new Set([model.id]);
    for (const name of model.fallbacks) {
      const candidate = this.modelsByName.get(name);
      if (candidate === undefined || seen.has(candidate.id)) continue;
      seen.add(candidate.id);
      const provider = this.providers[candidate.provider];
      if (provider === undefined || !needs.every((need) => candidate.capabilities.includes(need.capability))) continue;
      fallbacks.push({ model: candidate, provider });
    }
    return fallbacks;
  }

  /** One upstream attempt (`attemptNumber` of the request, `retry` of its model), traced when the request is. */
  private startAttempt(
    candidate: ResolvedModel,
    lease: Lease,
    request: GenerationRequest,
    options: GenerationStreamOptions,
    attemptNumber: number,
    retry: number,
  ): Promise<AttemptOutcome> {
    if (options.requestTrace === undefined) return this.runAttempt(candidate, lease, request, options, undefined);
    return this.tracedAttempt(
      candidate,
      lease,
      request,
      options,
      startAttemptTrace(options.requestTrace, candidate.model, lease, attemptNumber, retry),
    );
  }

  /** An attempt in a client span of its own; a failure before the first content part ends the span failed. */
  private async tracedAttempt(
    candidate: ResolvedModel,
    lease: Lease,
    request: GenerationRequest,
    options: GenerationStreamOptions,
    traced: AttemptTrace,
  ): Promise<AttemptOutcome> {
    try {
      const outcome = await this.runAttempt(candidate, lease, request, options, traced);
      if (outcome.error !== undefined) {
        traced.fail(outcome.error);
        traced.end();
      }
      return outcome;
    } catch (error) {
      traced.fail(error);
      traced.end();
      throw error;
    }
  }

  /** One upstream attempt on the leased deployment, run up to its first content part. */
  private async runAttempt(
    candidate: ResolvedModel,
    lease: Lease,
    request: GenerationRequest,
    options: GenerationStreamOptions,
    traced: AttemptTrace | undefined,
  ): Promise<AttemptOutcome> {
    const attempt = new Attempt(lease.deployment.provider.timeoutMs, options.signal);
    attempt.trace = traced;
    let iterator: AsyncIterator<readonly StreamPart[]>;
    try {
      const model = this.registry.languageModel(candidate.model, lease.deployment.target);
      const callOptions: CallOptions = { signal: attempt.signal };
      if (options.requestId !== undefined) callOptions.requestId = options.requestId;
      if (options.preferWholeResponse === true) callOptions.preferWholeResponse = true;
      if (traced !== undefined) callOptions.trace = traced;
      iterator = batchesOf(model.stream(request, callOptions))[Symbol.asyncIterator]();
    } catch (error) {
      attempt.dispose(false);
      return { error: this.toServiceError(error, attempt, candidate) };
    }
    /** `response-metadata` parts that came before the first content part. */
    const held: StreamPart[] = [];
    try {
      for (;;) {
        attempt.arm();
        const result = await iterator.next();
        attempt.disarm();
        if (result.done === true) {
          attempt.dispose(false);
          return { error: serverError('internal_error', 'The model backend ended its answer without a result.') };
        }
        const batch = result.value;
        const first = batch.findIndex((part) => part.type !== 'response-metadata');
        if (first === -1) {
          for (const part of batch) held.push(part);
          continue;
        }
        const part = batch[first]!;
        if (part.type === 'error') {
          attempt.dispose(false);
          void closeIterator(iterator);
          return { error: part.error };
        }
        for (let index = 0; index < first; index++) held.push(batch[index]!);
        lease.firstByte();
        const warnings: GenerationWarning[] = [];
        for (const metadata of held) {
          if (metadata.type !== 'response-metadata') continue;
          if (metadata.warnings !== undefined) warnings.push(...metadata.warnings);
          if (traced !== undefined && metadata.upstreamModel !== undefined) traced.responseModel(metadata.upstreamModel);
        }
        traced?.committed();
        const committed = held.length === first ? batch : [...held, ...batch.slice(first)];
        const stages = options.stages ?? NO_STAGES;
        return { stream: batched(() => this.continueStream(iterator, committed, attempt, lease, candidate, request, stages)), warnings };
      }
    } catch (error) {
      attempt.dispose(false);
      void closeIterator(iterator);
      if (options.signal.aborted) throw options.signal.reason;
      return { error: this.toServiceError(error, attempt, candidate) };
    }
  }

  /**
   * The committed stream, a batch at a time (core/batched.ts): the batch that held the first content
   * part, then the rest, sequenced so that blocks never overlap (the contract every encoder relies on);
   * failures become a final `error` part. Then the caller's stages (`options.stages`), in this same loop.
   */
  private async *continueStream(
    iterator: AsyncIterator<readonly StreamPart[]>,
    first: readonly StreamPart[],
    attempt: Attempt,
    lease: Lease,
    candidate: ResolvedModel,
    request: GenerationRequest,
    stages: readonly BatchStage<StreamPart>[],
  ): AsyncGenerator<readonly StreamPart[], void, undefined> {
    const output = new OutputText();
    const sequencer = new BlockSequencer();
    /** The backend ended (finish, error or exception): nothing to abandon. */
    let backendDone = false;
    /** The backend was released (lease, watchdog, connection); done once. */
    let released = false;
    const release = (): void => {
      released = true;
      attempt.trace?.end();
      lease.end();
      attempt.dispose(!backendDone);
      // Finished, failed or abandoned: either way release the backend and its connection.
      void closeIterator(iterator);
    };
    try {
      let batch: readonly StreamPart[] | undefined = first;
      for (;;) {
        let out: StreamPart[];
        let ended = false;
        if (batch === undefined) {
          let result: IteratorResult<readonly StreamPart[]> | undefined;
          let failure: ServiceError | undefined;
          attempt.arm();
          try {
            result = await iterator.next();
          } catch (error) {
            backendDone = true;
            if (attempt.callerAborted) throw attempt.callerReason;
            failure = this.toServiceError(error, attempt, candidate);
          } finally {
            attempt.disarm();
          }
          if (result?.done === true) {
            backendDone = true;
            failure = serverError('service_unavailable', 'The model backend ended its answer without a result.');
          }
          if (failure !== undefined) {
            attempt.trace?.fail(failure);
            out = [{ type: 'error', error: failure }];
            ended = true;
          } else {
            batch = result!.value as readonly StreamPart[];
          }
        }
        if (batch !== undefined) {
          out = [];
          for (const part of batch) {
            if (part.type === 'finish') {
              backendDone = true;
              const usage = normaliseUsage(part.usage, request, output);
              attempt.trace?.finished(usage, part.finishReason);
              lease.end(totalTokens(usage));
              sequencer.pushInto(usage === part.usage ? part : { ...part, usage }, out);
              ended = true;
              break;
            }
            if (part.type === 'error') {
              backendDone = true;
              attempt.trace?.fail(part.error);
              out.push(part);
              ended = true;
              break;
            }
            output.observe(part);
            sequencer.pushInto(part, out);
          }
        }
        const staged = pushThroughStages(stages, out!);
        const passed = staged.batch;
        if (!ended && staged.ended) {
          // A stage ended the stream before the backend did (the output cap cut it): release the
          // backend before the last batch goes on, so that nobody waits on it.
          ended = true;
          release();
        }
        if (passed.length > 0) yield passed;
        if (ended) return;
        batch = undefined;
      }
    } finally {
      if (!released) release();
      await closeStages(stages);
    }
  }

  private toServiceError(error: unknown, attempt: Attempt, candidate: ResolvedModel): ServiceError {
    if (attempt.timedOut) return upstreamTimeoutError(attempt.timeoutMs, error);
    if (isServiceError(error)) return error;
    this.logger?.error({ model: candidate.model.id, provider: candidate.provider.id, err: error }, 'model backend failed unexpectedly');
    return serverError('internal_error', 'The model backend failed unexpectedly.', error);
  }
}

/** A committed generation with what answered it (a class: a literal with a computed symbol key is slow to build). */
class AnsweringStream implements GenerationStream {
  constructor(
    private readonly parts: Batched<StreamPart>,
    readonly model: ModelConfig,
    readonly requestedModel: ModelConfig,
    readonly attempts: number,
    readonly warnings: readonly GenerationWarning[],
    readonly deployment: string,
  ) {}

  batches(): AsyncIterable<readonly StreamPart[]> {
    return this.parts.batches();
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamPart> {
    return this.parts[Symbol.asyncIterator]();
  }
}

function assertCapability(model: ModelConfig, need: CapabilityNeed): void {
  if (model.capabilities.includes(need.capability)) return;
  throw invalidParameter(
    need.param,
    `The model '${model.id}' does not support '${need.capability}', which '${need.param}' requires. Choose a model whose capabilities include '${need.capability}'.`,
  );
}

const NO_STAGES: readonly BatchStage<StreamPart>[] = [];

/** An attempt's result: a committed stream, or the error it failed with before its first content part. */
type AttemptOutcome =
  { stream: Batched<StreamPart>; warnings: GenerationWarning[]; error?: undefined } | { stream?: undefined; error: ServiceError };

/** Abort reason of an attempt whose result nobody reads any more. */
const ATTEMPT_ABANDONED = new Error('The generation attempt was abandoned.');

/**
 * One attempt's abort signal: aborted when the caller aborts, and by the idle watchdog when the
 * backend is silent for `timeoutMs`. The watchdog only counts while the service waits for the backend
 * (between `arm()` and `disarm()`), so a slow consumer (a client reading slowly) never trips it.
 */
class Attempt {
  private readonly source = new CancellationSource();
  private readonly watchdog: NodeJS.Timeout;
  private readonly onCallerAbort: () => void;
  private waiting = false;
  timedOut = false;
  /** The attempt's client span when the request is traced. */
  trace: AttemptTrace | undefined = undefined;

  constructor(
    readonly timeoutMs: number,
    private readonly callerSignal: Cancellation,
  ) {
    this.onCallerAbort = () => this.source.abort(callerSignal.reason);
    if (callerSignal.aborted) this.source.abort(callerSignal.reason);
    else callerSignal.addEventListener('abort', this.onCallerAbort, { once: true });
    this.watchdog = setTimeout(() => {
      if (!this.waiting || this.source.aborted) return;
      this.timedOut = true;
      this.source.abort(upstreamTimeoutError(timeoutMs));
    }, timeoutMs);
  }

  get signal(): Cancellation {
    return this.source;
  }

  get callerAborted(): boolean {
    return this.callerSignal.aborted;
  }

  get callerReason(): unknown {
    return this.callerSignal.reason;
  }

  /** The service starts waiting for the backend: the backend has `timeoutMs` from now. */
  arm(): void {
    this.waiting = true;
    this.watchdog.refresh();
  }

  /** The backend answered; the consumer's time does not count. */
  disarm(): void {
    this.waiting = false;
  }

  /**
   * Stops the watchdog and unlinks the caller's signal. `abandon`: the backend did not finish, so its
   * signal is aborted too (a safety net under closing its iterator).
   */
  dispose(abandon: boolean): void {
    clearTimeout(this.watchdog);
    this.callerSignal.removeEventListener('abort', this.onCallerAbort);
    if (abandon && !this.source.aborted) this.source.abort(ATTEMPT_ABANDONED);
  }
}

/** The generated text seen so far, kept only to count tokens when the backend reports no usage. */
class OutputText {
  private readonly pieces: string[] = [];

  observe(part: StreamPart): void {
    switch (part.type) {
      case 'text-delta':
      case 'reasoning-delta':
      case 'tool-input-delta':
        this.pieces.push(part.delta);
        break;
      case 'tool-input-start':
        this.pieces.push(part.toolName);
        break;
      default:
        break;
    }
  }

  countTokens(): number {
    return countTextTokens(this.pieces.join(''));
  }
}

/**
 * Usage as the service reports it. A backend that reported none marks its figures `estimated`; the
 * missing ones are then counted here with gpt-tokenizer (core/count-tokens.ts).
 */
function normaliseUsage(usage: Usage, request: GenerationRequest, output: OutputText): Usage {
  if (!usage.estimated) return usage;
  return {
    ...usage,
    inputTokens: usage.inputTokens > 0 ? usage.inputTokens : countRequestTokens(request),
    outputTokens: usage.outputTokens > 0 ? usage.outputTokens : output.countTokens(),
    estimated: true,
  };
}
