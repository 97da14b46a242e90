/**
 * The batch engine: one worker per server process claims batches through a lease in the database
 * (so several instances share the work, and a crashed instance's batches are resumed by another once
 * its lease lapses), then moves each one through the SPEC states:
 *
 *   validating  -> read the input file, check every line, store one row per request
 *   in_progress -> run the lines (bounded concurrency) through the app's own routes, recording each
 *                  outcome as it completes; 429 answers are retried later (retry-after honoured)
 *   finalizing  -> write the output file (successes) and the error file (failures)
 *   completed
 *
 * and the side exits: failed (invalid input), canceled (results of the lines already done are still
 * written), expired (24 hours passed; lines not run go to the error file as `batch_expired`).
 */
import { randomAlphanumeric, newId } from '../core/ids.ts';
import { isServiceError } from '../core/service-error.ts';
import type { FileRecord } from '../db/repositories/files-repository.ts';
import type { BatchesRepository, BatchOutcome, BatchRecord, BatchRequestRow, BatchStatus } from '../db/repositories/batches-repository.ts';
import { systemClock, type Clock } from '../limits/clock.ts';
import { BATCH_FILE_LIFETIME_MS, type FileService } from '../services/files/file-service.ts';
import { toErrorLine, toOutputLine } from './batch-result-lines.ts';
import { validateBatchInput } from './validate-batch-input.ts';

/** One batch line to run: POST `url` with the JSON text `body` on behalf of `keyId`. */
export interface LineRequest {
  keyId: string;
  url: string;
  /** JSON text of the request body. */
  body: string;
}

export interface LineResponse {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  /** Response body text. */
  body: string;
}

/** Executes one line; production runs it through the app in-process (inject-line-executor.ts). */
export type LineExecutor = (request: LineRequest) => Promise<LineResponse>;

export interface WorkerLog {
  error(details: object, message: string): void;
}

export interface BatchWorkerOptions {
  repository: BatchesRepository;
  files: FileService;
  execute: LineExecutor;
  /** Largest input line, bytes (the JSON request body limit). */
  maxLineBytes: number;
  clock?: Clock;
  /** Name of this worker in leases; random by default. */
  workerId?: string;
  /** Lines of one batch running at once. Default 4. */
  lineConcurrency?: number;
  /** Batches this process works on at once. Default 2. */
  maxActiveBatches?: number;
  /** How long a claim lasts without renewal, milliseconds (renewed every third of it). Default 30,000. */
  leaseMs?: number;
  /** How often to look for work (and re-read a running batch's status), milliseconds. Default 1,000. */
  pollIntervalMs?: number;
  /** Most requests per batch (SPEC: above 50,000 needs a custom plan). Default 50,000. */
  maxRequestsPerBatch?: number;
  /** Longest wait before retrying a rate-limited line that got no retry-after, milliseconds. Default 60,000. */
  maxBackoffMs?: number;
  /** How often expired files' bytes are removed, milliseconds. Default 600,000. */
  purgeIntervalMs?: number;
  log?: WorkerLog;
}

/** The knobs a deployment or a test may turn (everything but the collaborators). */
export type BatchWorkerTuning = Pick<
  BatchWorkerOptions,
  'workerId' | 'lineConcurrency' | 'maxActiveBatches' | 'leaseMs' | 'pollIntervalMs' | 'maxRequestsPerBatch' | 'maxBackoffMs' | 'purgeIntervalMs'
>;

const EXPIRED_MESSAGE = 'This request was not executed before the batch expired (24-hour completion window).';
const RESULT_PAGE = 500;

/** Wakes sleepers early: a line finished, new work arrived, or the worker is stopping. */
class Doorbell {
  private readonly waiters = new Set<() => void>();

