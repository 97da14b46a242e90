/**
 * The composition root: opens storage, applies migrations, builds the services and the app from one
 * frozen Config, and closes everything in order on shutdown.
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { Authenticator } from './accounts/authenticator.ts';
import { KeyService, type CreatedKey } from './accounts/key-service.ts';
import { buildApp, type BuildAppOptions } from './app.ts';
import { BatchService } from './batches/batch-service.ts';
import { BatchWorker, type BatchWorkerTuning } from './batches/batch-worker.ts';
import { persistedInstanceId } from './batches/instance-id.ts';
import { serviceLineExecutor } from './batches/service-line-executor.ts';
import type { Config } from './config/index.ts';
import { openDatabase, type Database } from './db/database.ts';
import { SPEC_DECODE_SETTINGS } from './core/generation-format.ts';
import { renderError } from './http/error-envelope.ts';
import { errorMetadata } from './http/metadata.ts';
import { ApiKeysRepository } from './db/repositories/api-keys-repository.ts';
import { BatchesRepository } from './db/repositories/batches-repository.ts';
import { FilesRepository } from './db/repositories/files-repository.ts';
import { LocalDiskBlobStore } from './files/local-disk/local-disk-blob-store.ts';
import type { Clock } from './limits/clock.ts';
import { FileService } from './services/files/file-service.ts';
import { createLimitStore } from './limits/create-limit-store.ts';
import { windowsAt } from './limits/limit-windows.ts';
import { MemoryLimitStore } from './limits/memory/memory-limit-store.ts';
import { ProviderRegistry } from './providers/registry.ts';
import { GenerationService } from './services/generation/generation-service.ts';
import { MeteringService } from './services/metering/metering-service.ts';
import { InputModeration } from './services/moderation/input-moderation.ts';
import { StoredResponses } from './services/responses/stored-responses.ts';
import { StoredResponsesRepository } from './db/repositories/stored-responses-repository.ts';
import { batchLineHandlers } from './routes/batch-line-handlers.ts';
import { generationEndpoints, type StoredResponseStore } from './routes/generation-endpoints.ts';
import { MeteredGenerations } from './services/generation/metered-generations.ts';
import { UsageLedger } from './services/metering/usage-ledger.ts';
import { UsageLedgerRepository } from './db/repositories/usage-ledger-repository.ts';

export interface Runtime {
  config: Config;
  database: Database;
  keys: KeyService;
  app: FastifyInstance;
  files: FileService;
  batches: BatchService;
  /** Runs batches in this process; undefined when started with `batchWorker: false`. */
  batchWorker: BatchWorker | undefined;
  /** The key created on the first start of an empty database, if any (printed once by `serve`). */
  bootstrapKey: CreatedKey | undefined;
  /** Stops accepting, lets in-flight requests finish, closes storage. */
  close(): Promise<void>;
}

export interface StartRuntimeOptions extends BuildAppOptions {
  /** Create a first key when the database has none (default: config.bootstrapKey). */
  bootstrapKey?: boolean;
  /** Time source of files and batches (tests step over the 24-hour batch window). */
  clock?: Clock;
  /** Run the batch worker in this process (default true); an object tunes it. */
  batchWorker?: boolean | BatchWorkerTuning;
}

