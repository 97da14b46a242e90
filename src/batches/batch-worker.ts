/**
 * The batch engine: one worker per server process. Work is claimed through leases in the database
 * (see batches-repository.ts), so any number of instances share it and never fight over it:
 *
 * - batch-level steps (validate, move to finalizing, expire, write the result files) are claimed one
 *   batch at a time under a batch lease, by whichever instance is free;
 * - lines of running batches are claimed in chunks (line leases) by every instance with free
 *   capacity, so one large batch runs on all instances at once; a line's outcome, its counter and its
 *   usage-ledger rows are recorded in one transaction (done and billed, or neither);
 * - leases are renewed every third of `leaseMs` while work goes on and released on stop; a dead
 *   instance's leases lapse after `leaseMs` and another instance takes the work over; a restarted
 *   instance (same worker id) frees its old leases at start and resumes at once.
 *
 * The SPEC states: validating -> in_progress -> finalizing -> completed, and the side exits failed
 * (invalid or unreadable input, or the batch's key can no longer run it), canceled (results of the
 * lines already done are still written) and expired (24 hours passed; lines not run go to the error
 * file as `batch_expired`).
 *
 * Nothing loops hot: the worker looks for work when woken (a line finished, a batch was created or
 * canceled here) or every `pollIntervalMs`; a claim that fails (database away) backs off
 * exponentially, and a batch-level step that fails for a reason that may heal backs off across all
 * instances (`retry_at`), until `maxStepAttempts` failures fail the batch. Each failure is logged once.
 */
import { performance } from 'node:perf_hooks';
import { randomAlphanumeric, newId } from '../core/ids.ts';
import { isServiceError } from '../core/service-error.ts';
import { isUnreachableError } from '../core/circuit-breaker.ts';
import type { FileRecord } from '../db/repositories/files-repository.ts';
import type { BatchesRepository, BatchOutcome, BatchRecord, BatchRequestRow, BatchStatus } from '../db/repositories/batches-repository.ts';
import { systemClock, type Clock } from '../limits/clock.ts';
import { BATCH_FILE_LIFETIME_MS, type FileService } from '../services/files/file-service.ts';
import type { LedgerRecord } from '../services/metering/usage-ledger.ts';
import { toErrorLine, toOutputLine } from './batch-result-lines.ts';
import { validateBatchInput } from './validate-batch-input.ts';

/** One batch line to run: POST `url` with the JSON text `body` on behalf of `keyId`. */
export interface LineRequest {
  keyId: string;
  url: string;
  /** JSON text of the request body. */
  body: string;
  /** The batch and the 1-based line this request is (for its trace). */
  batchId?: string;
  line?: number;
}

export interface LineResponse {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  /** Response body text. */
  body: string;
  /** The line's usage-ledger records, written with its outcome (none when nothing was metered). */
  ledger?: readonly LedgerRecord[];
  /** Set when no line of this batch can succeed any more (its key was revoked): the batch fails. */
  fatal?: { code: string; message: string };
  /**
   * Set when the line failed because something it needs is unavailable for now (a dependency down,
   * Switchyard's own `service_unavailable`): the line is deferred like a 429, never failed for it.
   */
  transient?: boolean;
}

/** Executes one line; production runs it through the services in-process (service-line-executor.ts). */
export type LineExecutor = (request: LineRequest) => Promise<LineResponse>;

export interface WorkerLog {
  error(details: object, message: string): void;
  info?(details: object, message: string): void;
}

