/**
 * What `/readyz` reports (routes/operations.ts): each dependency's check, bounded in time. Shared
 * dependencies are reported, not made conditions of readiness; what only this instance has (its
 * SQLite file, its local disk) and key verification are.
 */
import type { Redis } from 'ioredis';
import type { Authenticator } from '../accounts/authenticator.ts';
import type { Config } from '../config/index.ts';
import type { Database } from '../db/database.ts';
import type { BlobStore } from '../files/blob-store.ts';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildOperationsListener } from '../http/operations-listener.ts';
import type { HttpMetrics } from '../http/metrics.ts';
import { registerOperationsRoutes, type ReadinessReport } from '../routes/operations.ts';
import type { ConfigAgreement } from '../services/instances/config-agreement.ts';

/** How long one readiness check may take before it counts as failed, milliseconds. */
const READINESS_CHECK_TIMEOUT_MS = 1_000;

/** Resolves `{ ok: true }`, or `{ ok: false, error }` when the check rejects or takes too long. */
async function runCheck(check: () => Promise<unknown>, critical: boolean): Promise<ReadinessReport['checks'][string]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${READINESS_CHECK_TIMEOUT_MS} ms`)), READINESS_CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return { ok: true, critical };
  } catch (error) {
    return { ok: false, critical, error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

export interface ReadinessSources {
  config: Config;
  database: Database;
  /** True for Postgres: reported, not a condition of readiness. */
  sharedDatabase: boolean;
  blobStore: BlobStore;
  authenticator: Authenticator;
  redisProbe: Redis | undefined;
  agreement: ConfigAgreement;
  /** True once the instance is draining (SIGTERM). */
  draining(): boolean;
}

/** The readiness report of this instance, built anew on each call. */
export function readinessOf(sources: ReadinessSources): () => Promise<ReadinessReport> {
  const { config, database, sharedDatabase, blobStore, authenticator, redisProbe, agreement } = sources;
  return async (): Promise<ReadinessReport> => {
    const checks: Array<[string, Promise<ReadinessReport['checks'][string]>]> = [
      [
        'database',
        runCheck(async () => {
          if (!(await database.ping())) throw new Error('the database did not answer');
        }, !sharedDatabase),
      ],
      ['files', runCheck(() => blobStore.check(), config.filesStore.kind === 'local')],
      [
        'keys',
        runCheck(async () => {
          if (authenticator.isStale) throw new Error('API keys cannot be verified: the database has been away too long');
        }, true),
      ],
    ];
    if (redisProbe !== undefined) {
      const probe = redisProbe;
      checks.push(['redis', runCheck(() => probe.ping(), false)]);
    }
    const results = await Promise.all(checks.map(async ([name, result]) => [name, await result] as const));
    return { draining: sources.draining(), checks: Object.fromEntries(results), config: agreement.current() };
  };
}

/**
 * The optional operations listener (`server.operationsPort`): /metrics, /readyz detail and /healthz on a
 * port of their own, so that they can be kept off the public listener. Undefined when not configured.
 */
export async function openOperationsListener(
  config: Config,
  logger: Logger,
  readiness: () => Promise<ReadinessReport>,
  metrics: HttpMetrics,
): Promise<FastifyInstance | undefined> {
  if (config.server.operationsPort === undefined) return undefined;
  return buildOperationsListener({
    operator: config.operator,
    logger: logger as FastifyBaseLogger,
    routes: (server) =>
      registerOperationsRoutes(server, readiness, metrics, {
        operationsToken: config.server.operationsToken,
        logger,
        listener: 'operations',
      }),
  });
}
