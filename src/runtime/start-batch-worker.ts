/**
 * The batch worker of this process: batch lines run through the same use cases as the HTTP routes
 * (batches/batch-line-handlers.ts), as the batch's key, yielding to interactive requests in flight.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { AccountServices } from '../accounts/account-services.ts';
import type { Authenticator } from '../accounts/authenticator.ts';
import { batchLineHandlers, type BatchLineHandlerDependencies } from '../batches/batch-line-handlers.ts';
import type { BatchService } from '../batches/batch-service.ts';
import { BatchWorker, type BatchWorkerTuning } from '../batches/batch-worker.ts';
import { serviceLineExecutor } from '../batches/service-line-executor.ts';
import type { Config } from '../config/index.ts';
import type { Database } from '../db/database.ts';
import { BatchesRepository } from '../db/repositories/batches-repository.ts';
import { renderError } from '../http/error-envelope.ts';
import { errorMetadata } from '../http/metadata.ts';
import type { UsageMetrics } from '../http/usage-metrics.ts';
import type { Clock } from '../limits/clock.ts';
import type { FileService } from '../services/files/file-service.ts';
import type { Tracing } from '../telemetry/trace-types.ts';

export interface BatchWorkerSources {
  config: Config;
  app: FastifyInstance;
  database: Database;
  files: FileService;
  batches: BatchService;
  authenticator: Authenticator;
  accountServices: AccountServices;
  /** The use cases a line runs. */
  handlers: BatchLineHandlerDependencies;
  usageMetrics: UsageMetrics;
  tracing: Tracing | undefined;
  instanceId: string;
  logger: Logger;
  clock: Clock | undefined;
  tuning: BatchWorkerTuning | undefined;
}

/** Builds and starts the worker. */
export function startBatchWorker(sources: BatchWorkerSources): BatchWorker {
  const { config, app, authenticator, batches, accountServices, clock } = sources;
  // Interactive requests in flight: batch lines yield to them (the worker claims and runs fewer).
  let interactiveInFlight = 0;
  // One listener for every response ('close' fires once per response: node guards it), not a `once`
  // wrapper and a closure made and removed for each request.
  const answered = (): void => {
    interactiveInFlight -= 1;
  };
  app.server.on('request', (_request, response) => {
    interactiveInFlight += 1;
    response.on('close', answered);
  });
  const batchWorker = new BatchWorker({
    repository: new BatchesRepository(sources.database.background),
    files: sources.files,
    execute: serviceLineExecutor({
      handlers: batchLineHandlers(sources.handlers),
      authenticateKeyId: (keyId) => authenticator.authenticateKeyId(keyId),
      batchRefusal: (auth) => batches.refusal(auth),
      endpointRefusal: (auth, url) => batches.endpointRefusal(auth, url),
      renderError: (error, requestId) => renderError(error, errorMetadata(config.operator, requestId)),
      observeLedger: (record) => sources.usageMetrics.observe(record),
      tracing: sources.tracing,
    }),
    maxLineBytes: config.server.bodyLimitBytes,
    workerId: sources.instanceId,
    requestsPerBatchOf: async (organizationId) =>
      (await accountServices.organizations.planOf(organizationId))?.maxRequestsPerBatch ??
      config.tiers[config.defaultTier]!.maxRequestsPerBatch,
    leaseMs: config.batches.leaseMs,
    concurrency: config.batches.concurrency,
    chunkSize: config.batches.chunkSize,
    interactiveThreshold: config.batches.interactiveThreshold,
    interactiveLoad: () => interactiveInFlight,
    log: sources.logger,
    tracing: sources.tracing,
    ...(clock === undefined ? {} : { clock }),
    ...(sources.tuning ?? {}),
  });
  batchWorker.start();
  return batchWorker;
}