export interface BatchWorkerOptions {
  repository: BatchesRepository;
  files: FileService;
  execute: LineExecutor;
  /** Largest input line, bytes (the JSON request body limit). */
  maxLineBytes: number;
  clock?: Clock;
  /** Name of this worker in leases; random by default. Keep it across restarts to resume at once. */
  workerId?: string;
  /** Batch lines this process runs at once, over all batches. Default 16. */
  concurrency?: number;
  /** Lines claimed at once (one chunk, one lease). Default 50. */
  chunkSize?: number;
  /** Batch-level steps (validate, finalize) this process works on at once. Default 2. */
  maxActiveSteps?: number;
  /** How long a claim lasts without renewal, milliseconds (renewed every third of it). Default 9,000. */
  leaseMs?: number;
  /** How often to look for work when nothing wakes the worker, milliseconds. Default 1,000. */
  pollIntervalMs?: number;
  /** Most requests per batch (SPEC: above 50,000 needs a custom plan). Default 50,000. */
  maxRequestsPerBatch?: number;
  /** The batch's organization's requests-per-batch figure (its plan); when given, it replaces `maxRequestsPerBatch`. */
  requestsPerBatchOf?: (organizationId: string) => Promise<number>;
  /** Longest wait before retrying a rate-limited line (no retry-after) or a failing claim, milliseconds. Default 60,000. */
  maxBackoffMs?: number;
  /** First backoff of a failed batch-level step, doubled after each further failure, milliseconds. Default 1,000. */
  stepRetryBaseMs?: number;
  /** Failures in a row of a batch-level step before the batch fails. Default 5. */
  maxStepAttempts?: number;
  /** How often expired files' bytes are removed, milliseconds. Default 600,000. */
  purgeIntervalMs?: number;
  /** In-flight interactive HTTP requests of this process; above `interactiveThreshold`, batch lines yield. */
  interactiveLoad?: () => number;
  /** Interactive requests in flight above which this process runs (and claims) a quarter of `concurrency`. Default 32. */
  interactiveThreshold?: number;
  log?: WorkerLog;
}

/** The knobs a deployment or a test may turn (everything but the collaborators). */
export type BatchWorkerTuning = Pick<
  BatchWorkerOptions,
  | 'workerId'
  | 'concurrency'
  | 'chunkSize'
  | 'maxActiveSteps'
  | 'leaseMs'
  | 'pollIntervalMs'
  | 'maxRequestsPerBatch'
  | 'maxBackoffMs'
  | 'stepRetryBaseMs'
  | 'maxStepAttempts'
  | 'purgeIntervalMs'
  | 'interactiveThreshold'
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

  /** Waits the whole `milliseconds` (a backoff), however often it rings, unless `cut()` turns true. */
  async sleep(milliseconds: number, cut: () => boolean): Promise<void> {
    const until = performance.now() + milliseconds;
    while (!cut()) {
      const left = until - performance.now();
      if (left <= 0) return;
      await this.wait(left);
    }
  }
}

function headerValue(headers: LineResponse['headers'], name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return String(Array.isArray(value) ? value[0] : value);
}

/**
 * Deferrals of one line for "unavailable for now" before it is failed after all: with the backoff
 * capped at `maxBackoffMs` (default 60 s) that is about half an hour of a dependency or backend down;
 * a backend that never comes back (a model that cannot load) fails the line instead of holding it 24 h.
 */
const MAX_TRANSIENT_DEFERRALS = 40;

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

/** A claimed line waiting for (or in) execution. */
interface HeldLine {
  batch: BatchRecord;
  row: BatchRequestRow;
}

/** What a batch-level step failed on, for the log and, at the last attempt, the batch's `errors`. */
const STEP_NAMES: Partial<Record<BatchStatus, string>> = {
  validating: 'validate',
  in_progress: 'finish',
  finalizing: 'finalize',
  canceled: 'write results',
  failed: 'write results',
};

export class BatchWorker {
  readonly workerId: string;
  private readonly repository: BatchesRepository;
  private readonly files: FileService;
  private readonly execute: LineExecutor;
  private readonly clock: Clock;
  private readonly maxLineBytes: number;
  private readonly concurrency: number;
  private readonly chunkSize: number;
  private readonly maxActiveSteps: number;
  private readonly leaseMs: number;
  private readonly pollIntervalMs: number;
  private readonly maxRequestsPerBatch: number;
  private readonly requestsPerBatchOf: ((organizationId: string) => Promise<number>) | undefined;
  private readonly maxBackoffMs: number;
  private readonly stepRetryBaseMs: number;
  private readonly maxStepAttempts: number;
  private readonly purgeIntervalMs: number;
  private readonly interactiveLoad: () => number;
  private readonly interactiveThreshold: number;
  private readonly log: WorkerLog | undefined;

