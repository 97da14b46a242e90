// The storage quota's reservations over a real SQLite file and real Postgres (TEST_DATABASE_URL):
// a failed upload gives its bytes back, the quota is exact to the byte, a dead process's reservation
// lapses after its time and is swept, chunks are reserved before the blob store sees them, and an
// upload refused half-way leaves no blob behind.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { isServiceError } from '../../src/core/service-error.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { FilesRepository } from '../../src/db/repositories/files-repository.ts';
import { StorageQuotaRepository } from '../../src/db/repositories/storage-quota-repository.ts';
import { LocalDiskBlobStore } from '../../src/files/local-disk/local-disk-blob-store.ts';
import { FileService, type UploadPart } from '../../src/services/files/file-service.ts';
import { RESERVATION_TTL_MS, StorageQuota } from '../../src/services/files/storage-quota.ts';
import { createPostgresTestDatabase, createSqliteTestDatabase, type TestDatabase } from '../support/databases.ts';
import { ManualClock } from '../batches/support/manual-clock.ts';

const QUOTA = 10_000;

function filePart(chunks: Buffer[] | AsyncGenerator<Buffer>): UploadPart {
  return {
    kind: 'file',
    name: 'file',
    filename: 'data.jsonl',
    mediaType: 'application/octet-stream',
    content: Array.isArray(chunks) ? Readable.from(chunks) : chunks,
    isTruncated: () => false,
  };
}

async function* parts(...items: UploadPart[]): AsyncGenerator<UploadPart> {
  yield* items;
}

const purpose = (value: string): UploadPart => ({ kind: 'field', name: 'purpose', value });

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`storage quota reservations (${backend})`, () => {
    let testDatabase: TestDatabase | undefined;
    let database: Database;
    let blobDirectory: string;
    let files: FileService;
    let repository: StorageQuotaRepository;
    let storage: StorageQuota;
    const clock = new ManualClock();

    before(async () => {
      testDatabase = backend === 'sqlite' ? await createSqliteTestDatabase() : await createPostgresTestDatabase();
      if (testDatabase === undefined) return;
      database = openDatabase(testDatabase.url);
      await database.migrate();
      blobDirectory = mkdtempSync(join(tmpdir(), 'switchyard-quota-blobs-'));
      repository = new StorageQuotaRepository(database.db);
      storage = new StorageQuota(repository, { quotaBytes: async (organization) => (organization === 'org-free' ? 0 : QUOTA) }, clock);
      files = new FileService({
        repository: new FilesRepository(database.db),
        store: new LocalDiskBlobStore(blobDirectory),
        clock,
        storage,
      });
      await files.start();
    });
    after(async () => {
      if (testDatabase === undefined) return;
      await database.close();
      await testDatabase.drop();
      rmSync(blobDirectory, { recursive: true, force: true });
    });

    const skipWithout = (context: { skip(message: string): void }): boolean => {
      if (testDatabase !== undefined) return false;
      console.warn('SKIPPED: storage quota on Postgres needs TEST_DATABASE_URL');
      context.skip('TEST_DATABASE_URL is not set');
      return true;
    };
    const blobs = () => readdirSync(blobDirectory).filter((name) => !name.startsWith('.'));

    test('exact to the byte; a failed upload (bad purpose) gives its reservation back', async (context) => {
      if (skipWithout(context)) return;
      await assert.rejects(files.upload('org-a', parts(filePart([Buffer.alloc(6_000)]), purpose('nonsense')), 1_000_000), (error) => {
        assert.ok(isServiceError(error));
        assert.equal(error.code, 'invalid_parameter');
        return true;
      });
      assert.deepEqual(await storage.usage('org-a'), { storedBytes: 0, reservedBytes: 0, limitBytes: QUOTA });
      await files.upload('org-a', parts(filePart([Buffer.alloc(6_000)]), purpose('batch')), 1_000_000);
      await files.upload('org-a', parts(filePart([Buffer.alloc(2_000), Buffer.alloc(2_000)]), purpose('batch')), 1_000_000);
      assert.deepEqual(await storage.usage('org-a'), { storedBytes: QUOTA, reservedBytes: 0, limitBytes: QUOTA });
      assert.equal(blobs().length, 2);
    });

    test('refused half-way: the chunk past the quota never reaches the store and nothing is kept', async (context) => {
      if (skipWithout(context)) return;
      await files.upload('org-b', parts(filePart([Buffer.alloc(4_000)]), purpose('batch')), 1_000_000);
      let handedOut = 0;
      async function* chunks(): AsyncGenerator<Buffer> {
        for (let index = 0; index < 10; index++) {
          handedOut++;
          yield Buffer.alloc(1_000);
        }
      }
      const before = blobs().length;
      await assert.rejects(files.upload('org-b', parts(filePart(chunks()), purpose('batch')), 1_000_000), (error) => {
        assert.ok(isServiceError(error));
        assert.equal(error.status, 413);
        assert.equal(error.code, 'storage_quota_exceeded');
        assert.deepEqual(error.details, { limit_bytes: QUOTA, used_bytes: 4_000, reserved_bytes: 0, upload_bytes_at_refusal: 7_000 });
        return true;
      });
      // Six chunks fit (6,000 bytes free); the seventh is refused before the store reads it, and no more are read.
      assert.equal(handedOut, 7);
      assert.equal(blobs().length, before);
      assert.deepEqual(await storage.usage('org-b'), { storedBytes: 4_000, reservedBytes: 0, limitBytes: QUOTA });
    });

    test("a dead process's reservation counts until it lapses, then is swept", async (context) => {
      if (skipWithout(context)) return;
      const held = await repository.reserve({
        reservationId: 'file-dead-process',
        organizationId: 'org-c',
        bytes: 9_000,
        limitBytes: QUOTA,
        now: clock.now(),
        ttlMs: RESERVATION_TTL_MS,
      });
      assert.equal(held.granted, true);
      await assert.rejects(files.upload('org-c', parts(filePart([Buffer.alloc(2_000)]), purpose('batch')), 1_000_000), /storage quota/);
      clock.advance(RESERVATION_TTL_MS);
      assert.deepEqual(await storage.usage('org-c'), { storedBytes: 0, reservedBytes: 0, limitBytes: QUOTA });
      await files.upload('org-c', parts(filePart([Buffer.alloc(2_000)]), purpose('batch')), 1_000_000);
      assert.equal(await storage.sweep(), 1);
    });

    test('an unlimited organization reserves nothing and still sees its stored bytes', async (context) => {
      if (skipWithout(context)) return;
      await files.upload('org-free', parts(filePart([Buffer.alloc(50_000)]), purpose('user_data')), 1_000_000);
      assert.deepEqual(await storage.usage('org-free'), { storedBytes: 50_000, reservedBytes: 0, limitBytes: 0 });
    });
  });
}
