// The usage ledger's batched insert on every backend: a batch of any size lands whole, in rows and in
// the daily rollups, and is written with statements of a fixed set of sizes (each size is one SQL text,
// which SQLite keeps prepared: ~680 KB for the largest).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { chunkRows, UsageLedgerRepository } from '../../src/db/repositories/usage-ledger-repository.ts';
import type { LedgerRecord } from '../../src/services/metering/usage-ledger.ts';
import { createTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';

test('chunkRows covers every batch size with at most ten statement sizes', () => {
  const sizes = new Set<number>();
  for (let total = 1; total <= 2_000; total++) {
    let covered = 0;
    while (covered < total) {
      const rows = chunkRows(total - covered, 500);
      assert.ok(rows >= 1 && rows <= total - covered, `chunk of ${rows} with ${total - covered} left`);
      sizes.add(rows);
      covered += rows;
    }
  }
  assert.deepEqual(
    [...sizes].sort((left, right) => left - right),
    [1, 2, 4, 8, 16, 32, 64, 128, 256, 500],
  );
});

const DAY_ONE = Date.UTC(2026, 10, 1);

function record(index: number): LedgerRecord {
  return {
    requestId: `req_${index}`,
    organizationId: 'org-insert',
    keyId: `key_${index % 3}`,
    model: index % 2 === 0 ? 'model-a' : 'model-b',
    endpoint: '/v1/chat/completions',
    inputTokens: 10,
    outputTokens: index,
    cachedTokens: 0,
    reasoningTokens: 0,
    costUsd: 0.5,
    batch: false,
    statusCode: 200,
    latencyMs: 2,
    createdAtMs: DAY_ONE + index,
    deployment: 'upstream',
  };
}

for (const backend of storageBackends()) {
  describe(`usage ledger insert (${backend})`, () => {
    let testDatabase: TestDatabase;
    let database: Database;

    before(async () => {
      testDatabase = await createTestDatabase(backend);
      database = openDatabase(testDatabase.url);
      await database.migrate();
    });

    after(async () => {
      await database.close();
      await testDatabase.drop();
    });

    test('batches of sizes that need several statements land whole, rows and rollups', async () => {
      const ledger = new UsageLedgerRepository(database.db);
      const sizes = [437, 501, 1, 255, 1_000];
      let next = 0;
      for (const size of sizes) {
        await ledger.insertMany(Array.from({ length: size }, () => record(next++)));
      }
      const total = sizes.reduce((sum, size) => sum + size, 0);
      const ledgerRows = await database.db
        .selectFrom('usage_ledger')
        .select((eb) => [eb.fn.countAll<number>().as('rows'), eb.fn.sum<number>('output_tokens').as('output')])
        .where('organization_id', '=', 'org-insert')
        .executeTakeFirstOrThrow();
      assert.equal(Number(ledgerRows.rows), total);
      assert.equal(Number(ledgerRows.output), (total * (total - 1)) / 2);
      const ids = await database.db.selectFrom('usage_ledger').select('request_id').where('organization_id', '=', 'org-insert').execute();
      assert.equal(new Set(ids.map((row) => row.request_id)).size, total, 'every record once');
      const rollups = await database.db
        .selectFrom('usage_daily')
        .select((eb) => [
          eb.fn.sum<number>('requests').as('requests'),
          eb.fn.sum<number>('output_tokens').as('output'),
          eb.fn.countAll<number>().as('groups'),
        ])
        .where('organization_id', '=', 'org-insert')
        .executeTakeFirstOrThrow();
      assert.equal(Number(rollups.requests), total);
      assert.equal(Number(rollups.output), (total * (total - 1)) / 2);
      assert.equal(Number(rollups.groups), 6, 'one UTC day, two models, three keys');
    });
  });
}
