/**
 * The composition root: opens storage, applies migrations, builds the services and the app from one
 * frozen Config, and closes everything in order on shutdown.
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { CircuitBreaker, DependencyBreakers, isUnreachableError } from './core/circuit-breaker.ts';
import { FileLedgerJournal } from './db/ledger-journal.ts';
import { createLogger } from './http/logger.ts';
import { Authenticator } from './accounts/authenticator.ts';
import { KeyService, type CreatedKey } from './accounts/key-service.ts';
import { OwnerAccounts, type OwnerAccountsOptions } from './accounts/owner-accounts.ts';
import { AccountsRetention, type AccountsRetentionOptions } from './accounts/accounts-retention.ts';
import { OwnersRepository } from './db/repositories/owners-repository.ts';
import { createAccountServices, planLimitsOf } from './accounts/account-services.ts';
import type { OrganizationService } from './accounts/organizations.ts';
import type { PeopleService } from './accounts/people.ts';
import { startHeartbeat } from './batches/instance-heartbeat.ts';
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
import { AccessLog } from './http/access-log.ts';
import { DeploymentMetrics, HttpMetrics } from './http/metrics.ts';
import { UsageMetrics } from './http/usage-metrics.ts';
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
import { ObservedUsageLedger } from './services/metering/observed-usage-ledger.ts';
import type { LedgerRecord } from './services/metering/usage-ledger.ts';
import { UsageLedgerRepository } from './db/repositories/usage-ledger-repository.ts';
import { startTracing } from './telemetry/start-tracing.ts';
import type { Tracing } from './telemetry/trace-types.ts';
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
  /** Traces, when an OTLP endpoint is configured (`forceFlush()` exports what has ended). */
  tracing: Tracing | undefined;
  /** Organizations, plans and suspension (the operator console and CLI). */
  organizations: OrganizationService;
  /** People of organizations and operators: invitations, roles, removal, links. */
  people: PeopleService;
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
  /** While the database cannot be reached at start, wait for it (logging once) instead of failing (`serve`). */
  waitForDatabase?: boolean;
  /** Retention of sign-in attempts, audit entries and expired sessions (defaults in accounts-retention.ts). */
  dashboardRetention?: Partial<AccountsRetentionOptions>;
}

export interface OpenMigratedDatabaseOptions {
  /** The database's circuit breaker (Postgres). */
  breaker?: CircuitBreaker;
  /**
   * While the database cannot be reached, wait and retry every second (logging once) instead of
   * failing: an instance started during a Postgres outage serves as soon as it returns. `serve` waits;
   * `switchyard migrate` and other commands fail at once.
   */
  waitFor?: { warn(details: object, message: string): void; info(details: object, message: string): void };
}

/** Seconds between start-up attempts while the database cannot be reached. */
const DATABASE_WAIT_RETRY_MS = 1_000;

/** Opens the database and applies pending migrations (also `switchyard migrate`). */
export async function openMigratedDatabase(config: Config, options: OpenMigratedDatabaseOptions = {}): Promise<Database> {
  const bounds = config.dependencies;
  const database = openDatabase(config.databaseUrl, {
    timeouts: {
      connectTimeoutMs: bounds.databaseConnectTimeoutMs,
      statementTimeoutMs: bounds.databaseStatementTimeoutMs,
      idleInTransactionTimeoutMs: bounds.databaseIdleInTransactionTimeoutMs,
    },
    ...(options.breaker === undefined ? {} : { breaker: options.breaker }),
  });
  let waitingSinceMs: number | undefined;
  for (;;) {
    try {
      await database.migrate();
      break;
    } catch (error) {
      if (options.waitFor === undefined || !isUnreachableError(error)) {
        await database.close();
        throw error;
      }
      if (waitingSinceMs === undefined) {
        waitingSinceMs = Date.now();
        options.waitFor.warn({ err: error }, 'the database cannot be reached; waiting for it (trying again every second)');
      }
      await new Promise((resolve) => setTimeout(resolve, DATABASE_WAIT_RETRY_MS));
    }
  }
  if (waitingSinceMs !== undefined) {
    options.waitFor?.info({ waitedMs: Date.now() - waitingSinceMs }, 'the database answers; starting');
  }
  return database;
}

/** Settings row claimed by the one instance that creates the first-start key. */
const BOOTSTRAP_MARKER_SETTING = 'bootstrap_key_claimed_by';
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

