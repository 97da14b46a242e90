/**
 * Start steps that open what the services stand on, each pushing its closer onto `opened` (closed in
 * reverse order should a later step fail): key verification and accounts, tracing, Redis and the limit
 * store, the config agreement, the usage ledger, the backends and their routing state, the file store.
 */
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createAccountServices, planLimitsOf } from '../accounts/account-services.ts';
import { Authenticator } from '../accounts/authenticator.ts';
import { KeyService } from '../accounts/key-service.ts';
import { persistedInstanceId } from '../batches/instance-id.ts';
import { effectiveConfigHash } from '../config/config-hash.ts';
import { droppedPlansError, droppedTiersError, unconfiguredTiers, type Config } from '../config/index.ts';
import { CircuitBreaker, type DependencyBreakers } from '../core/circuit-breaker.ts';
import type { Database } from '../db/database.ts';
import { FileLedgerJournal } from '../db/ledger-journal.ts';
import { ApiKeysRepository } from '../db/repositories/api-keys-repository.ts';
import { InstancesRepository } from '../db/repositories/instances-repository.ts';
import { OrganizationsRepository } from '../db/repositories/organizations-repository.ts';
import { UsageLedgerRepository } from '../db/repositories/usage-ledger-repository.ts';
import { BudgetsRepository } from '../db/repositories/budgets-repository.ts';
import { BudgetService } from '../services/budgets/budget-service.ts';
import type { SpendObserver } from '../services/budgets/spend-observer.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { createBlobStore } from '../files/create-blob-store.ts';
import type { Clock } from '../limits/clock.ts';
import { createDeploymentState } from '../limits/create-deployment-state.ts';
import { createLimitStore } from '../limits/create-limit-store.ts';
import type { DeploymentStateStore } from '../limits/deployment-state.ts';
import type { LimitStore } from '../limits/limit-store.ts';
import { windowsAt } from '../limits/limit-windows.ts';
import { MemoryLimitStore } from '../limits/memory/memory-limit-store.ts';
import { ProviderRegistry } from '../providers/registry.ts';
import { ConfigAgreement } from '../services/instances/config-agreement.ts';
import { MeteringService } from '../services/metering/metering-service.ts';
import { ObservedUsageLedger } from '../services/metering/observed-usage-ledger.ts';
import type { LedgerRecord } from '../services/metering/usage-ledger.ts';
import { startTracing } from '../telemetry/start-tracing.ts';
import type { Tracing } from '../telemetry/trace-types.ts';

/** Closers of what a start has opened so far. */
export type Opened = Array<() => Promise<void> | void>;

/** Keys (refusing keys of a tier the config dropped), organizations and plans, the authenticator. */
export async function openAccounts(config: Config, database: Database, logger: Logger, opened: Opened) {
  const repository = new ApiKeysRepository(database.db);
  // Keys of a tier the config dropped would run without its limits: refuse, naming them.
  const droppedTiers = unconfiguredTiers(config, await repository.tiersInUse(Date.now()));
  if (droppedTiers.length > 0) throw droppedTiersError(config, droppedTiers);
  // Organizations on a dropped plan would silently take the default tier's figures: refuse, naming them.
  const organizationsByPlan = await new OrganizationsRepository(database.db).organizationsByPlan();
  const droppedPlans = unconfiguredTiers(config, [...organizationsByPlan.keys()]);
  if (droppedPlans.length > 0) throw droppedPlansError(config, new Map(droppedPlans.map((tier) => [tier, organizationsByPlan.get(tier)!])));
  // Plans per organization (accounts/plans.ts): keys are bounded by them and limited under them.
  const accountServices = createAccountServices(config, database.db, logger, database.dialect);
  await accountServices.organizations.backfillPlans();
  const keys = new KeyService(config, repository, Date.now, accountServices.organizations);
  const authenticator = new Authenticator(repository, {
    maxStalenessMs: config.dependencies.cachedKeysMaxStalenessMs,
    planLimits: planLimitsOf(config),
  });
  await authenticator.start();
  opened.push(() => authenticator.stop());
  return { repository, accountServices, keys, authenticator };
}

/** Traces over OTLP when an endpoint is configured; undefined otherwise. */
export async function openTracing(config: Config, logger: Logger, opened: Opened): Promise<Tracing | undefined> {
  const tracing = await startTracing(config.tracing, logger);
  if (tracing !== undefined) {
    opened.push(() => tracing.shutdown());
    logger.info(
      { endpoint: config.tracing.endpoint, serviceName: config.tracing.serviceName, sampler: config.tracing.sampler },
      'traces are exported over OTLP/HTTP',
    );
  }
  return tracing;
}

/** Redis (when configured): the connection, its probe connection and breaker. */
export interface RedisConnections {
  redis: Redis | undefined;
  redisBreaker: CircuitBreaker | undefined;
  redisProbe: Redis | undefined;
}