  /** Claimed lines not started yet, in claim order. */
  private queue: HeldLine[] = [];
  /** Lines executing now. */
  private readonly running = new Set<Promise<void>>();
  /** Lines held (queued or running) per batch id: the last one out moves the batch to finalizing. */
  private readonly heldPerBatch = new Map<string, number>();
  /** Batch-level steps running, by batch id (this worker holds their batch lease). */
  private readonly steps = new Map<string, Promise<void>>();
  /** Status reads in flight, by batch id (shared by lines starting together). */
  private readonly statuses = new Map<string, Promise<BatchStatus | undefined>>();
  private readonly doorbell = new Doorbell();
  private loop: Promise<void> | undefined;
  private renewal: NodeJS.Timeout | undefined;
  private renewalFailing = false;
  private stopping = false;
  private lastPurgeAt = Number.NEGATIVE_INFINITY;

  constructor(options: BatchWorkerOptions) {
    this.repository = options.repository;
    this.files = options.files;
    this.execute = options.execute;
    this.clock = options.clock ?? systemClock;
    this.maxLineBytes = options.maxLineBytes;
    this.workerId = options.workerId ?? `worker-${randomAlphanumeric(12)}`;
    this.concurrency = Math.max(1, options.concurrency ?? 16);
    this.chunkSize = Math.max(1, options.chunkSize ?? 50);
    this.maxActiveSteps = Math.max(1, options.maxActiveSteps ?? 2);
    this.leaseMs = options.leaseMs ?? 9_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.maxRequestsPerBatch = options.maxRequestsPerBatch ?? 50_000;
    this.requestsPerBatchOf = options.requestsPerBatchOf;
    this.maxBackoffMs = options.maxBackoffMs ?? 60_000;
    this.stepRetryBaseMs = options.stepRetryBaseMs ?? 1_000;
    this.maxStepAttempts = Math.max(1, options.maxStepAttempts ?? 5);
    this.purgeIntervalMs = options.purgeIntervalMs ?? 600_000;
    this.interactiveLoad = options.interactiveLoad ?? (() => 0);
    this.interactiveThreshold = options.interactiveThreshold ?? 32;
    this.log = options.log;
  }

  /**
   * Frees the leases this worker id held in an earlier life (a restart after a crash), then looks for
   * work when woken and every `pollIntervalMs`.
   */
  start(): void {
    this.stopping = false;
    this.startRenewal();
    this.loop = this.runLoop();
  }

  /** Looks for work now (a batch was created or canceled in this process). */
  wake(): void {
    this.doorbell.ring();
  }

  /** Stops claiming, lets running lines and steps finish (outcomes recorded), gives back every lease. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.doorbell.ring();
    await this.loop;
    await this.releaseQueued(() => true);
    await Promise.allSettled([...this.running, ...this.steps.values()]);
    if (this.renewal !== undefined) clearInterval(this.renewal);
    this.renewal = undefined;
  }

  /** Claims and works until no batch has work that can be done now or within 5 s (tests and tools). */
  async runUntilIdle(): Promise<void> {
    this.startRenewal();
    try {
      for (;;) {
        const claimed = await this.cycle();
        while (this.running.size > 0 || this.steps.size > 0 || this.queue.length > 0) {
          await Promise.allSettled([...this.running, ...this.steps.values()]);
          this.startQueuedLines();
        }
        if (claimed) continue;
        // Lines waiting for a retry time (rate limited) soon: wait for them instead of returning (lines
        // another worker holds are its work, not this one's).
        const now = this.clock.now();
        const nextAt = await this.repository.nextRunningPendingAt(now);
        if (nextAt === undefined || nextAt - now > 5_000) return;
        await new Promise((resolve) => setTimeout(resolve, Math.max(1, nextAt - now)));
      }
    } finally {
      if (this.loop === undefined && this.renewal !== undefined) {
        clearInterval(this.renewal);
        this.renewal = undefined;
      }
    }
  }

