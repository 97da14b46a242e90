/**
 * Prometheus metrics: requests by route and status, a latency histogram, and per-deployment routing
 * figures. One registry per app (not prom-client's global one) so that several apps in one process
 * (tests) do not collide.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { CircuitBreaker, DependencyBreakers } from '../core/circuit-breaker.ts';
import type { DeploymentRef, RoutingObserver } from '../services/generation/routing/router.ts';

/**
 * A histogram's observations as plain numbers, written into the exposition when /metrics is scraped:
 * prom-client validates and hashes the labels on every observation (even through a labelled child),
 * which showed in the gateway's profile.
 */
class BucketCounts {
  /** Observations per bucket (not cumulative), the last one past every bound (+Inf). */
  readonly buckets: number[];
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.buckets = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    let bucket = 0;
    while (bucket < this.bounds.length && value > this.bounds[bucket]!) bucket++;
    this.buckets[bucket]!++;
    this.sum += value;
    this.count++;
  }

  add(other: BucketCounts): void {
    for (let index = 0; index < other.buckets.length; index++) this.buckets[index]! += other.buckets[index]!;
    this.sum += other.sum;
    this.count += other.count;
  }
}

type MetricValue = { metricName: string; labels: Record<string, string | number>; value: number };

/**
 * A Prometheus histogram built at scrape time from BucketCounts (the shape prom-client's registry
 * prints: `_bucket` with `le`, `_sum`, `_count`). `series` gives each label set's counts.
 */
class ScrapedHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    private readonly series: () => Iterable<{ labels: Record<string, string>; counts: BucketCounts }>,
  ) {}

  get(): { name: string; help: string; type: string; aggregator: string; values: MetricValue[] } {
    const values: MetricValue[] = [];
    for (const { labels, counts } of this.series()) {
      let cumulative = 0;
      for (let index = 0; index < counts.buckets.length; index++) {
        cumulative += counts.buckets[index]!;
        const bound = index < this.bounds.length ? this.bounds[index]! : '+Inf';
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: bound }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels, value: counts.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: counts.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    // The counts belong to their owner; a registry reset leaves them.
  }

  registerIn(registry: Registry): void {
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }
}

/** Request counts and latency buckets of one method, route and status: plain numbers on the hot path. */
interface RouteFigures {
  readonly labels: { method: string; route: string; status: string };
  readonly duration: BucketCounts;
}

