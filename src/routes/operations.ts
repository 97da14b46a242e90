/**
 * Operational endpoints, public and outside `/v1`: liveness, readiness (every dependency the instance
 * needs, and whether it is draining for shutdown) and Prometheus metrics. They answer plain bodies, not
 * SPEC envelopes, as probes and scrapers expect.
 */
import type { FastifyInstance } from 'fastify';
import type { HttpMetrics } from '../http/metrics.ts';

/**
 * What `/readyz` reports. It answers 503 only when this instance cannot serve its core traffic
 * (draining, or a check marked `critical` failed: its own SQLite file or local disk, or API keys that
 * can no longer be verified); a shared dependency that is down (Postgres, Redis, an object store) is
 * the same for every instance, so it is reported in the body (`degraded`) and in metrics but does not
 * take this instance out of a balancer: taking every instance out would serve nothing at all
 * (README "When a dependency fails").
 */
export interface ReadinessReport {
  /** True once SIGTERM arrived: the balancer should stop sending new requests here. */
  draining: boolean;
  /** One entry per dependency (`database`, `redis`, `files`, `keys`): `ok`, or why it failed. */
  checks: Record<string, { ok: true; critical?: boolean } | { ok: false; error: string; critical?: boolean }>;
}

export function registerOperationsRoutes(app: FastifyInstance, readiness: () => Promise<ReadinessReport>, metrics: HttpMetrics): void {
  const publicRoute = { config: { switchyard: { permission: null } } } as const;
  app.get('/healthz', publicRoute, async () => ({ status: 'ok' }));
  app.get('/readyz', publicRoute, async (_request, reply) => {
    const report = await readiness();
    const down = Object.entries(report.checks).filter(([, check]) => !check.ok);
    const failed = down.filter(([, check]) => check.critical === true).map(([name]) => name);
    const degraded = down.filter(([, check]) => check.critical !== true).map(([name]) => name);
    const ready = failed.length === 0 && !report.draining;
    return reply.code(ready ? 200 : 503).send({
      status: report.draining ? 'draining' : !ready ? 'unavailable' : degraded.length > 0 ? 'degraded' : 'ready',
      ...(failed.length === 0 ? {} : { failed }),
      ...(degraded.length === 0 ? {} : { degraded }),
      checks: report.checks,
    });
  });
  app.get('/metrics', publicRoute, async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}