  private startRenewal(): void {
    if (this.renewal !== undefined) return;
    this.renewal = setInterval(() => void this.renew(), Math.max(10, Math.floor(this.leaseMs / 3)));
    this.renewal.unref();
  }

  /** Extends every lease held (one statement for all lines, one per step); a failure is logged once until renewal works again. */
  private async renew(): Promise<void> {
    try {
      const now = this.clock.now();
      if (this.heldPerBatch.size > 0) await this.repository.renewLines(this.workerId, now, this.leaseMs);
      for (const batchId of this.steps.keys()) await this.repository.renewLease(batchId, this.workerId, now, this.leaseMs);
      if (this.renewalFailing) this.log?.info?.({ worker_id: this.workerId }, 'batch lease renewal works again');
      this.renewalFailing = false;
    } catch (error) {
      if (!this.renewalFailing)
        this.log?.error({ err: error, worker_id: this.workerId }, 'batch lease renewal failed; retrying every third of the lease');
      this.renewalFailing = true;
    }
  }

  private async runLoop(): Promise<void> {
    let released = false;
    let failures = 0;
    while (!this.stopping) {
      let delayMs = this.pollIntervalMs;
      try {
        if (!released) {
          // Leases under this worker id are from a previous life of this instance: nothing runs them now.
          const freed = await this.repository.releaseAllHeldBy(this.workerId);
          if (freed > 0)
            this.log?.info?.({ worker_id: this.workerId, leases: freed }, 'freed the batch leases of this instance before its restart');
          released = true;
        }
        await this.cycle();
        failures = 0;
      } catch (error) {
        failures += 1;
        delayMs = Math.min(this.maxBackoffMs, this.pollIntervalMs * 2 ** failures);
        this.log?.error(
          { err: error, worker_id: this.workerId, failures, retry_in_ms: delayMs },
          'batch worker could not claim work; backing off',
        );
        await this.doorbell.sleep(delayMs, () => this.stopping);
        continue;
      }
      await this.doorbell.wait(delayMs);
    }
  }

  /** Lines this process runs at once now: a quarter of `concurrency` while interactive traffic is high. */
  private capacity(): number {
    return this.interactiveLoad() > this.interactiveThreshold ? Math.max(1, Math.floor(this.concurrency / 4)) : this.concurrency;
  }

  /** One round: claim batch-level steps and line chunks up to capacity and start them. True when anything was claimed. */
  private async cycle(): Promise<boolean> {
    let claimed = false;
    while (!this.stopping && this.steps.size < this.maxActiveSteps) {
      const batch = await this.repository.claimStep(this.workerId, this.clock.now(), this.leaseMs);
      if (batch === undefined) break;
      claimed = true;
      this.startStep(batch);
    }
    for (;;) {
      if (this.stopping) break;
      const capacity = this.capacity();
      const held = this.queue.length + this.running.size;
      // Keep about one round queued: enough to stay busy, little enough that other instances get lines.
      const chunk = Math.min(capacity < this.concurrency ? capacity : this.chunkSize, capacity + this.chunkSize - held);
      if (this.queue.length >= capacity || chunk <= 0) break;
      const lines = await this.repository.claimLines(this.workerId, this.clock.now(), this.leaseMs, chunk);
      if (lines === undefined) break;
      claimed = true;
      for (const row of lines.lines) this.queue.push({ batch: lines.batch, row });
      this.heldPerBatch.set(lines.batch.id, (this.heldPerBatch.get(lines.batch.id) ?? 0) + lines.lines.length);
      this.startQueuedLines();
    }
    this.startQueuedLines();
    await this.purgeExpiredFiles();
    return claimed;
  }

  private async purgeExpiredFiles(): Promise<void> {
    const now = this.clock.now();
    if (now - this.lastPurgeAt < this.purgeIntervalMs) return;
    this.lastPurgeAt = now;
    await this.files.purgeExpired();
  }

