/**
 * The first start step: the database, migrated (also `switchyard migrate`), behind its circuit breaker
 * when it is shared (Postgres).
 */
import type { Logger } from 'pino';
import type { Config } from '../config/index.ts';
import { CircuitBreaker, isUnreachableError, type DependencyBreakers } from '../core/circuit-breaker.ts';
import { openDatabase, type Database, type PostgresTimeouts } from '../db/database.ts';
import { probePostgres } from '../db/postgres-pools.ts';

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

/** The Postgres bounds of the config (`dependencies`). */
export function postgresTimeoutsOf(config: Config): PostgresTimeouts {
  const bounds = config.dependencies;
  return {
    connectTimeoutMs: bounds.databaseConnectTimeoutMs,
    statementTimeoutMs: bounds.databaseStatementTimeoutMs,
    idleInTransactionTimeoutMs: bounds.databaseIdleInTransactionTimeoutMs,
    requestTimeoutMs: bounds.databaseRequestTimeoutMs,
  };
}

/** Opens the database and applies pending migrations (also `switchyard migrate`). */
export async function openMigratedDatabase(config: Config, options: OpenMigratedDatabaseOptions = {}): Promise<Database> {
  const database = openDatabase(config.databaseUrl, {
    timeouts: postgresTimeoutsOf(config),
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

/** The runtime's database: migrated, with a breaker (and its probe) when shared. */
export async function openRuntimeDatabase(
  config: Config,
  logger: Logger,
  breakers: DependencyBreakers,
  waitForDatabase: boolean,
): Promise<{ database: Database; sharedDatabase: boolean }> {
  const sharedDatabase = config.databaseUrl.startsWith('postgres');
  // The probe is real from the first moment (a fresh connection and `SELECT 1`, never a pooled one): a
  // breaker opened while the start waits for Postgres closes, and says "back", only when it answers.
  const timeouts = postgresTimeoutsOf(config);
  const databaseBreaker = sharedDatabase
    ? breakers.add(
        new CircuitBreaker({
          name: 'database',
          description: 'The database',
          logger,
          probe: () => probePostgres(config.databaseUrl, timeouts),
        }),
      )
    : undefined;
  const database = await openMigratedDatabase(config, {
    ...(databaseBreaker === undefined ? {} : { breaker: databaseBreaker }),
    ...(waitForDatabase ? { waitFor: logger } : {}),
  });
  return { database, sharedDatabase };
}
