// The files repository on every storage backend (SQLite always; Postgres with TEST_DATABASE_URL).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { FilesRepository } from '../../src/db/repositories/files-repository.ts';
import type { FileRecord } from '../../src/services/files/file-record.ts';
import { createTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';

function file(id: string, overrides: Partial<FileRecord> = {}): FileRecord {
  return {
    id,
    organizationId: 'org-a',
    purpose: 'batch',
    filename: `${id}.jsonl`,
    bytes: 10,
    mediaType: 'application/jsonl',
    createdAt: 1_000,
    expiresAt: null,
    deletedAt: null,
    purgedAt: null,
    ...overrides,
  };
}

for (const backend of storageBackends()) {
  describe(`files repository on ${backend}`, () => {
    let testDatabase: TestDatabase;
    let database: Database;
    let files: FilesRepository;

    before(async () => {
      testDatabase = await createTestDatabase(backend);
      database = openDatabase(testDatabase.url);
      assert.ok((await database.migrate()).includes('0003_files_and_batches'));
      files = new FilesRepository(database.db);
      await files.insert(file('file-1', { createdAt: 1_000 }));
      await files.insert(file('file-2', { createdAt: 2_000, purpose: 'user_data', mediaType: 'text/plain', bytes: 5_000_000_000 }));
      await files.insert(file('file-3a', { createdAt: 3_000 }));
      await files.insert(file('file-3b', { createdAt: 3_000 }));
      await files.insert(file('file-expired', { createdAt: 3_500, expiresAt: 4_000 }));
      await files.insert(file('file-later', { createdAt: 3_600, expiresAt: 9_000 }));
      await files.insert(file('file-other-org', { createdAt: 3_700, organizationId: 'org-b' }));
    });
    after(async () => {
      await database.close();
      await testDatabase.drop();
    });

    test('insert and find round-trip every field, sizes beyond 32 bits included', async () => {
      assert.deepEqual(
        await files.findById('file-2'),
        file('file-2', { createdAt: 2_000, purpose: 'user_data', mediaType: 'text/plain', bytes: 5_000_000_000 }),
      );
      assert.equal(await files.findById('file-none'), undefined);
    });

    test('list: newest first, ties by id, live files of the organization only', async () => {
      const page = await files.list({ organizationId: 'org-a', order: 'desc', limit: 100, now: 5_000 });
      assert.deepEqual(
        page.map((row) => row.id),
        ['file-later', 'file-3b', 'file-3a', 'file-2', 'file-1'],
      );
      const ascending = await files.list({ organizationId: 'org-a', order: 'asc', limit: 100, now: 5_000 });
      assert.deepEqual(
        ascending.map((row) => row.id),
        ['file-1', 'file-2', 'file-3a', 'file-3b', 'file-later'],
      );
      const beforeExpiry = await files.list({ organizationId: 'org-a', order: 'desc', limit: 100, now: 3_999 });
      assert.ok(beforeExpiry.some((row) => row.id === 'file-expired'));
    });

    test('list: cursor pages walk every file once, in both orders, with a purpose filter', async () => {
      const walk = async (order: 'asc' | 'desc') => {
        const seen: string[] = [];
        let after: { createdAt: number; id: string } | undefined;
        for (;;) {
          const page = await files.list({
            organizationId: 'org-a',
            order,
            limit: 2,
            now: 5_000,
            ...(after === undefined ? {} : { after }),
          });
          seen.push(...page.map((row) => row.id));
          if (page.length < 2) return seen;
          const last = page[page.length - 1]!;
          after = { createdAt: last.createdAt, id: last.id };
        }
      };
      assert.deepEqual(await walk('desc'), ['file-later', 'file-3b', 'file-3a', 'file-2', 'file-1']);
      assert.deepEqual(await walk('asc'), ['file-1', 'file-2', 'file-3a', 'file-3b', 'file-later']);
      const userData = await files.list({ organizationId: 'org-a', order: 'desc', limit: 10, now: 5_000, purpose: 'user_data' });
      assert.deepEqual(
        userData.map((row) => row.id),
        ['file-2'],
      );
    });

    test('markDeleted once; deleted files leave the list; purge marks stay', async () => {
      assert.equal(await files.markDeleted('file-1', 6_000), true);
      assert.equal(await files.markDeleted('file-1', 7_000), false);
      assert.equal(await files.markDeleted('file-none', 7_000), false);
      await files.markPurged('file-1', 6_001);
      await files.markPurged('file-1', 9_999);
      const row = await files.findById('file-1');
      assert.equal(row?.deletedAt, 6_000);
      assert.equal(row?.purgedAt, 6_001);
      const page = await files.list({ organizationId: 'org-a', order: 'desc', limit: 100, now: 5_000 });
      assert.ok(!page.some((entry) => entry.id === 'file-1'));
    });

    test('expired files still holding bytes are found for purging, oldest expiry first', async () => {
      assert.deepEqual(
        (await files.findExpiredUnpurged(10_000, 10)).map((row) => row.id),
        ['file-expired', 'file-later'],
      );
      assert.deepEqual(
        (await files.findExpiredUnpurged(5_000, 10)).map((row) => row.id),
        ['file-expired'],
      );
      await files.markPurged('file-expired', 5_000);
      assert.deepEqual(
        (await files.findExpiredUnpurged(5_000, 10)).map((row) => row.id),
        [],
      );
    });

    test('ensureSetting: the first value wins for every caller, even racing ones', async () => {
      const values = await Promise.all(['one', 'two', 'three', 'four'].map((candidate) => files.ensureSetting('race', candidate)));
      assert.equal(new Set(values).size, 1);
      assert.equal(await files.ensureSetting('race', 'late'), values[0]);
    });
  });
}
