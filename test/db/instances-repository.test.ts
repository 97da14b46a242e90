// The one heartbeat table, on every backend: `instances` rows carry the version, start, last heartbeat
// and config hash (the fleet page and config agreement read the same rows); migration 0131 merged
// 0120's `instance_configs` into it keeping the data of both, and a clean stop removes the row.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Migrator, sql } from 'kysely';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { createMigrations } from '../../src/db/migrations/index.ts';
import { InstancesRepository } from '../../src/db/repositories/instances-repository.ts';
import { ConfigAgreement } from '../../src/services/instances/config-agreement.ts';
import { createTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';

const quiet = { warn: () => undefined, info: () => undefined };

for (const backend of storageBackends()) {
  describe(`instances (the one heartbeat table) on ${backend}`, () => {
    let testDatabase: TestDatabase;
    let database: Database;

    before(async () => {
      testDatabase = await createTestDatabase(backend);
      database = openDatabase(testDatabase.url);
    });
    after(async () => {
      await database.close();
      await testDatabase.drop();
    });

    test('migration 0131 keeps the rows of both tables: hashes move to the fleet rows, the later heartbeat wins', async () => {
      const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => createMigrations(backend) } });
      assert.equal((await migrator.migrateTo('0120_instance_configs')).error, undefined);
      await sql`insert into instances (id, version, started_at, last_seen_at) values
        ('both', '0.1.0', 100, 500), ('fleet-only', '0.1.0', 200, 600), ('both-older-config', '0.1.0', 300, 900)`.execute(database.db);
      await sql`insert into instance_configs (id, config_hash, started_at, heartbeat_at) values
        ('both', 'hash-both', 110, 700), ('config-only', 'hash-config', 400, 800), ('both-older-config', 'hash-older', 310, 850)`.execute(
        database.db,
      );
      await database.migrate();
      const rows = await new InstancesRepository(database.db).live(0);
      assert.deepEqual(
        rows.map((row) => [row.id, row.version, row.configHash, row.startedAt, row.lastSeenAt]),
        [
          ['config-only', 'unknown', 'hash-config', 400, 800],
          ['both-older-config', '0.1.0', 'hash-older', 300, 900],
          ['fleet-only', '0.1.0', null, 200, 600],
          ['both', '0.1.0', 'hash-both', 100, 700],
        ],
      );
      await assert.rejects(sql`select * from instance_configs`.execute(database.db), 'instance_configs is gone');
      await sql`delete from instances`.execute(database.db);
    });

    test('one heartbeat writes the fleet row with its config hash; rows without a hash are not compared; a stop removes it', async () => {
      const repository = new InstancesRepository(database.db);
      let now = 1_000_000;
      await sql`insert into instances (id, version, started_at, last_seen_at) values ('older-version', '0.0.9', 1, ${now})`.execute(
        database.db,
      );
      const agreement = (id: string): ConfigAgreement =>
        new ConfigAgreement({
          store: repository,
          instanceId: id,
          configHash: `hash-${id}`,
          version: '1.2.3',
          logger: quiet,
          now: () => now,
        });
      const a = agreement('a');
      await a.start();
      now += 1_000;
      const b = agreement('b');
      await b.start();
      try {
        const rows = await repository.live(now - 15_000);
        assert.deepEqual(
          rows.map((row) => [row.id, row.version, row.configHash, row.lastSeenAt]),
          [
            ['b', '1.2.3', 'hash-b', 1_001_000],
            ['a', '1.2.3', 'hash-a', 1_000_000],
            ['older-version', '0.0.9', null, 1_000_000],
          ],
          'newest start first, for the fleet page',
        );
        assert.deepEqual(await b.report(), { hash: 'hash-b', instances: 3, disagreeing: [{ instance: 'a', hash: 'hash-a' }] });
        await a.stop();
        assert.deepEqual(
          (await repository.live(0)).map((row) => row.id),
          ['b', 'older-version'],
        );
        assert.deepEqual(await b.report(), { hash: 'hash-b', instances: 2 });
      } finally {
        await a.stop();
        await b.stop();
      }
    });
  });
}
