/**
 * The databases a storage test suite runs against: always a fresh SQLite file; and a fresh Postgres
 * database (created and dropped here) when TEST_DATABASE_URL points at a server. When it does not, the
 * Postgres suite is skipped LOUDLY.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { randomHex } from '../../src/core/ids.ts';

export interface TestDatabase {
  name: 'sqlite' | 'postgres';
  url: string;
  drop(): Promise<void>;
}

export async function createSqliteTestDatabase(): Promise<TestDatabase> {
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-db-'));
  return {
    name: 'sqlite',
    url: `sqlite:${join(directory, 'test.db')}`,
    drop: async () => rmSync(directory, { recursive: true, force: true }),
  };
}

/** A new, empty Postgres database on the TEST_DATABASE_URL server; undefined when it is not set. */
export async function createPostgresTestDatabase(): Promise<TestDatabase | undefined> {
  const serverUrl = process.env['TEST_DATABASE_URL'];
  if (serverUrl === undefined || serverUrl === '') return undefined;
  const name = `switchyard_test_${randomHex(12)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    name: 'postgres',
    url: url.toString(),
    async drop() {
      const dropper = new pg.Client({ connectionString: serverUrl });
      await dropper.connect();
      try {
        // pg's Pool.end() resolves before the server has seen its clients go; forcing the drop then
        // would kill them mid-goodbye and they raise "terminating connection" errors. Wait (bounded).
        for (let attempt = 0; attempt < 100; attempt++) {
          const result = await dropper.query<{ count: string }>('SELECT count(*) AS count FROM pg_stat_activity WHERE datname = $1', [
            name,
          ]);
          if (Number(result.rows[0]?.count ?? 0) === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

/** Names of the backends to run, printing a loud notice for any that is skipped. */
export function storageBackends(): Array<'sqlite' | 'postgres'> {
  if (process.env['TEST_DATABASE_URL']) return ['sqlite', 'postgres'];
  console.warn('\n*** SKIPPED: Postgres storage suite (set TEST_DATABASE_URL=postgres://127.0.0.1:5432/test to run it) ***\n');
  return ['sqlite'];
}

export async function createTestDatabase(backend: 'sqlite' | 'postgres'): Promise<TestDatabase> {
  if (backend === 'sqlite') return createSqliteTestDatabase();
  const database = await createPostgresTestDatabase();
  if (database === undefined) throw new Error('TEST_DATABASE_URL is not set');
  return database;
}
