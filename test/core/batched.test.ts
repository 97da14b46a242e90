/**
 * Batched streams (core/batched.ts): read as batches or item by item, read once, and an early stop
 * reaches the producer (its clean-up runs: that is how an upstream request is released).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { batched, batchesOf, isBatched } from '../../src/core/batched.ts';

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of source) items.push(item);
  return items;
}

async function* numbers(...values: number[]): AsyncGenerator<number> {
  yield* values;
}

describe('batched streams', () => {
  test('a batched stream hands over its own arrays, and the same items one by one', async () => {
    const produce = async function* (): AsyncGenerator<number[]> {
      yield [1, 2, 3];
      yield [4];
    };
    assert.deepEqual(await collect(batchesOf(batched(produce))), [[1, 2, 3], [4]]);
    assert.deepEqual(await collect(batched(produce)), [1, 2, 3, 4]);
    assert.equal(isBatched(batched(produce)), true);
  });

  test('a plain async iterable is read as one batch per item', async () => {
    assert.equal(isBatched(numbers(1, 2)), false);
    assert.deepEqual(await collect(batchesOf(numbers(1, 2, 3))), [[1], [2], [3]]);
  });

  test('a stream is read once, either way', async () => {
    const stream = batched(async function* () {
      yield [1];
    });
    await collect(stream);
    assert.throws(() => stream.batches(), /read only once/);
    assert.throws(() => stream[Symbol.asyncIterator](), /read only once/);
  });

  test('a consumer that stops early ends the producer, whose clean-up runs', async () => {
    let cleanedUp = false;
    const stream = batched(async function* () {
      try {
        yield [1, 2];
        yield [3];
        yield [4];
      } finally {
        cleanedUp = true;
      }
    });
    for await (const item of stream) if (item === 2) break;
    assert.equal(cleanedUp, true);

    cleanedUp = false;
    const again = batched(async function* () {
      try {
        yield [1];
        yield [2];
      } finally {
        cleanedUp = true;
      }
    });
    for await (const batch of batchesOf(again)) if (batch[0] === 1) break;
    assert.equal(cleanedUp, true);
  });

  test('a producer failure reaches the consumer after the batches before it', async () => {
    const stream = batched(async function* () {
      yield [1];
      throw new Error('upstream reset');
    });
    const seen: number[] = [];
    await assert.rejects(async () => {
      for await (const item of stream) seen.push(item);
    }, /upstream reset/);
    assert.deepEqual(seen, [1]);
  });
});
