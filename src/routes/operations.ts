/**
 * Operational endpoints, outside `/v1`: liveness, readiness (every dependency the instance needs, and
 * whether it is draining for shutdown) and Prometheus metrics. They answer plain bodies, not SPEC
 * envelopes, as probes and scrapers expect (a refused token is the SPEC 401).
 *
 * `/readyz` never shows a dependency's error text (it can name internal hosts and addresses): the body
 * says which check failed, and the text goes to the log, once per change. With `server.operationsToken`
 * (OPERATIONS_TOKEN) set, `/metrics` and the detail of `/readyz` need `Authorization: Bearer <token>`;
 * `/readyz`'s status code, and `{status}`, stay public so that a balancer can probe without a secret.
 *
 * With `server.operationsPort` (OPERATIONS_PORT) these routes are registered twice: in full on the
 * operations listener (http/operations-listener.ts; the token, when set, is asked there too), and on the
 * public listener only what a balancer needs: `/healthz`, and `/readyz`'s status code with `{status}`
 * and never its detail; `/metrics` is not there at all (404).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { ServiceError } from '../core/service-error.ts';
import type { HttpMetrics } from '../http/metrics.ts';
import type { ConfigAgreementReport } from '../services/instances/config-agreement.ts';

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
  /** One entry per dependency (`database`, `redis`, `files`, `keys`): `ok`, or why it failed (logged, never answered). */
  checks: Record<string, { ok: true; critical?: boolean } | { ok: false; error: string; critical?: boolean }>;
  /** This instance's config hash and the instances whose config differs (services/instances). */
  config?: ConfigAgreementReport | undefined;
}

export interface OperationsRouteOptions {
  /** Bearer token `/metrics` and `/readyz` detail ask for; undefined: both are open. */
  operationsToken?: string | undefined;
  /** Where failed readiness checks are logged (the process logger). */
  logger: Pick<FastifyBaseLogger, 'warn' | 'info'>;
  /**
   * `all` (default): one listener serves everything; `public`: the public listener beside an operations
   * listener (no `/metrics`, no `/readyz` detail); `operations`: the operations listener itself.
   */
  listener?: 'all' | 'public' | 'operations';
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** True when no token is configured, or the request carries it as a bearer token (compared in constant time). */
function operationsAccess(operationsToken: string | undefined): (request: FastifyRequest) => boolean {
  if (operationsToken === undefined) return () => true;
  const expected = digest(operationsToken);
  return (request) => {
    const header = request.headers.authorization;
    const presented = header?.startsWith('Bearer ') === true ? header.slice(7).trim() : undefined;
    return presented !== undefined && timingSafeEqual(digest(presented), expected);
  };
}

/** The checks as answered (no error text), logging each check's failure when it starts or changes and its recovery. */
function readinessReporter(
  logger: OperationsRouteOptions['logger'],
): (checks: ReadinessReport['checks']) => Record<string, { ok: boolean }> {
  const failing = new Map<string, string>();
  return (checks) => {
    const answered: Record<string, { ok: boolean }> = {};
    for (const [name, check] of Object.entries(checks)) {
      if (check.ok) {
        if (failing.delete(name)) logger.info({ check: name }, 'readiness check passes again');
      } else if (failing.get(name) !== check.error) {
        failing.set(name, check.error);
        logger.warn({ check: name, error: check.error }, 'readiness check failed');
      }
      const { error: _text, ...shown } = check as { ok: boolean; error?: string };
      answered[name] = shown;
    }
    return answered;
  };
}

export function registerOperationsRoutes(
  app: FastifyInstance,
  readiness: () => Promise<ReadinessReport>,
  metrics: HttpMetrics,
  options: OperationsRouteOptions,
): void {
  const publicRoute = { config: { switchyard: { permission: null } } } as const;
  const publicOnly = options.listener === 'public';
  const mayRead = publicOnly ? () => false : operationsAccess(options.operationsToken);
  // Each listener logs a check's failure once per change (a balancer may probe only the public one).
  const report = readinessReporter(options.logger);
  app.get('/healthz', publicRoute, async () => ({ status: 'ok' }));
  app.get('/readyz', publicRoute, async (request, reply) => {
    const readinessReport = await readiness();
    const down = Object.entries(readinessReport.checks).filter(([, check]) => !check.ok);
    const failed = down.filter(([, check]) => check.critical === true).map(([name]) => name);
    const degraded = down.filter(([, check]) => check.critical !== true).map(([name]) => name);
    const ready = failed.length === 0 && !readinessReport.draining;
    const checks = report(readinessReport.checks);
    const status = readinessReport.draining ? 'draining' : !ready ? 'unavailable' : degraded.length > 0 ? 'degraded' : 'ready';
    const detail = {
      ...(failed.length === 0 ? {} : { failed }),
      ...(degraded.length === 0 ? {} : { degraded }),
      checks,
      ...(readinessReport.config === undefined ? {} : { config: readinessReport.config }),
    };
    return reply.code(ready ? 200 : 503).send(mayRead(request) ? { status, ...detail } : { status });
  });
  if (publicOnly) return;
  app.get('/metrics', publicRoute, async (request, reply) => {
    if (!mayRead(request)) {
      throw new ServiceError({
        status: 401,
        type: 'auth_error',
        code: 'invalid_token',
        message: '/metrics needs the operations token: send Authorization: Bearer <OPERATIONS_TOKEN>.',
        headers: { 'www-authenticate': 'Bearer' },
      });
    }
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}
