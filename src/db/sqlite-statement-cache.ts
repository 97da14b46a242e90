/**
 * better-sqlite3 for Kysely, with prepared statements kept for reuse. Kysely's SQLite driver prepares
 * every query it runs; the usage ledger's 500-row insert (7,500 parameters) took longer to prepare than
 * to run, and showed at ~1.3% of the gateway's CPU under load. The SQL Kysely produces is parameterised,
 * so the distinct statements are few: the most recently used `capacity` stay prepared. A kept statement
 * holds its compiled program in SQLite's memory (~680 KB for that insert), so a caller that varies the
 * shape of large statements keeps their shapes few (the ledger uses ten sizes: `chunkRows`).
 *
 * `all` and `run` are synchronous and never overlap, so one statement serves every caller. `iterate`
 * (Kysely's `stream()`) holds its statement across awaits, so it prepares its own, as without the cache.
 */
import type { Database as BetterSqliteDatabase, Statement } from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

export function withStatementCache(database: BetterSqliteDatabase, capacity = 64): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => database.close(),
    prepare(sql: string): SqliteStatement {
      let statement = statements.get(sql);
      if (statement !== undefined) {
        // Most recently used last: the first entry is the one evicted.
        statements.delete(sql);
        statements.set(sql, statement);
        return statement;
      }
      const prepared: Statement = database.prepare(sql);
      statement = {
        reader: prepared.reader,
        all: (parameters) => prepared.all(parameters),
        run: (parameters) => prepared.run(parameters),
        iterate: (parameters) => database.prepare(sql).iterate(parameters),
      };
      statements.set(sql, statement);
      if (statements.size > capacity) statements.delete(statements.keys().next().value!);
      return statement;
    },
  };
}