  ring(): void {
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiting) wake();
  }

  /** Resolves after `milliseconds` or at the next ring, whichever comes first. */
  wait(milliseconds: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      // Not unref'd: a batch being worked on is a reason to keep the process alive; stop() rings.
      const timer = setTimeout(done, Math.max(0, milliseconds));
      this.waiters.add(done);
    });
  }
}

function headerValue(headers: LineResponse['headers'], name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return String(Array.isArray(value) ? value[0] : value);
}

/** Milliseconds to wait after a 429: `retry-after-ms`, then `retry-after` (seconds or HTTP date), else backoff. */
export function retryDelayMs(headers: LineResponse['headers'], attempts: number, maxBackoffMs: number, now: number): number {
  const milliseconds = Number(headerValue(headers, 'retry-after-ms'));
  if (Number.isFinite(milliseconds) && milliseconds > 0) return milliseconds;
  const retryAfter = headerValue(headers, 'retry-after')?.trim();
  if (retryAfter !== undefined && retryAfter !== '') {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds)) return Math.max(100, seconds * 1000);
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(100, date - now);
  }
  return Math.min(maxBackoffMs, 1000 * 2 ** Math.min(attempts, 20));
}

interface Lease {
  readonly lost: boolean;
  stop(): void;
}

export class BatchWorker {
  readonly workerId: string;
  private readonly repository: BatchesRepository;
  private readonly files: FileService;
  private readonly execute: LineExecutor;
  private readonly clock: Clock;
  private readonly maxLineBytes: number;
  private readonly lineConcurrency: number;
  private readonly maxActiveBatches: number;
  private readonly leaseMs: number;
  private readonly pollIntervalMs: number;
  private readonly maxRequestsPerBatch: number;
  private readonly maxBackoffMs: number;
  private readonly purgeIntervalMs: number;
  private readonly log: WorkerLog | undefined;
  private readonly active = new Map<string, Promise<void>>();
  private readonly doorbells = new Set<Doorbell>();
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  private ticking: Promise<void> | undefined;
  private tickAgain = false;
  private lastPurgeAt = Number.NEGATIVE_INFINITY;

  constructor(options: BatchWorkerOptions) {
    this.repository = options.repository;
    this.files = options.files;
    this.execute = options.execute;
    this.clock = options.clock ?? systemClock;
    this.maxLineBytes = options.maxLineBytes;
    this.workerId = options.workerId ?? `worker-${randomAlphanumeric(12)}`;
    this.lineConcurrency = options.lineConcurrency ?? 4;
    this.maxActiveBatches = options.maxActiveBatches ?? 2;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.maxRequestsPerBatch = options.maxRequestsPerBatch ?? 50_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 60_000;
    this.purgeIntervalMs = options.purgeIntervalMs ?? 600_000;
    this.log = options.log;
  }

  /** Starts polling for work. */
  start(): void {
    this.stopping = false;
    this.timer = setInterval(() => this.wake(), this.pollIntervalMs);
    this.timer.unref();
    this.wake();
  }

  /** Looks for work now (a batch was created or canceled in this process). */
  wake(): void {
    if (this.stopping) return;
    if (this.ticking !== undefined) {
      this.tickAgain = true;
      return;
    }
    this.ticking = this.tick().finally(() => {
      this.ticking = undefined;
    });
  }

  /** Stops claiming, lets running lines finish (their outcomes are recorded), releases every lease. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    for (const doorbell of this.doorbells) doorbell.ring();
    await this.ticking;
    await Promise.allSettled([...this.active.values()]);
  }

  /** Claims and works until no batch has work left that can be done now (tests and tools). */
  async runUntilIdle(): Promise<void> {
    for (;;) {
      this.wake();
      await this.ticking;
      if (this.active.size === 0) return;
      await Promise.allSettled([...this.active.values()]);
    }
  }

