/**
 * The lines this worker holds: claimed chunks queue here and run up to the worker's capacity (all of
 * `concurrency`, a quarter of it while interactive traffic is high). Each line is checked against its
 * batch's status first (a cancel made on any instance stops new lines at once), run by the executor,
 * and its answer recorded: done with its counter and ledger rows in one transaction, deferred until a
 * retry time, or, when the batch's key can no longer run it, the batch fails. An answer that cannot be
 * recorded (database away) is kept and its recording retried, never the line (kept-outcomes.ts). The
 * last line of a batch to leave moves the batch to finalizing when nothing is pending.
 */
import { isUnreachableError } from '../core/circuit-breaker.ts';
import type { ClaimedLines } from './batch-store.ts';
import type { BatchRecord, BatchRequestRow, BatchStatus } from './batch-records.ts';
import { KeptOutcomes } from './kept-outcomes.ts';
import {
  DeferralLog,
  MAX_TRANSIENT_DEFERRALS,
  outcomeOf,
  retryDelayMs,
  unexecutedOutcome,
  type LineExecutor,
  type LineResponse,
} from './line-outcome.ts';
import type { WorkerState } from './worker-state.ts';

/** A claimed line waiting for (or in) execution. */
interface HeldLine {
  batch: BatchRecord;
  row: BatchRequestRow;
}

export interface LineRunnerOptions {
  execute: LineExecutor;
  /** Lines run at once, over all batches. */
  concurrency: number;
  /** Lines claimed at once. */
  chunkSize: number;
  /** Longest wait before retrying a deferred line without a retry-after, milliseconds. */
  maxBackoffMs: number;
  interactiveLoad: () => number;
  interactiveThreshold: number;
}

export class LineRunner {
  /** Claimed lines not started yet, in claim order. */
  private queue: HeldLine[] = [];
  /** Lines executing now. */
  private readonly running = new Set<Promise<void>>();
  /** Lines held (queued or running) per batch id: the last one out moves the batch to finalizing. */
  private readonly heldPerBatch = new Map<string, number>();
  /** Status reads in flight, by batch id (shared by lines starting together). */
  private readonly statuses = new Map<string, Promise<BatchStatus | undefined>>();
  private readonly deferrals: DeferralLog;
  /** Answers waiting to be recorded: their lines are not run again. */
  private readonly kept: KeptOutcomes;

  constructor(
    private readonly state: WorkerState,
    private readonly options: LineRunnerOptions,
  ) {
    this.deferrals = new DeferralLog(state.log, () => state.clock.now());
    this.kept = new KeptOutcomes(state, { initialMs: 200, maxMs: 5_000 });
  }

  /** Lines this process runs at once now: a quarter of `concurrency` while interactive traffic is high. */
  capacity(): number {
    const { concurrency, interactiveLoad, interactiveThreshold } = this.options;
    return interactiveLoad() > interactiveThreshold ? Math.max(1, Math.floor(concurrency / 4)) : concurrency;
  }

  /** How many lines to claim now (0: none): about one round queued beyond what runs. */
  wantedChunk(): number {
    const capacity = this.capacity();
    const held = this.queue.length + this.running.size;
    // Keep about one round queued: enough to stay busy, little enough that other instances get lines.
    const chunk = Math.min(
      capacity < this.options.concurrency ? capacity : this.options.chunkSize,
      capacity + this.options.chunkSize - held,
    );
    return this.queue.length >= capacity ? 0 : Math.max(0, chunk);
  }

  /** True while any line is held (its lease must be renewed). */
  holdsLines(): boolean {
    return this.heldPerBatch.size > 0;
  }

  /** True while lines are queued or running. */
  busy(): boolean {
    return this.running.size > 0 || this.queue.length > 0;
  }

  /** The lines executing now. */
  inFlight(): Promise<void>[] {
    return [...this.running];
  }

  /** Holds a claimed chunk and starts what capacity allows. */
  take(claimed: ClaimedLines): void {
    // A line whose answer is still being recorded here was claimed again after its lease lapsed: it
    // is already held (the claim renewed its lease), and it must not run twice.
    const lines = claimed.lines.filter((row) => !this.kept.has(claimed.batch.id, row.line));
    if (lines.length === 0) return;
    for (const row of lines) this.queue.push({ batch: claimed.batch, row });
    this.heldPerBatch.set(claimed.batch.id, (this.heldPerBatch.get(claimed.batch.id) ?? 0) + lines.length);
    this.startQueued();
  }

