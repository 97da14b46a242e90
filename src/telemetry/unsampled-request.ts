/**
 * A request the sampler left out (span-records.ts has the sampled ones): no record, no attribute, no
 * timestamp; its upstream calls still carry the trace, as the SDK's non-recording spans do.
 */
import { w3cHeaders, type RecordSink, type TraceIds } from './span-records.ts';
import type { AttemptTrace, RequestTrace, TraceSpan } from './trace-types.ts';

const NOOP_SPAN: TraceSpan = {
  setAttribute: () => undefined,
  addEvent: () => undefined,
  fail: () => undefined,
  end: () => undefined,
};

/** An unsampled attempt: nothing recorded, a `traceparent` (not sampled) upstream all the same. */
class UnsampledAttempt implements AttemptTrace {
  constructor(readonly headers: Readonly<Record<string, string>>) {}
  setAttribute(): void {}
  addEvent(): void {}
  fail(): void {}
  end(): void {}
  connected(): void {}
  responded(): void {}
  ended(): void {}
  committed(): void {}
  responseModel(): void {}
  finished(): void {}
}

/**
 * A request the sampler left out: no record, no attribute; upstream calls still carry the trace (a
 * `traceparent` with the sampled flag off, a fresh span id each), so the upstream follows the decision.
 */
export class UnsampledRequest implements RequestTrace {
  readonly recording = false;
  private ownSpanId: string | undefined;

  constructor(
    private readonly sink: RecordSink,
    private readonly ids: TraceIds,
  ) {}

  startStep(): TraceSpan {
    return NOOP_SPAN;
  }

  startAttempt(): AttemptTrace {
    return new UnsampledAttempt(w3cHeaders(this.ids, this.sink.spanId()));
  }

  upstreamHeaders(): Record<string, string> {
    return w3cHeaders(this.ids, (this.ownSpanId ??= this.sink.spanId()));
  }

  generationRequest(): void {}
  operation(): void {}
  usage(): void {}
  setAttribute(): void {}
  addEvent(): void {}
  fail(): void {}
  end(): void {}
}