  private async tick(): Promise<void> {
    try {
      do {
        this.tickAgain = false;
        while (!this.stopping && this.active.size < this.maxActiveBatches) {
          const batch = await this.repository.claim(this.workerId, this.clock.now(), this.leaseMs);
          if (batch === undefined) break;
          if (this.active.has(batch.id)) continue;
          const run = this.process(batch)
            .catch((error: unknown) => this.log?.error({ err: error, batch_id: batch.id }, 'batch processing failed'))
            .finally(() => {
              this.active.delete(batch.id);
              this.wake();
            });
          this.active.set(batch.id, run);
        }
        await this.purgeExpiredFiles();
      } while (this.tickAgain && !this.stopping);
    } catch (error) {
      // The database being briefly away must not stop the worker; the next poll tries again.
      this.log?.error({ err: error }, 'batch worker poll failed');
    }
  }

  private async purgeExpiredFiles(): Promise<void> {
    const now = this.clock.now();
    if (now - this.lastPurgeAt < this.purgeIntervalMs) return;
    this.lastPurgeAt = now;
    await this.files.purgeExpired();
  }

  private holdLease(batchId: string): Lease {
    let lost = false;
    const timer = setInterval(() => {
      this.repository.renewLease(batchId, this.workerId, this.clock.now(), this.leaseMs).then(
        (held) => {
          if (!held) lost = true;
        },
        (error: unknown) => this.log?.error({ err: error, batch_id: batchId }, 'lease renewal failed'),
      );
    }, Math.max(10, Math.floor(this.leaseMs / 3)));
    timer.unref();
    return {
      get lost() {
        return lost;
      },
      stop: () => clearInterval(timer),
    };
  }

  /** The batch as stored, or undefined when this worker no longer holds its lease. */
  private async reload(batchId: string): Promise<BatchRecord | undefined> {
    const batch = await this.repository.findById(batchId);
    return batch?.leaseOwner === this.workerId ? batch : undefined;
  }

  private async process(claimed: BatchRecord): Promise<void> {
    const lease = this.holdLease(claimed.id);
    try {
      let batch: BatchRecord | undefined = claimed;
      while (batch !== undefined && !lease.lost && !this.stopping) {
        switch (batch.status) {
          case 'validating':
            batch = this.clock.now() >= batch.expiresAt ? await this.expire(batch) : await this.validate(batch);
            break;
          case 'in_progress':
            batch = await this.run(batch, lease);
            break;
          case 'finalizing':
            batch = await this.finalize(batch, 'completed');
            break;
          case 'canceled':
            if (!batch.resultsWritten) await this.finalize(batch, 'canceled');
            return;
          default:
            return;
        }
      }
    } finally {
      lease.stop();
      await this.repository.releaseLease(claimed.id, this.workerId);
    }
  }

  private async validate(batch: BatchRecord): Promise<BatchRecord | undefined> {
    let content;
    try {
      content = (await this.files.openContent(batch.organizationId, batch.inputFileId)).content;
    } catch (error) {
      if (!isServiceError(error) || error.status >= 500) throw error;
      await this.repository.transition(batch.id, this.workerId, ['validating'], {
        status: 'failed',
        failed_at: this.clock.now(),
        results_written: 1,
        errors: JSON.stringify([{ code: 'invalid_input_file', message: error.message, line: null, param: 'input_file_id' }]),
      });
      return this.reload(batch.id);
    }
    // A worker that died half-way through validation may have stored some rows already.
    await this.repository.deleteRequests(batch.id);
    const summary = await validateBatchInput(
      content,
      { endpoint: batch.endpoint, maxLineBytes: this.maxLineBytes, maxRequests: this.maxRequestsPerBatch },
      (requests) => this.repository.insertRequests(batch.id, requests),
    );
    if (summary.errors.length > 0) {
      await this.repository.deleteRequests(batch.id);
      await this.repository.transition(batch.id, this.workerId, ['validating'], {
        status: 'failed',
        failed_at: this.clock.now(),
        results_written: 1,
        errors: JSON.stringify(summary.errors),
      });
    } else {
      await this.repository.transition(batch.id, this.workerId, ['validating'], { status: 'in_progress', in_progress_at: this.clock.now(), total: summary.total });
    }
    return this.reload(batch.id);
  }

