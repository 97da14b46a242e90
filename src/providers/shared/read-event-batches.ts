/**
 * The read loop of every streaming remote provider: an SSE body is parsed once (sse-parser.ts) and
 * mapped to canonical parts one upstream read at a time, so that the parts of a read leave as one batch
 * (core/batched.ts). The provider maps single events; this file owns the reads, the end of the body and
 * what happens once the closing event (`[DONE]`, `message_stop`) has started the drain.
 */
import type { StreamPart } from '../../core/stream-parts.ts';
import type { BodyDrain } from './http-client.ts';
import { SseParser, type SseMessage } from './sse-parser.ts';

/** Maps one event into `parts`; false once the stream has failed (reading stops). */
export type EventMapper = (event: SseMessage, parts: StreamPart[]) => boolean;

/**
 * Yields the parts of each read, in order. Events after the closing event (the drain has started) are
 * ignored. The parts of the read that carried the closing event are appended to `held` instead of being
 * yielded: the provider sends them with its `finish` once the body has ended (the connection then goes
 * back to the pool first), so an answer that arrived in one read is one batch. Ends after the body ends
 * or after `mapEvent` reported a failure (the body is then released); transport errors are thrown.
 */
export async function* readEventBatches(
  body: AsyncIterable<Uint8Array | string>,
  drain: BodyDrain,
  mapEvent: EventMapper,
  held: StreamPart[],
): AsyncGenerator<StreamPart[], void, undefined> {
  const parser = new SseParser();
  /** Maps the events one read completed; false once the stream has failed. */
  const mapRead = (events: readonly SseMessage[], parts: StreamPart[]): boolean => {
    for (const event of events) {
      if (drain.started) break;
      if (!mapEvent(event, parts)) return false;
    }
    return true;
  };
  for await (const bytes of body) {
    const parts: StreamPart[] = [];
    const open = mapRead(parser.push(bytes), parts);
    if (drain.started && open) {
      for (const part of parts) held.push(part);
      continue;
    }
    if (parts.length > 0) yield parts;
    if (!open) return;
  }
  mapRead(parser.end(), held);
}
