/**
 * Opens the database named by the config's `databaseUrl`: `sqlite:<path>` (embedded default,
 * better-sqlite3 in WAL mode) or `postgres://...` (pg pool, for several instances). Both speak the same
 * Kysely schema and migration set.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  type MigrationProvider,
  type MigrationResultSet,
  type PostgresPool,
  type PostgresPoolClient,
} from 'kysely';
import type { Pool, PoolConfig } from 'pg';
import type { CircuitBreaker } from '../core/circuit-breaker.ts';
import { createMigrations } from './migrations/index.ts';
import { withStatementCache } from './sqlite-statement-cache.ts';
import type { DatabaseSchema } from './schema.ts';

export type DatabaseDialect = 'sqlite' | 'postgres';

export interface Database {
  readonly db: Kysely<DatabaseSchema>;
  readonly dialect: DatabaseDialect;
  /** Applies pending migrations; returns the names applied. */
  migrate(): Promise<string[]>;
  /** True when a trivial query succeeds (readiness probe). */
  ping(): Promise<boolean>;
  /** Resolves when the server answers a trivial query, bypassing the circuit breaker (its probe). */
  probe(): Promise<void>;
  close(): Promise<void>;
}

/** Bounds on every wait for Postgres (config `dependencies`). */
export interface PostgresTimeouts {
  /** Longest wait for a connection, new or from the pool, ms. */
  connectTimeoutMs: number;
  /** Server `statement_timeout`, ms; the client gives up `+1 s` later on a server that does not answer. */
  statementTimeoutMs: number;
  /** Server `idle_in_transaction_session_timeout`, ms. */
  idleInTransactionTimeoutMs: number;
}

export const DEFAULT_POSTGRES_TIMEOUTS: PostgresTimeouts = {
  connectTimeoutMs: 2_000,
  statementTimeoutMs: 15_000,
  idleInTransactionTimeoutMs: 30_000,
};

/** pg pool settings that bound every wait and keep dead connections from lingering. */
export function boundedPoolConfig(url: string, size: number, timeouts: PostgresTimeouts): PoolConfig {
  return {
    connectionString: url,
    max: size,
    connectionTimeoutMillis: timeouts.connectTimeoutMs,
    statement_timeout: timeouts.statementTimeoutMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionTimeoutMs,
    // A frozen server never answers, so the server-side timeout never fires: the client's does.
    query_timeout: timeouts.statementTimeoutMs + 1_000,
    keepAlive: true,
    idleTimeoutMillis: 30_000,
  };
}

/** A pg pool, with pg imported on first use: a SQLite deployment never pays for loading it. */
async function createPostgresPool(
  url: string,
  size: number,
  timeouts: PostgresTimeouts,
  breaker: CircuitBreaker | undefined,
): Promise<Pool> {
  const { default: pg } = await import('pg');
  // BIGINT (OID 20) columns hold millisecond timestamps and counters, all far below 2^53.
  pg.types.setTypeParser(20, (value: string) => Number(value));
  const pool = new pg.Pool(boundedPoolConfig(url, size, timeouts));
  // node-postgres: "if a pool emits an error event and no listeners are added node will emit an
  // uncaught error". An idle connection the server terminated (restart, failover) is dropped by the
  // pool and replaced on the next use; the breaker counts it (and logs the state change once).
  pool.on('error', (error: Error) => breaker?.recordFailure(error));
  // The pool's listener covers idle clients only: a client checked out when the server ends its
  // connection emits 'error' on itself, which without a listener ends the process too. Its query
  // fails (and is counted) on its own; the pool discards the client when it is released.
  pool.on('connect', (client) => client.on('error', (error: Error) => breaker?.recordFailure(error)));
  return pool;
}

/**
 * The pool as Kysely sees it, behind the database's circuit breaker: while the database is known to
 * be unreachable a connection is refused at once (500 `service_unavailable`, `retry-after`) instead
 * of each request waiting out the connect timeout; every query's outcome feeds the breaker.
 */
