/**
 * One server-sent event as a client format produces it. Formats yield these; the single SSE writer in
 * `http/sse-writer.ts` serialises them (docs/design.md convention 3: no hand-built `data: ...` elsewhere).
 */
export interface SseEvent {
  /** `event:` line; omitted for chat completions chunks. */
  event?: string;
  /** The `data:` payload: an object is JSON-encoded, a string (e.g. `[DONE]`) is sent as is. */
  data: unknown;
}