const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const TIME_TO_FIRST_TOKEN_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class HttpMetrics {
  readonly registry = new Registry();
  /**
   * Keyed by method, route and status. prom-client validates and hashes the labels on every observation,
   * which showed in the gateway's profile; the figures are copied into the exposition when scraped.
   */
  private readonly figures = new Map<string, RouteFigures>();
  /** The same figures by route, status and method, for `observe`. */
  private readonly byRoute = new Map<string, Map<number, Map<string, RouteFigures>>>();

  constructor(collectProcessMetrics: boolean) {
    const figures = this.figures;
    new Counter({
      name: 'switchyard_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const route of figures.values()) this.inc(route.labels, route.duration.count);
      },
    });
    new ScrapedHistogram(
      'switchyard_http_request_duration_seconds',
      'Time from request arrival to the end of the answer (whole stream for SSE), seconds.',
      DURATION_BUCKETS,
      () => durationByRoute(figures),
    ).registerIn(this.registry);
    if (collectProcessMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'switchyard_' });
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    // Found by route, status and method in turn: a key string built for every answer (and hashed to be
    // looked up) cost ~10x these three lookups.
    let byStatus = this.byRoute.get(route);
    if (byStatus === undefined) this.byRoute.set(route, (byStatus = new Map()));
    let byMethod = byStatus.get(status);
    if (byMethod === undefined) byStatus.set(status, (byMethod = new Map()));
    let figures = byMethod.get(method);
    if (figures === undefined) {
      figures = { labels: { method, route, status: String(status) }, duration: new BucketCounts(DURATION_BUCKETS) };
      byMethod.set(method, figures);
      this.figures.set(`${method} ${route} ${status}`, figures);
    }
    figures.duration.observe(seconds);
  }

  /**
   * Gauges and counters of each shared dependency's circuit breaker, read at scrape time:
   * `switchyard_dependency_up` (1 while the breaker is closed), `switchyard_dependency_breaker_state`
   * (0 closed, 1 half-open, 2 open), `switchyard_dependency_failures_total` (calls that failed on the
   * dependency) and `switchyard_dependency_refused_total` (calls refused at once while it was down).
   */
  observeDependencies(breakers: DependencyBreakers): void {
    const each = (read: (breaker: CircuitBreaker) => number) =>
      function (this: Gauge<'dependency'>): void {
        this.reset();
        for (const breaker of breakers.all()) this.set({ dependency: breaker.name }, read(breaker));
      };
    const counter = (read: (breaker: CircuitBreaker) => number) =>
      function (this: Counter<'dependency'>): void {
        this.reset();
        for (const breaker of breakers.all()) this.inc({ dependency: breaker.name }, read(breaker));
      };
    new Gauge({
      name: 'switchyard_dependency_up',
      help: 'Whether a shared dependency (database, redis, files) is reachable: 1 while its circuit breaker is closed.',
      labelNames: ['dependency'],
      registers: [this.registry],
      collect: each((breaker) => (breaker.isOpen ? 0 : 1)),
    });
    new Gauge({
      name: 'switchyard_dependency_breaker_state',
      help: "A shared dependency's circuit breaker: 0 closed, 1 half-open (probing), 2 open (refusing at once).",
      labelNames: ['dependency'],
      registers: [this.registry],
      collect: each((breaker) => breaker.stateNumber),
    });
    new Counter({
      name: 'switchyard_dependency_failures_total',
      help: 'Calls that failed because a shared dependency could not be reached or did not answer in time.',
      labelNames: ['dependency'],
      registers: [this.registry],
      collect: counter((breaker) => breaker.failuresTotal),
    });
    new Counter({
      name: 'switchyard_dependency_refused_total',
      help: 'Calls refused at once because a shared dependency was known to be down (circuit breaker open).',
      labelNames: ['dependency'],
      registers: [this.registry],
      collect: counter((breaker) => breaker.refusedTotal),
    });
  }
}

/** The duration histogram has no status label: statuses of one method and route are added together. */
function durationByRoute(figures: ReadonlyMap<string, RouteFigures>): Iterable<{ labels: Record<string, string>; counts: BucketCounts }> {
  const byRoute = new Map<string, { labels: Record<string, string>; counts: BucketCounts }>();
  for (const route of figures.values()) {
    const key = `${route.labels.method} ${route.labels.route}`;
    let merged = byRoute.get(key);
    if (merged === undefined) {
      merged = { labels: { method: route.labels.method, route: route.labels.route }, counts: new BucketCounts(DURATION_BUCKETS) };
      byRoute.set(key, merged);
    }
    merged.counts.add(route.duration);
  }
  return byRoute.values();
}

/** The figures of one deployment: plain numbers on the hot path, written into the metrics at scrape time. */
interface DeploymentFigures {
  readonly labels: { model: string; deployment: string };
  requests: number;
  inFlight: number;
  cooldowns: number;
  readonly errors: Map<string, number>;
  readonly timeToFirstToken: BucketCounts;
}

/**
 * Per-deployment metrics of the router (services/generation/routing): requests sent, failures before
 * the first byte by error code, requests in flight, time to first token, cooldowns. Labels `model`
 * and `deployment` (provider id, `#n` for the n-th key of a provider with several). Counts and the
 * time-to-first-token buckets are plain numbers copied into the exposition when /metrics is scraped:
 * prom-client hashes the labels on every increment, which on the single-provider path cost more than
 * the routing decision itself.
 */
export class DeploymentMetrics implements RoutingObserver {
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
    new ScrapedHistogram(
      'switchyard_deployment_time_to_first_token_seconds',
      'Time from sending an attempt to its first content part, seconds.',
      TIME_TO_FIRST_TOKEN_BUCKETS,
      // Only deployments that answered at least once, as prom-client printed them.
      () =>
        [...all.values()]
          .filter((figures) => figures.timeToFirstToken.count > 0)
          .map((figures) => ({ labels: figures.labels, counts: figures.timeToFirstToken })),
    ).registerIn(registry);
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
          timeToFirstToken: new BucketCounts(TIME_TO_FIRST_TOKEN_BUCKETS),
        };
        this.all.set(key, figures);
      }
      this.figures.set(ref, figures);
    }
    return figures;
  }
}
