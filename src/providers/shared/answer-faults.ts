/**
 * The one rule for upstream faults, shared by every remote provider (no upstream fault may read as success): a fault found before
 * any output was produced is THROWN (an UpstreamError, so that the generation service can retry or
 * fall back and finally answer the SPEC error envelope); a fault found after output is the stream's
 * final `error` part (the client format's error event). Providers map their wire to parts and end a
 * broken stream with an `error` part; `throwFaultsBeforeOutput` turns the early ones into throws.
 */
import { batched, batchesOf, type Batched } from '../../core/batched.ts';
import type { StreamPart } from '../../core/stream-parts.ts';

/**
 * Passes parts through, holding `response-metadata` back until the first content part (metadata alone
 * is not output); an `error` part that comes before any content is thrown instead of yielded. Batches
 * pass whole (core/batched.ts): the first content part's batch carries the held metadata before it.
 */
export function throwFaultsBeforeOutput(parts: AsyncIterable<StreamPart>): Batched<StreamPart> {
  return batched(() => committedBatches(parts));
}

async function* committedBatches(parts: AsyncIterable<StreamPart>): AsyncGenerator<readonly StreamPart[], void, undefined> {
  /** Metadata held before the first content part; undefined once committed. */
  let held: StreamPart[] | undefined = [];
  for await (const batch of batchesOf(parts)) {
    if (held === undefined) {
      yield batch;
      continue;
    }
    for (let index = 0; index < batch.length; index++) {
      const part = batch[index]!;
      if (part.type === 'response-metadata') {
        held.push(part);
        continue;
      }
      if (part.type === 'error') throw part.error;
      const committed = held.length === 0 && index === 0 ? batch : [...held, ...batch.slice(index)];
      held = undefined;
      yield committed;
      break;
    }
  }
}