export async function startRuntime(config: Config, options: StartRuntimeOptions = {}): Promise<Runtime> {
  // A llama-cpp model whose GGUF file is missing is a config error now, not a 500 on its first request.
  checkModelFiles(config);
  // Token counting is on every generation's path: load the encoding before the first request, not in it.
  loadTokenizer();
  const logger = options.logger ?? createLogger(config.logLevel);
  const bounds = config.dependencies;
  // One circuit breaker per shared dependency: fail fast while it is known down, one log line per change.
  const breakers = new DependencyBreakers();
  const sharedDatabase = config.databaseUrl.startsWith('postgres');
  let databaseProbe: () => Promise<unknown> = async () => undefined;
  const databaseBreaker = sharedDatabase
    ? breakers.add(new CircuitBreaker({ name: 'database', description: 'The database', logger, probe: () => databaseProbe() }))
    : undefined;
  const database = await openMigratedDatabase(config, {
    ...(databaseBreaker === undefined ? {} : { breaker: databaseBreaker }),
    ...(options.waitForDatabase === true ? { waitFor: logger } : {}),
  });
  databaseProbe = () => database.probe();
  // What is opened is closed again, in reverse order, if a later step of the start fails.
  const opened: Array<() => Promise<void> | void> = [() => breakers.stop(), () => database.close()];
  try {
    const repository = new ApiKeysRepository(database.db);
    // Keys of a tier the config dropped would run without its limits: refuse, naming them.
    const droppedTiers = unconfiguredTiers(config, await repository.tiersInUse(Date.now()));
    if (droppedTiers.length > 0) throw droppedTiersError(config, droppedTiers);
    // Plans per organization (accounts/plans.ts): keys are bounded by them and limited under them.
    const accountServices = createAccountServices(config, database.db, logger);
    await accountServices.organizations.backfillPlans();
    const keys = new KeyService(config, repository, Date.now, accountServices.organizations);
    const authenticator = new Authenticator(repository, {
      maxStalenessMs: bounds.cachedKeysMaxStalenessMs,
      planLimits: planLimitsOf(config),
    });
    await authenticator.start();
    opened.push(() => authenticator.stop());
    const filesRepository = new FilesRepository(database.db);
    const tracing = await startTracing(config.tracing, logger);
    if (tracing !== undefined) {
      opened.push(() => tracing.shutdown());
      logger.info(
        { endpoint: config.tracing.endpoint, serviceName: config.tracing.serviceName, sampler: config.tracing.sampler },
        'traces are exported over OTLP/HTTP',
      );
    }
    // Redis: one bounded connection shared by the limit store and the routing state, one breaker.
    let redis: Redis | undefined;
    let redisBreaker: CircuitBreaker | undefined;
    let redisProbe: Redis | undefined;
    if (config.redisUrl !== undefined && config.redisUrl !== '' && !(config.limitsBackend === 'memory')) {
      const { openRedisConnection } = await import('./limits/redis/redis-connection.ts');
      const connection = { commandTimeoutMs: bounds.redisCommandTimeoutMs, connectTimeoutMs: bounds.redisConnectTimeoutMs };
      // The probe has a connection of its own that never queues commands: an unreachable Redis fails
      // it at once, a frozen one after the command timeout.
      const probe = (redisProbe = openRedisConnection(config.redisUrl, { ...connection, enableOfflineQueue: false }));
      const breaker = (redisBreaker = breakers.add(
        new CircuitBreaker({ name: 'redis', description: 'The rate-limit store', logger, probe: () => probe.ping() }),
      ));
      redis = openRedisConnection(config.redisUrl, { ...connection, onError: (error) => breaker.recordFailure(error) });
      opened.push(() => redis?.disconnect());
      opened.push(() => probe.disconnect());
    }
    const limitStore = await createLimitStore({
      backend: config.limitsBackend,
      redisUrl: config.redisUrl,
      ...(redis === undefined ? {} : { redis }),
      ...(redisBreaker === undefined ? {} : { breaker: redisBreaker }),
      onStoreFailure: config.limits.onStoreFailure,
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
    // Every ledger record also feeds the per-model token and cost metrics and the access log (set below).
    let observeUsage: (record: LedgerRecord) => void = () => undefined;
    const ledger = new ObservedUsageLedger(
      {
        sink: ledgerRepository,
        logger,
        memoryRecords: bounds.ledgerMemoryRecords,
        journal: new FileLedgerJournal(join(config.dataDir, 'ledger-journal')),
      },
      (record) => observeUsage(record),
    );
    const metering = new MeteringService(config, limitStore, ledger, logger);
    const registry = ProviderRegistry.fromConfig(config, { logger });
    opened.push(() => registry.close());
    // Deployment state is shared through Redis when limits are (cooldowns, per-deployment minute usage).
    const deploymentState = await createDeploymentState({
      backend: config.limitsBackend,
      redisUrl: config.redisUrl,
      ...(redis === undefined ? {} : { redis }),
      ...(redisBreaker === undefined ? {} : { breaker: redisBreaker }),
      onStoreFailure: config.routingState.onStoreFailure,
      redisPrefix: config.redisPrefix,
      logger,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    });
    opened.push(() => deploymentState.close());
    const metrics = new HttpMetrics(options.processMetrics ?? false);
    metrics.observeDependencies(breakers);
    const router = new Router({
      models: deploymentTable(config),
      state: deploymentState,
      observer: new DeploymentMetrics(metrics.registry),
    });
    const usageMetrics = new UsageMetrics(metrics.registry);
    const accessLog = config.server.accessLog ? new AccessLog(logger) : undefined;
    observeUsage = (record) => {
      usageMetrics.observe(record);
      accessLog?.usageRecorded(record);
    };
    const generation = new GenerationService({ config, registry, router, logger });
    const clock = options.clock;
    const filesBreaker =
      config.filesStore.kind === 'local'
        ? undefined
        : breakers.add(new CircuitBreaker({ name: 'files', description: 'The file store', logger, probe: () => blobStoreProbe() }));
    let blobStoreProbe: () => Promise<unknown> = async () => undefined;
    const blobStore = await createBlobStore(config.filesStore, {
      ...(filesBreaker === undefined ? {} : { breaker: filesBreaker }),
      postgresTimeouts: {
        connectTimeoutMs: bounds.databaseConnectTimeoutMs,
        statementTimeoutMs: bounds.databaseStatementTimeoutMs,
        idleInTransactionTimeoutMs: bounds.databaseIdleInTransactionTimeoutMs,
      },
      s3Timeouts: { connectTimeoutMs: bounds.objectStoreConnectTimeoutMs, requestTimeoutMs: bounds.objectStoreRequestTimeoutMs },
    });
    blobStoreProbe = () => blobStore.check();
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
    let draining = false;
    const readiness = async (): Promise<ReadinessReport> => {
      // Shared dependencies are reported, not made conditions of readiness (routes/operations.ts); what
      // only this instance has (its SQLite file, its local disk) and key verification are.
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
      return { draining, checks: Object.fromEntries(results), config: agreement.current() };
    };
    const generations = new MeteredGenerations({ generation, metering, inputModeration });
    const endpoints = generationEndpoints(storedResponses);
    const decodeOptions: DecodeOptions = Object.freeze({ validation: config.requestValidation });
    const ownersRepository = new OwnersRepository(database.db, database.dialect);
    const accounts = new OwnerAccounts(ownersRepository, options.dashboardAccounts);
    const retention = new AccountsRetention(ownersRepository, logger, options.dashboardRetention);
    retention.start();
    opened.push(() => retention.stop());
    const heartbeat = startHeartbeat(accountServices.operatorAudit, instanceId);
    opened.push(() => heartbeat.stop());
    const dashboard = {
      accounts,
      keys,
      operator: {
        organizations: accountServices.organizations,
        operatorAudit: accountServices.operatorAudit,
        people: accountServices.people(accounts),
        deploymentState,
      },
      rollups: new UsageRollupsRepository(database.db),
      lists: { keys: repository, files: filesRepository, batches: new BatchesRepository(database.db), owners: ownersRepository },
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
        ...(accessLog === undefined ? {} : { accessLog }),
        tracing,
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
          endpointRefusal: (auth, url) => batches.endpointRefusal(auth, url),
          renderError: (error, requestId) => renderError(error, errorMetadata(config.operator, requestId)),
          observeLedger: (record) => usageMetrics.observe(record),
          tracing,
        }),
        maxLineBytes: config.server.bodyLimitBytes,
        workerId: instanceId,
        requestsPerBatchOf: async (organizationId) =>
          (await accountServices.organizations.planOf(organizationId))?.maxRequestsPerBatch ??
          config.tiers[config.defaultTier]!.maxRequestsPerBatch,
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
      tracing,
      organizations: accountServices.organizations,
      people: dashboard.operator.people,
      startDraining() {
        draining = true;
      },
      close() {
        closing ??= (async () => {
          // Batch lines use the same services as the app: stop them before anything closes.
          await batchWorker?.stop();
          heartbeat.stop();
          accountServices.mailer.close();
          await app.close();
          await retention.stop();
          authenticator.stop();
          // In-flight requests are done: every ledger record is written before storage closes.
          await ledger.close().catch((error: unknown) => logger.error({ err: error }, 'usage ledger could not be flushed'));
          await registry.close();
          await deploymentState.close();
          await limitStore.close();
          redis?.disconnect();
          redisProbe?.disconnect();
          breakers.stop();
          await blobStore.close();
          await agreement.stop();
          await database.close();
          // Last: the spans of everything above are exported before the process goes.
          await tracing?.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'traces could not be exported at shutdown'));
        })();
        return closing;
      },
    };
  } catch (error) {
    for (const close of opened.reverse()) await Promise.resolve(close()).catch(() => undefined);
    throw error;
  }
}