  startQueued(): void {
    while (!this.state.stopping && this.running.size < this.capacity() && this.queue.length > 0) {
      const held = this.queue.shift()!;
      const run: Promise<void> = this.runLine(held)
        .catch((error: unknown) =>
          this.state.log?.error(
            { err: error, batch_id: held.batch.id, line: held.row.line },
            'batch line could not be run or recorded; its lease lapses and it runs again',
          ),
        )
        .then(() => this.lineDone(held.batch.id, 1))
        .finally(() => {
          this.running.delete(run);
          this.startQueued();
          this.state.doorbell.ring();
        });
      this.running.add(run);
    }
  }

  /** Gives back every queued (unstarted) line (the worker is stopping). */
  releaseAll(): Promise<void> {
    return this.releaseQueued(() => true);
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
      if (await this.state.repository.finishIfDone(batchId, this.state.clock.now())) this.state.doorbell.ring();
    } catch (error) {
      // Not lost: the step claim also finds running batches with no pending line.
      this.state.log?.error({ err: error, batch_id: batchId }, 'could not move the batch to finalizing; another claim will');
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
        await this.state.repository.leases.releaseLines(batchId, this.state.workerId, lines);
      } catch (error) {
        this.state.log?.error(
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
    const status = this.state.repository.findById(batchId).then((batch) => batch?.status);
    this.statuses.set(batchId, status);
    const forget = (): void => {
      if (this.statuses.get(batchId) === status) this.statuses.delete(batchId);
    };
    status.then(forget, forget);
    return status;
  }

  private async runLine({ batch, row }: HeldLine): Promise<void> {
    const { repository, workerId, clock } = this.state;
    const status = await this.batchStatus(batch.id);
    if (this.state.stopping || status !== 'in_progress' || clock.now() >= batch.expiresAt) {
      // Canceled, failed or expired meanwhile (or stopping): give the line and its queued siblings back unrun.
      await repository.leases.releaseLines(batch.id, workerId, [row.line]);
      await this.releaseQueued((held) => held.batch.id === batch.id);
      return;
    }
    let response: LineResponse;
    try {
      response = await this.options.execute({ keyId: batch.keyId, url: batch.endpoint, body: row.body, batchId: batch.id, line: row.line });
    } catch (error) {
      if (isUnreachableError(error)) {
        const now = clock.now();
        this.deferrals.note(batch.id, row.line, error);
        const retryAt = now + retryDelayMs({}, row.attempts, this.options.maxBackoffMs, now);
        await this.kept.record(batch.id, row.line, () => repository.lines.deferRequest(batch.id, row.line, retryAt));
        return;
      }
      this.state.log?.error({ err: error, batch_id: batch.id, line: row.line }, 'batch line could not be executed');
      const outcome = unexecutedOutcome(clock.now());
      await this.kept.record(batch.id, row.line, async () => void (await repository.lines.recordOutcome(batch.id, row.line, outcome)));
      return;
    }
    // From here the line ran (and may have been paid for upstream): its answer is recorded, however
    // long that takes, and the line is never sent again.
    const now = clock.now();
    await this.kept.record(batch.id, row.line, () => this.record(batch, row, response, now));
  }

  /** Records what the line's answer means: the batch fails, the line is deferred, or its outcome is stored. */
  private async record(batch: BatchRecord, row: BatchRequestRow, response: LineResponse, now: number): Promise<void> {
    const { repository } = this.state;
    if (response.fatal !== undefined) {
      // The batch's key can no longer run it: the batch fails (every pending line with it), results are written.
      const error = { code: response.fatal.code, message: response.fatal.message, line: null, param: null };
      if (await repository.failRunning(batch.id, error, 'batch_failed', now)) {
        this.state.log?.info?.({ batch_id: batch.id, code: error.code }, 'batch failed: its key can no longer run it');
      }
      await this.releaseQueued((held) => held.batch.id === batch.id);
      return;
    }
    const transient = response.transient === true && row.attempts < MAX_TRANSIENT_DEFERRALS;
    // A budget refuses for its whole period: the line fails with `budget_exceeded` in the error file and
    // the batch goes on (waiting for a month's reset would hold the batch past its window).
    if (response.statusCode === 429 && !transient && response.body.includes('"budget_exceeded"')) {
      await repository.lines.recordOutcome(batch.id, row.line, outcomeOf(response, now), response.ledger);
      return;
    }
    if (response.statusCode === 429 || transient) {
      // Rate limited (quota, or the upstream), or something it needs is down for now: try again later,
      // within the 24-hour window.
      if (transient) this.deferrals.note(batch.id, row.line, response.body);
      const retryAt = now + retryDelayMs(response.headers, row.attempts, this.options.maxBackoffMs, now);
      await repository.lines.deferRequest(batch.id, row.line, retryAt, response.ledger);
      return;
    }
    if (response.statusCode >= 200 && response.statusCode < 300) this.deferrals.end();
    await repository.lines.recordOutcome(batch.id, row.line, outcomeOf(response, now), response.ledger);
  }
}
