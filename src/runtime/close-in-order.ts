/**
 * `Runtime.close`: what a running instance stops and closes, in the order that loses nothing (batch
 * work, then the listeners, then the bookkeeping that in-flight requests wrote, then the stores).
 */
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AccountsRetention } from '../accounts/accounts-retention.ts';
import type { AccountServices } from '../accounts/account-services.ts';
import type { Authenticator } from '../accounts/authenticator.ts';
import type { BatchWorker } from '../batches/batch-worker.ts';
import type { DependencyBreakers } from '../core/circuit-breaker.ts';
import type { Database } from '../db/database.ts';
import type { BlobStore } from '../files/blob-store.ts';
import type { DeploymentStateStore } from '../limits/deployment-state.ts';
import type { LimitStore } from '../limits/limit-store.ts';
import type { Tracing } from '../telemetry/trace-types.ts';
import type { Alerts } from './start-alerts.ts';

/** What `Runtime.close` stops and closes, in this order. */
export interface RunningParts {
  batchWorker(): BatchWorker | undefined;
  accountServices: AccountServices;
  app: FastifyInstance;
  operations: FastifyInstance | undefined;
  retention: AccountsRetention;
  alerts: Alerts;
  authenticator: Authenticator;
  ledger: { close(): Promise<void> };
  registry: { close(): Promise<void> };
  deploymentState: DeploymentStateStore;
  responseCache: { close(): Promise<void> };
  redis: { limitStore: LimitStore; redis: Redis | undefined; redisProbe: Redis | undefined };
  breakers: DependencyBreakers;
  blobStore: BlobStore;
  agreement: { stop(): Promise<void> };
  database: Database;
  tracing: Tracing | undefined;
  logger: Logger;
}

/** `Runtime.close`: once, whoever calls it how often. */
export function closeInOrder(parts: RunningParts): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= (async () => {
      const { logger, redis, tracing } = parts;
      // Batch lines use the same services as the app: stop them before anything closes.
      await parts.batchWorker()?.stop();
      parts.accountServices.mailer.close();
      await parts.app.close();
      // The operations listener answered `draining` until now.
      await parts.operations?.close();
      await parts.retention.stop();
      // Observations of the requests just drained are written, then the dispatcher gives back what it holds.
      await parts.alerts.close();
      parts.authenticator.stop();
      // In-flight requests are done: every ledger record is written before storage closes.
      await parts.ledger.close().catch((error: unknown) => logger.error({ err: error }, 'usage ledger could not be flushed'));
      await parts.registry.close();
      await parts.deploymentState.close();
      await redis.limitStore.close();
      await parts.responseCache.close();
      redis.redis?.disconnect();
      redis.redisProbe?.disconnect();
      parts.breakers.stop();
      await parts.blobStore.close();
      await parts.agreement.stop();
      await parts.database.close();
      // Last: the spans of everything above are exported before the process goes.
      await tracing?.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'traces could not be exported at shutdown'));
    })();
    return closing;
  };
}