  private startQueuedLines(): void {
    while (!this.stopping && this.running.size < this.capacity() && this.queue.length > 0) {
      const held = this.queue.shift()!;
      const run: Promise<void> = this.runLine(held)
        .catch((error: unknown) =>
          this.log?.error(
            { err: error, batch_id: held.batch.id, line: held.row.line },
            'batch line failed to record; its lease lapses and it runs again',
          ),
        )
        .then(() => this.lineDone(held.batch.id, 1))
        .finally(() => {
          this.running.delete(run);
          this.startQueuedLines();
          this.doorbell.ring();
        });
      this.running.add(run);
    }
  }

  /** Counts lines of a batch no longer held; the last one out moves the batch to finalizing when nothing is pending. */
  private async lineDone(batchId: string, count: number): Promise<void> {
    const left = (this.heldPerBatch.get(batchId) ?? count) - count;
    if (left > 0) {
      this.heldPerBatch.set(batchId, left);
      return;
    }
    this.heldPerBatch.delete(batchId);
    try {
      if (await this.repository.finishIfDone(batchId, this.clock.now())) this.doorbell.ring();
    } catch (error) {
      // Not lost: the step claim also finds running batches with no pending line.
      this.log?.error({ err: error, batch_id: batchId }, 'could not move the batch to finalizing; another claim will');
    }
  }

  /** Gives back queued (unstarted) lines matching `which`, grouped per batch. */
  private async releaseQueued(which: (held: HeldLine) => boolean): Promise<void> {
    const released = this.queue.filter(which);
    if (released.length === 0) return;
    this.queue = this.queue.filter((held) => !which(held));
    const perBatch = new Map<string, number[]>();
    for (const held of released) perBatch.set(held.batch.id, [...(perBatch.get(held.batch.id) ?? []), held.row.line]);
    for (const [batchId, lines] of perBatch) {
      try {
        await this.repository.releaseLines(batchId, this.workerId, lines);
      } catch (error) {
        this.log?.error(
          { err: error, batch_id: batchId, lines: lines.length },
          'could not give back claimed lines; their lease lapses instead',
        );
      }
      await this.lineDone(batchId, lines.length);
    }
  }

  /**
   * The batch's status, read before each line starts (a cancel made on any instance stops new lines at
   * once); lines starting together share one read.
   */
  private batchStatus(batchId: string): Promise<BatchStatus | undefined> {
    const reading = this.statuses.get(batchId);
    if (reading !== undefined) return reading;
    const status = this.repository.findById(batchId).then((batch) => batch?.status);
    this.statuses.set(batchId, status);
    const forget = (): void => {
      if (this.statuses.get(batchId) === status) this.statuses.delete(batchId);
    };
    status.then(forget, forget);
    return status;
  }

