// The batch engine over a real database (SQLite; Postgres too with TEST_DATABASE_URL), a real blob directory and a real Fastify app whose route
// the lines are injected into: validation, execution, 429 retries, expiry (injected clock),
// cancellation, resumption after a crashed worker, and two workers sharing one database.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AuthContext } from '../../src/accounts/authenticator.ts';
import type { BatchRecord } from '../../src/batches/batch-records.ts';
import { BatchService } from '../../src/batches/batch-service.ts';
import { BatchWorker, retryDelayMs, type BatchWorkerOptions, type LineExecutor } from '../../src/batches/batch-worker.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import type { BatchLeases } from '../../src/db/repositories/batch-leases.ts';
import type { BatchLines } from '../../src/db/repositories/batch-lines.ts';
import { BatchesRepository } from '../../src/db/repositories/batches-repository.ts';
import { FilesRepository } from '../../src/db/repositories/files-repository.ts';
import { LocalDiskBlobStore } from '../../src/files/local-disk/local-disk-blob-store.ts';
import { systemClock, type Clock } from '../../src/limits/clock.ts';
import { FileService, type UploadPart } from '../../src/services/files/file-service.ts';
import type { BatchEndFacts } from '../../src/telemetry/trace-types.ts';
import { createTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';
import { ManualClock } from './support/manual-clock.ts';

const AUTH: AuthContext = {
  keyId: 'key_test',
  organizationId: 'org-test',
  tier: 'Developer',
  permissions: new Set(['batches', 'files', 'chat.completions']),
  expiresAt: null,
};
const DAY_MS = 86_400_000;

interface Line {
  custom_id: string;
  method?: string;
  url?: string;
  body: Record<string, unknown>;
}

function jsonl(lines: Line[]): string {
  return lines.map((line) => JSON.stringify({ method: 'POST', url: '/v1/chat/completions', ...line })).join('\n');
}

async function waitFor<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

for (const backend of storageBackends())
  describe(`BatchWorker on ${backend}`, () => {
    let directory: string;
    let testDatabase: TestDatabase;
    let database: Database;
    let repository: BatchesRepository;
    let route: FastifyInstance;
    const calls: string[] = [];
    const attempts = new Map<string, number>();
    let gate: Promise<void> = Promise.resolve();
    let openGate: () => void = () => undefined;

    // A real route the lines go through: echoes, fails on request, rate-limits on request, or waits at a gate.
    before(async () => {
      directory = mkdtempSync(join(tmpdir(), 'switchyard-batches-'));
      testDatabase = await createTestDatabase(backend);
      database = openDatabase(testDatabase.url);
      await database.migrate();
      repository = new BatchesRepository(database.db);
      route = Fastify();
      let requestNumber = 0;
      route.post('/v1/chat/completions', async (request, reply) => {
        const body = request.body as {
          tag: string;
          fail?: boolean;
          limitedTimes?: number;
          retryAfter?: Record<string, string>;
          gate?: boolean;
        };
        const seen = (attempts.get(body.tag) ?? 0) + 1;
        attempts.set(body.tag, seen);
        void reply.header('x-request-id', `req_${++requestNumber}`);
        if (body.limitedTimes !== undefined && seen <= body.limitedTimes) {
          return reply
            .code(429)
            .headers(body.retryAfter ?? {})
            .send({ error: { message: 'slow down', type: 'rate_limit_exceeded', code: 'rpm_exceeded' } });
        }
        calls.push(body.tag);
        if (body.gate === true) await gate;
        if (body.fail === true)
          return reply.code(400).send({
            error: { message: 'messages is required', type: 'invalid_request_error', code: 'missing_parameter', param: 'messages' },
          });
        return { object: 'chat.completion', echo: body.tag };
      });
      await route.ready();
    });
    after(async () => {
      await route.close();
      await database.close();
      await testDatabase.drop();
      rmSync(directory, { recursive: true, force: true });
    });

    const execute: LineExecutor = async ({ url, body }) => {
      const response = await route.inject({ method: 'POST', url, payload: body, headers: { 'content-type': 'application/json' } });
      return { statusCode: response.statusCode, headers: response.headers, body: response.body };
    };

    function services(clock: Clock) {
      const files = new FileService({
        repository: new FilesRepository(database.db),
        store: new LocalDiskBlobStore(join(directory, 'files')),
        clock,
      });
      const batches = new BatchService({ repository, files, tiers: { Developer: { concurrentBatches: 100 } }, clock });
      const worker = (options: Partial<BatchWorkerOptions> = {}) =>
        new BatchWorker({ repository, files, execute, clock, maxLineBytes: 100_000, pollIntervalMs: 10, leaseMs: 3_000, ...options });
      return { files, batches, worker };
    }

    async function createBatch(files: FileService, batches: BatchService, content: string): Promise<BatchRecord> {
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
      return batches.create(AUTH, { input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    }

    async function resultLines(files: FileService, fileId: string | null): Promise<Array<Record<string, any>>> {
      if (fileId === null) return [];
      const opened = await files.openContent(AUTH.organizationId, fileId);
      return (await text(opened.content))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, any>);
    }

    test('validating -> in_progress -> finalizing -> completed, with output and error files', async () => {
      const clock = new ManualClock();
      const { files, batches, worker } = services(clock);
      const created = await createBatch(
        files,
        batches,
        jsonl([
          { custom_id: 'first', body: { tag: 'ok-1' } },
          { custom_id: 'bad', body: { tag: 'bad-1', fail: true } },
          { custom_id: 'second', body: { tag: 'ok-2' } },
        ]),
      );
      assert.equal(created.status, 'validating');
      await worker().runUntilIdle();
      const done = (await repository.findById(created.id))!;
      assert.equal(done.status, 'completed');
      assert.deepEqual([done.total, done.completed, done.failed], [3, 2, 1]);
      for (const field of ['inProgressAt', 'finalizingAt', 'completedAt'] as const) assert.equal(done[field], clock.now());
      assert.equal(done.leaseOwner, null, 'the lease is released');
      assert.equal(done.resultsWritten, true);

      const output = await resultLines(files, done.outputFileId);
      assert.deepEqual(
        output.map((line) => line['custom_id']),
        ['first', 'second'],
      );
      for (const line of output) {
        assert.deepEqual(Object.keys(line), ['id', 'custom_id', 'response', 'error']);
        assert.match(line['id'], /^batch_req_/);
        assert.equal(line['error'], null);
        assert.equal(line['response'].status_code, 200);
        assert.match(line['response'].request_id, /^req_\d+$/);
        assert.equal(line['response'].body.object, 'chat.completion');
      }
      const errors = await resultLines(files, done.errorFileId);
      assert.equal(errors.length, 1);
      assert.equal(errors[0]!['custom_id'], 'bad');
      assert.deepEqual(errors[0]!['error'], { code: 'invalid_request', message: 'messages is required' });
      assert.equal(errors[0]!['response'].status_code, 400);
      assert.equal(errors[0]!['response'].body.error.code, 'missing_parameter');

      const outputFile = await files.retrieve(AUTH.organizationId, done.outputFileId!);
      assert.equal(outputFile.purpose, 'batch_output');
      assert.equal(outputFile.filename, `${done.id}_output.jsonl`);
      assert.equal(outputFile.mediaType, 'application/jsonl');
    });

    test('a batch with no failures has no error file; one with no successes has no output file', async () => {
      const clock = new ManualClock();
      const { files, batches, worker } = services(clock);
      const allGood = await createBatch(files, batches, jsonl([{ custom_id: 'a', body: { tag: 'good' } }]));
      const allBad = await createBatch(files, batches, jsonl([{ custom_id: 'a', body: { tag: 'bad', fail: true } }]));
      await worker().runUntilIdle();
      const good = (await repository.findById(allGood.id))!;
      const bad = (await repository.findById(allBad.id))!;
      assert.deepEqual([good.status, good.errorFileId, typeof good.outputFileId], ['completed', null, 'string']);
      assert.deepEqual([bad.status, bad.outputFileId, typeof bad.errorFileId], ['completed', null, 'string']);
    });

    test('an invalid input file fails the batch with line-numbered invalid_jsonl errors; nothing runs', async () => {
      const clock = new ManualClock();
      const { files, batches, worker } = services(clock);
      const callsBefore = calls.length;
      const created = await createBatch(
        files,
        batches,
        `${jsonl([{ custom_id: 'ok', body: { tag: 'never' } }])}\nnot json\n${jsonl([{ custom_id: 'x', url: '/v1/embeddings', body: {} }])}`,
      );
      await worker().runUntilIdle();
      const failed = (await repository.findById(created.id))!;
      assert.equal(failed.status, 'failed');
      assert.equal(failed.failedAt, clock.now());
      assert.deepEqual(
        failed.errors?.map((error) => [error.code, error.line, error.param]),
        [
          ['invalid_jsonl', 2, null],
          ['invalid_jsonl', 3, 'url'],
        ],
      );
      assert.equal(calls.length, callsBefore);
      assert.equal(await repository.lines.nextPendingAt(created.id), undefined, 'no request rows are kept');
    });

    test('an input file deleted before validation fails the batch with invalid_input_file', async () => {
      const clock = new ManualClock();
      const { files, batches, worker } = services(clock);
      const created = await createBatch(files, batches, jsonl([{ custom_id: 'a', body: { tag: 'x' } }]));
      await files.delete(AUTH.organizationId, created.inputFileId);
      await worker().runUntilIdle();
      const failed = (await repository.findById(created.id))!;
      assert.equal(failed.status, 'failed');
      assert.equal(failed.errors?.[0]?.code, 'invalid_input_file');
    });

    test('a rate-limited line is retried after retry-after instead of failing', async () => {
      const { files, batches, worker } = services(systemClock);
      const created = await createBatch(
        files,
        batches,
        jsonl([
          { custom_id: 'limited', body: { tag: 'limited-ms', limitedTimes: 2, retryAfter: { 'retry-after-ms': '20' } } },
          { custom_id: 'free', body: { tag: 'free' } },
        ]),
      );
      await worker().runUntilIdle();
      const done = (await repository.findById(created.id))!;
      assert.deepEqual([done.status, done.completed, done.failed], ['completed', 2, 0]);
      assert.equal(attempts.get('limited-ms'), 3);
      const output = await resultLines(files, done.outputFileId);
      assert.deepEqual(output.map((line) => line['custom_id']).sort(), ['free', 'limited']);
    });

    test('retry delays: retry-after-ms, retry-after in seconds or as a date, else capped exponential backoff', () => {
      const now = Date.UTC(2030, 0, 1);
      assert.equal(retryDelayMs({ 'retry-after-ms': '250', 'retry-after': '9' }, 0, 60_000, now), 250);
      assert.equal(retryDelayMs({ 'retry-after': '7' }, 0, 60_000, now), 7_000);
      assert.equal(retryDelayMs({ 'retry-after': new Date(now + 30_000).toUTCString() }, 0, 60_000, now), 30_000);
      assert.equal(retryDelayMs({}, 0, 60_000, now), 1_000);
      assert.equal(retryDelayMs({}, 3, 60_000, now), 8_000);
      assert.equal(retryDelayMs({}, 30, 60_000, now), 60_000);
    });

    test('24 hours after creation the batch expires: lines not run go to the error file as batch_expired', async () => {
      const clock = new ManualClock();
      const { files, batches, worker } = services(clock);
      const created = await createBatch(
        files,
        batches,
        jsonl([
          { custom_id: 'done', body: { tag: 'before-expiry' } },
          { custom_id: 'stuck', body: { tag: 'stuck', limitedTimes: 1_000, retryAfter: { 'retry-after': '3600' } } },
        ]),
      );
      const running = worker();
      running.start();
      try {
        await waitFor(
          async () => (await repository.findById(created.id))!.completed === 1 && (attempts.get('stuck') ?? 0) >= 1,
          'the first line to finish and the second to be deferred',
        );
        clock.advance(DAY_MS);
        const expired = await waitFor(async () => {
          const batch = await repository.findById(created.id);
          return batch?.status === 'expired' ? batch : undefined;
        }, 'expiry');
        assert.equal(expired.expiredAt, clock.now());
        assert.deepEqual([expired.total, expired.completed, expired.failed], [2, 1, 1]);
        assert.deepEqual(
          (await resultLines(files, expired.outputFileId)).map((line) => line['custom_id']),
          ['done'],
        );
        const errors = await resultLines(files, expired.errorFileId);
        assert.equal(errors.length, 1);
        assert.equal(errors[0]!['custom_id'], 'stuck');
        assert.equal(errors[0]!['response'], null);
        assert.equal(errors[0]!['error'].code, 'batch_expired');
      } finally {
        await running.stop();
      }
    });

    test('cancel: status canceled at once; lines already done (and the one running) reach the output file', async () => {
      const clock = new ManualClock();
      const { files, batches, worker } = services(clock);
      gate = new Promise((resolve) => {
        openGate = resolve;
      });
      const created = await createBatch(
        files,
        batches,
        jsonl([
          { custom_id: 'one', body: { tag: 'cancel-1' } },
          { custom_id: 'two', body: { tag: 'cancel-2', gate: true } },
          { custom_id: 'three', body: { tag: 'cancel-3' } },
          { custom_id: 'four', body: { tag: 'cancel-4' } },
        ]),
      );
      const running = worker({ concurrency: 1 });
      running.start();
      try {
        await waitFor(async () => calls.includes('cancel-2'), 'the second line to start');
        const canceled = await batches.cancel(AUTH, created.id);
        assert.equal(canceled.status, 'canceled');
        assert.equal(canceled.cancelledAt, clock.now());
        openGate();
        const written = await waitFor(async () => {
          const batch = await repository.findById(created.id);
          return batch?.resultsWritten === true ? batch : undefined;
        }, 'the results of the canceled batch');
        assert.equal(written.status, 'canceled');
        assert.deepEqual([written.total, written.completed, written.failed], [4, 2, 0]);
        assert.deepEqual(
          (await resultLines(files, written.outputFileId)).map((line) => line['custom_id']),
          ['one', 'two'],
        );
        assert.equal(written.errorFileId, null);
        assert.ok(!calls.includes('cancel-3') && !calls.includes('cancel-4'), 'no line starts after the cancel');
      } finally {
        openGate();
        await running.stop();
      }
    });

    test('a crashed worker: its lease lapses and another worker resumes without redoing finished lines', async () => {
      const clock = new ManualClock();
      const { files, batches, worker } = services(clock);
      const created = await createBatch(files, batches, jsonl(['r1', 'r2', 'r3', 'r4'].map((tag) => ({ custom_id: tag, body: { tag } }))));
      // The dead worker validated the file and finished two lines, then vanished holding its lease.
      await repository.leases.claimStep('dead-worker', clock.now(), 5_000);
      await repository.lines.insertRequests(
        created.id,
        ['r1', 'r2', 'r3', 'r4'].map((tag, index) => ({ line: index + 1, customId: tag, body: JSON.stringify({ tag }) })),
      );
      await repository.leases.transition(created.id, 'dead-worker', ['validating'], {
        status: 'in_progress',
        in_progress_at: clock.now(),
        total: 4,
      });
      await repository.leases.releaseLease(created.id, 'dead-worker');
      const chunk = await repository.leases.claimLines('dead-worker', clock.now(), 5_000, 10);
      assert.deepEqual(
        chunk?.lines.map((row) => row.line),
        [1, 2, 3, 4],
      );
      for (const line of [1, 2]) {
        await repository.lines.recordOutcome(created.id, line, {
          state: 'completed',
          resultId: `batch_req_dead${line}`,
          statusCode: 200,
          requestId: `req_dead${line}`,
          responseBody: JSON.stringify({ echo: `r${line}` }),
          errorCode: null,
          errorMessage: null,
          finishedAt: clock.now(),
        });
      }
      const callsBefore = calls.length;
      const survivor = worker();
      await survivor.runUntilIdle();
      assert.equal((await repository.findById(created.id))!.status, 'in_progress', 'the lease still holds: nobody takes over yet');
      clock.advance(5_001);
      await survivor.runUntilIdle();
      const done = (await repository.findById(created.id))!;
      assert.equal(done.status, 'completed');
      assert.deepEqual(calls.slice(callsBefore).sort(), ['r3', 'r4'], 'only the unfinished lines ran');
      const output = await resultLines(files, done.outputFileId);
      assert.deepEqual(output.map((line) => [line['custom_id'], line['id']]).slice(0, 2), [
        ['r1', 'batch_req_dead1'],
        ['r2', 'batch_req_dead2'],
      ]);
      assert.deepEqual(
        output.map((line) => line['custom_id']),
        ['r1', 'r2', 'r3', 'r4'],
      );
    });

    test('two workers on one database run every line of every batch exactly once', async () => {
      const clock = new ManualClock();
      const { files, batches, worker } = services(clock);
      const ids: string[] = [];
      for (let batchIndex = 0; batchIndex < 4; batchIndex++) {
        const lines = Array.from({ length: 6 }, (_, index) => ({ custom_id: `c${index}`, body: { tag: `shared-${batchIndex}-${index}` } }));
        ids.push((await createBatch(files, batches, jsonl(lines))).id);
      }
      const first = worker({ workerId: 'worker-one', maxActiveSteps: 1, concurrency: 2, chunkSize: 2 });
      const second = worker({ workerId: 'worker-two', maxActiveSteps: 1, concurrency: 2, chunkSize: 2 });
      first.start();
      second.start();
      try {
        await waitFor(async () => {
          const states = await Promise.all(ids.map((id) => repository.findById(id)));
          return states.every((batch) => batch?.status === 'completed');
        }, 'all four batches to complete');
      } finally {
        await first.stop();
        await second.stop();
      }
      const ran = calls.filter((tag) => tag.startsWith('shared-'));
      assert.equal(ran.length, 24);
      assert.equal(new Set(ran).size, 24);
    });

    test('stop() lets the running line finish, records it and releases the lease for another worker', async () => {
      const clock = new ManualClock();
      const { files, batches, worker } = services(clock);
      gate = new Promise((resolve) => {
        openGate = resolve;
      });
      const created = await createBatch(
        files,
        batches,
        jsonl([
          { custom_id: 'held', body: { tag: 'stop-1', gate: true } },
          { custom_id: 'later', body: { tag: 'stop-2' } },
        ]),
      );
      const stopping = worker({ concurrency: 1 });
      stopping.start();
      await waitFor(async () => calls.includes('stop-1'), 'the gated line to start');
      const stopped = stopping.stop();
      openGate();
      await stopped;
      const paused = (await repository.findById(created.id))!;
      assert.deepEqual([paused.status, paused.completed, paused.leaseOwner], ['in_progress', 1, null]);
      assert.ok(!calls.includes('stop-2'));
      await worker().runUntilIdle();
      const done = (await repository.findById(created.id))!;
      assert.deepEqual([done.status, done.completed], ['completed', 2]);
    });

    test('no thrash: a claim that keeps failing backs off exponentially, one log line per attempt', async () => {
      const clock = new ManualClock();
      const { files } = services(clock);
      let claims = 0;
      const failingLeases = Object.create(repository.leases) as BatchLeases;
      failingLeases.claimStep = async () => {
        claims += 1;
        throw new Error('database away');
      };
      const failing = Object.create(repository, { leases: { value: failingLeases } }) as BatchesRepository;
      const logged: Array<{ retry_in_ms?: number }> = [];
      const log = { error: (details: object) => logged.push(details as { retry_in_ms?: number }) };
      const stuck = new BatchWorker({
        repository: failing,
        files,
        execute,
        clock,
        maxLineBytes: 100_000,
        pollIntervalMs: 5,
        maxBackoffMs: 80,
        log,
      });
      stuck.start();
      await waitFor(async () => logged.length >= 6, 'six failed claims');
      await stuck.stop();
      assert.equal(logged.length, claims, 'each failed claim is logged once');
      const delays = logged.map((entry) => entry.retry_in_ms);
      assert.deepEqual(delays.slice(0, 5), [10, 20, 40, 80, 80], 'the wait doubles (up to maxBackoffMs) after each failure');
    });

    test('an input file whose bytes cannot be read: the step backs off on every instance, then the batch fails saying why', async () => {
      const clock = new ManualClock();
      const { files, batches } = services(clock);
      const created = await createBatch(files, batches, jsonl([{ custom_id: 'a', body: { tag: 'never-run' } }]));
      const broken = Object.create(files) as FileService;
      broken.openContent = async () => {
        throw new Error('EIO: storage unreadable');
      };
      const logged: object[] = [];
      const worker = new BatchWorker({
        repository,
        files: broken,
        execute,
        clock,
        maxLineBytes: 100_000,
        pollIntervalMs: 5,
        stepRetryBaseMs: 1_000,
        maxStepAttempts: 3,
        log: { error: (details) => logged.push(details) },
      });
      await worker.runUntilIdle();
      let batch = (await repository.findById(created.id))!;
      assert.deepEqual([batch.status, batch.stepAttempts], ['validating', 1]);
      await worker.runUntilIdle();
      assert.equal(logged.length, 1, 'backing off: no instance claims it again before retry_at');
      clock.advance(1_000);
      await worker.runUntilIdle();
      batch = (await repository.findById(created.id))!;
      assert.deepEqual([batch.status, batch.stepAttempts], ['validating', 2]);
      clock.advance(2_000);
      await worker.runUntilIdle();
      batch = (await repository.findById(created.id))!;
      assert.equal(batch.status, 'failed');
      assert.equal(batch.errors?.[0]?.code, 'invalid_input_file');
      assert.match(batch.errors?.[0]?.message ?? '', /could not validate after 3 attempts: EIO: storage unreadable/);
      assert.equal(logged.length, 3, 'one log line per attempt');
    });

    test('result files once recorded are the batch’s: a failure removing the request rows after that keeps them; the batch’s trace ends once', async () => {
      const clock = new ManualClock();
      const { files, batches } = services(clock);
      const created = await createBatch(files, batches, jsonl([{ custom_id: 'kept', body: { tag: 'kept' } }]));
      // The database goes away right after the result files were recorded with the final status.
      const flakyLines = Object.create(repository.lines) as BatchLines;
      flakyLines.deleteRequests = async (batchId) => {
        if ((await repository.findById(batchId))?.status === 'completed') throw new Error('database away');
        return repository.lines.deleteRequests(batchId);
      };
      const flaky = Object.create(repository, { lines: { value: flakyLines } }) as BatchesRepository;
      const logged: object[] = [];
      const ended: BatchEndFacts[] = [];
      await new BatchWorker({
        repository: flaky,
        files,
        execute,
        clock,
        maxLineBytes: 100_000,
        pollIntervalMs: 5,
        log: { error: (details) => logged.push(details) },
        tracing: { endBatch: (facts) => ended.push(facts) },
      }).runUntilIdle();
      const done = (await repository.findById(created.id))!;
      assert.deepEqual([done.status, done.completed, done.resultsWritten], ['completed', 1, true]);
      const output = await resultLines(files, done.outputFileId);
      assert.deepEqual(
        output.map((line) => line['custom_id']),
        ['kept'],
        'the output file’s bytes are still there',
      );
      assert.equal(logged.length, 1, 'the failed removal is logged once');
      assert.deepEqual(
        ended.map((facts) => [facts.batchId, facts.status, facts.endpoint, facts.total, facts.completed, facts.failed]),
        [[created.id, 'completed', '/v1/chat/completions', 1, 1, 0]],
      );
      assert.ok(ended[0]!.createdAt === done.createdAt && ended[0]!.endedAt === done.completedAt);
    });

    test('a line whose key can no longer run the batch fails the batch; lines not run go to the error file', async () => {
      const clock = new ManualClock();
      const { files, batches } = services(clock);
      const created = await createBatch(files, batches, jsonl(['k1', 'k2', 'k3'].map((tag) => ({ custom_id: tag, body: { tag } }))));
      const revoked: LineExecutor = async () => ({
        statusCode: 401,
        headers: {},
        body: '{"error":{"message":"Invalid API key."}}',
        fatal: { code: 'invalid_api_key', message: 'The key was revoked.' },
      });
      await new BatchWorker({
        repository,
        files,
        execute: revoked,
        clock,
        maxLineBytes: 100_000,
        pollIntervalMs: 5,
        concurrency: 1,
      }).runUntilIdle();
      const failed = (await repository.findById(created.id))!;
      assert.equal(failed.status, 'failed');
      assert.deepEqual(failed.errors, [{ code: 'invalid_api_key', message: 'The key was revoked.', line: null, param: null }]);
      assert.deepEqual([failed.total, failed.completed, failed.failed, failed.resultsWritten], [3, 0, 3, true]);
      const errors = await resultLines(files, failed.errorFileId);
      assert.deepEqual(
        errors.map((line) => [line['custom_id'], line['error'].code]),
        [
          ['k1', 'batch_failed'],
          ['k2', 'batch_failed'],
          ['k3', 'batch_failed'],
        ],
      );
    });
  });
