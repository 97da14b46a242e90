/**
 * The composition root: opens storage, applies migrations, builds the services and the app from one
 * frozen Config, and closes everything in order on shutdown. The start is a sequence of named steps
 * (runtime/): open the database, the accounts, tracing, the limit store, the config agreement, the
 * ledger and metering, the backends, then build the use cases, the files and batches, the dashboard's
 * accounts, the app, and start the batch worker.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { AccountsRetention, type AccountsRetentionOptions } from './accounts/accounts-retention.ts';
import type { AccountServices } from './accounts/account-services.ts';
import type { KeyService } from './accounts/key-service.ts';
import type { OrganizationService } from './accounts/organizations.ts';
import { DashboardAccounts, type DashboardAccountsOptions } from './accounts/dashboard-accounts.ts';
import type { PeopleService } from './accounts/people.ts';
import { createSsoSignIn } from './accounts/sso/create-sso-sign-in.ts';
import { buildApp, type BuildAppOptions } from './app.ts';
import { BatchService } from './batches/batch-service.ts';
import type { BatchWorker, BatchWorkerTuning } from './batches/batch-worker.ts';
import { checkModelFiles, effectiveTiers, type Config } from './config/index.ts';
import { DependencyBreakers } from './core/circuit-breaker.ts';
import { loadTokenizer } from './core/count-tokens.ts';
import type { Database } from './db/database.ts';
import type { ApiKeysRepository } from './db/repositories/api-keys-repository.ts';
import { BatchesRepository } from './db/repositories/batches-repository.ts';
import { FilesRepository } from './db/repositories/files-repository.ts';
import { OwnersRepository } from './db/repositories/owners-repository.ts';
import { StoredResponsesRepository } from './db/repositories/stored-responses-repository.ts';
import { UsageRollupsRepository } from './db/repositories/usage-rollups-repository.ts';
import { createLogger } from './http/logger.ts';
import type { Clock } from './limits/clock.ts';
import type { DeploymentStateStore } from './limits/deployment-state.ts';
import type { StoredResponseStore } from './routes/generation-endpoints.ts';
import { buildGeneration, buildMeteredServices } from './runtime/build-services.ts';
import { buildResponseCache, responseCacheAdmin, type GenerationCache } from './runtime/build-response-cache.ts';
import { closeInOrder } from './runtime/close-in-order.ts';
import { firstStartSecrets, type FirstStartSecrets } from './runtime/first-start.ts';
import { openRuntimeDatabase } from './runtime/open-database.ts';
import {
  openAccounts,
  openBackends,
  openBlobStore,
  openLimitStore,
  openMetering,
  openTracing,
  startConfigAgreement,
  type Opened,
} from './runtime/open-stores.ts';
import { openOperationsListener, readinessOf } from './runtime/readiness.ts';
import type { InstancesRepository } from './db/repositories/instances-repository.ts';
import { startAlerts, type Alerts } from './runtime/start-alerts.ts';
import type { BudgetService } from './services/budgets/budget-service.ts';
import { startBatchWorker } from './runtime/start-batch-worker.ts';
import type { FileService } from './services/files/file-service.ts';
import { openFiles } from './runtime/open-files.ts';
import { StoredResponses } from './services/responses/stored-responses.ts';
import type { Tracing } from './telemetry/trace-types.ts';

export { openMigratedDatabase, type OpenMigratedDatabaseOptions } from './runtime/open-database.ts';
export type { FirstStartSecrets } from './runtime/first-start.ts';

export interface Runtime {
  config: Config;
  database: Database;
  keys: KeyService;
  app: FastifyInstance;
  /** The operations listener (`server.operationsPort`): /metrics, /readyz detail, /healthz; `serve` listens on it. */
  operations: FastifyInstance | undefined;
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
  accounts: DashboardAccounts;
  /** Traces, when an OTLP endpoint is configured (`forceFlush()` exports what has ended). */
  tracing: Tracing | undefined;
  /** Organizations, plans and suspension (the operator console and CLI). */
  organizations: OrganizationService;
  /** People of organizations and operators: invitations, roles, removal, links. */
  people: PeopleService;
  /** Budget alerts: the spend observer metering is given, webhook endpoints, the delivery dispatcher. */
  alerts: Alerts;
  /** The response cache (services/cache/): purges per organization (dashboard, CLI). */
  responseCache: GenerationCache;
  /** Money budgets: organizations' overrides and key budgets (services/budgets/). */
  budgets: BudgetService;
  /** From now on `/readyz` answers 503 (`draining`) while every other route still serves (SIGTERM). */
  startDraining(): void;
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
  /** Session lifetimes and sign-in throttling of the dashboard (defaults in dashboard-accounts.ts). */
  dashboardAccounts?: DashboardAccountsOptions;
  /** While the database cannot be reached at start, wait for it (logging once) instead of failing (`serve`). */
  waitForDatabase?: boolean;
  /** Retention of sign-in attempts, audit entries and expired sessions (defaults in accounts-retention.ts). */
  dashboardRetention?: Partial<AccountsRetentionOptions>;
  /** Run the alerts' delivery dispatcher in this process (default true). */
  alertDispatcher?: boolean;
}

