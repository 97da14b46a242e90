/**
 * The composition root: opens storage, applies migrations, builds the services and the app from one
 * frozen Config, and closes everything in order on shutdown.
 */
import type { FastifyInstance } from 'fastify';
import { createLogger } from './http/logger.ts';
import { Authenticator } from './accounts/authenticator.ts';
import { KeyService, type CreatedKey } from './accounts/key-service.ts';
import { OwnerAccounts, type OwnerAccountsOptions } from './accounts/owner-accounts.ts';
import { OwnersRepository } from './db/repositories/owners-repository.ts';
import { UsageRollupsRepository } from './db/repositories/usage-rollups-repository.ts';
import { buildApp, type BuildAppOptions } from './app.ts';
import { BatchService } from './batches/batch-service.ts';
import { BatchWorker, type BatchWorkerTuning } from './batches/batch-worker.ts';
import { persistedInstanceId } from './batches/instance-id.ts';
import { serviceLineExecutor } from './batches/service-line-executor.ts';
import { checkModelFiles, droppedTiersError, effectiveTiers, unconfiguredTiers, type Config } from './config/index.ts';
import { openDatabase, type Database } from './db/database.ts';
import type { DecodeOptions } from './core/generation-format.ts';
import { renderError } from './http/error-envelope.ts';
import { errorMetadata } from './http/metadata.ts';
import { ApiKeysRepository } from './db/repositories/api-keys-repository.ts';
import { BatchesRepository } from './db/repositories/batches-repository.ts';
import { FilesRepository } from './db/repositories/files-repository.ts';
import { createBlobStore } from './files/create-blob-store.ts';
import { randomHex } from './core/ids.ts';
import { loadTokenizer } from './core/count-tokens.ts';
import type { Clock } from './limits/clock.ts';
import { FileService } from './services/files/file-service.ts';
import { createLimitStore } from './limits/create-limit-store.ts';
import { windowsAt } from './limits/limit-windows.ts';
import { MemoryLimitStore } from './limits/memory/memory-limit-store.ts';
import { ProviderRegistry } from './providers/registry.ts';
import { DeploymentMetrics, HttpMetrics } from './http/metrics.ts';
import { createDeploymentState } from './limits/create-deployment-state.ts';
import { GenerationService } from './services/generation/generation-service.ts';
import { deploymentTable } from './services/generation/routing/deployment-table.ts';
import { Router } from './services/generation/routing/router.ts';
import { MeteringService } from './services/metering/metering-service.ts';
import { InputModeration } from './services/moderation/input-moderation.ts';
import { StoredResponses } from './services/responses/stored-responses.ts';
import { StoredResponsesRepository } from './db/repositories/stored-responses-repository.ts';
import { batchLineHandlers } from './routes/batch-line-handlers.ts';
import { generationEndpoints, type StoredResponseStore } from './routes/generation-endpoints.ts';
import { MeteredGenerations } from './services/generation/metered-generations.ts';
import type { ReadinessReport } from './routes/operations.ts';
import { UsageLedger } from './services/metering/usage-ledger.ts';
import { UsageLedgerRepository } from './db/repositories/usage-ledger-repository.ts';
import { InstancesRepository } from './db/repositories/instances-repository.ts';
import { ConfigAgreement } from './services/instances/config-agreement.ts';
import { effectiveConfigHash } from './config/config-hash.ts';

export interface Runtime {
  config: Config;
  database: Database;
  keys: KeyService;
  app: FastifyInstance;
  files: FileService;
  batches: BatchService;
  /** Runs batches in this process; undefined when started with `batchWorker: false`. */
  batchWorker: BatchWorker | undefined;
  /**
   * On the first start of an empty database (and when bootstrap keys are on): creates the first key and
   * the default organization's owner with a set-password link, for `serve` to print. Called only once the
   * listener is up, so a start that fails earlier (port in use, storage down) leaves nothing unseen
   * behind; exactly one of several instances starting together gets them. Otherwise undefined.
   */
  createFirstStartSecrets(): Promise<FirstStartSecrets | undefined>;
  /** The dashboard's owners, sessions and audit log. */
  accounts: OwnerAccounts;
  /** From now on `/readyz` answers 503 (`draining`) while every other route still serves (SIGTERM). */
  startDraining(): void;
  /** Stops accepting, lets in-flight requests finish, closes storage. */
  close(): Promise<void>;
}

