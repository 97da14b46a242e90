/**
 * The router: for each request, which deployment of a model answers. A `Route` is one request's walk
 * over one model's deployments: `next()` picks a healthy deployment not yet tried (the model's
 * strategy decides, from the shared state) and counts it against the deployment's own limits in one
 * atomic step; `failed()` puts a deployment that failed before its first byte into cooldown (its
 * retry-after, else the provider's `cooldownMs`); a `Lease` reports the first byte (latency) and the
 * end (in flight, real tokens).
 *
 * A model with one deployment and no per-deployment limits is routed without touching any state (no
 * Redis round trip, no cooldown: there is nothing to route around); only its metrics are counted.
 */
import type { ModelConfig } from '../../../config/index.ts';
import { serverError, type ServiceError } from '../../../core/service-error.ts';
import { isUpstreamError, UpstreamError, type UpstreamErrorInit } from '../../../core/upstream-error.ts';
import { systemClock, type Clock } from '../../../limits/clock.ts';
import { minuteOf, type DeploymentRef, type DeploymentState, type DeploymentStateStore } from '../../../limits/deployment-state.ts';
import type { Deployment, RoutedModel } from './deployment-table.ts';

export type { DeploymentRef };
import { STRATEGIES, type RoutingCandidate } from './strategies.ts';

/** Where routing events go: per-deployment metrics (http/metrics.ts implements it with prom-client). */
export interface RoutingObserver {
  /** A request was sent to the deployment. */
  started(ref: DeploymentRef): void;
  /** Its first content part arrived after `seconds`. */
  firstByte(ref: DeploymentRef, seconds: number): void;
  /** It failed before its first byte (`code`: the error's code). */
  failed(ref: DeploymentRef, code: string): void;
  /** The request ended (answered, failed or abandoned): one fewer in flight. */
  ended(ref: DeploymentRef): void;
  /** The deployment was put into cooldown for `milliseconds`. */
  cooledDown(ref: DeploymentRef, milliseconds: number): void;
}

const silentObserver: RoutingObserver = { started() {}, firstByte() {}, failed() {}, ended() {}, cooledDown() {} };

/** Longest cooldown taken from an upstream's retry-after, ms. */
export const MAX_COOLDOWN_MS = 600_000;

export interface RouterOptions {
  /** Every model's deployments (deployment-table.ts). */
  models: ReadonlyMap<string, RoutedModel>;
  state: DeploymentStateStore;
  observer?: RoutingObserver;
  /** Cooldowns and minute windows; tests step over a cooldown without waiting. */
  clock?: Clock;
  /** Source of [0, 1) for weighted picks and exploration. */
  random?: () => number;
}

/** One attempt's hold on a deployment: report the first byte, then the end, exactly once each. */
export class Lease {
  private readonly startedAt = performance.now();
  private ended = false;

  constructor(
    readonly deployment: Deployment,
    private readonly router: Router,
    /** The minute counted in, and the tokens counted then; undefined when nothing is counted in the state store. */
    private readonly counted: { minute: number; tokens: number } | undefined,
  ) {}

  /** The first content part arrived: measures time to first token. */
  firstByte(): void {
    const seconds = (performance.now() - this.startedAt) / 1000;
    this.router.observer.firstByte(this.deployment.ref, seconds);
    if (this.counted !== undefined) this.router.state.observeLatency(this.deployment.ref, seconds * 1000);
  }

  /** The request is over. `totalTokens`: its real usage, to correct the tokens counted at the start. */
  end(totalTokens?: number): void {
    if (this.ended) return;
    this.ended = true;
    this.router.observer.ended(this.deployment.ref);
    if (this.counted === undefined) return;
    const { state } = this.router;
    state.release(this.deployment.ref);
    if (totalTokens !== undefined && this.deployment.limits.tokensPerMinute > 0)
      state.correctTokens(this.deployment.ref, this.counted.minute, totalTokens - this.counted.tokens);
  }
}

export type RouteStep = { lease: Lease; error?: undefined } | { lease?: undefined; error: ServiceError };

/** One request's walk over one model's deployments. */
export class Route {
  private readonly tried = new Set<Deployment>();

  constructor(
    private readonly router: Router,
    readonly routed: RoutedModel,
  ) {}

  /** True while some deployment has not been tried by this request. */
  get hasUntried(): boolean {
    return this.tried.size < this.routed.deployments.length;
  }

  /** Lets every deployment be picked again (a retry after all were tried). */
  resetTried(): void {
    this.tried.clear();
  }

