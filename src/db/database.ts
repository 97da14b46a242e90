/**
 * Opens the database named by the config's `databaseUrl`: `sqlite:<path>` (embedded default,
 * better-sqlite3 in WAL mode) or `postgres://...` (pg pool, for several instances). Both speak the same
 * Kysely schema and migration set.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type MigrationProvider, type MigrationResultSet } from 'kysely';
import type { Pool } from 'pg';
import { createMigrations } from './migrations.ts';
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
  close(): Promise<void>;
}

/** A pg pool, with pg imported on first use: a SQLite deployment never pays for loading it. */
async function createPostgresPool(url: string, size: number): Promise<Pool> {
  const { default: pg } = await import('pg');
  // BIGINT (OID 20) columns hold millisecond timestamps and counters, all far below 2^53.
  pg.types.setTypeParser(20, (value: string) => Number(value));
  return new pg.Pool({ connectionString: url, max: size });
}

/** SQLite page cache, KiB as `PRAGMA cache_size` takes it (negative: a size, not a page count). */
const SQLITE_CACHE_KIB = -2000;

export interface OpenDatabaseOptions {
  /** Postgres pool size. */
  poolSize?: number;
}

export function openDatabase(url: string, options: OpenDatabaseOptions = {}): Database {
  let dialect: DatabaseDialect;
  let kysely: Kysely<DatabaseSchema>;
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
    kysely = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool: () => createPostgresPool(url, options.poolSize ?? 10) }) });
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
    async close() {
      await kysely.destroy();
    },
  };
}
