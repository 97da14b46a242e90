// A batch line whose answer cannot be recorded (the database away after the line ran) keeps its answer
// and retries the recording, never the line (issue 39): over a real database (SQLite; Postgres too
// with TEST_DATABASE_URL) whose line-outcome writes and lease renewals fail as unreachable for a while,
// long enough for the line leases to lapse and be claimed again. The executor counts every request it
// is sent: each line exactly once.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { after, before, describe, test } from 'node:test';
import type { AuthContext } from '../../src/accounts/authenticator.ts';
import { BatchService } from '../../src/batches/batch-service.ts';
import { BatchWorker, type LineExecutor } from '../../src/batches/batch-worker.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import type { BatchLeases } from '../../src/db/repositories/batch-leases.ts';
import type { BatchLines } from '../../src/db/repositories/batch-lines.ts';
import { BatchesRepository } from '../../src/db/repositories/batches-repository.ts';
import { FilesRepository } from '../../src/db/repositories/files-repository.ts';
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
const LEASE_MS = 3_000;

function unreachable(): Error {
  return Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
}

for (const backend of storageBackends())
  describe(`batch line outcomes through a database outage on ${backend}`, () => {
    let directory: string;
    let testDatabase: TestDatabase;
    let database: Database;
    let repository: BatchesRepository;

    before(async () => {
      directory = mkdtempSync(join(tmpdir(), 'switchyard-line-outcomes-'));
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

    test('answers that cannot be recorded are kept and recorded later; no line is sent twice, even once its lease lapsed and was claimed again', async () => {
      const clock = new ManualClock();
      const files = new FileService({
        repository: new FilesRepository(database.db),
        store: new LocalDiskBlobStore(join(directory, 'files')),
        clock,
      });
      const batches = new BatchService({ repository, files, tiers: { Developer: { concurrentBatches: 100 } }, clock });
      // Two lines, both running at once: nothing else is queued, so the worker claims them again once their leases lapse.
      const tags = ['l1', 'l2'];
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
      const input = await files.upload(AUTH.organizationId, parts(), 1_000_000);
      const created = await batches.create(AUTH, { input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });

      // The database stops taking line outcomes and lease renewals once the first line was sent.
      let down = false;
      let refusedRecords = 0;
      const lines = Object.create(repository.lines) as BatchLines;
      lines.recordOutcome = async (...args) => {
        if (down) {
          refusedRecords++;
          throw unreachable();
        }
        return repository.lines.recordOutcome(...args);
      };
      const leases = Object.create(repository.leases) as BatchLeases;
      leases.renewLines = async (...args) => {
        if (down) throw unreachable();
        return repository.leases.renewLines(...args);
      };
      let reclaimed = 0;
      leases.claimLines = async (...args) => {
        const claimed = await repository.leases.claimLines(...args);
        if (down && claimed !== undefined) reclaimed += claimed.lines.length;
        return claimed;
      };
      const flaky = Object.create(repository, { lines: { value: lines }, leases: { value: leases } }) as BatchesRepository;

      const sent: string[] = [];
      const execute: LineExecutor = async ({ body }) => {
        const { tag } = JSON.parse(body) as { tag: string };
        sent.push(tag);
        if (sent.length === 1) down = true;
        return { statusCode: 200, headers: {}, body: JSON.stringify({ object: 'chat.completion', echo: tag }) };
      };
      const logged: Array<{ level: string; message: string }> = [];
      const worker = new BatchWorker({
        repository: flaky,
        files,
        execute,
        clock,
        maxLineBytes: 100_000,
        pollIntervalMs: 5,
        leaseMs: LEASE_MS,
        concurrency: 2,
        chunkSize: 2,
        log: {
          error: (_details, message) => logged.push({ level: 'error', message }),
          info: (_details, message) => logged.push({ level: 'info', message }),
        },
      });
      worker.start();
      try {
        await until(async () => (refusedRecords >= 4 ? true : undefined), 'both running lines to fail recording twice', 20_000, 5);
        assert.deepEqual(sent, ['l1', 'l2']);
        // Their leases lapse (renewal fails too) and the claim loop finds them free again, several times.
        for (let round = 0; round < 4; round++) {
          clock.advance(LEASE_MS + 1);
          const before = refusedRecords;
          await until(async () => (refusedRecords > before ? true : undefined), 'another recording attempt', 20_000, 5);
        }
        assert.ok(reclaimed >= 2, `the lapsed lines were claimed again (${reclaimed})`);
        assert.deepEqual(sent, ['l1', 'l2'], 'lines claimed again while their answers are kept are not sent again');

        down = false;
        const done = await until(async () => {
          const batch = await repository.findById(created.id);
          return batch?.status === 'completed' ? batch : undefined;
        }, 'the batch to complete');
        assert.deepEqual([done.completed, done.failed], [2, 0]);
        assert.deepEqual([...sent].sort(), tags, 'every line sent upstream exactly once');
        const output = await files.openContent(AUTH.organizationId, done.outputFileId!);
        const ids = (await text(output.content))
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => (JSON.parse(line) as { custom_id: string }).custom_id);
        assert.deepEqual(ids, tags);
        const outcomeLines = logged.filter((entry) => /outcome/.test(entry.message));
        assert.deepEqual(
          outcomeLines.map((entry) => entry.level),
          ['error', 'info'],
          'one line when recording starts failing, one when it works again; none per line',
        );
      } finally {
        down = false;
        await worker.stop();
      }
    });
  });
