// The SQLite statement cache under Kysely, on a real database file: a statement is prepared once and
// reused with new parameters, a cached query can still be streamed, the least recently used statement
// is the one evicted, and schema changes made after a statement was prepared are seen.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { withStatementCache } from '../../src/db/sqlite-statement-cache.ts';

interface Schema {
  items: { id: number; name: string };
}

describe('SQLite statement cache', () => {
  let directory: string;
  let sqlite: SqliteDatabase.Database;
  let prepared: string[];
  let db: Kysely<Schema>;

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'switchyard-statements-'));
    sqlite = new SqliteDatabase(join(directory, 'cache.db'));
    // Counts what reaches better-sqlite3's prepare: the cache sits between it and Kysely.
    prepared = [];
    const prepare = sqlite.prepare.bind(sqlite);
    sqlite.prepare = ((text: string) => {
      prepared.push(text);
      return prepare(text);
    }) as typeof sqlite.prepare;
    db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite, 3) }) });
    await sql`create table items (id integer primary key, name text not null)`.execute(db);
  });

  after(async () => {
    await db.destroy();
    rmSync(directory, { recursive: true, force: true });
  });

  test('a query run again with other parameters is prepared once and answers with the new ones', async () => {
    prepared.length = 0;
    for (let id = 1; id <= 5; id++)
      await db
        .insertInto('items')
        .values({ id, name: `item ${id}` })
        .execute();
    const names: string[] = [];
    for (let id = 1; id <= 5; id++) {
      const row = await db.selectFrom('items').select('name').where('id', '=', id).executeTakeFirstOrThrow();
      names.push(row.name);
    }
    assert.deepEqual(names, ['item 1', 'item 2', 'item 3', 'item 4', 'item 5']);
    assert.equal(prepared.length, 2, `prepared: ${prepared.join(' | ')}`);
  });

  test('a cached query can also be streamed, part-way and then run again', async () => {
    const query = db.selectFrom('items').select(['id', 'name']).where('id', '<', 4).orderBy('id');
    assert.equal((await query.execute()).length, 3);
    const streamed: number[] = [];
    for await (const row of query.stream()) {
      streamed.push(row.id);
      if (streamed.length === 2) break;
    }
    assert.deepEqual(streamed, [1, 2]);
    assert.deepEqual(
      (await query.execute()).map((row) => row.id),
      [1, 2, 3],
    );
  });

  test('the least recently used statement is evicted, and an evicted query still runs', async () => {
    // Queries no earlier test ran, so that all four start unprepared.
    const byId = (id: number) => db.selectFrom('items').select('name as found').where('id', '=', id);
    const byName = (name: string) => db.selectFrom('items').select('id').where('name', '=', name);
    const count = () => db.selectFrom('items').select((eb) => eb.fn.countAll<number>().as('count'));
    const ids = () => db.selectFrom('items').select('id').orderBy('id', 'desc');
    prepared.length = 0;
    await byId(1).execute();
    await byName('item 1').execute();
    await count().execute();
    await byId(2).execute(); // used again: `byName` is now the least recent of the three kept
    await ids().execute(); // a fourth statement: evicts `byName`
    assert.equal(prepared.length, 4);
    await byId(3).execute();
    await count().execute();
    assert.equal(prepared.length, 4, 'the statements used recently are still prepared');
    assert.deepEqual(await byName('item 2').execute(), [{ id: 2 }]);
    assert.equal(prepared.length, 5, 'the evicted statement is prepared again');
  });

  test('a statement prepared before a schema change sees the new schema', async () => {
    const all = () => db.selectFrom('items').selectAll().where('id', '=', 1);
    assert.deepEqual(await all().execute(), [{ id: 1, name: 'item 1' }]);
    await sql`alter table items add column colour text not null default 'red'`.execute(db);
    assert.deepEqual(await all().execute(), [{ id: 1, name: 'item 1', colour: 'red' }]);
  });
});