function guardedPool(pool: Pool, breaker: CircuitBreaker): PostgresPool {
  const observe = <T>(result: T): T => {
    if (result instanceof Promise) {
      return result.then(
        (value: unknown) => {
          breaker.recordSuccess();
          return value;
        },
        (error: unknown) => {
          if (breaker.recordFailure(error)) throw breaker.unavailable(error);
          throw error;
        },
      ) as T;
    }
    return result;
  };
  return {
    async connect(): Promise<PostgresPoolClient> {
      breaker.check();
      const client = await observe(pool.connect());
      return {
        query: ((...args: Parameters<PostgresPoolClient['query']>) =>
          observe((client.query as (...a: unknown[]) => unknown)(...args))) as PostgresPoolClient['query'],
        release: () => client.release(),
      };
    },
    end: () => pool.end(),
  };
}

/** SQLite page cache, KiB as `PRAGMA cache_size` takes it (negative: a size, not a page count). */
const SQLITE_CACHE_KIB = -2000;

export interface OpenDatabaseOptions {
  /** Postgres pool size. */
  poolSize?: number;
  /** Postgres timeouts (default DEFAULT_POSTGRES_TIMEOUTS). */
  timeouts?: PostgresTimeouts;
  /** The database's circuit breaker (Postgres): fail fast while it is known down. */
  breaker?: CircuitBreaker;
}

export function openDatabase(url: string, options: OpenDatabaseOptions = {}): Database {
  let dialect: DatabaseDialect;
  let kysely: Kysely<DatabaseSchema>;
  let poolPromise: Promise<Pool> | undefined;
  let rawPool: (() => Promise<Pool>) | undefined;
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const sqlite = new SqliteDatabase(path);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    // SQLite's own default page cache, 2 MB: better-sqlite3 builds with 16 MB, which the append-only
    // usage ledger fills under load (RSS +14-18 MB) for no gain; pages read again come from the OS cache.
    sqlite.pragma(`cache_size = ${SQLITE_CACHE_KIB}`);
    dialect = 'sqlite';
    kysely = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  } else {
    dialect = 'postgres';
    const timeouts = options.timeouts ?? DEFAULT_POSTGRES_TIMEOUTS;
    const breaker = options.breaker;
    rawPool = () => (poolPromise ??= createPostgresPool(url, options.poolSize ?? 10, timeouts, breaker));
    const pool = rawPool;
    kysely = new Kysely<DatabaseSchema>({
      dialect: new PostgresDialect({
        pool: async () => (breaker === undefined ? pool() : guardedPool(await pool(), breaker)),
      }),
    });
  }
  const provider: MigrationProvider = { getMigrations: async () => createMigrations(dialect) };
  return {
    db: kysely,
    dialect,
    async migrate() {
      // Postgres: Kysely holds an advisory lock while migrating, so instances starting together apply
      // each migration once. SQLite has no such lock: of processes sharing the file, the losers' whole
      // migration transaction rolls back ("table already exists"); trying again finds it applied.
      for (let attempt = 1; ; attempt++) {
        const migrator = new Migrator({ db: kysely, provider });
        const result: MigrationResultSet = await migrator.migrateToLatest();
        if (result.error === undefined)
          return (result.results ?? []).filter((entry) => entry.status === 'Success').map((entry) => entry.migrationName);
        if (dialect === 'postgres' || attempt === 5) throw result.error;
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      }
    },
    async ping() {
      try {
        await kysely.selectFrom('counters').select('name').limit(1).execute();
        return true;
      } catch {
        return false;
      }
    },
    async probe() {
      if (rawPool === undefined) {
        await kysely.selectFrom('counters').select('name').limit(1).execute();
        return;
      }
      await (await rawPool()).query('SELECT 1');
    },
    async close() {
      await kysely.destroy();
    },
  };
}
