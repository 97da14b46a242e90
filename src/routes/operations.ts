/**
 * Operational endpoints, public and outside `/v1`: liveness, readiness (every dependency the instance
 * needs, and whether it is draining for shutdown) and Prometheus metrics. They answer plain bodies, not
 * SPEC envelopes, as probes and scrapers expect.
 */
import type { FastifyInstance } from 'fastify';
import type { HttpMetrics } from '../http/metrics.ts';
import type { ConfigAgreementReport } from '../services/instances/config-agreement.ts';

/** What `/readyz` reports: 200 only when every check passed and the instance is not draining. */
export interface ReadinessReport {
  /** True once SIGTERM arrived: the balancer should stop sending new requests here. */
  draining: boolean;
  /** One entry per dependency (`database`, `redis`, `files`): `ok`, or why it failed. */
  checks: Record<string, { ok: true } | { ok: false; error: string }>;
  /** This instance's config hash and the instances whose config differs (services/instances). */
  config?: ConfigAgreementReport | undefined;
}

export function registerOperationsRoutes(app: FastifyInstance, readiness: () => Promise<ReadinessReport>, metrics: HttpMetrics): void {
  const publicRoute = { config: { switchyard: { permission: null } } } as const;
  app.get('/healthz', publicRoute, async () => ({ status: 'ok' }));
  app.get('/readyz', publicRoute, async (_request, reply) => {
    const report = await readiness();
    const failed = Object.entries(report.checks)
      .filter(([, check]) => !check.ok)
      .map(([name]) => name);
    const ready = failed.length === 0 && !report.draining;
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : report.draining ? 'draining' : 'unavailable',
      ...(failed.length === 0 ? {} : { failed }),
      checks: report.checks,
      ...(report.config === undefined ? {} : { config: report.config }),
    });
  });
  app.get('/metrics', publicRoute, async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}
