// Batches through dependency outages (issue 39), over a real database (SQLite; Postgres too with
// TEST_DATABASE_URL) and a real blob directory behind the object store's real circuit breaker, with a
// switch that makes the store unreachable (ECONNREFUSED, as the S3 client reports it): a step that
// cannot reach the store waits without using up an attempt and finishes once the store is back; a
// batch created while the store is down is validated later, never failed as `invalid_input_file`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { after, before, describe, test } from 'node:test';
import type { AuthContext } from '../../src/accounts/authenticator.ts';
import type { BatchRecord } from '../../src/batches/batch-records.ts';
import { BatchService } from '../../src/batches/batch-service.ts';
import { BatchWorker, type LineExecutor } from '../../src/batches/batch-worker.ts';
import { CircuitBreaker } from '../../src/core/circuit-breaker.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { BatchesRepository } from '../../src/db/repositories/batches-repository.ts';
import { FilesRepository } from '../../src/db/repositories/files-repository.ts';
import type { BlobPutOptions, BlobSource, BlobStore } from '../../src/files/blob-store.ts';
import { GuardedBlobStore } from '../../src/files/guarded-blob-store.ts';
import { LocalDiskBlobStore } from '../../src/files/local-disk/local-disk-blob-store.ts';
import { FileService, type UploadPart } from '../../src/services/files/file-service.ts';
import { createTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';
import { until } from '../support/until.ts';
import { ManualClock } from './support/manual-clock.ts';

const AUTH: AuthContext = {
  keyId: 'key_test',
  organizationId: 'org-test',
  tier: 'Developer',
  permissions: new Set(['batches', 'files', 'chat.completions']),
  expiresAt: null,
};
const DAY_MS = 86_400_000;

function unreachable(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
}

/** A real local store that can be switched off: every call (and the readiness check) then fails as unreachable. */
class SwitchableStore implements BlobStore {
  down = false;
  calls = 0;

  constructor(private readonly inner: BlobStore) {}

  private async gate(): Promise<void> {
    this.calls++;
    if (this.down) throw unreachable();
  }

  async put(key: string, source: BlobSource, options?: BlobPutOptions): Promise<number> {
    await this.gate();
    return this.inner.put(key, source, options);
  }

  async get(key: string): Promise<Readable | undefined> {
    await this.gate();
    return this.inner.get(key);
  }

  async delete(key: string): Promise<void> {
    await this.gate();
    return this.inner.delete(key);
  }

  async check(): Promise<void> {
    if (this.down) throw unreachable();
  }

  removeAbandoned(olderThanMs: number): Promise<number> {
    return this.inner.removeAbandoned(olderThanMs);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

interface Logged {
  level: 'error' | 'info';
  message: string;
  details: Record<string, unknown>;
}

for (const backend of storageBackends())
  describe(`batches through an object-store outage on ${backend}`, () => {
    let directory: string;
    let testDatabase: TestDatabase;
    let database: Database;
    let repository: BatchesRepository;

    before(async () => {
      directory = mkdtempSync(join(tmpdir(), 'switchyard-batch-outages-'));
      testDatabase = await createTestDatabase(backend);
      database = openDatabase(testDatabase.url);
      await database.migrate();
      repository = new BatchesRepository(database.db);
    });
    after(async () => {
      await database.close();
      await testDatabase.drop();
      rmSync(directory, { recursive: true, force: true });
    });

    /** Files over a switchable store behind a real breaker, a batch service, and a worker whose executor counts its calls. */
    function setup(name: string, onLine: () => void = () => undefined) {
      const clock = new ManualClock();
      const store = new SwitchableStore(new LocalDiskBlobStore(join(directory, name)));
      const breaker = new CircuitBreaker({ name: 'files', description: 'The file store', probeIntervalMs: 20, probe: () => store.check() });
      const files = new FileService({ repository: new FilesRepository(database.db), store: new GuardedBlobStore(store, breaker), clock });
      const batches = new BatchService({ repository, files, tiers: { Developer: { concurrentBatches: 100 } }, clock });
      const executed: string[] = [];
      const execute: LineExecutor = async ({ body }) => {
        const { tag } = JSON.parse(body) as { tag: string };
        executed.push(tag);
        onLine();
        // A line tagged `deferred` is rate limited for two days: it cannot finish within the window.
        if (tag === 'deferred') return { statusCode: 429, headers: { 'retry-after': String(2 * 86_400) }, body: '{}' };
        return { statusCode: 200, headers: {}, body: JSON.stringify({ object: 'chat.completion', echo: tag }) };
      };
      const logged: Logged[] = [];
      const worker = new BatchWorker({
        repository,
        files,
        execute,
        clock,
        maxLineBytes: 100_000,
        pollIntervalMs: 5,
        stepRetryBaseMs: 1_000,
        maxStepAttempts: 3,
        maxStepWaitMs: 30_000,
        log: {
          error: (details, message) => logged.push({ level: 'error', message, details: details as Record<string, unknown> }),
          info: (details, message) => logged.push({ level: 'info', message, details: details as Record<string, unknown> }),
        },
      });
      /** Heals the store and waits for its breaker to close (its probe runs on real time). */
      async function heal(): Promise<void> {
        store.down = false;
        await until(async () => (breaker.state === 'closed' ? true : undefined), 'the file store breaker to close', 10_000, 10);
      }
      return { clock, store, breaker, files, batches, worker, executed, logged, heal };
    }

    async function upload(files: FileService, tags: string[]): Promise<string> {
      const content = tags
        .map((tag) => JSON.stringify({ custom_id: tag, method: 'POST', url: '/v1/chat/completions', body: { tag } }))
        .join('\n');
      async function* parts(): AsyncGenerator<UploadPart> {
        yield { kind: 'field', name: 'purpose', value: 'batch' };
        yield {
          kind: 'file',
          name: 'file',
          filename: 'input.jsonl',
          mediaType: 'application/jsonl',
          content: [content],
          isTruncated: () => false,
        };
      }
      return (await files.upload(AUTH.organizationId, parts(), 1_000_000)).id;
    }

    function create(batches: BatchService, inputFileId: string): Promise<BatchRecord> {
      return batches.create(AUTH, { input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    }

    async function retryAt(batchId: string): Promise<number | null> {
      const row = await database.db.selectFrom('batches').select('retry_at').where('id', '=', batchId).executeTakeFirstOrThrow();
      return row.retry_at === null ? null : Number(row.retry_at);
    }

    async function resultTags(files: FileService, fileId: string | null): Promise<string[]> {
      if (fileId === null) return [];
      const opened = await files.openContent(AUTH.organizationId, fileId);
      return (await text(opened.content))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => (JSON.parse(line) as { custom_id: string }).custom_id);
    }

    test('finalize meets a store outage far longer than 5 attempts: it waits (capped, no attempt counted), then completes with every result', async () => {
      const tags = Array.from({ length: 12 }, (_, index) => `line-${index + 1}`);
      // The store goes away once the first line runs: every line runs, finalizing cannot write the files.
      const context = setup('finalize', () => (context.store.down = true));
      const { clock, files, batches, worker, executed, logged } = context;
      const created = await create(batches, await upload(files, tags));
      await worker.runUntilIdle();
      let batch = (await repository.findById(created.id))!;
      assert.deepEqual([batch.status, batch.completed, batch.stepAttempts, batch.resultsWritten], ['finalizing', 12, 0, false]);
      // 40 waits (about 19 minutes of clock time): the delays double from 1 s up to the 30 s cap.
      const waits: number[] = [];
      for (let index = 0; index < 40; index++) {
        const at = await retryAt(created.id);
        assert.ok(at !== null, 'the batch waits with a retry time');
        waits.push(at - clock.now());
        clock.advance(at - clock.now());
        await worker.runUntilIdle();
      }
      assert.deepEqual(waits.slice(0, 7), [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
      assert.ok(waits.every((wait) => wait <= 30_000));
      batch = (await repository.findById(created.id))!;
      assert.deepEqual([batch.status, batch.stepAttempts, batch.resultsWritten, batch.errors], ['finalizing', 0, false, null]);
      const stepLines = () => logged.filter((entry) => /^batch steps/.test(entry.message));
      assert.equal(stepLines().length, 1, 'one log line about the steps for the whole outage');
      assert.match(stepLines()[0]!.message, /wait/);
      assert.ok(logged.length <= 2, 'besides, at most one line: expired files could not be purged');

      await context.heal();
      clock.advance(30_000);
      await worker.runUntilIdle();
      batch = (await repository.findById(created.id))!;
      assert.deepEqual([batch.status, batch.completed, batch.failed, batch.resultsWritten], ['completed', 12, 0, true]);
      assert.deepEqual(await resultTags(files, batch.outputFileId), tags, 'every line’s result is downloadable');
      assert.equal(batch.errorFileId, null);
      assert.deepEqual(executed, tags, 'no line ran twice');
      assert.deepEqual(
        stepLines().map((entry) => entry.level),
        ['error', 'info'],
        'one line when the steps start waiting, one when they work again',
      );
    });

    test('a batch created while the store is down is validated once it is back, never failed as invalid_input_file', async () => {
      const context = setup('create');
      const { clock, store, files, batches, worker, executed } = context;
      const inputFileId = await upload(files, ['a', 'b', 'c']);
      store.down = true;
      const created = await create(batches, inputFileId);
      assert.equal(created.status, 'validating');
      for (let index = 0; index < 10; index++) {
        await worker.runUntilIdle();
        const at = await retryAt(created.id);
        assert.ok(at !== null);
        clock.advance(at - clock.now());
      }
      let batch = (await repository.findById(created.id))!;
      assert.deepEqual([batch.status, batch.stepAttempts, batch.errors], ['validating', 0, null]);
      assert.deepEqual(executed, []);
      await context.heal();
      clock.advance(30_000);
      await worker.runUntilIdle();
      batch = (await repository.findById(created.id))!;
      assert.deepEqual([batch.status, batch.total, batch.completed], ['completed', 3, 3]);
      assert.deepEqual(await resultTags(files, batch.outputFileId), ['a', 'b', 'c']);
      assert.deepEqual(executed, ['a', 'b', 'c']);
    });

    test('a real error of the input still fails validation at once while the store works', async () => {
      const { files, batches, worker } = setup('invalid');
      async function* parts(): AsyncGenerator<UploadPart> {
        yield { kind: 'field', name: 'purpose', value: 'batch' };
        yield {
          kind: 'file',
          name: 'file',
          filename: 'input.jsonl',
          mediaType: 'application/jsonl',
          content: ['not json'],
          isTruncated: () => false,
        };
      }
      const input = await files.upload(AUTH.organizationId, parts(), 1_000_000);
      const created = await create(batches, input.id);
      await worker.runUntilIdle();
      const batch = (await repository.findById(created.id))!;
      assert.equal(batch.status, 'failed');
      assert.deepEqual(
        batch.errors?.map((error) => [error.code, error.line]),
        [['invalid_jsonl', 1]],
      );
    });

    test('the 24 h window runs out during an outage: a validating batch expires without the store; a running one writes what is done once it is back', async () => {
      const context = setup('expiry');
      const { clock, store, files, batches, worker, executed } = context;
      // A validating batch whose window ran out while the store was down: nothing to write, it expires at once.
      const validatingInput = await upload(files, ['never']);
      store.down = true;
      const validating = await create(batches, validatingInput);
      await worker.runUntilIdle();
      clock.advance(DAY_MS);
      await worker.runUntilIdle();
      const expiredEarly = (await repository.findById(validating.id))!;
      assert.deepEqual([expiredEarly.status, expiredEarly.outputFileId, expiredEarly.errorFileId], ['expired', null, null]);
      assert.deepEqual(executed, []);

      // A running batch: one line done, the other deferred past the window; the store is down when it runs out.
      await context.heal();
      const slow = await create(batches, await upload(files, ['first', 'deferred']));
      await worker.runUntilIdle();
      let batch = (await repository.findById(slow.id))!;
      assert.deepEqual([batch.status, batch.completed], ['in_progress', 1]);
      store.down = true;
      clock.advance(DAY_MS);
      await worker.runUntilIdle();
      batch = (await repository.findById(slow.id))!;
      assert.deepEqual([batch.status, batch.resultsWritten], ['in_progress', false], 'waiting for the store to write what is done');
      await context.heal();
      clock.advance(30_000);
      await worker.runUntilIdle();
      batch = (await repository.findById(slow.id))!;
      assert.deepEqual([batch.status, batch.completed, batch.failed], ['expired', 1, 1]);
      assert.deepEqual(await resultTags(files, batch.outputFileId), ['first']);
      assert.deepEqual(await resultTags(files, batch.errorFileId), ['deferred']);
      assert.deepEqual(executed, ['first', 'deferred'], 'no line ran twice');
    });
  });
