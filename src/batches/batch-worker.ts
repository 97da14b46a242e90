/**
 * The batch engine: one worker per server process. Work is claimed through leases in the database
 * (see db/repositories/batch-leases.ts), so any number of instances share it and never fight over it:
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
 * exponentially; a batch-level step that cannot reach a dependency (object store, database) waits
 * across all instances (`retry_at`, capped at `maxStepWaitMs`) for as long as it takes, without
 * counting an attempt; one that fails otherwise backs off until `maxStepAttempts` failures fail a batch
 * still validating or running (result files are never given up). Each failure is logged once.
 */
import { randomAlphanumeric } from '../core/ids.ts';
import { backoff, type BackoffPolicy } from '../core/retry.ts';
import type { BatchStore } from './batch-store.ts';
import { systemClock, type Clock } from '../limits/clock.ts';
import type { FileService } from '../services/files/file-service.ts';
import type { Tracing } from '../telemetry/trace-types.ts';
import { BatchSteps } from './batch-steps.ts';
import { LineRunner } from './line-runner.ts';
import type { LineExecutor } from './line-outcome.ts';
import { WorkerState, type WorkerLog } from './worker-state.ts';

export type { LineExecutor, LineRequest, LineResponse } from './line-outcome.ts';
export { retryDelayMs } from './line-outcome.ts';
export type { WorkerLog } from './worker-state.ts';

export interface BatchWorkerOptions {
  repository: BatchStore;
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
  /** Failures in a row of a batch-level step before the batch fails (validating or running; waits for a dependency do not count). Default 5. */
  maxStepAttempts?: number;
  /** Longest wait of a batch-level step for a dependency it cannot reach (first wait `stepRetryBaseMs`), milliseconds. Default 30,000. */
  maxStepWaitMs?: number;
  /** How often expired files' bytes are removed, milliseconds. Default 600,000. */
  purgeIntervalMs?: number;
  /** In-flight interactive HTTP requests of this process; above `interactiveThreshold`, batch lines yield. */
  interactiveLoad?: () => number;
  /** Interactive requests in flight above which this process runs (and claims) a quarter of `concurrency`. Default 32. */
  interactiveThreshold?: number;
  log?: WorkerLog;
  /** Traces (undefined: off): a batch that ends here gets the root span of its trace. */
  tracing?: Pick<Tracing, 'endBatch'> | undefined;
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
  | 'maxStepWaitMs'
  | 'purgeIntervalMs'
  | 'interactiveThreshold'
>;

export class BatchWorker {
  readonly workerId: string;
  private readonly state: WorkerState;
  private readonly files: FileService;
  private readonly lines: LineRunner;
  private readonly steps: BatchSteps;
  private readonly maxActiveSteps: number;
  private readonly leaseMs: number;
  private readonly pollIntervalMs: number;
  /** Backoff of a failing claim: the poll interval doubled per failure, at most `maxBackoffMs`. */
  private readonly claimBackoff: BackoffPolicy;
  private readonly purgeIntervalMs: number;
  private loop: Promise<void> | undefined;
  private renewal: NodeJS.Timeout | undefined;
  private renewalFailing = false;
  private lastPurgeAt = Number.NEGATIVE_INFINITY;
  private purgeFailing = false;

  constructor(options: BatchWorkerOptions) {
    this.workerId = options.workerId ?? `worker-${randomAlphanumeric(12)}`;
    this.state = new WorkerState(this.workerId, options.repository, options.clock ?? systemClock, options.log);
    this.files = options.files;
    const maxBackoffMs = options.maxBackoffMs ?? 60_000;
    this.lines = new LineRunner(this.state, {
      execute: options.execute,
      concurrency: Math.max(1, options.concurrency ?? 16),
      chunkSize: Math.max(1, options.chunkSize ?? 50),
      maxBackoffMs,
      interactiveLoad: options.interactiveLoad ?? (() => 0),
      interactiveThreshold: options.interactiveThreshold ?? 32,
    });
    this.steps = new BatchSteps(this.state, {
      files: options.files,
      maxLineBytes: options.maxLineBytes,
      maxRequestsPerBatch: options.maxRequestsPerBatch ?? 50_000,
      requestsPerBatchOf: options.requestsPerBatchOf,
      stepBackoff: { initialMs: options.stepRetryBaseMs ?? 1_000, maxMs: maxBackoffMs },
      maxStepAttempts: Math.max(1, options.maxStepAttempts ?? 5),
      stepWait: { initialMs: options.stepRetryBaseMs ?? 1_000, maxMs: options.maxStepWaitMs ?? 30_000 },
      tracing: options.tracing,
    });
    this.maxActiveSteps = Math.max(1, options.maxActiveSteps ?? 2);
    this.leaseMs = options.leaseMs ?? 9_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.claimBackoff = { initialMs: this.pollIntervalMs, maxMs: maxBackoffMs };
    this.purgeIntervalMs = options.purgeIntervalMs ?? 600_000;
  }

