/**
 * Prometheus metrics: requests by route and status, a latency histogram, and per-deployment routing
 * figures. One registry per app (not prom-client's global one) so that several apps in one process
 * (tests) do not collide.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DeploymentRef, RoutingObserver } from '../services/generation/routing/router.ts';

export class HttpMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly duration: Histogram<'method' | 'route'>;

  constructor(collectProcessMetrics: boolean) {
    this.requests = new Counter({
      name: 'switchyard_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: 'switchyard_http_request_duration_seconds',
      help: 'Time from request arrival to the end of the answer (whole stream for SSE), seconds.',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [this.registry],
    });
    if (collectProcessMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'switchyard_' });
  }

  /** Label children per method, route and status: resolving labels on every request showed in profiles. */
  private readonly children = new Map<string, { requests: { inc(): void }; duration: { observe(value: number): void } }>();

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let child = this.children.get(key);
    if (child === undefined) {
      child = { requests: this.requests.labels(method, route, String(status)), duration: this.duration.labels(method, route) };
      this.children.set(key, child);
    }
    child.requests.inc();
    child.duration.observe(seconds);
  }
}

/** The label children of one deployment, resolved once. */
interface DeploymentChildren {
  requests: { inc(): void };
  errors: Map<string, { inc(): void }>;
  inFlight: { inc(): void; dec(): void };
  timeToFirstToken: { observe(value: number): void };
  cooldowns: { inc(): void };
}

/**
 * Per-deployment metrics of the router (services/generation/routing): requests sent, failures before
 * the first byte by error code, requests in flight, time to first token, cooldowns. Labels `model`
 * and `deployment` (provider id, `#n` for the n-th key of a provider with several).
 */
export class DeploymentMetrics implements RoutingObserver {
  private readonly requests: Counter<'model' | 'deployment'>;
  private readonly errors: Counter<'model' | 'deployment' | 'code'>;
  private readonly inFlight: Gauge<'model' | 'deployment'>;
  private readonly timeToFirstToken: Histogram<'model' | 'deployment'>;
  private readonly cooldowns: Counter<'model' | 'deployment'>;
  private readonly children = new WeakMap<DeploymentRef, DeploymentChildren>();

  constructor(registry: Registry) {
    const labelNames = ['model', 'deployment'] as const;
    this.requests = new Counter({ name: 'switchyard_deployment_requests_total', help: 'Upstream attempts sent to each deployment.', labelNames, registers: [registry] });
    this.errors = new Counter({
      name: 'switchyard_deployment_errors_total',
      help: 'Attempts that failed before their first byte, by deployment and error code.',
      labelNames: ['model', 'deployment', 'code'],
      registers: [registry],
    });
    this.inFlight = new Gauge({ name: 'switchyard_deployment_in_flight', help: 'Requests in flight on each deployment (this instance).', labelNames, registers: [registry] });
    this.timeToFirstToken = new Histogram({
      name: 'switchyard_deployment_time_to_first_token_seconds',
      help: 'Time from sending an attempt to its first content part, seconds.',
      labelNames,
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
    this.cooldowns = new Counter({ name: 'switchyard_deployment_cooldowns_total', help: 'Times each deployment was put into cooldown.', labelNames, registers: [registry] });
  }

  started(ref: DeploymentRef): void {
    const children = this.of(ref);
    children.requests.inc();
    children.inFlight.inc();
  }

  firstByte(ref: DeploymentRef, seconds: number): void {
    this.of(ref).timeToFirstToken.observe(seconds);
  }

  failed(ref: DeploymentRef, code: string): void {
    const children = this.of(ref);
    let counter = children.errors.get(code);
    if (counter === undefined) {
      counter = this.errors.labels(ref.model, ref.deployment, code);
      children.errors.set(code, counter);
    }
    counter.inc();
  }

  ended(ref: DeploymentRef): void {
    this.of(ref).inFlight.dec();
  }

  cooledDown(ref: DeploymentRef): void {
    this.of(ref).cooldowns.inc();
  }

  private of(ref: DeploymentRef): DeploymentChildren {
    let children = this.children.get(ref);
    if (children === undefined) {
      children = {
        requests: this.requests.labels(ref.model, ref.deployment),
        errors: new Map(),
        inFlight: this.inFlight.labels(ref.model, ref.deployment),
        timeToFirstToken: this.timeToFirstToken.labels(ref.model, ref.deployment),
        cooldowns: this.cooldowns.labels(ref.model, ref.deployment),
      };
      this.children.set(ref, children);
    }
    return children;
  }
}
