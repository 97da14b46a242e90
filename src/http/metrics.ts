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

/** The figures of one deployment: plain numbers on the hot path, written into the metrics at scrape time. */
interface DeploymentFigures {
  readonly labels: { model: string; deployment: string };
  requests: number;
  inFlight: number;
  cooldowns: number;
  readonly errors: Map<string, number>;
  readonly timeToFirstToken: { observe(value: number): void };
}

/**
 * Per-deployment metrics of the router (services/generation/routing): requests sent, failures before
 * the first byte by error code, requests in flight, time to first token, cooldowns. Labels `model`
 * and `deployment` (provider id, `#n` for the n-th key of a provider with several). Counts are plain
 * numbers copied into prom-client when /metrics is scraped: prom-client hashes the labels on every
 * increment, which on the single-provider path cost more than the routing decision itself.
 */
export class DeploymentMetrics implements RoutingObserver {
  private readonly timeToFirstToken: Histogram<'model' | 'deployment'>;
  private readonly figures = new WeakMap<DeploymentRef, DeploymentFigures>();
  /** Every deployment seen, for the scrape (several refs of one deployment share one entry). */
  private readonly all = new Map<string, DeploymentFigures>();

  constructor(registry: Registry) {
    const labelNames = ['model', 'deployment'] as const;
    const all = this.all;
    new Counter({
      name: 'switchyard_deployment_requests_total',
      help: 'Upstream attempts sent to each deployment.',
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        for (const figures of all.values()) this.inc(figures.labels, figures.requests);
      },
    });
    new Counter({
      name: 'switchyard_deployment_errors_total',
      help: 'Attempts that failed before their first byte, by deployment and error code.',
      labelNames: ['model', 'deployment', 'code'],
      registers: [registry],
      collect() {
        this.reset();
        for (const figures of all.values()) for (const [code, count] of figures.errors) this.inc({ ...figures.labels, code }, count);
      },
    });
    new Gauge({
      name: 'switchyard_deployment_in_flight',
      help: 'Requests in flight on each deployment (this instance).',
      labelNames,
      registers: [registry],
      collect() {
        for (const figures of all.values()) this.set(figures.labels, figures.inFlight);
      },
    });
    new Counter({
      name: 'switchyard_deployment_cooldowns_total',
      help: 'Times each deployment was put into cooldown.',
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        for (const figures of all.values()) if (figures.cooldowns > 0) this.inc(figures.labels, figures.cooldowns);
      },
    });
    this.timeToFirstToken = new Histogram({
      name: 'switchyard_deployment_time_to_first_token_seconds',
      help: 'Time from sending an attempt to its first content part, seconds.',
      labelNames,
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
  }

  started(ref: DeploymentRef): void {
    const figures = this.of(ref);
    figures.requests += 1;
    figures.inFlight += 1;
  }

  firstByte(ref: DeploymentRef, seconds: number): void {
    this.of(ref).timeToFirstToken.observe(seconds);
  }

  failed(ref: DeploymentRef, code: string): void {
    const { errors } = this.of(ref);
    errors.set(code, (errors.get(code) ?? 0) + 1);
  }

  ended(ref: DeploymentRef): void {
    this.of(ref).inFlight -= 1;
  }

  cooledDown(ref: DeploymentRef): void {
    this.of(ref).cooldowns += 1;
  }

  private of(ref: DeploymentRef): DeploymentFigures {
    let figures = this.figures.get(ref);
    if (figures === undefined) {
      const key = `${ref.model}\u0000${ref.deployment}`;
      figures = this.all.get(key);
      if (figures === undefined) {
        const labels = { model: ref.model, deployment: ref.deployment };
        figures = {
          labels,
          requests: 0,
          inFlight: 0,
          cooldowns: 0,
          errors: new Map(),
          timeToFirstToken: this.timeToFirstToken.labels(labels),
        };
        this.all.set(key, figures);
      }
      this.figures.set(ref, figures);
    }
    return figures;
  }
}
