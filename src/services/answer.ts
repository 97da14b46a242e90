/**
 * What a use case hands back to its caller: the answer (one JSON body, events to stream, or a file's
 * raw content), the headers it carries and the admission that metered it. Every HTTP route gives it to
 * the edge as it is (`reply.sendAnswer`); the batch worker keeps the body. Nothing is parked on the
 * HTTP request: the edge reads `_metadata` from the answer's admission and, when the response ends,
 * settles the answer's admission should it still be open (http/edge.ts), so a reservation never leaks.
 * A use case that fails after its admission throws an `AnswerFailure`, so that the error answer carries
 * the admission's headers and figures as the answer would have.
 */
import type { Readable } from 'node:stream';
import type { SseEvent } from '../core/sse-event.ts';
import type { Admission } from './metering/metering-service.ts';

interface AnswerCommon {
  /** Headers the answer carries: its admission's rate-limit headers, warnings, the answering deployment. */
  headers: Record<string, string>;
  /**
   * The admission that metered the request: its figures are `_metadata.user_total_usage`. Settled by
   * the use case (or, for a stream, when the stream ends); the edge settles it when the response ends
   * should it still be open, so that a reservation never leaks.
   */
  admission: Admission;
  /** What the response cache did (`_metadata.cache`); absent when the cache is off for the caller. */
  cache?: 'hit' | 'miss' | 'bypass';
}

/** One JSON body (`_metadata` is added by the edge). */
export interface JsonAnswer extends AnswerCommon {
  stream: false;
  body: Record<string, unknown>;
}

/** Server-sent events, written by the edge's one SSE writer. */
export interface EventsAnswer extends AnswerCommon {
  stream: true;
  events: AsyncIterable<SseEvent>;
  /** Sent while the events are silent; default an SSE comment. */
  keepAlive?: SseEvent;
}

/** A file's raw bytes (no `_metadata`), e.g. `GET /v1/files/{file_id}/content`. */
export interface ContentAnswer {
  stream: false;
  content: { mediaType: string; bytes: number; data: Readable };
  /** Headers the answer carries (caching, for a signed link). */
  headers: Record<string, string>;
  /** The admission of a keyed request; absent for a signed link, which needs no key. */
  admission?: Admission;
}

export type Answer = JsonAnswer | EventsAnswer | ContentAnswer;

/** A use case's failure after its admission: the error answer carries the admission's headers and figures. */
export class AnswerFailure extends Error {
  constructor(
    /** What the use case threw. */
    readonly failure: unknown,
    readonly admission: Admission,
  ) {
    super(failure instanceof Error ? failure.message : String(failure), { cause: failure });
    this.name = 'AnswerFailure';
  }
}
