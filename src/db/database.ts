/**
 * Opens the database named by the config's `databaseUrl`: `sqlite:<path>` (embedded default,
 * better-sqlite3 in WAL mode) or `postgres://...` (pg pool, for several instances). Both speak the same
 * Kysely schema and migration set.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type MigrationProvider, type MigrationResultSet } from 'kysely';
import type { CircuitBreaker } from '../core/circuit-breaker.ts';
import { createMigrations } from './migrations/index.ts';
import { withStatementCache } from './sqlite-statement-cache.ts';
import type { DatabaseSchema } from './schema.ts';
import {
  DEFAULT_POSTGRES_TIMEOUTS,
  boundedPoolConfig,
  kyselyPool,
  loadPg,
  probePostgres,
  ReplaceablePool,
  type PostgresTimeouts,
} from './postgres-pools.ts';

export type DatabaseDialect = 'sqlite' | 'postgres';

export interface Database {
  /**
   * The request path (what a client waits for): on Postgres every wait is bounded by
   * `requestTimeoutMs` (default 2 s). On SQLite the same connection as `background`.
   */
  readonly db: Kysely<DatabaseSchema>;
  /**
   * Background work nobody waits on (migrations, the usage ledger, retention, the batch worker,
   * alerts, heartbeats): on Postgres its own pool with the longer `statementTimeoutMs`.
   */
  readonly background: Kysely<DatabaseSchema>;
  readonly dialect: DatabaseDialect;
  /** Applies pending migrations; returns the names applied. */
  migrate(): Promise<string[]>;
  /** True when a trivial query succeeds (readiness probe). */
  ping(): Promise<boolean>;
  /**
   * Resolves when the server answers a trivial query, bypassing the circuit breaker (its probe): on
   * Postgres over a fresh connection of its own, never a pooled one.
   */
  probe(): Promise<void>;
  close(): Promise<void>;
}

export { boundedPoolConfig, DEFAULT_POSTGRES_TIMEOUTS, DEFAULT_REQUEST_TIMEOUT_MS, type PostgresTimeouts } from './postgres-pools.ts';

/** Connections of the background pool, at most (the request pool has `poolSize`). */
const BACKGROUND_POOL_SIZE = 5;

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
  let background: Kysely<DatabaseSchema>;
  let probe: () => Promise<void>;
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
    background = kysely;
    probe = async () => {
      await kysely.selectFrom('counters').select('name').limit(1).execute();
    };
  } else {
    dialect = 'postgres';
    const timeouts = options.timeouts ?? DEFAULT_POSTGRES_TIMEOUTS;
    const breaker = options.breaker;
    const size = options.poolSize ?? 10;
    // Created on first use (pg is imported then); both pools discard their idle connections when the
    // breaker opens: after a failover they would lead to the old server.
    const pools = new Map<'request' | 'background', Promise<ReplaceablePool>>();
    const poolOf = (role: 'request' | 'background'): Promise<ReplaceablePool> => {
      let pool = pools.get(role);
      if (pool === undefined) {
        const config = boundedPoolConfig(url, role === 'request' ? size : Math.min(size, BACKGROUND_POOL_SIZE), timeouts, role);
        pool = loadPg().then((pg) => new ReplaceablePool(pg, config, breaker));
        pools.set(role, pool);
      }
      return pool;
    };
    breaker?.onOpen(() => {
      for (const pool of pools.values()) void pool.then((replaceable) => replaceable.discardIdle());
    });
    const kyselyOf = (role: 'request' | 'background') =>
      new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool: async () => kyselyPool(await poolOf(role), breaker) }) });
    kysely = kyselyOf('request');
    background = kyselyOf('background');
    probe = () => probePostgres(url, timeouts);
  }
  const provider: MigrationProvider = { getMigrations: async () => createMigrations(dialect) };
  return {
    db: kysely,
    background,
    dialect,
    async migrate() {
      // Postgres: Kysely holds an advisory lock while migrating, so instances starting together apply
      // each migration once. SQLite has no such lock: of processes sharing the file, the losers' whole
      // migration transaction rolls back ("table already exists"); trying again finds it applied.
      for (let attempt = 1; ; attempt++) {
        const migrator = new Migrator({ db: background, provider });
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
    probe,
    async close() {
      await kysely.destroy();
      if (background !== kysely) await background.destroy();
    },
  };
}