  /**
   * Picks and counts a deployment. `tokens` is called (once) only when a deployment counts tokens per
   * minute. `probeCooling`: cooling deployments are candidates too (a retry that already waited).
   * Resolves with an error (not a rejection) when no deployment can take the request now: every one
   * cooling (500 `service_unavailable`) or at its own limits (429 `deployments_at_capacity`), both
   * with the time until one frees as retry-after.
   */
  async next(tokens: () => number, probeCooling = false): Promise<RouteStep> {
    const { routed, router } = this;
    if (routed.direct) {
      const deployment = routed.deployments[0]!;
      this.tried.add(deployment);
      router.observer.started(deployment.ref);
      return { lease: new Lease(deployment, router, undefined) };
    }
    const estimate = routed.countsTokens ? tokens() : 0;
    const deployments = routed.deployments;
    const states = await router.state.read(deployments.map((deployment) => deployment.ref));
    const nowMs = router.clock.now();
    let candidates: RoutingCandidate[] = [];
    let coolingEndsMs = Infinity;
    for (let index = 0; index < deployments.length; index++) {
      const deployment = deployments[index]!;
      if (this.tried.has(deployment)) continue;
      const state = states[index] as DeploymentState;
      if (state.coolingUntilMs > nowMs && !probeCooling) coolingEndsMs = Math.min(coolingEndsMs, state.coolingUntilMs);
      else candidates.push({ deployment, state });
    }
    const strategy = STRATEGIES[routed.strategy];
    let atCapacity = false;
    while (candidates.length > 0) {
      const chosen = strategy.choose(candidates, router.random);
      const { deployment } = chosen;
      const acquired = await router.state.acquire(deployment.ref, deployment.limits, estimate);
      if (acquired !== null) {
        this.tried.add(deployment);
        router.observer.started(deployment.ref);
        return { lease: new Lease(deployment, router, { minute: acquired.minute, tokens: estimate }) };
      }
      atCapacity = true;
      candidates = candidates.filter((candidate) => candidate !== chosen);
    }
    if (atCapacity) {
      const nextMinuteMs = (minuteOf(nowMs) + 1) * 60_000;
      return { error: capacityError(routed.modelId, Math.min(nextMinuteMs, coolingEndsMs) - nowMs) };
    }
    return { error: coolingError(routed.modelId, coolingEndsMs === Infinity ? 0 : coolingEndsMs - nowMs) };
  }

  /**
   * The attempt on `lease` failed before its first byte: ends the lease and, when the failure is the
   * upstream's and may pass (connection error, 408, 429, 5xx), cools the deployment down for its
   * retry-after or the provider's cooldown.
   */
  failed(lease: Lease, error: ServiceError): void {
    const { router } = this;
    const { deployment } = lease;
    router.observer.failed(deployment.ref, error.code);
    lease.end();
    // With one deployment there is nothing to route around: its retries wait as they always did.
    if (this.routed.deployments.length === 1 || !isUpstreamError(error) || !error.retryable) return;
    const milliseconds = Math.min(error.retryAfterMs ?? deployment.cooldownMs, MAX_COOLDOWN_MS);
    if (milliseconds <= 0) return;
    router.state.coolDown(deployment.ref, router.clock.now() + milliseconds);
    router.observer.cooledDown(deployment.ref, milliseconds);
  }
}

export class Router {
  readonly state: DeploymentStateStore;
  readonly observer: RoutingObserver;
  readonly clock: Clock;
  readonly random: () => number;
  private readonly models: ReadonlyMap<string, RoutedModel>;

  constructor(options: RouterOptions) {
    this.models = options.models;
    this.state = options.state;
    this.observer = options.observer ?? silentObserver;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
  }

  /** Starts routing one request to `model` (a catalogue model; its deployments come from the table). */
  route(model: ModelConfig): Route {
    const routed = this.models.get(model.id);
    if (routed === undefined) throw serverError('internal_error', `The model '${model.id}' has no deployments.`);
    return new Route(this, routed);
  }
}

/** Every deployment is cooling after failures: like an upstream outage, retryable after the first cooldown ends. */
function coolingError(modelId: string, retryAfterMs: number): UpstreamError {
  return unavailableError(retryAfterMs, {
    kind: 'connection',
    status: 500,
    type: 'server_error',
    code: 'service_unavailable',
    message: `Every backend of the model '${modelId}' failed recently and is cooling down. Retry in a few seconds.`,
    upstreamStatus: null,
  });
}

/** Every deployment is at its own per-minute limit: an upstream rate limit that Switchyard enforces itself. */
function capacityError(modelId: string, retryAfterMs: number): UpstreamError {
  return unavailableError(retryAfterMs, {
    kind: 'status',
    status: 429,
    type: 'rate_limit_exceeded',
    code: 'deployments_at_capacity',
    message: `Every backend of the model '${modelId}' is at its requests or tokens per minute. Retry later.`,
    upstreamStatus: 429,
  });
}

/** No deployment can take the request now; one may in `retryAfterMs` (retryable, with a retry-after header). */
function unavailableError(retryAfterMs: number, init: Omit<UpstreamErrorInit, 'retryable' | 'retryAfterMs' | 'headers'>): UpstreamError {
  const headers = { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) };
  return new UpstreamError({ ...init, retryable: true, retryAfterMs, headers });
}