/** Opens the database and applies pending migrations (also `switchyard migrate`). */
export async function openMigratedDatabase(config: Config): Promise<Database> {
  const database = openDatabase(config.databaseUrl);
  try {
      await database.migrate();
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

export async function startRuntime(config: Config, options: StartRuntimeOptions = {}): Promise<Runtime> {
  const database = await openMigratedDatabase(config);
  // What is opened is closed again, in reverse order, if a later step of the start fails.
  const opened: Array<() => Promise<void> | void> = [() => database.close()];
  try {
    const repository = new ApiKeysRepository(database.db);
    const keys = new KeyService(config, repository);
    const authenticator = new Authenticator(repository);
    await authenticator.start();
    opened.push(() => authenticator.stop());
    let bootstrapKey: CreatedKey | undefined;
    if ((options.bootstrapKey ?? config.bootstrapKey) && (await repository.count()) === 0) {
      bootstrapKey = await keys.create({ name: 'bootstrap' });
    }
    const logger = options.logger ?? pino({ level: config.logLevel });
    const limitStore = createLimitStore({ backend: config.limitsBackend, redisUrl: config.redisUrl });
    opened.push(() => limitStore.close());
    const ledgerRepository = new UsageLedgerRepository(database.db);
    if (limitStore instanceof MemoryLimitStore) {
      // One instance keeps its counters in memory: restore this day's and month's totals from the ledger.
      const windows = windowsAt(Date.now());
      limitStore.restoreTotals(await ledgerRepository.organizationTotals(windows.month.startMs, windows.day.startMs));
    }
    const ledger = new UsageLedger({ sink: ledgerRepository, logger });
    const metering = new MeteringService(config, limitStore, ledger);
    const registry = ProviderRegistry.fromConfig(config, { logger });
    opened.push(() => registry.close());
    const generation = new GenerationService({ config, registry, logger });
    const clock = options.clock;
    const files = new FileService({
      repository: new FilesRepository(database.db),
      store: new LocalDiskBlobStore(join(config.dataDir, 'files')),
      ...(clock === undefined ? {} : { clock }),
    });
    await files.start();
    let batchWorker: BatchWorker | undefined;
    const batches = new BatchService({
      repository: new BatchesRepository(database.db),
      files,
      tiers: config.tiers,
      ...(clock === undefined ? {} : { clock }),
      onWork: () => batchWorker?.wake(),
    });
    const inputModeration = new InputModeration(config, registry);
    const storedResponses: StoredResponseStore = new StoredResponses(new StoredResponsesRepository(database.db));
    const generations = new MeteredGenerations({ generation, metering, inputModeration });
    const endpoints = generationEndpoints(storedResponses);
    const decodeSettings = SPEC_DECODE_SETTINGS;
    const app = await buildApp(
      { files, batches, config, database, authenticator, metering, generation, generations, generationEndpoints: endpoints, decodeSettings, registry, storedResponses },
      { ...options, logger },
    );
    if (options.batchWorker !== false) {
      // Interactive requests in flight: batch lines yield to them (the worker claims and runs fewer).
      let interactiveInFlight = 0;
      app.server.on('request', (_request, response) => {
        interactiveInFlight += 1;
        response.once('close', () => (interactiveInFlight -= 1));
      });
      batchWorker = new BatchWorker({
        repository: new BatchesRepository(database.db),
        files,
        execute: serviceLineExecutor({
          handlers: batchLineHandlers({ endpoints, generations, decodeSettings, config, models: generation, registry, metering }),
          authenticateKeyId: (keyId) => authenticator.authenticateKeyId(keyId),
          batchRefusal: (auth) => batches.refusal(auth),
          renderError: (error, requestId) => renderError(error, errorMetadata(config.operator, requestId)),
        }),
        maxLineBytes: config.server.bodyLimitBytes,
        workerId: config.instanceId ?? persistedInstanceId(config.dataDir),
        leaseMs: config.batches.leaseMs,
        concurrency: config.batches.concurrency,
        chunkSize: config.batches.chunkSize,
        interactiveThreshold: config.batches.interactiveThreshold,
        interactiveLoad: () => interactiveInFlight,
        log: logger,
        ...(clock === undefined ? {} : { clock }),
        ...(typeof options.batchWorker === 'object' ? options.batchWorker : {}),
      });
      batchWorker.start();
    }
    let closing: Promise<void> | undefined;
    opened.length = 0;
    return {
      config,
      database,
      keys,
      app,
      files,
      batches,
      batchWorker,
      bootstrapKey,
      close() {
        closing ??= (async () => {
          // Batch lines use the same services as the app: stop them before anything closes.
          await batchWorker?.stop();
          await app.close();
          authenticator.stop();
          // In-flight requests are done: every ledger record is written before storage closes.
          await ledger.close().catch((error: unknown) => logger.error({ err: error }, 'usage ledger could not be flushed'));
          await registry.close();
          await limitStore.close();
          await database.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    for (const close of opened.reverse()) await Promise.resolve(close()).catch(() => undefined);
    throw error;
  }
}