  private async runLine({ batch, row }: HeldLine): Promise<void> {
    const status = await this.batchStatus(batch.id);
    if (this.stopping || status !== 'in_progress' || this.clock.now() >= batch.expiresAt) {
      // Canceled, failed or expired meanwhile (or stopping): give the line and its queued siblings back unrun.
      await this.repository.releaseLines(batch.id, this.workerId, [row.line]);
      await this.releaseQueued((held) => held.batch.id === batch.id);
      return;
    }
    let response: LineResponse;
    try {
      response = await this.execute({ keyId: batch.keyId, url: batch.endpoint, body: row.body, batchId: batch.id, line: row.line });
    } catch (error) {
      if (isUnreachableError(error)) {
        const now = this.clock.now();
        this.noteDeferral(batch.id, row.line, error);
        await this.repository.deferRequest(batch.id, row.line, now + retryDelayMs({}, row.attempts, this.maxBackoffMs, now));
        return;
      }
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
    if (response.fatal !== undefined) {
      // The batch's key can no longer run it: the batch fails (every pending line with it), results are written.
      const error = { code: response.fatal.code, message: response.fatal.message, line: null, param: null };
      if (await this.repository.failRunning(batch.id, error, 'batch_failed', now)) {
        this.log?.info?.({ batch_id: batch.id, code: error.code }, 'batch failed: its key can no longer run it');
      }
      await this.releaseQueued((held) => held.batch.id === batch.id);
      return;
    }
    const transient = response.transient === true && row.attempts < MAX_TRANSIENT_DEFERRALS;
    if (response.statusCode === 429 || transient) {
      // Rate limited (quota, or the upstream), or something it needs is down for now: try again later,
      // within the 24-hour window.
      if (transient) this.noteDeferral(batch.id, row.line, response.body);
      await this.repository.deferRequest(
        batch.id,
        row.line,
        now + retryDelayMs(response.headers, row.attempts, this.maxBackoffMs, now),
        response.ledger,
      );
      return;
    }
    const succeeded = response.statusCode >= 200 && response.statusCode < 300;
    if (succeeded) this.endDeferrals();
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
    await this.repository.recordOutcome(batch.id, row.line, outcome, response.ledger);
  }

  /** Lines deferred because a dependency was down, since the first of them (logged once, then at the end). */
  private deferring: { sinceMs: number; lines: number } | undefined;

  private noteDeferral(batchId: string, line: number, reason: unknown): void {
    if (this.deferring !== undefined) {
      this.deferring.lines++;
      return;
    }
    this.deferring = { sinceMs: this.clock.now(), lines: 1 };
    this.log?.error(
      {
        batch_id: batchId,
        line,
        reason: typeof reason === 'string' ? reason : undefined,
        err: typeof reason === 'string' ? undefined : reason,
      },
      'batch lines are deferred: something they need is unavailable; they run again when it is back',
    );
  }

  private endDeferrals(): void {
    if (this.deferring === undefined) return;
    this.log?.info?.(
      { deferred_lines: this.deferring.lines, for_ms: this.clock.now() - this.deferring.sinceMs },
      'batch lines run again: the deferred ones are retried',
    );
    this.deferring = undefined;
  }

  private startStep(claimed: BatchRecord): void {
    const run = this.step(claimed)
      .catch((error: unknown) => this.stepFailed(claimed, error))
      .catch((error: unknown) =>
        this.log?.error({ err: error, batch_id: claimed.id }, 'batch step failure could not be recorded; its lease lapses instead'),
      )
      .finally(async () => {
        this.steps.delete(claimed.id);
        await this.repository.releaseLease(claimed.id, this.workerId).catch(() => undefined);
        this.doorbell.ring();
      });
    this.steps.set(claimed.id, run);
  }

  /** Moves a claimed batch through its batch-level steps until it needs lines run, finishes, or work must stop. */
  private async step(claimed: BatchRecord): Promise<void> {
    let batch: BatchRecord | undefined = claimed;
    while (batch !== undefined && !this.stopping) {
      switch (batch.status) {
        case 'validating':
          batch = this.clock.now() >= batch.expiresAt ? await this.expire(batch) : await this.validate(batch);
          break;
        case 'in_progress':
          if (this.clock.now() >= batch.expiresAt) {
            batch = await this.expire(batch);
          } else {
            await this.repository.finishIfDone(batch.id, this.clock.now());
            batch = await this.reload(batch.id);
            // Still running (lines pending): the lines are claimed separately, by any instance.
            if (batch?.status === 'in_progress') return;
          }
          break;
        case 'finalizing':
          batch = await this.finalize(batch, 'completed');
          break;
        case 'canceled':
        case 'failed':
          if (!batch.resultsWritten) await this.finalize(batch, batch.status);
          return;
        default:
          return;
      }
    }
  }

  /**
   * A batch-level step threw. A ServiceError from reading the input (the file or its bytes are gone)
   * fails the batch at once; anything else may heal (database or storage briefly away): the batch backs
   * off on every instance, twice as long each time, and fails after `maxStepAttempts`.
   */
  private async stepFailed(claimed: BatchRecord, error: unknown): Promise<void> {
    const attempts = claimed.stepAttempts + 1;
    const step = STEP_NAMES[claimed.status] ?? claimed.status;
    const message = error instanceof Error ? error.message : String(error);
    if (attempts >= this.maxStepAttempts) {
      this.log?.error({ err: error, batch_id: claimed.id, step, attempts }, 'batch step keeps failing; the batch fails');
      await this.giveUp(claimed, `The batch could not ${step} after ${attempts} attempts: ${message}`);
      return;
    }
    const backoffMs = Math.min(this.maxBackoffMs, this.stepRetryBaseMs * 2 ** (attempts - 1));
    this.log?.error({ err: error, batch_id: claimed.id, step, attempts, retry_in_ms: backoffMs }, 'batch step failed; backing off');
    await this.repository.stepFailed(claimed.id, this.workerId, this.clock.now(), backoffMs);
  }

  /** The batch fails for good with `message` in its `errors` (results of lines already done are still written). */
  private async giveUp(batch: BatchRecord, message: string): Promise<void> {
    const now = this.clock.now();
    const error = {
      code: batch.status === 'validating' ? 'invalid_input_file' : 'server_error',
      message,
      line: null,
      param: batch.status === 'validating' ? 'input_file_id' : null,
    };
    if (batch.status === 'validating') {
      await this.repository.deleteRequests(batch.id);
      await this.repository.transition(batch.id, this.workerId, ['validating'], {
        status: 'failed',
        failed_at: now,
        results_written: 1,
        errors: JSON.stringify([error]),
      });
    } else if (batch.status === 'in_progress') {
      await this.repository.failRunning(batch.id, error, 'batch_failed', now);
    } else {
      // The result files cannot be written: stop trying, say why.
      const changes = batch.status === 'finalizing' ? { status: 'failed', failed_at: now } : {};
      await this.repository.transition(batch.id, this.workerId, [batch.status], {
        ...changes,
        results_written: 1,
        errors: JSON.stringify([error]),
      });
    }
  }

  /** The batch as stored, or undefined when this worker no longer holds its lease. */
  private async reload(batchId: string): Promise<BatchRecord | undefined> {
    const batch = await this.repository.findById(batchId);
    return batch?.leaseOwner === this.workerId ? batch : undefined;
  }

  private async validate(batch: BatchRecord): Promise<BatchRecord | undefined> {
    let content;
    try {
      content = (await this.files.openContent(batch.organizationId, batch.inputFileId)).content;
    } catch (error) {
      // The file is gone, expired, or its bytes are missing from storage: no retry brings them back.
      if (!isServiceError(error)) throw error;
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
    const maxRequests =
      this.requestsPerBatchOf === undefined ? this.maxRequestsPerBatch : await this.requestsPerBatchOf(batch.organizationId);
    const summary = await validateBatchInput(
      content,
      { endpoint: batch.endpoint, maxLineBytes: this.maxLineBytes, maxRequests },
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
      await this.repository.transition(batch.id, this.workerId, ['validating'], {
        status: 'in_progress',
        in_progress_at: this.clock.now(),
        total: summary.total,
      });
      this.doorbell.ring();
    }
    return this.reload(batch.id);
  }

  /** The window ran out: lines not run fail as `batch_expired`, results are written, status expired. */
  private async expire(batch: BatchRecord): Promise<BatchRecord | undefined> {
    await this.repository.failPending(batch.id, 'batch_expired', EXPIRED_MESSAGE, this.clock.now());
    const current = await this.reload(batch.id);
    return current === undefined ? undefined : this.finalize(current, 'expired');
  }

  /** Writes the output and error files and records them with the final status, in one transaction. */
  private async finalize(batch: BatchRecord, outcome: 'completed' | 'expired' | 'canceled' | 'failed'): Promise<BatchRecord | undefined> {
    const written: FileRecord[] = [];
    try {
      const output = await this.writeResultFile(batch, 'completed');
      if (output !== undefined) written.push(output);
      const errors = await this.writeResultFile(batch, 'failed');
      if (errors !== undefined) written.push(errors);
      const now = this.clock.now();
      const files = { output_file_id: output?.id ?? null, error_file_id: errors?.id ?? null, results_written: 1 };
      const from: BatchStatus[] =
        outcome === 'completed' ? ['finalizing'] : outcome === 'expired' ? ['validating', 'in_progress'] : [outcome];
      const changes =
        outcome === 'completed'
          ? { ...files, status: 'completed', completed_at: now }
          : outcome === 'expired'
            ? { ...files, status: 'expired', expired_at: now }
            : files;
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
