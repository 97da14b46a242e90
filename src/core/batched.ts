/**
 * Batched streams: how parts (and encoded events) travel along the generation path. One upstream read
 * usually carries many events; the provider parses all of them and hands over the parts they make in
 * one array, and every later stage (service, sequencer, output cap, meter, format encoder, SSE writer)
 * maps that array to its own array in one synchronous step. The whole pipeline then costs one
 * asynchronous step per stage per upstream read instead of one per stage per part: with a stream of a
 * few dozen small chunks, the per-part promise traffic was the largest single cost of a streamed
 * request (profile in docs/architecture.md "Speed").
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