  private get repository(): BatchStore {
    return this.state.repository;
  }

  /**
   * Frees the leases this worker id held in an earlier life (a restart after a crash), then looks for
   * work when woken and every `pollIntervalMs`.
   */
  start(): void {
    this.state.stopping = false;
    this.startRenewal();
    this.loop = this.runLoop();
  }

  /** Looks for work now (a batch was created or canceled in this process). */
  wake(): void {
    this.state.doorbell.ring();
  }

  /** Stops claiming, lets running lines and steps finish (outcomes recorded), gives back every lease. */
  async stop(): Promise<void> {
    this.state.stopping = true;
    this.state.doorbell.ring();
    await this.loop;
    await this.lines.releaseAll();
    await Promise.allSettled([...this.lines.inFlight(), ...this.steps.inFlight()]);
    if (this.renewal !== undefined) clearInterval(this.renewal);
    this.renewal = undefined;
  }

  /** Claims and works until no batch has work that can be done now or within 5 s (tests and tools). */
  async runUntilIdle(): Promise<void> {
    this.startRenewal();
    try {
      for (;;) {
        const claimed = await this.cycle();
        while (this.lines.busy() || this.steps.size > 0) {
          await Promise.allSettled([...this.lines.inFlight(), ...this.steps.inFlight()]);
          this.lines.startQueued();
        }
        if (claimed) continue;
        // Lines waiting for a retry time (rate limited) soon: wait for them instead of returning (lines
        // another worker holds are its work, not this one's).
        const now = this.state.clock.now();
        const nextAt = await this.repository.lines.nextRunningPendingAt(now);
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
    const { leases } = this.repository;
    try {
      const now = this.state.clock.now();
      if (this.lines.holdsLines()) await leases.renewLines(this.workerId, now, this.leaseMs);
      for (const batchId of this.steps.batchIds()) await leases.renewLease(batchId, this.workerId, now, this.leaseMs);
      if (this.renewalFailing) this.state.log?.info?.({ worker_id: this.workerId }, 'batch lease renewal works again');
      this.renewalFailing = false;
    } catch (error) {
      if (!this.renewalFailing)
        this.state.log?.error({ err: error, worker_id: this.workerId }, 'batch lease renewal failed; retrying every third of the lease');
      this.renewalFailing = true;
    }
  }

  private async runLoop(): Promise<void> {
    let released = false;
    let failures = 0;
    while (!this.state.stopping) {
      let delayMs = this.pollIntervalMs;
      try {
        if (!released) {
          // Leases under this worker id are from a previous life of this instance: nothing runs them now.
          const freed = await this.repository.leases.releaseAllHeldBy(this.workerId);
          if (freed > 0)
            this.state.log?.info?.(
              { worker_id: this.workerId, leases: freed },
              'freed the batch leases of this instance before its restart',
            );
          released = true;
        }
        await this.cycle();
        failures = 0;
      } catch (error) {
        failures += 1;
        delayMs = backoff(this.claimBackoff, failures);
        this.state.log?.error(
          { err: error, worker_id: this.workerId, failures, retry_in_ms: delayMs },
          'batch worker could not claim work; backing off',
        );
        await this.state.doorbell.sleep(delayMs, () => this.state.stopping);
        continue;
      }
      await this.state.doorbell.wait(delayMs);
    }
  }

  /** One round: claim batch-level steps and line chunks up to capacity and start them. True when anything was claimed. */
  private async cycle(): Promise<boolean> {
    const { leases } = this.repository;
    const { clock } = this.state;
    let claimed = false;
    while (!this.state.stopping && this.steps.size < this.maxActiveSteps) {
      const batch = await leases.claimStep(this.workerId, clock.now(), this.leaseMs);
      if (batch === undefined) break;
      claimed = true;
      this.steps.start(batch);
    }
    while (!this.state.stopping) {
      const chunk = this.lines.wantedChunk();
      if (chunk <= 0) break;
      const lines = await leases.claimLines(this.workerId, clock.now(), this.leaseMs, chunk);
      if (lines === undefined) break;
      claimed = true;
      this.lines.take(lines);
    }
    this.lines.startQueued();
    await this.purgeExpiredFiles();
    return claimed;
  }

  private async purgeExpiredFiles(): Promise<void> {
    const now = this.state.clock.now();
    if (now - this.lastPurgeAt < this.purgeIntervalMs) return;
    this.lastPurgeAt = now;
    try {
      await this.files.purgeExpired();
      if (this.purgeFailing) this.state.log?.info?.({ worker_id: this.workerId }, 'expired files are purged again');
      this.purgeFailing = false;
    } catch (error) {
      // Not a reason to stop claiming batch work (the store may be down; steps wait for it): tried again next interval.
      if (!this.purgeFailing)
        this.state.log?.error({ err: error, worker_id: this.workerId }, 'expired files could not be purged; trying again next interval');
      this.purgeFailing = true;
    }
  }
}