/** What the first start of an empty database created (printed once by `serve`). */
export interface FirstStartSecrets {
  key: CreatedKey;
  /** The default organization's owner and the token of their set-password link (absent if that owner already existed). */
  ownerLink: { email: string; token: string } | undefined;
}

export interface StartRuntimeOptions extends BuildAppOptions {
  /** Create a first key when the database has none (default: config.bootstrapKey). */
  bootstrapKey?: boolean;
  /** Time source of files and batches (tests step over the 24-hour batch window). */
  clock?: Clock;
  /** Run the batch worker in this process (default true); an object tunes it. */
  batchWorker?: boolean | BatchWorkerTuning;
  /** Session lifetimes and sign-in throttling of the dashboard (defaults in owner-accounts.ts). */
  dashboardAccounts?: OwnerAccountsOptions;
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

/** Settings row claimed by the one instance that creates the first-start key. */
const BOOTSTRAP_MARKER_SETTING = 'bootstrap_key_claimed_by';
/** How long one readiness check may take before it counts as failed, milliseconds. */
const READINESS_CHECK_TIMEOUT_MS = 2_000;

/** Resolves `{ ok: true }`, or `{ ok: false, error }` when the check rejects or takes too long. */
async function runCheck(check: () => Promise<unknown>): Promise<ReadinessReport['checks'][string]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${READINESS_CHECK_TIMEOUT_MS} ms`)), READINESS_CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return { ok: true };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

export async function startRuntime(config: Config, options: StartRuntimeOptions = {}): Promise<Runtime> {
  // A llama-cpp model whose GGUF file is missing is a config error now, not a 500 on its first request.
  checkModelFiles(config);
  // Token counting is on every generation's path: load the encoding before the first request, not in it.
  loadTokenizer();
  const database = await openMigratedDatabase(config);
  // What is opened is closed again, in reverse order, if a later step of the start fails.
  const opened: Array<() => Promise<void> | void> = [() => database.close()];
  try {
    const repository = new ApiKeysRepository(database.db);
    // Keys of a tier the config dropped would run without its limits: refuse, naming them.
    const droppedTiers = unconfiguredTiers(config, await repository.tiersInUse(Date.now()));
    if (droppedTiers.length > 0) throw droppedTiersError(config, droppedTiers);
    const keys = new KeyService(config, repository);
    const authenticator = new Authenticator(repository);
    await authenticator.start();
    opened.push(() => authenticator.stop());
    const filesRepository = new FilesRepository(database.db);
    const logger = options.logger ?? createLogger(config.logLevel);
    const limitStore = await createLimitStore({
      backend: config.limitsBackend,
      redisUrl: config.redisUrl,
      redisPrefix: config.redisPrefix,
    });
    opened.push(() => limitStore.close());
    // Each instance publishes its effective config's hash; /readyz and the logs name instances that differ.
    const instanceId = config.instanceId ?? persistedInstanceId(config.dataDir);
    const agreement = new ConfigAgreement({
      store: new InstancesRepository(database.db),
      instanceId,
      configHash: effectiveConfigHash(config),
      logger,
    });
    await agreement.start();
    opened.push(() => agreement.stop());
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
    // Deployment state is shared through Redis when limits are (cooldowns, per-deployment minute usage).
    const deploymentState = await createDeploymentState({
      backend: config.limitsBackend,
      redisUrl: config.redisUrl,
      redisPrefix: config.redisPrefix,
      logger,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    });
    opened.push(() => deploymentState.close());
    const metrics = new HttpMetrics(options.processMetrics ?? false);
    const router = new Router({
      models: deploymentTable(config),
      state: deploymentState,
      observer: new DeploymentMetrics(metrics.registry),
    });
    const generation = new GenerationService({ config, registry, router, logger });
    const clock = options.clock;
    const blobStore = await createBlobStore(config.filesStore);
    opened.push(() => blobStore.close());
    const files = new FileService({
      repository: filesRepository,
      store: blobStore,
      ...(clock === undefined ? {} : { clock }),
    });
    await files.start();
    let batchWorker: BatchWorker | undefined;
    const batches = new BatchService({
      repository: new BatchesRepository(database.db),
      files,
      tiers: effectiveTiers(config),
      ...(clock === undefined ? {} : { clock }),
      onWork: () => batchWorker?.wake(),
    });
    const inputModeration = new InputModeration(config, registry);
    const storedResponses: StoredResponseStore = new StoredResponses(new StoredResponsesRepository(database.db));
    // Redis is probed on a connection of its own that never queues commands, so that an unreachable
    // Redis fails the check at once instead of waiting behind the limit store's retries.
    const redisProbe =
      config.redisUrl === undefined
        ? undefined
        : new (await import('ioredis')).Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    redisProbe?.on('error', () => undefined);
    if (redisProbe !== undefined) opened.push(() => void redisProbe.disconnect());
    let draining = false;
    const readiness = async (): Promise<ReadinessReport> => {
      const checks: Array<[string, Promise<ReadinessReport['checks'][string]>]> = [
        [
          'database',
          runCheck(async () => {
            if (!(await database.ping())) throw new Error('the database did not answer');
          }),
        ],
        ['files', runCheck(() => blobStore.check())],
      ];
      if (redisProbe !== undefined) {
        checks.push(['redis', runCheck(() => redisProbe.ping())]);
      }
      const results = await Promise.all(checks.map(async ([name, result]) => [name, await result] as const));
      return { draining, checks: Object.fromEntries(results), config: agreement.current() };
    };
    const generations = new MeteredGenerations({ generation, metering, inputModeration });
    const endpoints = generationEndpoints(storedResponses);
    const decodeOptions: DecodeOptions = Object.freeze({ validation: config.requestValidation });
    const accounts = new OwnerAccounts(new OwnersRepository(database.db), options.dashboardAccounts);
    const dashboard = {
      accounts,
      keys,
      rollups: new UsageRollupsRepository(database.db),
      sessionMaxAgeSeconds: Math.floor((options.dashboardAccounts?.absoluteTimeoutMs ?? 86_400_000) / 1000),
    };
    const createFirstStartSecrets = async (): Promise<FirstStartSecrets | undefined> => {
      if (!(options.bootstrapKey ?? config.bootstrapKey) || (await repository.count()) > 0) return undefined;
      // Several instances may start together on an empty database: the one whose marker row lands
      // first (insert-if-absent, atomic in both dialects) creates the key; the others see its claim.
      const claimant = randomHex(16);
      if ((await filesRepository.ensureSetting(BOOTSTRAP_MARKER_SETTING, claimant)) !== claimant) return undefined;
      const key = await keys.create({ name: 'bootstrap' });
      const email = `owner@${config.defaultOrganization}.local`;
      if ((await accounts.findOwnerByEmail(email)) !== undefined) return { key, ownerLink: undefined };
      return {
        key,
        ownerLink: { email, token: (await accounts.createOwner({ organization: config.defaultOrganization, email })).linkToken! },
      };
    };
    const app = await buildApp(
      {
        files,
        batches,
        config,
        database,
        authenticator,
        metering,
        generation,
        generations,
        generationEndpoints: endpoints,
        decodeOptions,
        registry,
        storedResponses,
        dashboard,
        readiness,
        metrics,
      },
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
          handlers: batchLineHandlers({ endpoints, generations, decodeOptions, config, models: generation, registry, metering }),
          authenticateKeyId: (keyId) => authenticator.authenticateKeyId(keyId),
          batchRefusal: (auth) => batches.refusal(auth),
          renderError: (error, requestId) => renderError(error, errorMetadata(config.operator, requestId)),
        }),
        maxLineBytes: config.server.bodyLimitBytes,
        workerId: instanceId,
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
      createFirstStartSecrets,
      accounts,
      startDraining() {
        draining = true;
      },
      close() {
        closing ??= (async () => {
          // Batch lines use the same services as the app: stop them before anything closes.
          await batchWorker?.stop();
          await app.close();
          authenticator.stop();
          // In-flight requests are done: every ledger record is written before storage closes.
          await ledger.close().catch((error: unknown) => logger.error({ err: error }, 'usage ledger could not be flushed'));
          await registry.close();
          await deploymentState.close();
          await limitStore.close();
          redisProbe?.disconnect();
          await blobStore.close();
          await agreement.stop();
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
