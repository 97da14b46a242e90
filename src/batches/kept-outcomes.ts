/**
 * Line outcomes that could not be recorded (line-runner.ts): the line was run (the upstream paid),
 * so its answer is kept in memory and the recording retried, never the line. While the database is
 * unreachable it is retried with a capped backoff for as long as the worker runs; its line stays held
 * by this worker (a chunk claimed again after its lease lapsed skips it, `has`). Another error is
 * retried a few times (`maxOtherFailures`) before it is given up: the lease lapses and the line runs
 * again, as it does when the worker stops with the database still away (logged, once per line then).
 *
 * Logging is one line when recording starts failing and one when outcomes are recorded again, never
 * one per line or per retry.
 */
import { isUnreachableError } from '../core/circuit-breaker.ts';
import { backoff, type BackoffPolicy } from '../core/retry.ts';
import type { WorkerState } from './worker-state.ts';

/** Failures of another kind than "unreachable" before a line's outcome is given up. */
const MAX_OTHER_FAILURES = 5;

export class KeptOutcomes {
  /** Lines whose outcome waits to be recorded, `<batch id>:<line>`. */
  private readonly kept = new Set<string>();
  /** Since when (clock ms) recording fails, and how many lines were kept; undefined when it works. */
  private failing: { sinceMs: number; lines: number } | undefined;

  constructor(
    private readonly state: WorkerState,
    /** Delay before each retry: its first value, doubled per failure, and its cap. */
    private readonly policy: BackoffPolicy,
  ) {}

  /** True while the outcome of this line is kept here (the line must not run again). */
  has(batchId: string, line: number): boolean {
    return this.kept.has(`${batchId}:${line}`);
  }

  /** Outcomes kept now. */
  get size(): number {
    return this.kept.size;
  }

  /** Runs `write` (the recording of a line's answer) until it succeeds; throws when it is given up. */
  async record(batchId: string, line: number, write: () => Promise<void>): Promise<void> {
    const key = `${batchId}:${line}`;
    let failures = 0;
    let unreachable = 0;
    try {
      for (;;) {
        try {
          await write();
          if (failures > 0) this.recorded(key);
          return;
        } catch (error) {
          failures++;
          if (isUnreachableError(error)) unreachable++;
          if (failures === 1) this.keep(key, batchId, line, error);
          const givenUp = this.state.stopping || failures - unreachable >= MAX_OTHER_FAILURES;
          if (givenUp) {
            this.state.log?.error(
              { err: error, batch_id: batchId, line, failures, stopping: this.state.stopping },
              'batch line outcome given up: its lease lapses and it runs again',
            );
            throw error;
          }
          await this.state.doorbell.sleep(backoff(this.policy, failures - 1), () => this.state.stopping);
        }
      }
    } finally {
      this.kept.delete(key);
      if (this.kept.size === 0) this.failing = undefined;
    }
  }

  private keep(key: string, batchId: string, line: number, error: unknown): void {
    this.kept.add(key);
    if (this.failing !== undefined) {
      this.failing.lines++;
      return;
    }
    this.failing = { sinceMs: this.state.clock.now(), lines: 1 };
    this.state.log?.error(
      { err: error, batch_id: batchId, line },
      'batch line outcomes cannot be recorded; they are kept and recording is retried (the lines do not run again)',
    );
  }

  private recorded(key: string): void {
    this.kept.delete(key);
    if (this.failing === undefined || this.kept.size > 0) return;
    this.state.log?.info?.(
      { lines: this.failing.lines, for_ms: this.state.clock.now() - this.failing.sinceMs },
      'batch line outcomes are recorded again',
    );
    this.failing = undefined;
  }
}
