/**
 * Prometheus metrics: requests by route and status, a latency histogram, and per-deployment routing
 * figures. One registry per app (not prom-client's global one) so that several apps in one process
 * (tests) do not collide.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DeploymentRef, RoutingObserver } from '../services/generation/routing/router.ts';

/** Request counts and latency buckets of one method, route and status: plain numbers on the hot path. */
interface RouteFigures {
  readonly labels: { method: string; route: string; status: string };
  requests: number;
  /** Observations per bucket (not cumulative), the last one past every bound (+Inf). */
  readonly buckets: number[];
  sum: number;
}

const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class HttpMetrics {
  readonly registry = new Registry();
  /**
   * Keyed by method, route and status. prom-client validates and hashes the labels on every observation,
   * which showed in the gateway's profile; the figures are copied into the exposition when scraped.
   */
  private readonly figures = new Map<string, RouteFigures>();

  constructor(collectProcessMetrics: boolean) {
    const figures = this.figures;
    new Counter({
      name: 'switchyard_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const route of figures.values()) this.inc(route.labels, route.requests);
      },
    });
    this.registry.registerMetric(new BucketedDuration(figures) as unknown as Parameters<Registry['registerMetric']>[0]);
    if (collectProcessMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'switchyard_' });
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let figures = this.figures.get(key);
    if (figures === undefined) {
      figures = {
        labels: { method, route, status: String(status) },
        requests: 0,
        buckets: new Array<number>(DURATION_BUCKETS.length + 1).fill(0),
        sum: 0,
      };
      this.figures.set(key, figures);
    }
    figures.requests++;
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket++;
    figures.buckets[bucket]!++;
    figures.sum += seconds;
  }
}

/**
 * `switchyard_http_request_duration_seconds`, a Prometheus histogram by method and route, built at
 * scrape time from the plain figures (the shape prom-client's registry prints: `_bucket` with `le`,
 * `_sum`, `_count`).
 */
class BucketedDuration {
  readonly name = 'switchyard_http_request_duration_seconds';
  readonly help = 'Time from request arrival to the end of the answer (whole stream for SSE), seconds.';
  readonly type = 'histogram';
  readonly aggregator = 'sum';

  constructor(private readonly figures: ReadonlyMap<string, RouteFigures>) {}

  get(): {
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }>;
  } {
    // The histogram has no status label: statuses of one method and route are added together.
    const byRoute = new Map<string, { labels: { method: string; route: string }; buckets: number[]; sum: number; count: number }>();
    for (const figures of this.figures.values()) {
      const key = `${figures.labels.method} ${figures.labels.route}`;
      let route = byRoute.get(key);
      if (route === undefined) {
        route = {
          labels: { method: figures.labels.method, route: figures.labels.route },
          buckets: new Array<number>(DURATION_BUCKETS.length + 1).fill(0),
          sum: 0,
          count: 0,
        };
        byRoute.set(key, route);
      }
      for (let index = 0; index < figures.buckets.length; index++) route.buckets[index]! += figures.buckets[index]!;
      route.sum += figures.sum;
      route.count += figures.requests;
    }
    const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = [];
    for (const route of byRoute.values()) {
      let cumulative = 0;
      for (let index = 0; index < route.buckets.length; index++) {
        cumulative += route.buckets[index]!;
        const bound = index < DURATION_BUCKETS.length ? DURATION_BUCKETS[index]! : '+Inf';
        values.push({ metricName: `${this.name}_bucket`, labels: { ...route.labels, le: bound }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels: route.labels, value: route.sum });
      values.push({ metricName: `${this.name}_count`, labels: route.labels, value: route.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    // The figures belong to HttpMetrics; a registry reset leaves them.
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
