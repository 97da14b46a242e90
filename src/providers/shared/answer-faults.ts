/**
 * The one rule for upstream faults, shared by every remote provider (no upstream fault may read as success): a fault found before
 * any output was produced is THROWN (an UpstreamError, so that the generation service can retry or
 * fall back and finally answer the SPEC error envelope); a fault found after output is the stream's
 * final `error` part (the client format's error event). Providers map their wire to parts and end a
 * broken stream with an `error` part and pass every batch through a `FaultGate`, which turns the
 * early ones into throws.
 */
import type { StreamPart } from '../../core/stream-parts.ts';

/**
 * The rule as a synchronous step, for a provider's own read loop (no async layer of its own): each batch
 * goes through `pass`, which holds `response-metadata` back until the first content part (metadata
 * alone is not output) and throws the `error` part that comes before any content. The batch carrying
 * the first content part gets the held metadata in front of it; after that, batches pass as they are.
 */
export class FaultGate {
  /** Metadata held before the first content part; undefined once committed. */
  private held: StreamPart[] | undefined = [];

  /** What goes on now: nothing while only metadata came. Throws a fault that precedes all output. */
  pass(batch: readonly StreamPart[]): readonly StreamPart[] {
    const held = this.held;
    if (held === undefined) return batch;
    for (let index = 0; index < batch.length; index++) {
      const part = batch[index]!;
      if (part.type === 'response-metadata') {
        held.push(part);
        continue;
      }
      if (part.type === 'error') throw part.error;
      this.held = undefined;
      return held.length === 0 && index === 0 ? batch : [...held, ...batch.slice(index)];
    }
    return NOTHING;
  }
}

const NOTHING: readonly StreamPart[] = Object.freeze([]);
