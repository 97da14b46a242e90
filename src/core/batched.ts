/**
 * Batched streams: how parts (and encoded events) travel along the generation path. One upstream read
 * usually carries many events; the provider parses all of them and hands over the parts they make in
 * one array, and every later stage (service, sequencer, output cap, meter, format encoder, SSE writer)
 * maps that array to its own array in one synchronous step. The whole pipeline then costs one
 * asynchronous step per stage per upstream read instead of one per stage per part: with a stream of a
 * few dozen small chunks, the per-part promise traffic was the largest single cost of a streamed
 * request (profile in docs/performance.md).
 *
 * A Batched stream is still an ordinary async iterable of single items, so code that only wants items
 * (tests, assembling a whole result) iterates it as before. `batchesOf` reads any async iterable as
 * batches: a Batched stream gives its own arrays, anything else one array per item. A batch is never
 * empty. Like the streams they wrap, batched streams are read once.
 */

/** An async iterable whose items can also be taken in the arrays they were produced in. */
export interface Batched<T> extends AsyncIterable<T> {
  /** The same items, in the arrays they were produced in (each non-empty). Read once. */
  batches(): AsyncIterable<readonly T[]>;
}

export function isBatched<T>(source: AsyncIterable<T>): source is Batched<T> {
  return typeof (source as Partial<Batched<T>>).batches === 'function';
}

/** A source read item by item, as one-item batches. */
async function* singles<T>(source: AsyncIterable<T>): AsyncGenerator<readonly T[], void, undefined> {
  for await (const item of source) yield [item];
}

/** The items of `source` as batches: its own when it is Batched, otherwise one batch per item. */
export function batchesOf<T>(source: AsyncIterable<T>): AsyncIterable<readonly T[]> {
  return isBatched(source) ? source.batches() : singles(source);
}

/** Flattens batches into items, for consumers that read item by item. */
async function* flatten<T>(batches: AsyncIterable<readonly T[]>): AsyncGenerator<T, void, undefined> {
  for await (const batch of batches) for (const item of batch) yield item;
}

/**
 * A stream produced as batches by `produce` (called once, when the stream is first read, either way).
 * `produce` must not yield empty batches (every stage checks before it yields: no extra layer here).
 */
export function batched<T>(produce: () => AsyncIterable<readonly T[]>): Batched<T> {
  return new BatchedStream(produce);
}

/**
 * A class rather than an object literal: every stage of every request makes one, and a literal with a
 * computed `[Symbol.asyncIterator]` key is built by a slow runtime path (~0.24 µs, against ~0.01 µs for
 * a class instance: bench/node-primitives.ts).
 */
class BatchedStream<T> implements Batched<T> {
  private produce: (() => AsyncIterable<readonly T[]>) | undefined;

  constructor(produce: () => AsyncIterable<readonly T[]>) {
    this.produce = produce;
  }

  batches(): AsyncIterable<readonly T[]> {
    const produce = this.produce;
    if (produce === undefined) throw new Error('A generation stream can be read only once.');
    this.produce = undefined;
    return produce();
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return flatten(this.batches())[Symbol.asyncIterator]();
  }
}

/**
 * A synchronous stage of a batched stream: the output cap and the usage meter are stages. The
 * generation service runs the stages it is given inside its own loop over the upstream (one call each
 * per upstream read), rather than each stage being an async generator of its own: a layer costs ~6
 * promises and a generator per request (bench/pipeline-promises.ts counts them).
 */
export interface BatchStage<T> {
  /** What `batch` becomes: the same array when it passes unchanged; an empty one when nothing goes on now. */
  push(batch: readonly T[]): readonly T[];
  /** True once the stream must end with the batch last pushed: nothing more is read and the source is closed. */
  readonly ended: boolean;
  /** The stream is over (ended, failed, or left by its consumer): called once, awaited. */
  close?(): Promise<void> | void;
}

/** Runs `batch` through `stages` in order; `ended` when any stage ended the stream. */
export function pushThroughStages<T>(stages: readonly BatchStage<T>[], batch: readonly T[]): { batch: readonly T[]; ended: boolean } {
  let current = batch;
  let ended = false;
  for (const stage of stages) {
    current = stage.push(current);
    if (stage.ended) ended = true;
  }
  return { batch: current, ended };
}

/** Closes each stage once, in order, whatever the others do; the first failure is rethrown after all ran. */
export async function closeStages<T>(stages: readonly BatchStage<T>[]): Promise<void> {
  let failure: { error: unknown } | undefined;
  for (const stage of stages) {
    try {
      const closing = stage.close?.();
      if (closing !== undefined) await closing;
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure !== undefined) throw failure.error;
}

/**
 * `source` through `stages`, in one async layer: for a source that is not the generation service's loop
 * (tests, and stages used on their own). A stage that ends the stream closes the source before the
 * last batch goes on, so that nobody waits on an upstream that is no longer read.
 */
export function throughStages<T>(source: AsyncIterable<T>, stages: readonly BatchStage<T>[]): Batched<T> {
  return batched(() => stagedBatches(source, stages));
}

async function* stagedBatches<T>(
  source: AsyncIterable<T>,
  stages: readonly BatchStage<T>[],
): AsyncGenerator<readonly T[], void, undefined> {
  const iterator = batchesOf(source)[Symbol.asyncIterator]();
  /** The source ran to its end or was closed here: nothing left to release. */
  let sourceDone = false;
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done === true) {
        sourceDone = true;
        return;
      }
      const { batch, ended } = pushThroughStages(stages, next.value);
      if (ended) {
        // A source that yielded its last part is still suspended there: only `return()` runs its clean-up.
        sourceDone = true;
        await closeIterator(iterator);
        if (batch.length > 0) yield batch;
        return;
      }
      if (batch.length > 0) yield batch;
    }
  } finally {
    if (!sourceDone) await closeIterator(iterator);
    await closeStages(stages);
  }
}

/**
 * Closes an iterator (its `return()`, which runs its clean-up) without letting a failure of that
 * clean-up surface; resolves once it is done, for callers that wait. Call it only while the iterator
 * is not running (suspended at a yield, or finished): an async generator then takes `return()` at
 * once, with no deferral needed.
 */
export function closeIterator<T>(iterator: AsyncIterator<T>): Promise<void> {
  try {
    return iterator.return?.().then(ignore, ignore) ?? Promise.resolve();
  } catch {
    // An iterator whose return() throws has nothing left to release.
    return Promise.resolve();
  }
}

function ignore(): void {}