export async function startRuntime(config: Config, options: StartRuntimeOptions = {}): Promise<Runtime> {
  // A llama-cpp model whose GGUF file is missing is a config error now, not a 500 on its first request.
  checkModelFiles(config);
  // Token counting is on every generation's path: load the encoding before the first request, not in it.
  loadTokenizer();
  const logger = options.logger ?? createLogger(config.logLevel);
  // One circuit breaker per shared dependency: fail fast while it is known down, one log line per change.
  const breakers = new DependencyBreakers();
  const { database, sharedDatabase } = await openRuntimeDatabase(config, logger, breakers, options.waitForDatabase === true);
  // What is opened is closed again, in reverse order, if a later step of the start fails.
  const opened: Opened = [() => breakers.stop(), () => database.close()];
  try {
    const runtime = await startOnDatabase(config, options, { logger, breakers, database, sharedDatabase, opened });
    opened.length = 0;
    return runtime;
  } catch (error) {
    for (const close of opened.reverse()) await Promise.resolve(close()).catch(() => undefined);
    throw error;
  }
}

/** What the start has opened before the steps after the database. */
interface Started {
  logger: Logger;
  breakers: DependencyBreakers;
  database: Database;
  sharedDatabase: boolean;
  opened: Opened;
}

/** Accounts, tracing, the limit store, the config agreement, metering, the backends, the generation service, files. */
async function openStores(config: Config, options: StartRuntimeOptions, started: Started) {
  const { logger, breakers, database, opened } = started;
  const clock = options.clock;
  const accounts = await openAccounts(config, database, logger, opened);
  const filesRepository = new FilesRepository(database.db);
  const tracing = await openTracing(config, logger, opened);
  const redis = await openLimitStore(config, logger, breakers, opened);
  const { instanceId, agreement, instances } = await startConfigAgreement(config, database, logger, opened);
  // Built before metering: the budgets' settlement tells `alerts.spendObserver` what each request spent.
  const alerts = startAlerts(config, {
    database,
    mailer: accounts.accountServices.mailer,
    instanceId,
    logger,
    dispatcher: options.alertDispatcher !== false,
    opened,
  });
  const { ledger, metering, observer, budgets } = await openMetering(
    config,
    database,
    redis.limitStore,
    logger,
    alerts.spendObserver,
    clock,
  );
  const { registry, deploymentState } = await openBackends(config, logger, redis, clock, opened);
  const built = buildGeneration(config, {
    logger,
    breakers,
    registry,
    deploymentState,
    processMetrics: options.processMetrics ?? false,
    ledgerObserver: observer,
  });
  const responseCache = buildResponseCache(config, { ...redis, registry: built.metrics.registry, logger, opened });
  const blobStore = await openBlobStore(config, logger, breakers, opened);
  const files = await openFiles(config, database, filesRepository, blobStore, accounts.accountServices.organizations, clock);
  return {
    ...accounts,
    ...built,
    filesRepository,
    tracing,
    redis,
    instanceId,
    agreement,
    instances,
    alerts,
    ledger,
    metering,
    budgets,
    registry,
    deploymentState,
    blobStore,
    files,
    responseCache,
  };
}

