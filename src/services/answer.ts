/**
 * What a metered use case hands back to its caller: the answer (one JSON body, or events to stream),
 * the headers it carries and the admission that metered it. The HTTP route gives it to the edge as it
 * is (`reply.sendAnswer`); the batch worker keeps the body. The use case writes nothing on the HTTP
 * request; the edge keeps the answer's admission on it (`request.admission`) for `_metadata` and as the
 * safety net that settles an admission left open when the response ends (http/edge.ts).
 */
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

export type Answer = JsonAnswer | EventsAnswer;
