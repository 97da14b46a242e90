// Dashboard storage on every backend: daily rollups written in the ledger's transaction (and built
// for ledger rows that predate them; batches of any size written whole, in statements of a fixed set of
// sizes), sessions, sign-in attempts (reserved atomically: concurrent reservations from two
// connections pass the limit exactly), the second factor's last step and recovery codes, the audit
// log (failed sign-ins aggregated, one row per window even when two connections race on its first
// failure) and the retention deletes in bounded batches.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Migrator, sql } from 'kysely';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { createMigrations } from '../../src/db/migrations/index.ts';
import { OwnersRepository } from '../../src/db/repositories/owners-repository.ts';
import { chunkRows, UsageLedgerRepository } from '../../src/db/repositories/usage-ledger-repository.ts';
import { UsageRollupsRepository } from '../../src/db/repositories/usage-rollups-repository.ts';
import type { LedgerRecord } from '../../src/services/metering/usage-ledger.ts';
import { createTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';

const DAY = 86_400_000;
const DAY_ONE = Date.UTC(2026, 10, 1);

let recordSequence = 0;

/** A ledger record with a request id of its own (the ledger keeps one row per request id). */
function record(overrides: Partial<LedgerRecord>): LedgerRecord {
  return {
    requestId: `req_${++recordSequence}`,
    organizationId: 'org-r',
    keyId: 'key_a',
    model: 'model-a',
    endpoint: '/v1/chat/completions',
    inputTokens: 10,
    outputTokens: 5,
    cachedTokens: 1,
    reasoningTokens: 2,
    costMicroUsd: 250_000,
    costUsd: 0.25,
    batch: false,
    statusCode: 200,
    latencyMs: 3,
    createdAtMs: DAY_ONE + 1000,
    ...overrides,
  };
}

test('ledger batches of any size are written in statements of at most ten sizes (each one SQL text SQLite keeps prepared)', () => {
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

for (const backend of storageBackends()) {
  describe(`dashboard repositories on ${backend}`, () => {
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

    test('batches that need several insert statements land whole, in ledger rows and rollups', async () => {
      const ledger = new UsageLedgerRepository(database.db);
      const sizes = [437, 501, 1, 255, 1_000];
      let next = 0;
      for (const size of sizes) {
        await ledger.insertMany(
          Array.from({ length: size }, () => {
            const index = next++;
            return record({
              requestId: `req_${index}`,
              organizationId: 'org-sizes',
              keyId: `key_${index % 3}`,
              model: index % 2 === 0 ? 'model-a' : 'model-b',
              outputTokens: index,
              createdAtMs: DAY_ONE + index,
            });
          }),
        );
      }
      const total = next;
      const rows = await database.db
        .selectFrom('usage_ledger')
        .select((eb) => [eb.fn.count<number>('request_id').distinct().as('ids'), eb.fn.sum<number>('output_tokens').as('output')])
        .where('organization_id', '=', 'org-sizes')
        .executeTakeFirstOrThrow();
      assert.equal(Number(rows.ids), total, 'every record once');
      assert.equal(Number(rows.output), (total * (total - 1)) / 2);
      const rollups = await database.db
        .selectFrom('usage_daily')
        .select((eb) => [
          eb.fn.sum<number>('requests').as('requests'),
          eb.fn.sum<number>('output_tokens').as('output'),
          eb.fn.countAll<number>().as('groups'),
        ])
        .where('organization_id', '=', 'org-sizes')
        .executeTakeFirstOrThrow();
      assert.equal(Number(rollups.requests), total);
      assert.equal(Number(rollups.output), (total * (total - 1)) / 2);
      assert.equal(Number(rollups.groups), 6, 'one UTC day, two models, three keys');
    });

    test('ledger inserts keep per-day, per-model, per-key rollups in step, summed across batches', async () => {
      const ledger = new UsageLedgerRepository(database.db);
      const rollups = new UsageRollupsRepository(database.db);
      await ledger.insertMany([
        record({}),
        record({ createdAtMs: DAY_ONE + DAY - 1 }),
        record({ model: 'model-b', keyId: 'key_b', costUsd: 1 }),
        record({ createdAtMs: DAY_ONE + DAY + 5 }),
        record({ organizationId: 'org-other' }),
      ]);
      await ledger.insertMany([record({ inputTokens: 100 })]);
      const rows = await rollups.daily('org-r', DAY_ONE, DAY_ONE + DAY);
      assert.deepEqual(
        rows.map((row) => [
          new Date(row.dayStart).toISOString().slice(0, 10),
          row.model,
          row.requests,
          row.inputTokens,
          row.outputTokens,
          row.cachedTokens,
          row.reasoningTokens,
          row.costUsd,
        ]),
        [
          ['2026-11-01', 'model-a', 3, 120, 15, 3, 6, 0.75],
          ['2026-11-01', 'model-b', 1, 10, 5, 1, 2, 1],
          ['2026-11-02', 'model-a', 1, 10, 5, 1, 2, 0.25],
        ],
      );
      assert.deepEqual((await rollups.daily('org-r', DAY_ONE + DAY, DAY_ONE + DAY)).length, 1);
      const lastUsed = await rollups.lastUsedDays('org-r');
      assert.equal(lastUsed.get('key_a'), DAY_ONE + DAY);
      assert.equal(lastUsed.get('key_b'), DAY_ONE);
      // The rollups equal the raw ledger sums.
      const raw = await ledger.summarize('org-r', 0);
      const totals = rows
        .concat(await rollups.daily('org-r', DAY_ONE + 2 * DAY, DAY_ONE + 9 * DAY))
        .reduce((sum, row) => sum + row.requests, 0);
      assert.equal(
        totals,
        raw.reduce((sum, row) => sum + row.requests, 0),
      );
    });

    test('migration 0020 builds rollups for ledger rows written before it', async () => {
      const older = await createTestDatabase(backend);
      const kysely = openDatabase(older.url);
      try {
        const migrator = new Migrator({ db: kysely.db, provider: { getMigrations: async () => createMigrations(backend) } });
        assert.equal((await migrator.migrateTo('0003_files_and_batches')).error, undefined);
        for (const [at, tokens] of [
          [DAY_ONE + 5, 10],
          [DAY_ONE + 6, 20],
          [DAY_ONE + DAY, 30],
        ] as const) {
          await sql`insert into usage_ledger (request_id, organization_id, key_id, model, endpoint, input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, batch, status_code, latency_ms, created_at)
            values ('r', 'org-old', 'key_o', 'm', '/v1/embeddings', ${tokens}, 0, 0, 0, 0.5, 0, 200, 1, ${at})`.execute(kysely.db);
        }
        await kysely.migrate();
        const rows = await new UsageRollupsRepository(kysely.db).daily('org-old', DAY_ONE, DAY_ONE + DAY);
        assert.deepEqual(
          rows.map((row) => [row.dayStart, row.requests, row.inputTokens, row.costUsd]),
          [
            [DAY_ONE, 2, 30, 1],
            [DAY_ONE + DAY, 1, 30, 0.5],
          ],
        );
      } finally {
        await kysely.close();
        await older.drop();
      }
    });

    test('sessions, attempts and audit entries', async () => {
      const owners = new OwnersRepository(database.db, database.dialect);
      await owners.createOwner(
        { id: 'own_1', organizationId: 'org-r', email: 'r@example.com', role: 'owner', passwordHash: null, createdAt: 1 },
        ['Free'],
      );
      assert.deepEqual(await owners.allowedTiers('org-r'), ['Free']);
      assert.equal(await owners.allowedTiers('org-none'), undefined);
      await owners.createSession({
        id: 'ses_1',
        tokenHash: 'h1',
        ownerId: 'own_1',
        organizationId: 'org-r',
        userAgent: null,
        address: '::1',
        createdAt: 10,
        lastSeenAt: 10,
        idleExpiresAt: 100,
        absoluteExpiresAt: 1000,
        revokedAt: null,
      });
      await owners.createSession({
        id: 'ses_2',
        tokenHash: 'h2',
        ownerId: 'own_1',
        organizationId: 'org-r',
        userAgent: null,
        address: '::1',
        createdAt: 20,
        lastSeenAt: 20,
        idleExpiresAt: 100,
        absoluteExpiresAt: 1000,
        revokedAt: null,
      });
      assert.deepEqual(
        (await owners.listSessions('own_1', 50)).map((session) => session.id),
        ['ses_2', 'ses_1'],
      );
      assert.equal(await owners.signedInFrom('own_1', '::1', 15), true, 'ses_2 was opened from ::1 at 20');
      assert.equal(await owners.signedInFrom('own_1', '::1', 25), false);
      assert.equal(await owners.signedInFrom('own_1', '10.0.0.1', 0), false);
      assert.equal(await owners.revokeSessions('own_1', 60, { only: 'ses_1' }), 1);
      assert.equal((await owners.findSessionByTokenHash('h1'))?.revokedAt, 60);
      assert.equal(await owners.revokeSessions('own_1', 61), 1);
      assert.deepEqual(await owners.listSessions('own_1', 62), []);

      const reserved: number[][] = [];
      for (const at of [1, 2, 3]) reserved.push((await owners.attempts.reserve([{ subject: 'account:r', limit: 3 }], 0, at))!);
      assert.equal(await owners.attempts.failures('account:r', 0), 3, 'a reservation counts as a failure until settled');
      assert.equal(await owners.attempts.failures('account:r', 2), 2);
      assert.equal(await owners.attempts.reserve([{ subject: 'account:r', limit: 3 }], 0, 4), undefined, 'full');
      assert.equal((await owners.attempts.reserve([{ subject: 'account:r', limit: 3 }], 2, 4))?.length, 1, 'the oldest left the window');
      await owners.attempts.markSucceeded(reserved[0]!);
      await owners.attempts.release(reserved[1]!);
      assert.equal(await owners.attempts.failures('account:r', 0), 2, 'a success and a release stop counting; nothing else is reset');
      assert.equal(await owners.attempts.oldestFailure(['account:r'], 0), 3);
      // All or nothing across subjects: a full address refuses the account's reservation too.
      await owners.attempts.reserve([{ subject: 'address:full', limit: 1 }], 0, 5);
      assert.equal(
        await owners.attempts.reserve(
          [
            { subject: 'account:fresh', limit: 5 },
            { subject: 'address:full', limit: 1 },
          ],
          0,
          6,
        ),
        undefined,
      );
      assert.equal(await owners.attempts.failures('account:fresh', 0), 0);

      await owners.createLink({ tokenHash: 'link', ownerId: 'own_1', createdAt: 1, expiresAt: 100 });
      assert.equal(await owners.consumeLink('link', 200), undefined, 'expired');
      await owners.createLink({ tokenHash: 'link2', ownerId: 'own_1', createdAt: 1, expiresAt: 100 });
      assert.equal(await owners.consumeLink('link2', 50), 'own_1');
      assert.equal(await owners.consumeLink('link2', 51), undefined, 'once only');

      await owners.appendAudit({
        organizationId: 'org-r',
        actor: 'r@example.com',
        action: 'key.created',
        target: 'key_a',
        address: null,
        createdAt: 5,
      });
      await owners.appendAudit({
        organizationId: 'org-r',
        actor: 'r@example.com',
        action: 'key.revoked',
        target: 'key_a',
        address: null,
        createdAt: 6,
      });
      await owners.appendAudit({ organizationId: 'org-x', actor: 'x', action: 'key.created', target: null, address: null, createdAt: 7 });
      assert.deepEqual(
        (await owners.listAudit('org-r', 10)).map((entry) => entry.action),
        ['key.revoked', 'key.created'],
      );
      const failed = { organizationId: 'org-r', actor: 'r@example.com', action: 'sign_in.failed', target: null };
      for (const [at, address] of [
        [1000, 'a'],
        [1500, 'b'],
        [1900, 'c'],
      ] as const)
        await owners.appendAggregatedAudit({ ...failed, address, createdAt: at }, 1000);
      await owners.appendAggregatedAudit({ ...failed, address: 'd', createdAt: 2100 }, 2000);
      assert.deepEqual(
        (await owners.listAudit('org-r', 10))
          .filter((entry) => entry.action === 'sign_in.failed')
          .map((entry) => [entry.occurrences, entry.address]),
        [
          [1, 'd'],
          [3, 'c'],
        ],
        'one row per window, counting its failures, with the latest address',
      );
    });

    test('a TOTP step is accepted once and only when later; a recovery code works once', async () => {
      const owners = new OwnersRepository(database.db, database.dialect);
      await owners.createOwner({
        id: 'own_totp',
        organizationId: 'org-t',
        email: 't@example.com',
        role: 'owner',
        passwordHash: null,
        createdAt: 1,
      });
      assert.equal(await owners.secondFactor.acceptTotpStep('own_totp', 5), false, 'TOTP is off');
      await owners.secondFactor.setPendingTotpSecret('own_totp', 'PENDINGSECRET234');
      assert.equal(await owners.secondFactor.pendingTotpSecret('own_totp'), 'PENDINGSECRET234');
      await owners.secondFactor.enableTotp('own_totp', 'PENDINGSECRET234', 100, ['hash-a', 'hash-b'], 1);
      assert.equal(await owners.secondFactor.pendingTotpSecret('own_totp'), undefined);
      assert.equal((await owners.findOwnerById('own_totp'))?.totpSecret, 'PENDINGSECRET234');
      assert.equal(await owners.secondFactor.acceptTotpStep('own_totp', 100), false, 'the step that enabled it');
      const racing = await Promise.all([
        owners.secondFactor.acceptTotpStep('own_totp', 101),
        owners.secondFactor.acceptTotpStep('own_totp', 101),
      ]);
      assert.deepEqual(racing.sort(), [false, true], 'of two uses of one code, one wins');
      assert.equal(await owners.secondFactor.acceptTotpStep('own_totp', 100), false, 'an older step');
      assert.equal(await owners.secondFactor.unusedRecoveryCodes('own_totp'), 2);
      assert.equal(await owners.secondFactor.consumeRecoveryCode('own_totp', 'hash-a', 2), true);
      assert.equal(await owners.secondFactor.consumeRecoveryCode('own_totp', 'hash-a', 3), false, 'once only');
      assert.equal(await owners.secondFactor.consumeRecoveryCode('own_totp', 'hash-z', 3), false);
      assert.equal(await owners.secondFactor.unusedRecoveryCodes('own_totp'), 1);
      await owners.secondFactor.disableTotp('own_totp');
      assert.equal(await owners.secondFactor.unusedRecoveryCodes('own_totp'), 0);
      assert.equal((await owners.findOwnerById('own_totp'))?.totpLastStep, null);
    });

    test('30 concurrent reservations from two connections pass a limit of 5 exactly (the count cannot be raced)', async () => {
      const other = openDatabase(testDatabase.url);
      try {
        const repositories = [new OwnersRepository(database.db, database.dialect), new OwnersRepository(other.db, other.dialect)];
        const now = 10_000_000;
        const results = await Promise.all(
          Array.from({ length: 30 }, (_, index) =>
            repositories[index % 2]!.attempts.reserve(
              [
                { subject: 'account:race@example.com', limit: 5 },
                { subject: 'address:198.51.100.1', limit: 20 },
              ],
              now - 900_000,
              now,
            ),
          ),
        );
        assert.equal(results.filter((ids) => ids !== undefined).length, 5);
        assert.equal(await repositories[0]!.attempts.failures('account:race@example.com', 0), 5);
        assert.equal(await repositories[0]!.attempts.failures('address:198.51.100.1', 0), 5, 'refused reservations wrote nothing');
        // Per address: 30 different accounts from one address, limit 20.
        const spread = await Promise.all(
          Array.from({ length: 30 }, (_, index) =>
            repositories[index % 2]!.attempts.reserve(
              [
                { subject: `account:spray-${index}@example.com`, limit: 5 },
                { subject: 'address:203.0.113.9', limit: 20 },
              ],
              now - 900_000,
              now,
            ),
          ),
        );
        assert.equal(spread.filter((ids) => ids !== undefined).length, 20);
      } finally {
        await other.close();
      }
    });

    test("40 failures racing from two connections on a window's first occurrence count on one audit row", async () => {
      // Two instances' pools: every failure may be the one that starts the window's row (migration 0130's
      // unique window key makes that an upsert: before it, racing first failures each started a row).
      const other = openDatabase(testDatabase.url);
      try {
        const repositories = [new OwnersRepository(database.db, database.dialect), new OwnersRepository(other.db, other.dialect)];
        const failed = { organizationId: 'org-race', actor: 'race@example.com', action: 'sign_in.failed', target: null };
        for (const windowStart of [5_000_000, 6_000_000]) {
          await Promise.all(
            Array.from({ length: 40 }, (_, index) =>
              repositories[index % 2]!.appendAggregatedAudit(
                { ...failed, address: `198.51.100.${index}`, createdAt: windowStart + index },
                windowStart,
              ),
            ),
          );
        }
        const rows = (await repositories[1]!.listAudit('org-race', 100)).filter((entry) => entry.action === 'sign_in.failed');
        assert.deepEqual(
          rows.map((entry) => entry.occurrences),
          [40, 40],
          'one row per window, counting every failure',
        );
      } finally {
        await other.close();
      }
    });

    test('retention deletes old attempts, audit rows and long-expired sessions in bounded batches', async () => {
      const owners = new OwnersRepository(database.db, database.dialect);
      await owners.createOwner({
        id: 'own_old',
        organizationId: 'org-old',
        email: 'old@example.com',
        role: 'owner',
        passwordHash: null,
        createdAt: 1,
      });
      for (let index = 0; index < 25; index++) {
        await owners.attempts.reserve([{ subject: `address:old-${index}`, limit: 1 }], 0, 50 + index);
        await owners.appendAudit({
          organizationId: 'org-old',
          actor: 'a',
          action: 'key.created',
          target: null,
          address: null,
          createdAt: 50 + index,
        });
      }
      await owners.attempts.reserve([{ subject: 'address:new', limit: 1 }], 0, 5_000);
      await owners.appendAudit({
        organizationId: 'org-old',
        actor: 'a',
        action: 'key.revoked',
        target: null,
        address: null,
        createdAt: 5_000,
      });
      await owners.createSession({
        id: 'ses_old',
        tokenHash: 'h-old',
        ownerId: 'own_old',
        organizationId: 'org-old',
        userAgent: null,
        address: null,
        createdAt: 1,
        lastSeenAt: 1,
        idleExpiresAt: 2,
        absoluteExpiresAt: 3,
        revokedAt: null,
      });
      // Earlier tests of this suite left a few old attempts too: at least the 25 go, 10 at most a batch.
      const batches: number[] = [];
      for (let deleted = -1; deleted !== 0;) batches.push((deleted = await owners.attempts.deleteOlderThan(1_000, 10)));
      assert.ok(batches.every((count) => count <= 10) && batches[0] === 10, batches.join(','));
      assert.ok(batches.reduce((sum, count) => sum + count, 0) >= 25);
      assert.equal(await owners.attempts.failures('address:new', 0), 1, 'recent attempts stay');
      assert.ok((await owners.deleteAuditOlderThan(1_000, 100)) >= 25);
      assert.deepEqual(
        (await owners.listAudit('org-old', 100)).map((entry) => entry.action),
        ['key.revoked'],
      );
      assert.equal(await owners.deleteSessionsExpiredBefore(1_000, 100), 1);
      assert.equal(await owners.findSessionByTokenHash('h-old'), undefined);
    });
  });
}