  /** Runs the pending lines until none is left, the batch leaves in_progress, expires, or work must stop. */
  private async run(batch: BatchRecord, lease: Lease): Promise<BatchRecord | undefined> {
    const doorbell = new Doorbell();
    this.doorbells.add(doorbell);
    const inFlight = new Map<number, Promise<void>>();
    let stopReason: 'expired' | 'changed' | 'halt' | undefined;
    try {
      for (;;) {
        if (lease.lost || this.stopping) {
          stopReason = 'halt';
          break;
        }
        const now = this.clock.now();
        if (now >= batch.expiresAt) {
          stopReason = 'expired';
          break;
        }
        // Read before every round of new lines (one primary-key read, next to a model call): a cancel
        // made on any instance stops new lines at once.
        const fresh = await this.reload(batch.id);
        if (fresh?.status !== 'in_progress') {
          stopReason = 'changed';
          break;
        }
        const free = this.lineConcurrency - inFlight.size;
        if (free > 0) {
          for (const row of await this.repository.duePendingRequests(batch.id, now, free, [...inFlight.keys()])) {
            const running = this.runLine(batch, row)
              .catch((error: unknown) => this.log?.error({ err: error, batch_id: batch.id, line: row.line }, 'batch line failed to record'))
              .finally(() => {
                inFlight.delete(row.line);
                doorbell.ring();
              });
            inFlight.set(row.line, running);
          }
        }
        if (inFlight.size > 0) {
          await doorbell.wait(this.pollIntervalMs);
          continue;
        }
        const nextAt = await this.repository.nextPendingAt(batch.id);
        if (nextAt === undefined) {
          await this.repository.transition(batch.id, this.workerId, ['in_progress'], { status: 'finalizing', finalizing_at: this.clock.now() });
          return await this.reload(batch.id);
        }
        // Every pending line waits for a retry time (rate limited): sleep until the first is due.
        await doorbell.wait(Math.min(nextAt - now, this.pollIntervalMs, batch.expiresAt - now));
      }
      await Promise.allSettled([...inFlight.values()]);
      if (stopReason === 'expired') return await this.expire(batch);
      if (stopReason === 'changed') return await this.reload(batch.id);
      return undefined;
    } finally {
      await Promise.allSettled([...inFlight.values()]);
      this.doorbells.delete(doorbell);
    }
  }

  private async runLine(batch: BatchRecord, row: BatchRequestRow): Promise<void> {
    let response: LineResponse;
    try {
      response = await this.execute({ keyId: batch.keyId, url: batch.endpoint, body: row.body });
    } catch (error) {
      this.log?.error({ err: error, batch_id: batch.id, line: row.line }, 'batch line could not be executed');
      await this.repository.recordOutcome(batch.id, row.line, {
        state: 'failed',
        resultId: newId.batchRequest(),
        statusCode: null,
        requestId: null,
        responseBody: null,
        errorCode: 'server_error',
        errorMessage: 'The server could not execute this request.',
        finishedAt: this.clock.now(),
      });
      return;
    }
    const now = this.clock.now();
    if (response.statusCode === 429) {
      // Rate limited under the key's normal limits: try again later, within the 24-hour window.
      await this.repository.deferRequest(batch.id, row.line, now + retryDelayMs(response.headers, row.attempts, this.maxBackoffMs, now));
      return;
    }
    const succeeded = response.statusCode >= 200 && response.statusCode < 300;
    const outcome: BatchOutcome = {
      state: succeeded ? 'completed' : 'failed',
      resultId: newId.batchRequest(),
      statusCode: response.statusCode,
      requestId: headerValue(response.headers, 'x-request-id') ?? null,
      responseBody: response.body,
      errorCode: succeeded ? null : response.statusCode >= 500 ? 'server_error' : 'invalid_request',
      errorMessage: succeeded ? null : errorMessageOf(response),
      finishedAt: now,
    };
    await this.repository.recordOutcome(batch.id, row.line, outcome);
  }

