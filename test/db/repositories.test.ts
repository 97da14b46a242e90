// The repository suite, run against every storage backend (SQLite always; Postgres with TEST_DATABASE_URL).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { createMigrations } from '../../src/db/migrations/index.ts';
import { ApiKeysRepository } from '../../src/db/repositories/api-keys-repository.ts';
import { UsageLedgerRepository } from '../../src/db/repositories/usage-ledger-repository.ts';
import { createTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';

for (const backend of storageBackends()) {
  describe(`repositories on ${backend}`, () => {
    let testDatabase: TestDatabase;
    let database: Database;
    let keys: ApiKeysRepository;

    before(async () => {
      testDatabase = await createTestDatabase(backend);
      database = openDatabase(testDatabase.url);
      assert.deepEqual(await database.migrate(), Object.keys(createMigrations(backend)).sort());
      keys = new ApiKeysRepository(database.db);
    });
    after(async () => {
      await database.close();
      await testDatabase.drop();
    });

    test('migrations are idempotent and the database answers pings', async () => {
      assert.deepEqual(await database.migrate(), []);
      assert.equal(await database.ping(), true);
    });

    test('keys: create, find by hash and id, list per organization, count', async () => {
      const created = await keys.create({
        id: 'key_a',
        organizationId: 'org-a',
        keyHash: 'hash-a',
        redacted: 'sk-sy-abc…wxyz',
        name: 'first',
        tier: 'Developer',
        permissions: ['models', 'embeddings'],
        createdAt: 1_700_000_000_000,
        expiresAt: 1_800_000_000_000,
      });
      await keys.create({
        id: 'key_b',
        organizationId: 'org-b',
        keyHash: 'hash-b',
        redacted: 'sk-sy-def…wxyz',
        name: null,
        tier: 'Free',
        permissions: ['models'],
        createdAt: 1_700_000_000_001,
        expiresAt: null,
      });
      assert.equal(created.revokedAt, null);
      const found = await keys.findByHash('hash-a');
      assert.deepEqual(found, {
        id: 'key_a',
        organizationId: 'org-a',
        redacted: 'sk-sy-abc…wxyz',
        name: 'first',
        tier: 'Developer',
        permissions: ['models', 'embeddings'],
        createdAt: 1_700_000_000_000,
        expiresAt: 1_800_000_000_000,
        revokedAt: null,
        // Read with the key for the authenticator: the organization its first key created, on that key's tier.
        organization: { plan: 'Developer', planOverrides: null, status: 'active' },
      });
      assert.equal((await keys.findById('key_b'))?.tier, 'Free');
      assert.equal(await keys.findByHash('nope'), undefined);
      assert.deepEqual(
        (await keys.list('org-b')).map((key) => key.id),
        ['key_b'],
      );
      assert.deepEqual(
        (await keys.list()).map((key) => key.id),
        ['key_a', 'key_b'],
      );
      assert.equal(await keys.count(), 2);
    });

    test('a duplicate key hash is refused and leaves nothing half-written', async () => {
      const versionBefore = await keys.version();
      await assert.rejects(
        keys.create({
          id: 'key_dup',
          organizationId: 'org-new',
          keyHash: 'hash-a',
          redacted: 'x',
          name: null,
          tier: 'Free',
          permissions: [],
          createdAt: 1,
          expiresAt: null,
        }),
      );
      assert.equal(await keys.findById('key_dup'), undefined);
      assert.equal(await keys.version(), versionBefore);
      assert.deepEqual(await keys.list('org-new'), []);
    });

    test('revocation marks the key once and bumps the version', async () => {
      const versionBefore = await keys.version();
      assert.equal(await keys.revoke('key_b', 1_700_000_100_000), true);
      assert.equal(await keys.revoke('key_b', 1_700_000_200_000), false);
      assert.equal(await keys.revoke('key_missing', 1), false);
      assert.equal((await keys.findById('key_b'))?.revokedAt, 1_700_000_100_000);
      assert.equal(await keys.version(), versionBefore + 1);
    });

    test('ledger: batched insert and per-model summary with cost', async () => {
      const ledger = new UsageLedgerRepository(database.db);
      const row = (model: string, createdAt: number, cost: number) => ({
        requestId: `req_${model}_${createdAt}`,
        organizationId: 'org-a',
        keyId: 'key_a',
        model,
        endpoint: '/v1/chat/completions',
        inputTokens: 10,
        outputTokens: 5,
        cachedTokens: 2,
        reasoningTokens: 1,
        costMicroUsd: Math.round(cost * 1_000_000),
        costUsd: cost,
        batch: false,
        statusCode: 200,
        latencyMs: 12.5,
        createdAtMs: createdAt,
      });
      const rows = Array.from({ length: 1200 }, (_, index) => row(index % 2 === 0 ? 'alpha' : 'beta', 1_000 + index, 0.001));
      await ledger.insertMany(rows);
      await ledger.insertMany([row('alpha', 10, 5)]);
      const summary = await ledger.summarize('org-a', 1_000);
      assert.equal(summary.length, 2);
      assert.equal(summary[0]!.model, 'alpha');
      assert.equal(summary[0]!.requests, 600);
      assert.equal(summary[0]!.inputTokens, 6000);
      assert.equal(summary[0]!.outputTokens, 3000);
      assert.equal(summary[0]!.cachedTokens, 1200);
      assert.equal(summary[0]!.reasoningTokens, 600);
      assert.ok(Math.abs(summary[0]!.costUsd - 0.6) < 1e-9);
      assert.deepEqual(await ledger.summarize('org-other', 0), []);
    });
  });
}
