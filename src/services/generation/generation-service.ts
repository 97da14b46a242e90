/**
 * The generation use case, shared by every text endpoint (chat completions, messages, responses,
 * batches): resolve the model, check its capabilities, call its backend with per-attempt timeout,
 * retries and fallbacks, and hand back the canonical stream of parts with normalised usage.
 *
 * Routing: each attempt goes to one of the model's deployments, chosen by its router (routing/).
 *
 * Files: this one is the public entry (`resolve`, `checkRequest`, `streamResolved`) and the attempts
 * loop over deployments, retries and fallbacks; `model-resolution.ts` resolves names and capabilities;
 * `generation-attempt.ts` runs one attempt and the committed stream; `generation-stream.ts` holds the
 * types a caller sees.
 *
 * The commit point: `streamResolved()` resolves only once the backend produced its first content part (any
 * part but `response-metadata`). Until then nothing can have reached the client, so a failure moves
 * to another deployment of the model not yet tried (at once), then is retried (connection errors,
 * 408, 429, 5xx; jittered exponential backoff, or the upstream's retry-after, capped), then the
 * model's fallbacks are tried in order, and if all fail `streamResolved()`
 * REJECTS with a ServiceError: the HTTP layer answers a normal JSON error. Once it has resolved, a
 * failure comes as a final `error` part and nothing follows it.
 *
 * Timeouts: the provider's `timeoutMs` bounds each wait for the backend, the first part as well as
 * every later one (an idle timeout): a stream that keeps producing is never cut, a silent one is.
 */
import type { Capability, Config } from '../../config/index.ts';
import type { Cancellation } from '../../core/cancellation.ts';
import { countRequestTokens } from '../../core/count-tokens.ts';
import type { GenerationRequest } from '../../core/generation.ts';
import { serverError, type ServiceError } from '../../core/service-error.ts';
import { isUpstreamError } from '../../core/upstream-error.ts';
import { inProcessDeploymentState } from '../../limits/create-deployment-state.ts';
import { AttemptRunner, type AttemptOutcome } from './generation-attempt.ts';
import {
  AnsweringStream,
  type GenerationLogger,
  type GenerationStream,
  type GenerationStreamOptions,
  type LanguageModelSource,
} from './generation-stream.ts';
import { ModelCatalogue, type CapabilityOptions, type ResolvedGeneration, type ResolvedModel } from './model-resolution.ts';
import { DEFAULT_RETRY_POLICY, retryDelay, sleep as defaultSleep, type RetryPolicy } from './retry-policy.ts';
import { deploymentTable } from './routing/deployment-table.ts';
import { Router } from './routing/router.ts';

export type { GenerationLogger, GenerationStream, GenerationStreamOptions, LanguageModelSource } from './generation-stream.ts';
export type { ResolvedGeneration, ResolvedModel } from './model-resolution.ts';

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

export class GenerationService {
  private readonly catalogue: ModelCatalogue;
  private readonly attempts: AttemptRunner;
  private readonly router: Router;
  private readonly retryPolicy: RetryPolicy;
  private readonly logger: GenerationLogger | undefined;
  private readonly sleep: (milliseconds: number, signal: Cancellation) => Promise<void>;
  private readonly random: () => number;

  constructor(options: GenerationServiceOptions) {
    this.catalogue = new ModelCatalogue(options.config);
    this.attempts = new AttemptRunner(options.registry, options.logger);
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
    return this.catalogue.resolve(modelName, needs, param);
  }

  /**
   * Checks that a resolved model has every capability the request needs (400 naming the field that
   * needs a missing one). Done once per request, after `resolve` (callers that must see the model
   * before the request is complete, for stored history or context-window truncation, complete it in
   * between): `streamResolved` takes the result.
   */
  checkRequest(resolved: ResolvedModel, request: GenerationRequest, options: CapabilityOptions): ResolvedGeneration {
    return this.catalogue.checkRequest(resolved, request, options);
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
      requested.model.fallbacks.length === 0 ? [requested] : [requested, ...this.catalogue.fallbacksOf(requested.model, needs)];
    let lastError: ServiceError | undefined;
    let attempts = 0;
    let promptTokens = options.promptTokens;
    // Given by the caller, else counted only when a deployment limits tokens per minute, and once for all candidates.
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
            outcome = await this.attempts.start(candidate, lease, request, options, attempts, retryIndex);
          } catch (thrown) {
            lease.end();
            throw thrown;
          }
          if (outcome.stream !== undefined) {
            return new AnsweringStream(
              outcome.stream,
              candidate.model,
              requested.model,
              attempts,
              outcome.warnings,
              lease.deployment.id,
              outcome.whole,
            );
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
}