  /** The window ran out: lines not run fail as `batch_expired`, results are written, status expired. */
  private async expire(batch: BatchRecord): Promise<BatchRecord | undefined> {
    await this.repository.failPending(batch.id, 'batch_expired', EXPIRED_MESSAGE, this.clock.now());
    const current = await this.reload(batch.id);
    return current === undefined ? undefined : this.finalize(current, 'expired');
  }

  /** Writes the output and error files and records them with the final status, in one transaction. */
  private async finalize(batch: BatchRecord, outcome: 'completed' | 'expired' | 'canceled'): Promise<BatchRecord | undefined> {
    const written: FileRecord[] = [];
    try {
      const output = await this.writeResultFile(batch, 'completed');
      if (output !== undefined) written.push(output);
      const errors = await this.writeResultFile(batch, 'failed');
      if (errors !== undefined) written.push(errors);
      const now = this.clock.now();
      const files = { output_file_id: output?.id ?? null, error_file_id: errors?.id ?? null, results_written: 1 };
      const from: BatchStatus[] = outcome === 'completed' ? ['finalizing'] : outcome === 'expired' ? ['validating', 'in_progress'] : ['canceled'];
      const changes =
        outcome === 'completed' ? { ...files, status: 'completed', completed_at: now } : outcome === 'expired' ? { ...files, status: 'expired', expired_at: now } : files;
      if (await this.repository.finish(batch.id, this.workerId, from, written, changes)) {
        // The result files now hold everything the rows did; the request bodies need not stay.
        await this.repository.deleteRequests(batch.id);
      } else {
        await this.discard(written);
      }
    } catch (error) {
      await this.discard(written);
      throw error;
    }
    return this.reload(batch.id);
  }

  private async discard(files: FileRecord[]): Promise<void> {
    for (const file of files) await this.files.discardBytes(file.id);
  }

  /** One result file (`completed` lines -> output file, `failed` -> error file); undefined when empty. */
  private async writeResultFile(batch: BatchRecord, state: 'completed' | 'failed'): Promise<FileRecord | undefined> {
    let lines = 0;
    const repository = this.repository;
    async function* content(): AsyncGenerator<string> {
      let afterLine = 0;
      for (;;) {
        const rows = await repository.finishedRequests(batch.id, state, afterLine, RESULT_PAGE);
        if (rows.length === 0) return;
        lines += rows.length;
        afterLine = rows[rows.length - 1]!.line;
        yield rows.map((row) => `${JSON.stringify(state === 'completed' ? toOutputLine(row) : toErrorLine(row))}\n`).join('');
      }
    }
    const stored = await this.files.storeBytes(content());
    if (lines === 0) {
      await this.files.discardBytes(stored.id);
      return undefined;
    }
    const now = this.clock.now();
    return {
      id: stored.id,
      organizationId: batch.organizationId,
      purpose: 'batch_output',
      filename: `${batch.id}_${state === 'completed' ? 'output' : 'error'}.jsonl`,
      bytes: stored.bytes,
      mediaType: 'application/jsonl',
      createdAt: now,
      expiresAt: now + BATCH_FILE_LIFETIME_MS,
      deletedAt: null,
      purgedAt: null,
    };
  }
}

/** The route's error message (SPEC envelope `error.message`), else a generic one naming the status. */
function errorMessageOf(response: LineResponse): string {
  try {
    const parsed = JSON.parse(response.body) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === 'string') return parsed.error.message;
  } catch {
    // Not JSON: fall through to the generic message.
  }
  return `The request failed with HTTP status ${response.statusCode}.`;
}