/** Redis: one bounded connection shared by the limit store and the routing state, one breaker; then the limit store. */
export async function openLimitStore(
  config: Config,
  logger: Logger,
  breakers: DependencyBreakers,
  opened: Opened,
): Promise<RedisConnections & { limitStore: LimitStore }> {
  const bounds = config.dependencies;
  let redis: Redis | undefined;
  let redisBreaker: CircuitBreaker | undefined;
  let redisProbe: Redis | undefined;
  if (config.redisUrl !== undefined && config.redisUrl !== '' && !(config.limitsBackend === 'memory')) {
    const { commandBoundOf, openRedisConnection } = await import('../limits/redis/redis-connection.ts');
    const connection = { commandTimeoutMs: bounds.redisCommandTimeoutMs, connectTimeoutMs: bounds.redisConnectTimeoutMs };
    // The probe has a connection of its own that never queues commands: an unreachable Redis fails
    // it at once, a frozen one after the command timeout.
    const probe = (redisProbe = openRedisConnection(config.redisUrl, { ...connection, enableOfflineQueue: false }));
    const breaker = (redisBreaker = breakers.add(
      // The probe's PING is bounded too: on a frozen Redis an unbounded one would hold the breaker half-open.
      new CircuitBreaker({
        name: 'redis',
        description: 'The rate-limit store',
        logger,
        probe: () => commandBoundOf(probe).run(() => probe.ping()),
      }),
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
    refusePaidOnStoreFailure: config.limits.refusePaidOnStoreFailure,
    redisPrefix: config.redisPrefix,
  });
  opened.push(() => limitStore.close());
  return { redis, redisBreaker, redisProbe, limitStore };
}

/** Each instance publishes its effective config's hash; /readyz and the logs name instances that differ. */
export async function startConfigAgreement(config: Config, database: Database, logger: Logger, opened: Opened) {
  // The one instance heartbeat: this instance's row (the fleet page) with its effective config's hash;
  // /readyz and the logs name instances that differ.
  const instanceId = config.instanceId ?? persistedInstanceId(config.dataDir);
  const instances = new InstancesRepository(database.db);
  const agreement = new ConfigAgreement({
    store: instances,
    instanceId,
    configHash: effectiveConfigHash(config),
    logger,
  });
  await agreement.start();
  opened.push(() => agreement.stop());
  return { instanceId, agreement, instances };
}

/**
 * The usage ledger (restoring one instance's in-memory totals from it) and the metering service over
 * it and the limit store. Every ledger record is also handed to `observe` (set later: the per-model
 * metrics and the access log). The ledger is closed by `Runtime.close`, after the server has drained.
 */
export async function openMetering(
  config: Config,
  database: Database,
  limitStore: LimitStore,
  logger: Logger,
  spendObserver?: SpendObserver,
  clock?: Clock,
) {
  // The ledger's writes are background work: its pool has the longer statement bound.
  const ledgerRepository = new UsageLedgerRepository(database.background);
  if (limitStore instanceof MemoryLimitStore) {
    // One instance keeps its counters in memory: restore this day's and month's totals from the ledger.
    const windows = windowsAt(Date.now());
    limitStore.restoreTotals(await ledgerRepository.organizationTotals(windows.month.startMs, windows.day.startMs));
  }
  const observer: { observe: (record: LedgerRecord) => void } = { observe: () => undefined };
  const ledger = new ObservedUsageLedger(
    {
      sink: ledgerRepository,
      logger,
      memoryRecords: config.dependencies.ledgerMemoryRecords,
      journal: new FileLedgerJournal(join(config.dataDir, 'ledger-journal'), {
        // The owner token of the journal's files names this instance; shared data directories are safe.
        instanceId: config.instanceId ?? persistedInstanceId(config.dataDir),
      }),
    },
    (record) => observer.observe(record),
  );
  // Money budgets: read per organization, reserved in the limit store, every settlement told to the alerts.
  const budgets = new BudgetService(config, new BudgetsRepository(database.db), clock === undefined ? {} : { clock });
  const metering = new MeteringService(config, limitStore, ledger, logger, {
    budgets,
    ...(spendObserver === undefined ? {} : { observer: spendObserver }),
  });
  return { ledger, metering, observer, budgets };
}

/** The backends (ProviderRegistry) and the deployments' shared state (through Redis when limits are). */
export async function openBackends(
  config: Config,
  logger: Logger,
  redis: RedisConnections,
  clock: Clock | undefined,
  opened: Opened,
): Promise<{ registry: ProviderRegistry; deploymentState: DeploymentStateStore }> {
  const registry = ProviderRegistry.fromConfig(config, { logger });
  opened.push(() => registry.close());
  // Deployment state is shared through Redis when limits are (cooldowns, per-deployment minute usage).
  const deploymentState = await createDeploymentState({
    backend: config.limitsBackend,
    redisUrl: config.redisUrl,
    ...(redis.redis === undefined ? {} : { redis: redis.redis }),
    ...(redis.redisBreaker === undefined ? {} : { breaker: redis.redisBreaker }),
    onStoreFailure: config.routingState.onStoreFailure,
    redisPrefix: config.redisPrefix,
    logger,
    ...(clock === undefined ? {} : { clock }),
  });
  opened.push(() => deploymentState.close());
  return { registry, deploymentState };
}

/** The blob store (behind a breaker unless it is the local disk). */
export async function openBlobStore(config: Config, logger: Logger, breakers: DependencyBreakers, opened: Opened): Promise<BlobStore> {
  const bounds = config.dependencies;
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
  return blobStore;
}
