/**
 * Prometheus metrics: requests by route and status, and a latency histogram. One registry per app
 * (not prom-client's global one) so that several apps in one process (tests) do not collide.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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
