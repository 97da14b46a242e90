// Safe first start: several instances starting at once on an empty Postgres database (a fresh one on
// TEST_DATABASE_URL; skipped LOUDLY without it) apply the migrations once and create exactly one
// bootstrap key between them. SQLite is not raced here: several better-sqlite3 connections in one
// thread block each other's write locks synchronously, which says nothing about separate processes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/index.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createMigrations } from '../../src/db/migrations/index.ts';
import { startRuntime } from '../../src/runtime.ts';
import { createTestDatabase } from '../support/databases.ts';

const INSTANCES = 5;

const backends: Array<'postgres'> = process.env['TEST_DATABASE_URL'] ? ['postgres'] : [];
if (backends.length === 0)
  console.warn(
    '\n*** SKIPPED: simultaneous first start on Postgres (set TEST_DATABASE_URL=postgres://127.0.0.1:5432/test to run it) ***\n',
  );

for (const backend of backends) {
  describe(`first start of ${INSTANCES} instances at once (${backend})`, () => {
    // Empty: the instances also race to migrate. Migrated (`switchyard migrate` ran first, no key
    // yet): they all reach the "no key yet?" question at the same moment, the sharper race.
    for (const premigrated of [false, true]) {
      test(`${premigrated ? 'on a migrated database without keys' : 'on an empty database'}: migrations apply once, exactly one bootstrap key`, async () => {
        const database = await createTestDatabase(backend);
        if (premigrated) {
          const migrating = openDatabase(database.url);
          await migrating.migrate();
          await migrating.close();
        }
        const dataDirs = Array.from({ length: INSTANCES }, () => mkdtempSync(join(tmpdir(), 'switchyard-first-start-')));
        try {
          const runtimes = await Promise.all(
            dataDirs.map((dataDir) =>
              startRuntime(
                loadConfig({ env: {}, overrides: { dataDir, databaseUrl: database.url, logLevel: 'silent', bootstrapKey: true } }),
                {
                  logger: pino({ level: 'silent' }),
                  batchWorker: false,
                },
              ),
            ),
          );
          // Each instance's listener is up: they all ask for the first-start secrets at the same moment.
          const secrets = await Promise.all(runtimes.map((runtime) => runtime.createFirstStartSecrets()));
          const created = secrets.filter((created) => created !== undefined);
          await Promise.all(runtimes.map((runtime) => runtime.close()));
          assert.equal(created.length, 1, 'one instance printed a first-start key');

          const check = openDatabase(database.url);
          try {
            const keys = await check.db.selectFrom('api_keys').select('id').execute();
            assert.deepEqual(
              keys.map((key) => key.id),
              [created[0]!.key.record.id],
            );
            const applied = await check.db
              .selectFrom('kysely_migration' as never)
              .select('name' as never)
              .execute();
            assert.equal(applied.length, Object.keys(createMigrations(backend)).length);
          } finally {
            await check.close();
          }
        } finally {
          await database.drop();
          for (const dataDir of dataDirs) rmSync(dataDir, { recursive: true, force: true });
        }
      });
    }
  });
}
