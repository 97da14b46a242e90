/**
 * Long synchronous work on the event loop is cut into slices: one request's big input (token counting,
 * the moderation lexicon, scoring thousands of pieces) must not hold every other request, `/healthz`
 * included, for more than one slice. `EventLoopSlicer` measures the time spent since the last yield;
 * callers ask `due()` between small steps (cheap: one clock read) and `await yieldToEventLoop()` when
 * it says so.
 */

/** Longest run of one request's work between two yields to the event loop, milliseconds. */
export const EVENT_LOOP_SLICE_MS = 3;

/** Resolves on the next turn of the event loop, after pending I/O callbacks (setImmediate). */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class EventLoopSlicer {
  private sliceStart = performance.now();

  constructor(private readonly sliceMs: number = EVENT_LOOP_SLICE_MS) {}

  /** True when the current slice has used its time: yield before the next step. */
  due(): boolean {
    return performance.now() - this.sliceStart >= this.sliceMs;
  }

  /** Yields to the event loop and starts a new slice. */
  async yield(): Promise<void> {
    await yieldToEventLoop();
    this.sliceStart = performance.now();
  }

  /** Yields when the slice is used up; otherwise resolves at once (one microtask). */
  async checkpoint(): Promise<void> {
    if (this.due()) await this.yield();
  }
}
