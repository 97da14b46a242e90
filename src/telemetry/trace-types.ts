/**
 * What the rest of the service sees of tracing: plain interfaces, no OpenTelemetry code. A request
 * carries a `RequestTrace` only when tracing is on; every hook elsewhere is `trace?.something()`, so a
 * service with tracing off creates no span, reads no header and loads no OpenTelemetry module
 * (the SDK is imported by start-tracing.ts only when an endpoint is configured).
 */
import type { FinishReason, GenerationRequest } from '../core/generation.ts';
import type { UpstreamTrace } from '../core/language-model.ts';
import type { Usage } from '../core/usage.ts';

/** A span attribute value (OpenTelemetry's primitive types). */
export type TraceAttributeValue = string | number | boolean | readonly string[];

/** One step's span (authentication, limits, ledger...): ended exactly once. */
export interface TraceSpan {
  setAttribute(name: string, value: TraceAttributeValue | undefined): void;
  addEvent(name: string, attributes?: Record<string, TraceAttributeValue>): void;
  /** Marks the span failed: status ERROR, `error.type` (a ServiceError's code, else the error's name). */
  fail(error: unknown): void;
  /** Ends the span; later calls do nothing. */
  end(): void;
}

/** What the request span knows of the HTTP exchange when it starts. */
export interface ServerRequestFacts {
  method: string;
  /** The route pattern (`/v1/files/:file_id`), undefined for an unknown route. */
  route: string | undefined;
  /** The path without its query. */
  path: string;
  scheme: string;
  serverAddress: string | undefined;
  serverPort: number | undefined;
  clientAddress: string | undefined;
  userAgent: string | undefined;
  /** Switchyard's request id (`x-request-id`). */
  requestId: string;
  /** The request headers, read for the caller's W3C `traceparent`/`tracestate`. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** One batch line, traced as a request of its own in the batch's trace. */
export interface BatchLineFacts {
  batchId: string;
  /** 1-based line number in the input file. */
  line: number;
  /** The endpoint the line calls (`/v1/chat/completions`). */
  url: string;
  requestId: string;
}

/** A batch that reached its end (results written, final status recorded), for the root span of its trace. */
export interface BatchEndFacts {
  batchId: string;
  /** The endpoint its lines call (`/v1/chat/completions`). */
  endpoint: string;
  /** The final status (`completed`, `failed`, `canceled`, `expired`). */
  status: string;
  /** When the batch was created and when it ended, milliseconds since epoch. */
  createdAt: number;
  endedAt: number;
  /** Its request counts (lines). */
  total: number;
  completed: number;
  failed: number;
}

/** One upstream attempt of a generation: the deployment leased and where it stands among the attempts. */
export interface UpstreamAttemptFacts {
  /** The provider kind (`anthropic`, `openai-compatible`, ...). */
  providerKind: string;
  /** The provider's base URL, when it is a remote one. */
  baseUrl: string | undefined;
  /** The model name sent upstream. */
  upstreamModel: string;
  /** The catalogue model this attempt serves. */
  model: string;
  /** The deployment id (`provider`, `provider#2`). */
  deployment: string;
  /** 1-based attempt number over the whole request (fallbacks included). */
  attempt: number;
  /** 0 for a first try on this model, n for its n-th retry. */
  retry: number;
}

/** An upstream attempt's span: a client span whose context is what the upstream receives as `traceparent`. */
export interface AttemptTrace extends TraceSpan, UpstreamTrace {
  /**
   * The first content part arrived: the attempt is committed (time to first token), and the request
   * span takes its provider and model (`gen_ai.provider.name`, `gen_ai.response.model`).
   */
  committed(): void;
  /** The model the upstream says answered (`response-metadata`). */
  responseModel(model: string): void;
  /** The attempt's stream finished with this usage and finish reason. */
  finished(usage: Usage, finishReason: FinishReason): void;
}

/**
 * GenAI operation names (OpenTelemetry GenAI semantic conventions) Switchyard serves; moderation has
 * no name there and gets one of Switchyard's own.
 */
export type GenAiOperation = 'chat' | 'embeddings' | 'generate_content' | 'switchyard.moderation';

/** A request (or batch line) being traced: its span and the context its children start under. */
export interface RequestTrace {
  /**
   * Whether this request is recorded (sampled). An unrecorded one only carries the trace upstream:
   * callers skip the step spans, stages and listeners that would record nothing.
   */
  readonly recording: boolean;
  /** A child span of the request for one step. */
  startStep(name: string, attributes?: Record<string, TraceAttributeValue>): TraceSpan;
  /** A client span for one upstream attempt; its `headers` carry its own `traceparent`. */
  startAttempt(facts: UpstreamAttemptFacts, operation: GenAiOperation): AttemptTrace;
  /** W3C headers of the request span itself, for an upstream call made without an attempt span. */
  upstreamHeaders(): Record<string, string>;
  /** The GenAI request attributes (`gen_ai.operation.name`, `gen_ai.request.*`). */
  generationRequest(operation: GenAiOperation, request: GenerationRequest): void;
  /** `gen_ai.operation.name` and `gen_ai.request.model` for requests without a GenerationRequest (embeddings). */
  operation(operation: GenAiOperation, model: string): void;
  /** Usage and finish reason of the answer (`gen_ai.usage.*`, `gen_ai.response.finish_reasons`). */
  usage(usage: Usage, finishReason?: FinishReason): void;
  setAttribute(name: string, value: TraceAttributeValue | undefined): void;
  addEvent(name: string, attributes?: Record<string, TraceAttributeValue>): void;
  /** Records the error the request answered with (status ERROR for 5xx, `error.type` always). */
  fail(error: unknown, status: number): void;
  /** Ends the request span with the status answered; later calls do nothing. */
  end(status: number): void;
}

/** The tracing of one running service (start-tracing.ts). */
export interface Tracing {
  /** Starts a request's server span, the child of the caller's `traceparent` when it sent one. */
  startServerRequest(facts: ServerRequestFacts): RequestTrace;
  /** Starts a batch line's span, in the trace of its batch, under the batch's root span. */
  startBatchLine(facts: BatchLineFacts): RequestTrace;
  /**
   * Records the root span of a batch's trace, from its creation to its end: the parent every line span
   * of the batch names. Called once per batch, by the worker that ended it.
   */
  endBatch(facts: BatchEndFacts): void;
  /** Exports every ended span now. */
  forceFlush(): Promise<void>;
  /** Exports what is left and stops. */
  shutdown(): Promise<void>;
}

/** Span names of the steps, as backends show them. */
export const SPAN_NAMES = {
  auth: 'switchyard.auth',
  admit: 'switchyard.limits.admit',
  settle: 'switchyard.limits.settle',
  ledger: 'switchyard.ledger.record',
  moderation: 'switchyard.moderation',
} as const;

/** Ends `span` when `work` settles (failed when it rejects); with no span it is `work` itself. */
export function spanUntil<T>(span: TraceSpan | undefined, work: Promise<T>): Promise<T> {
  if (span === undefined) return work;
  return work.then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      span.fail(error);
      span.end();
      throw error;
    },
  );
}

/**
 * Runs `work` in a step span when the request is traced; with no trace it is `work()` itself.
 * The span fails with the error `work` rejects with.
 */
export function traceStep<T>(trace: RequestTrace | undefined, name: string, work: Promise<T>): Promise<T> {
  return trace === undefined || !trace.recording ? work : spanUntil(trace.startStep(name), work);
}
