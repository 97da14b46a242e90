// The batches repository on every storage backend (SQLite always; Postgres with TEST_DATABASE_URL):
// leases, conditional transitions, per-line outcomes recorded once, results paged back.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type Database } from '../../src/db/database.ts';
import type { BatchOutcome, BatchRecord } from '../../src/batches/batch-records.ts';
import { BatchesRepository } from '../../src/db/repositories/batches-repository.ts';
import { FilesRepository } from '../../src/db/repositories/files-repository.ts';
import type { FileRecord } from '../../src/services/files/file-record.ts';
import { createTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';

function batch(id: string, overrides: Partial<BatchRecord> = {}): BatchRecord {
  return {
    id,
    organizationId: 'org-a',
    keyId: 'key_a',
    endpoint: '/v1/chat/completions',
    inputFileId: 'file-in',
    completionWindow: '24h',
    status: 'validating',
    metadata: null,
    errors: null,
    outputFileId: null,
    errorFileId: null,
    total: 0,
    completed: 0,
    failed: 0,
    createdAt: 1_000,
    expiresAt: 1_000 + 86_400_000,
    inProgressAt: null,
    finalizingAt: null,
    completedAt: null,
    failedAt: null,
    expiredAt: null,
    cancellingAt: null,
    cancelledAt: null,
    resultsWritten: false,
    leaseOwner: null,
    leaseExpiresAt: null,
    stepAttempts: 0,
    ...overrides,
  };
}

function outcome(state: 'completed' | 'failed', resultId: string): BatchOutcome {
  return {
    state,
    resultId,
    statusCode: state === 'completed' ? 200 : 400,
    requestId: `req_${resultId}`,
    responseBody: '{"ok":true}',
    errorCode: state === 'failed' ? 'invalid_request' : null,
    errorMessage: state === 'failed' ? 'bad' : null,
    finishedAt: 5_000,
  };
}

for (const backend of storageBackends()) {
  describe(`batches repository on ${backend}`, () => {
    let testDatabase: TestDatabase;
    let database: Database;
    let batches: BatchesRepository;

    before(async () => {
      testDatabase = await createTestDatabase(backend);
      database = openDatabase(testDatabase.url);
      await database.migrate();
      batches = new BatchesRepository(database.db);
    });
    after(async () => {
      await database.close();
      await testDatabase.drop();
    });

    test('insert and find round-trip every field, JSON columns included', async () => {
      const record = batch('batch-round', {
        metadata: { project: 'x' },
        errors: [{ code: 'invalid_jsonl', message: 'm', line: 3, param: 'url' }],
        resultsWritten: true,
      });
      await batches.insert(record);
      assert.deepEqual(await batches.findById('batch-round'), record);
      assert.equal(await batches.findById('batch-none'), undefined);
    });

    test('list: newest first per organization, cursor and status filter', async () => {
      for (let index = 0; index < 5; index++)
        await batches.insert(
          batch(`batch-list-${index}`, {
            organizationId: 'org-list',
            createdAt: 10_000 + index,
            status: index % 2 === 0 ? 'completed' : 'failed',
          }),
        );
      const first = await batches.list({ organizationId: 'org-list', limit: 2 });
      assert.deepEqual(
        first.map((row) => row.id),
        ['batch-list-4', 'batch-list-3'],
      );
      const second = await batches.list({ organizationId: 'org-list', limit: 10, after: { createdAt: 10_003, id: 'batch-list-3' } });
      assert.deepEqual(
        second.map((row) => row.id),
        ['batch-list-2', 'batch-list-1', 'batch-list-0'],
      );
      const failed = await batches.list({ organizationId: 'org-list', limit: 10, status: 'failed' });
      assert.deepEqual(
        failed.map((row) => row.id),
        ['batch-list-3', 'batch-list-1'],
      );
    });

    test('activeRank counts active batches up to this one, and delete removes a batch', async () => {
      await batches.insert(batch('batch-rank-1', { organizationId: 'org-rank', createdAt: 1, status: 'in_progress' }));
      await batches.insert(batch('batch-rank-2', { organizationId: 'org-rank', createdAt: 2, status: 'completed' }));
      await batches.insert(batch('batch-rank-3', { organizationId: 'org-rank', createdAt: 3, status: 'finalizing' }));
      await batches.insert(batch('batch-rank-4', { organizationId: 'org-rank', createdAt: 3, status: 'validating' }));
      assert.equal(await batches.activeRank('org-rank', { createdAt: 3, id: 'batch-rank-4' }), 3);
      assert.equal(await batches.activeRank('org-rank', { createdAt: 3, id: 'batch-rank-3' }), 2);
      await batches.delete('batch-rank-1');
      assert.equal(await batches.activeRank('org-rank', { createdAt: 3, id: 'batch-rank-4' }), 2);
      assert.equal(await batches.findById('batch-rank-1'), undefined);
    });

    test('cancel only from validating or in_progress', async () => {
      await batches.insert(batch('batch-cancel-v'));
      await batches.insert(batch('batch-cancel-p', { status: 'in_progress' }));
      await batches.insert(batch('batch-cancel-f', { status: 'finalizing' }));
      await batches.insert(batch('batch-cancel-c', { status: 'completed' }));
      assert.equal(await batches.cancel('batch-cancel-v', 7_000), true);
      assert.equal(await batches.cancel('batch-cancel-p', 7_000), true);
      assert.equal(await batches.cancel('batch-cancel-f', 7_000), false);
      assert.equal(await batches.cancel('batch-cancel-c', 7_000), false);
      assert.equal(await batches.cancel('batch-cancel-v', 8_000), false);
      const canceled = await batches.findById('batch-cancel-v');
      assert.equal(canceled?.status, 'canceled');
      assert.equal(canceled?.cancelledAt, 7_000);
      assert.equal(canceled?.cancellingAt, 7_000);
    });

    describe('leases', () => {
      let second: TestDatabase;
      let database2: Database;
      let repository: BatchesRepository;
      before(async () => {
        // A separate database so the batches above do not compete for claims.
        second = await createTestDatabase(backend);
        database2 = openDatabase(second.url);
        await database2.migrate();
        repository = new BatchesRepository(database2.db);
      });
      after(async () => {
        await database2.close();
        await second.drop();
      });

      test('one claimant wins a batch; the lease lapses and another takes over; renew and release', async () => {
        await repository.insert(batch('batch-lease', { createdAt: 1 }));
        await repository.insert(batch('batch-done', { createdAt: 0, status: 'completed', resultsWritten: true }));
        const claims = await Promise.all(
          ['worker-a', 'worker-b', 'worker-c'].map((worker) => repository.leases.claimStep(worker, 10_000, 1_000)),
        );
        const winners = claims.filter((claimed) => claimed !== undefined);
        assert.equal(winners.length, 1);
        assert.equal(winners[0]!.id, 'batch-lease');
        const owner = winners[0]!.leaseOwner!;
        assert.equal(await repository.leases.claimStep('worker-d', 10_500, 1_000), undefined);
        assert.equal(await repository.leases.renewLease('batch-lease', owner, 10_900, 1_000), true);
        assert.equal(await repository.leases.claimStep('worker-d', 11_500, 1_000), undefined);
        const taken = await repository.leases.claimStep('worker-d', 12_000, 1_000);
        assert.equal(taken?.leaseOwner, 'worker-d');
        assert.equal(await repository.leases.renewLease('batch-lease', owner, 12_001, 1_000), false);
        await repository.leases.releaseLease('batch-lease', owner);
        assert.equal((await repository.findById('batch-lease'))?.leaseOwner, 'worker-d');
        await repository.leases.releaseLease('batch-lease', 'worker-d');
        assert.equal((await repository.findById('batch-lease'))?.leaseOwner, null);
      });

      test('canceled batches with unwritten results are work; finished ones are not', async () => {
        await repository.leases.transition('batch-lease', 'nobody', ['validating'], { status: 'failed' });
        assert.equal((await repository.findById('batch-lease'))?.status, 'validating', 'a transition without the lease changes nothing');
        const claimed = await repository.leases.claimStep('worker-e', 20_000, 1_000);
        assert.equal(claimed?.id, 'batch-lease');
        assert.equal(await repository.leases.transition('batch-lease', 'worker-e', ['in_progress'], { status: 'failed' }), false);
        assert.equal(await repository.cancel('batch-lease', 20_001), true);
        await repository.leases.releaseLease('batch-lease', 'worker-e');
        const again = await repository.leases.claimStep('worker-f', 20_002, 1_000);
        assert.equal(again?.status, 'canceled');
        assert.equal(await repository.leases.transition('batch-lease', 'worker-f', ['canceled'], { results_written: 1 }), true);
        await repository.leases.releaseLease('batch-lease', 'worker-f');
        assert.equal(await repository.leases.claimStep('worker-g', 20_003, 1_000), undefined);
      });

      test('failing the pending lines frees their leases, for an expired batch as for a failed one', async () => {
        // Only a pending line holds a lease. Expiry used to fail the lines but leave their lease columns:
        // a restarted instance then "freed" leases on finished lines (releaseAllHeldBy counted them).
        const leaseColumns = async (batchId: string) =>
          (
            await database2.db
              .selectFrom('batch_requests')
              .select(['line', 'state', 'lease_owner', 'lease_expires_at'])
              .where('batch_id', '=', batchId)
              .orderBy('line')
              .execute()
          ).map((row) => [
            Number(row.line),
            row.state,
            row.lease_owner,
            row.lease_expires_at === null ? null : Number(row.lease_expires_at),
          ]);
        for (const [batchId, worker] of [
          ['batch-expiring', 'worker-x'],
          ['batch-failing', 'worker-y'],
        ] as const) {
          await repository.insert(batch(batchId, { createdAt: 0, status: 'in_progress', total: 2 }));
          await repository.lines.insertRequests(
            batchId,
            [1, 2].map((line) => ({ line, customId: `c${line}`, body: '{}' })),
          );
          const claimed = await repository.leases.claimLines(worker, 30_000, 1_000, 10);
          assert.deepEqual([claimed?.batch.id, claimed?.lines.length], [batchId, 2]);
          assert.deepEqual(await leaseColumns(batchId), [
            [1, 'pending', worker, 31_000],
            [2, 'pending', worker, 31_000],
          ]);
          if (batchId === 'batch-expiring') {
            // The window ran out after the line leases lapsed (the expiry step only runs once none is held).
            assert.equal(await repository.lines.failPending(batchId, 'batch_expired', 'too late', 40_000), 2);
          } else {
            const error = { code: 'invalid_api_key', message: 'revoked', line: null, param: null };
            assert.equal(await repository.failRunning(batchId, error, 'batch_failed', 40_000), true);
          }
          assert.deepEqual(await leaseColumns(batchId), [
            [1, 'failed', null, null],
            [2, 'failed', null, null],
          ]);
          assert.equal((await repository.findById(batchId))?.failed, 2);
          assert.equal(await repository.leases.releaseAllHeldBy(worker), 0, 'a finished line is no lease to free');
        }
      });
    });

    test(
      'renewLines never waits for a row lock: a line being recorded (locked) is skipped, the others renewed at once',
      { skip: backend !== 'postgres' && 'row locks are Postgres only' },
      async () => {
        await batches.insert(batch('batch-renew', { createdAt: 0, status: 'in_progress', total: 3 }));
        await batches.lines.insertRequests(
          'batch-renew',
          [1, 2, 3].map((line) => ({ line, customId: `r${line}`, body: '{}' })),
        );
        const claimed = await batches.leases.claimLines('worker-r', 50_000, 1_000, 10);
        assert.deepEqual([claimed?.batch.id, claimed?.lines.length], ['batch-renew', 3]);
        // Another transaction (a line's outcome being recorded) holds line 2's row lock meanwhile.
        let release = (): void => undefined;
        const held = new Promise<void>((resolve) => (release = resolve));
        let locked = (): void => undefined;
        const lockTaken = new Promise<void>((resolve) => (locked = resolve));
        const holder = database.db.transaction().execute(async (transaction) => {
          await transaction
            .selectFrom('batch_requests')
            .select('line')
            .where('batch_id', '=', 'batch-renew')
            .where('line', '=', 2)
            .forUpdate()
            .execute();
          locked();
          await held;
        });
        await lockTaken;
        const renewed = await batches.leases.renewLines('worker-r', 50_500, 1_000).finally(release);
        await holder;
        assert.equal(renewed, 2);
        const rows = await database.db
          .selectFrom('batch_requests')
          .select(['line', 'lease_expires_at'])
          .where('batch_id', '=', 'batch-renew')
          .orderBy('line')
          .execute();
        assert.deepEqual(
          rows.map((row) => [Number(row.line), Number(row.lease_expires_at)]),
          [
            [1, 51_500],
            [2, 51_000],
            [3, 51_500],
          ],
        );
      },
    );

    test('requests: due lines in order, deferral, outcomes recorded and counted exactly once', async () => {
      await batches.insert(batch('batch-lines', { status: 'in_progress', total: 4, leaseOwner: 'worker-x', leaseExpiresAt: 99_999 }));
      await batches.lines.insertRequests(
        'batch-lines',
        [1, 2, 3, 5].map((line) => ({ line, customId: `c${line}`, body: `{"n":${line}}` })),
      );
      assert.deepEqual(
        (await batches.lines.duePendingRequests('batch-lines', 0, 10)).map((row) => row.line),
        [1, 2, 3, 5],
      );
      assert.deepEqual(
        (await batches.lines.duePendingRequests('batch-lines', 0, 2, [1])).map((row) => row.line),
        [2, 3],
      );
      await batches.lines.deferRequest('batch-lines', 2, 9_000);
      assert.deepEqual(
        (await batches.lines.duePendingRequests('batch-lines', 8_999, 10)).map((row) => row.line),
        [1, 3, 5],
      );
      const deferred = (await batches.lines.duePendingRequests('batch-lines', 9_000, 10)).find((row) => row.line === 2);
      assert.equal(deferred?.attempts, 1);
      assert.equal(await batches.lines.nextPendingAt('batch-lines'), 0);

      assert.equal(await batches.lines.recordOutcome('batch-lines', 1, outcome('completed', 'batch_req_1')), true);
      assert.equal(
        await batches.lines.recordOutcome('batch-lines', 1, outcome('failed', 'batch_req_1b')),
        false,
        'a finished line is never recorded twice',
      );
      assert.equal(await batches.lines.recordOutcome('batch-lines', 3, outcome('failed', 'batch_req_3')), true);
      assert.equal(await batches.lines.recordOutcome('batch-lines', 5, outcome('completed', 'batch_req_5')), true);
      assert.equal(await batches.lines.nextPendingAt('batch-lines'), 9_000);
      let counts = await batches.findById('batch-lines');
      assert.deepEqual([counts?.completed, counts?.failed], [2, 1]);

      assert.equal(await batches.lines.failPending('batch-lines', 'batch_expired', 'too late', 10_000), 1);
      assert.equal(await batches.lines.failPending('batch-lines', 'batch_expired', 'too late', 10_000), 0);
      assert.equal(await batches.lines.nextPendingAt('batch-lines'), undefined);
      counts = await batches.findById('batch-lines');
      assert.deepEqual([counts?.completed, counts?.failed], [2, 2]);

      const completed = await batches.lines.finishedRequests('batch-lines', 'completed', 0, 10);
      assert.deepEqual(
        completed.map((row) => [row.line, row.resultId, row.statusCode, row.requestId, row.responseBody]),
        [
          [1, 'batch_req_1', 200, 'req_batch_req_1', '{"ok":true}'],
          [5, 'batch_req_5', 200, 'req_batch_req_5', '{"ok":true}'],
        ],
      );
      const failed = await batches.lines.finishedRequests('batch-lines', 'failed', 0, 1);
      assert.deepEqual(
        failed.map((row) => [row.line, row.errorCode]),
        [[2, 'batch_expired']],
      );
      const failedPage2 = await batches.lines.finishedRequests('batch-lines', 'failed', 2, 10);
      assert.deepEqual(
        failedPage2.map((row) => [row.line, row.errorCode, row.errorMessage]),
        [[3, 'invalid_request', 'bad']],
      );
    });

    test('inserting many requests goes in chunks; deleteRequests clears them', async () => {
      await batches.insert(batch('batch-many'));
      await batches.lines.insertRequests(
        'batch-many',
        Array.from({ length: 1_234 }, (_, index) => ({ line: index + 1, customId: `id-${index}`, body: '{}' })),
      );
      assert.equal((await batches.lines.duePendingRequests('batch-many', 0, 5_000)).length, 1_234);
      await batches.lines.deleteRequests('batch-many');
      assert.equal((await batches.lines.duePendingRequests('batch-many', 0, 5_000)).length, 0);
    });

    test('finish records the result files and the status together, or neither', async () => {
      await batches.insert(batch('batch-finish', { status: 'finalizing', leaseOwner: 'worker-f', leaseExpiresAt: 99_999 }));
      const resultFile = (id: string): FileRecord => ({
        id,
        organizationId: 'org-a',
        purpose: 'batch_output',
        filename: `${id}.jsonl`,
        bytes: 3,
        mediaType: 'application/jsonl',
        createdAt: 1,
        expiresAt: null,
        deletedAt: null,
        purgedAt: null,
      });
      const files = new FilesRepository(database.db);
      assert.equal(
        await batches.leases.finish('batch-finish', 'worker-other', ['finalizing'], [resultFile('file-lost')], { status: 'completed' }),
        false,
      );
      assert.equal(await files.findById('file-lost'), undefined, 'the file row is rolled back with the refused update');
      assert.equal(
        await batches.leases.finish('batch-finish', 'worker-f', ['finalizing'], [resultFile('file-out')], {
          status: 'completed',
          completed_at: 2,
          output_file_id: 'file-out',
          results_written: 1,
        }),
        true,
      );
      assert.equal((await files.findById('file-out'))?.purpose, 'batch_output');
      const finished = await batches.findById('batch-finish');
      assert.deepEqual([finished?.status, finished?.outputFileId, finished?.resultsWritten], ['completed', 'file-out', true]);
    });
  });
}
