/**
 * Batch-level steps waiting for a dependency (batch-steps.ts): a step that cannot reach the object
 * store or the database is not a failure of the batch. It waits, `initialMs` doubled per wait in a row
 * up to `maxMs` (30 s by default), for as long as it takes: no attempt is used up, and the batch is
 * never failed or marked written for it. The count of waits in a row is this instance's, per batch
 * (another instance taking the batch over starts again from `initialMs`, which costs one quick retry;
 * a batch not seen waiting here for three times `maxMs` is forgotten: another instance took it over).
 *
 * Logging is one line when this worker's steps start waiting and one when a step works again, never
 * one per retry or per batch.
 */
import { backoff, type BackoffPolicy } from '../core/retry.ts';
import type { WorkerLog } from './worker-state.ts';

export class StepWaits {
  /** Waits in a row and the last one's time (clock ms), by batch id. */
  private readonly waits = new Map<string, { count: number; lastAt: number }>();
  /** Since when (clock ms) steps wait, and how many waits so far; undefined when none does. */
  private waiting: { sinceMs: number; waits: number } | undefined;

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly log: WorkerLog | undefined,
    private readonly now: () => number,
  ) {}

  /** The step of `batchId` could not reach a dependency: how long it waits (logged once per outage). */
  next(batchId: string, step: string, error: unknown): number {
    const inARow = this.waits.get(batchId)?.count ?? 0;
    this.waits.set(batchId, { count: inARow + 1, lastAt: this.now() });
    const waitMs = backoff(this.policy, inARow);
    if (this.waiting === undefined) {
      this.waiting = { sinceMs: this.now(), waits: 0 };
      this.log?.error(
        { err: error, batch_id: batchId, step, retry_in_ms: waitMs, max_wait_ms: this.policy.maxMs },
        'batch steps wait: a dependency they need is unavailable; they are retried (no attempt counted) until it is back',
      );
    }
    this.waiting.waits++;
    return waitMs;
  }

  /** A step of `batchId` ran through: its waits are over (logged once when the last waiting step works again). */
  worked(batchId: string): void {
    if (!this.waits.delete(batchId)) return;
    const staleBefore = this.now() - 3 * this.policy.maxMs;
    for (const [id, wait] of this.waits) if (wait.lastAt < staleBefore) this.waits.delete(id);
    if (this.waits.size > 0 || this.waiting === undefined) return;
    this.log?.info?.(
      { waits: this.waiting.waits, for_ms: this.now() - this.waiting.sinceMs },
      'batch steps work again: the dependency they waited for is back',
    );
    this.waiting = undefined;
  }

  /** Batches waiting now (for tests and tools). */
  get size(): number {
    return this.waits.size;
  }
}
