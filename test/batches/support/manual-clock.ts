/** A clock that stands still until a test moves it (the 24-hour window without waiting 24 hours). */
import type { Clock } from '../../../src/limits/clock.ts';

export class ManualClock implements Clock {
  constructor(private current: number = Date.UTC(2030, 0, 15, 12, 0, 0)) {}

  now(): number {
    return this.current;
  }

  /** Moves time forward by `milliseconds`. */
  advance(milliseconds: number): void {
    this.current += milliseconds;
  }
}
