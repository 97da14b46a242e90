/**
 * A generation whose backend answered whole (a non-streamed request: `preferWholeResponse`, one JSON
 * body from the upstream), settled by the attempt as soon as it committed: the one batch sequenced,
 * run through the caller's stages (cap, meter, trace, cache recorder) once, the backend released. What
 * is left is closing the stages (the meter settles the admission and writes the ledger row), done when
 * the answer is taken, so that the caller can first name the deployment on the ledger row, exactly as
 * a streamed answer's stages close when its consumer has read it.
 *
 * Read it once: `take()` (the parts in one array, no async generator, no per-batch promise) or as a
 * Batched stream (for consumers that iterate, e.g. an encoder of events).
 */
import { closeStages, type BatchStage } from '../../core/batched.ts';
import type { StreamPart } from '../../core/stream-parts.ts';

export class WholeAnswer {
  private read = false;

  constructor(
    /** The parts the stages passed (the cap may have cut them). */
    private readonly parts: readonly StreamPart[],
    private readonly stages: readonly BatchStage<StreamPart>[],
    /** A stage that threw while the answer was settled: thrown to the reader, after the stages closed. */
    private readonly failure?: { error: unknown },
  ) {}

  /** The answer's parts, once every stage is closed (the admission settled). Rejects with a stage's failure. */
  async take(): Promise<readonly StreamPart[]> {
    this.claim();
    await closeStages(this.stages);
    if (this.failure !== undefined) throw this.failure.error;
    return this.parts;
  }

  /** The same parts as a stream of (at most one) batch; the stages close when it is over. */
  async *batches(): AsyncGenerator<readonly StreamPart[], void, undefined> {
    this.claim();
    try {
      if (this.failure !== undefined) throw this.failure.error;
      if (this.parts.length > 0) yield this.parts;
    } finally {
      await closeStages(this.stages);
    }
  }

  private claim(): void {
    if (this.read) throw new Error('A generation stream can be read only once.');
    this.read = true;
  }
}
