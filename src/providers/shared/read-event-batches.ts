/**
 * The read loop of every streaming remote provider: an SSE body is parsed once (sse-parser.ts) and
 * mapped to canonical parts one upstream read at a time, so that the parts of a read leave as one batch
 * (core/batched.ts). The provider maps single events; this file owns the reads, the end of the body and
 * what happens once the closing event (`[DONE]`, `message_stop`) has started the drain. The call around
 * it (post, whole body or events, the end of the stream) is stream-from-upstream.ts.
 */
import type { ServiceError } from '../../core/service-error.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import type { BodyDrain } from './http-client.ts';
import { SseParser, type SseSink } from './sse-parser.ts';
import type { UpstreamBody } from './upstream-body.ts';

/** A provider's mapping of one call's events (one object per call, a method per event: no closure). */
export interface UpstreamEvents {
  /**
   * Maps one event (its data, and its `event:` name or undefined) into `parts`; false once the stream
   * has failed (reading stops, `failure` says why).
   */
  mapEvent(data: string, eventName: string | undefined, parts: StreamPart[]): boolean;
  /** True once the closing event (`[DONE]`, `message_stop`) was mapped: the drain starts. */
  readonly closed: boolean;
  /** The fault an event carried (an `error` event, data that is not JSON), once `mapEvent` returned false. */
  readonly failure: ServiceError | undefined;
}

/**
 * Reads the parts of an SSE body one read at a time: `next()` gives the parts of the next read that
 * has any, in order, and undefined once the stream is over. A pull object rather than an async
 * generator: the provider's loop awaits one promise per read, with no generator layer between it and
 * the body. Events after the closing event (the drain has started) are ignored. The parts of the read
 * that carried the closing event are appended to `held` instead of being returned: the provider sends
 * them with its `finish` once the body has ended (the connection then goes back to the pool first), so
 * an answer that arrived in one read is one batch. Over after the body ends or after `mapEvent`
 * reported a failure; transport errors are thrown. `close()` releases the body when the reader is left
 * early.
 */
export class EventBatchReader implements SseSink {
  private readonly parser = new SseParser();
  private over = false;
  /** Where the events being parsed put their parts (the parser hands them over one call each). */
  private target: StreamPart[] = [];
  /** False once an event reported a failure: the rest of that read is not mapped. */
  private open = true;
  /** True once the body carried any event (a keep-alive too): an answer with none is an empty stream. */
  sawEvent = false;

  constructor(
    private readonly body: UpstreamBody,
    private readonly drain: BodyDrain,
    private readonly events: UpstreamEvents,
    private readonly held: StreamPart[],
  ) {}

  async next(): Promise<StreamPart[] | undefined> {
    while (!this.over) {
      const bytes = await this.body.read();
      if (bytes === undefined) {
        this.over = true;
        this.target = this.held;
        this.parser.finish(this);
        return undefined;
      }
      const parts: StreamPart[] = [];
      this.target = parts;
      this.parser.feed(bytes, this);
      if (!this.open) {
        // The stream failed: what the read produced before the failure goes on, then nothing more.
        this.close();
        return parts.length > 0 ? parts : undefined;
      }
      if (this.drain.started) {
        for (const part of parts) this.held.push(part);
        continue;
      }
      if (parts.length > 0) return parts;
    }
    return undefined;
  }

  /** Stops reading and releases an unfinished body (its connection is closed), once; never throws. */
  close(): void {
    if (this.over) return;
    this.over = true;
    this.body.destroy();
  }

  /** One event of the read being parsed (SseSink): mapped into that read's parts, unless the stream failed or drains. */
  onEvent(data: string, eventName: string | undefined): void {
    if (!this.open || this.drain.started) return;
    this.sawEvent = true;
    const mapper = this.events;
    if (!mapper.mapEvent(data, eventName, this.target)) this.open = false;
    else if (mapper.closed) this.drain.start();
  }
}