/** Every step after the database, in order; each pushes what it opened onto `opened`. */
async function startOnDatabase(config: Config, options: StartRuntimeOptions, started: Started): Promise<Runtime> {
  const { logger, breakers, database, opened } = started;
  const clock = options.clock;
  const stores = await openStores(config, options, started);
  const { accountServices, keys, authenticator, tracing, redis, instanceId, agreement, metering, registry } = stores;
  const { generation, files, blobStore, metrics, accessLog, usageMetrics } = stores;
  let batchWorker: BatchWorker | undefined;
  const batches = new BatchService({
    repository: new BatchesRepository(database.db),
    files,
    tiers: effectiveTiers(config),
    ...(clock === undefined ? {} : { clock }),
    onWork: () => batchWorker?.wake(),
  });
  const storedResponses: StoredResponseStore = new StoredResponses(new StoredResponsesRepository(database.db));
  let draining = false;
  const readiness = readinessOf({
    config,
    database,
    sharedDatabase: started.sharedDatabase,
    blobStore,
    authenticator,
    redisProbe: redis.redisProbe,
    agreement,
    draining: () => draining,
  });
  const { responseCache } = stores;
  const useCases = buildMeteredServices(config, { generation, metering, registry, files, storedResponses, cache: responseCache });
  const { accounts, retention, dashboard } = openDashboardAccounts(config, options, { ...stores, database, logger, opened });
  const createFirstStartSecrets = firstStartSecrets({
    config,
    bootstrapKey: options.bootstrapKey ?? config.bootstrapKey,
    repository: stores.repository,
    filesRepository: stores.filesRepository,
    keys,
    accounts,
  });
  const app = await buildApp(
    {
      ...useCases,
      files,
      batches,
      config,
      database,
      authenticator,
      metering,
      generationEndpoints: useCases.endpoints,
      storedResponses,
      dashboard: { ...dashboard, responseCache: responseCacheAdmin(responseCache, database), budgets: stores.budgets },
      readiness,
      metrics,
      ...(accessLog === undefined ? {} : { accessLog }),
      tracing,
    },
    { ...options, logger },
  );
  const operations = await openOperationsListener(config, logger, readiness, metrics);
  if (options.batchWorker !== false) {
    batchWorker = startBatchWorker({
      config,
      app,
      database,
      files,
      batches,
      authenticator,
      accountServices,
      handlers: useCases,
      usageMetrics,
      tracing,
      instanceId,
      logger,
      clock,
      tuning: typeof options.batchWorker === 'object' ? options.batchWorker : undefined,
    });
  }
  const close = closeInOrder({ ...stores, breakers, database, logger, batchWorker: () => batchWorker, app, operations, retention });
  return {
    config,
    database,
    keys,
    app,
    operations,
    files,
    batches,
    batchWorker,
    createFirstStartSecrets,
    accounts,
    tracing,
    organizations: accountServices.organizations,
    people: dashboard.operator.people,
    alerts: stores.alerts,
    responseCache,
    budgets: stores.budgets,
    startDraining() {
      draining = true;
    },
    close,
  };
}

/** The dashboard's owners, sessions and audit retention, and what the operator console reads. */
function openDashboardAccounts(
  config: Config,
  options: StartRuntimeOptions,
  open: {
    database: Database;
    logger: Logger;
    keys: KeyService;
    accountServices: AccountServices;
    deploymentState: DeploymentStateStore;
    instances: InstancesRepository;
    /** The keys and files repositories the dashboard pages lists from (batches and owners are built here). */
    repository: ApiKeysRepository;
    filesRepository: FilesRepository;
    alerts: Alerts;
    opened: Opened;
  },
) {
  const { database, accountServices } = open;
  const ownersRepository = new OwnersRepository(database.db, database.dialect);
  const accounts = new DashboardAccounts(ownersRepository, options.dashboardAccounts);
  const retention = new AccountsRetention(
    new OwnersRepository(database.background, database.dialect),
    open.logger,
    options.dashboardRetention,
  );
  retention.start();
  open.opened.push(() => retention.stop());
  const dashboard = {
    accounts,
    keys: open.keys,
    operator: {
      organizations: accountServices.organizations,
      operatorAudit: accountServices.operatorAudit,
      instances: open.instances,
      people: accountServices.people(accounts),
      deploymentState: open.deploymentState,
    },
    rollups: new UsageRollupsRepository(database.db),
    lists: { keys: open.repository, files: open.filesRepository, batches: new BatchesRepository(database.db), owners: ownersRepository },
    sessionMaxAgeSeconds: Math.floor((options.dashboardAccounts?.absoluteTimeoutMs ?? 86_400_000) / 1000),
    alerts: open.alerts.endpoints,
    sso: createSsoSignIn(config, database, accounts, accountServices.operatorAudit),
  };
  return { accounts, retention, dashboard };
}
