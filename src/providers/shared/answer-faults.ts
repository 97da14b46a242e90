/**
 * The one rule for upstream faults, shared by every remote provider (no upstream fault may read as success): a fault found before
 * any output was produced is THROWN (an UpstreamError, so that the generation service can retry or
 * fall back and finally answer the SPEC error envelope); a fault found after output is the stream's
 * final `error` part (the client format's error event). Providers map their wire to parts and end a
 * broken stream with an `error` part; `throwFaultsBeforeOutput` turns the early ones into throws.
 */
import type { StreamPart } from '../../core/stream-parts.ts';

/**
 * Passes parts through, holding `response-metadata` back until the first content part (metadata alone
 * is not output); an `error` part that comes before any content is thrown instead of yielded.
 */
export async function* throwFaultsBeforeOutput(parts: AsyncIterable<StreamPart>): AsyncGenerator<StreamPart, void, undefined> {
  const held: StreamPart[] = [];
  let committed = false;
  for await (const part of parts) {
    if (!committed) {
      if (part.type === 'response-metadata') {
        held.push(part);
        continue;
      }
      if (part.type === 'error') throw part.error;
      committed = true;
      yield* held;
    }
    yield part;
  }
}
