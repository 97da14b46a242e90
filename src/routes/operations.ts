/**
 * Operational endpoints, public and outside `/v1`: liveness, readiness (database reachable) and
 * Prometheus metrics. They answer plain bodies, not SPEC envelopes, as probes and scrapers expect.
 */
import type { FastifyInstance } from 'fastify';
import type { HttpMetrics } from '../http/metrics.ts';

export function registerOperationsRoutes(app: FastifyInstance, readiness: () => Promise<boolean>, metrics: HttpMetrics): void {
  const publicRoute = { config: { switchyard: { permission: null } } } as const;
  app.get('/healthz', publicRoute, async () => ({ status: 'ok' }));
  app.get('/readyz', publicRoute, async (_request, reply) => {
    const ready = await readiness();
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', database: ready });
  });
  app.get('/metrics', publicRoute, async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}
