/**
 * What the parts of one BatchWorker share (batch-worker.ts): its worker id, the repository it records
 * through, its clock and log, whether it is stopping, and the doorbell that wakes its sleeps.
 */
import { performance } from 'node:perf_hooks';
import type { BatchStore } from './batch-store.ts';
import type { Clock } from '../limits/clock.ts';

export interface WorkerLog {
  error(details: object, message: string): void;
  info?(details: object, message: string): void;
}

/** Wakes sleepers early: a line finished, new work arrived, or the worker is stopping. */
export class Doorbell {
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

/** One worker's shared state; `stopping` is set by `BatchWorker.stop()` and cleared by `start()`. */
export class WorkerState {
  stopping = false;
  readonly doorbell = new Doorbell();

  constructor(
    readonly workerId: string,
    readonly repository: BatchStore,
    readonly clock: Clock,
    readonly log: WorkerLog | undefined,
  ) {}
}
