/**
 * The spans themselves, as light records: a span is its ids, name, kind, two timestamps and its
 * attributes as two plain arrays (names and values, written once each), turned into OTLP JSON only
 * when a batch is exported (otlp-json.ts), off the request path. No SDK `Span`, no context object, no
 * attribute map per span; a request's steps and attempts are records of the same shape, children of the
 * request's record by id. An ended record goes to the exporter's queue (otlp-export.ts) as one push.
 *
 * Only sampled requests get records (`RecordedRequest`); an unsampled one (unsampled-request.ts) keeps
 * nothing and still sends a `traceparent` upstream (not sampled), as the SDK's non-recording spans do.
 */
import type { TraceState } from '@opentelemetry/api';
import type { FinishReason, GenerationRequest } from '../core/generation.ts';
import type { Usage } from '../core/usage.ts';
import { GEN_AI, SWITCHYARD, genAiFinishReason, genAiProviderName } from './gen-ai-attributes.ts';
import type { AttemptTrace, GenAiOperation, RequestTrace, TraceAttributeValue, TraceSpan, UpstreamAttemptFacts } from './trace-types.ts';

const ERROR_TYPE = 'error.type';
const HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code';
const SERVER_ADDRESS = 'server.address';
const SERVER_PORT = 'server.port';

/** The SDK's default span limits (OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT, OTEL_SPAN_EVENT_COUNT_LIMIT): 128 each. */
const ATTRIBUTE_COUNT_LIMIT = 128;
const EVENT_COUNT_LIMIT = 128;

/** OTLP span kinds (the proto's numbers). */
export const KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;
/** OTLP status codes. */
export const STATUS = { unset: 0, ok: 1, error: 2 } as const;

/** Milliseconds since the epoch with sub-millisecond precision (the SDK's clock: time origin + monotonic). */
const TIME_ORIGIN = performance.timeOrigin;
export const now = (): number => TIME_ORIGIN + performance.now();

/** Where ended records go, and how ids are made (otel-tracing.ts). */
export interface RecordSink {
  /** Queues an ended span for export. */
  ended(record: SpanRecord): void;
  spanId(): string;
}

/** The trace a record belongs to: its id, whether it is sampled, the caller's tracestate. */
export interface TraceIds {
  traceId: string;
  sampled: boolean;
  traceState: TraceState | undefined;
}

export interface SpanEvent {
  name: string;
  time: number;
  attributes: Record<string, TraceAttributeValue> | undefined;
}

/** The `traceparent` (and `tracestate`) that names `spanId` in `ids`' trace as the parent. */
export function w3cHeaders(ids: TraceIds, spanId: string): Record<string, string> {
  const headers: Record<string, string> = { traceparent: `00-${ids.traceId}-${spanId}-${ids.sampled ? '01' : '00'}` };
  if (ids.traceState !== undefined) {
    const state = ids.traceState.serialize();
    if (state !== '') headers['tracestate'] = state;
  }
  return headers;
}

/**
 * `{first} {second}` span names, made once per pair (methods and route patterns, operations and models:
 * a small set; bounded anyway): the same flat string every time, nothing to concatenate or flatten.
 */
const spanNames = new Map<string, Map<string, string>>();
const SPAN_NAME_LIMIT = 4096;
let spanNameCount = 0;

export function spanName(first: string, second: string): string {
  let names = spanNames.get(first);
  if (names === undefined) {
    names = new Map();
    if (spanNameCount < SPAN_NAME_LIMIT) spanNames.set(first, names);
  }
  let name = names.get(second);
  if (name === undefined) {
    name = `${first} ${second}`;
    if (spanNameCount < SPAN_NAME_LIMIT) {
      names.set(second, name);
      spanNameCount++;
    }
  }
  return name;
}

/** A ServiceError's code (duck-typed: telemetry sits below the layers that define errors), else the error's name. */
function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
    if (error instanceof Error) return error.name;
  }
  return 'error';
}

/** The message of a ServiceError (written for clients, so safe to export); other errors give their name only. */
function errorMessage(error: unknown): string {
  if (typeof error === 'object' && error !== null && typeof (error as { status?: unknown }).status === 'number')
    return String((error as { message?: unknown }).message ?? '');
  return errorType(error);
}

/**
 * One span. Everything reported after its end is dropped (a body released after its attempt ended, an
 * output cap that cut the stream, reports its end late).
 */
export class SpanRecord implements TraceSpan {
  readonly spanId: string;
  /** Milliseconds since the epoch. */
  readonly startTime: number;
  endTime = 0;
  readonly names: string[] = [];
  readonly values: TraceAttributeValue[] = [];
  droppedAttributes = 0;
  events: SpanEvent[] | undefined;
  droppedEvents = 0;
  statusCode: number = STATUS.unset;
  statusMessage: string | undefined;
  protected done = false;

  constructor(
    protected readonly sink: RecordSink,
    readonly ids: TraceIds,
    /** '' for a root span. */
    readonly parentSpanId: string,
    /** Whether the parent came from another process (a caller's `traceparent`, a batch's root). */
    readonly parentIsRemote: boolean,
    readonly name: string,
    readonly kind: number,
    spanId?: string,
    start?: number,
  ) {
    this.spanId = spanId ?? sink.spanId();
    this.startTime = start ?? now();
  }

  /** Sets an attribute (a later value of the same name replaces the earlier one). */
  setAttribute(name: string, value: TraceAttributeValue | undefined): void {
    if (value === undefined || this.done) return;
    this.put(name, value);
  }

  /** Sets an attribute, ended or not (the request's usage and status, set by its own end). */
  protected put(name: string, value: TraceAttributeValue): void {
    const names = this.names;
    const at = names.indexOf(name);
    if (at !== -1) this.values[at] = value;
    else if (names.length >= ATTRIBUTE_COUNT_LIMIT) this.droppedAttributes++;
    else {
      names.push(name);
      this.values.push(value);
    }
  }

  addEvent(name: string, attributes?: Record<string, TraceAttributeValue>): void {
    if (this.done) return;
    const events = (this.events ??= []);
    if (events.length >= EVENT_COUNT_LIMIT) {
      events.shift();
      this.droppedEvents++;
    }
    events.push({ name, time: now(), attributes });
  }

  fail(error: unknown): void {
    if (this.done) return;
    this.put(ERROR_TYPE, errorType(error));
    this.statusCode = STATUS.error;
    this.statusMessage = errorMessage(error);
  }

  end(): void {
    this.finish();
  }

  /** Ends the span at `at` (now by default) and queues it; later calls do nothing. */
  protected finish(at?: number): void {
    if (this.done) return;
    this.done = true;
    this.endTime = at ?? now();
    this.sink.ended(this);
  }

  get isEnded(): boolean {
    return this.done;
  }
}

function setUsage(span: SpanRecord, usage: Usage, finishReason: FinishReason | undefined): void {
  span.setAttribute(GEN_AI.usageInputTokens, usage.inputTokens);
  span.setAttribute(GEN_AI.usageOutputTokens, usage.outputTokens);
  if (usage.cachedInputTokens > 0) span.setAttribute(GEN_AI.usageCacheReadInputTokens, usage.cachedInputTokens);
  if (usage.cacheWriteInputTokens > 0) span.setAttribute(GEN_AI.usageCacheCreationInputTokens, usage.cacheWriteInputTokens);
  if (usage.reasoningTokens > 0) span.setAttribute(GEN_AI.usageReasoningOutputTokens, usage.reasoningTokens);
  if (usage.estimated) span.setAttribute(SWITCHYARD.usageEstimated, true);
  if (finishReason !== undefined) span.setAttribute(GEN_AI.responseFinishReasons, [genAiFinishReason(finishReason)]);
}

/** The request settings the GenAI conventions name. */
type GenerationSettings = {
  [Key in 'maxOutputTokens' | 'temperature' | 'topP' | 'topK' | 'stopSequences' | 'seed']?: GenerationRequest[Key] | undefined;
};

/** The request settings the GenAI conventions name, those the request set. */
function setGenerationRequest(span: SpanRecord, request: GenerationSettings): void {
  if (request.maxOutputTokens !== undefined) span.setAttribute(GEN_AI.requestMaxTokens, request.maxOutputTokens);
  if (request.temperature !== undefined) span.setAttribute(GEN_AI.requestTemperature, request.temperature);
  if (request.topP !== undefined) span.setAttribute(GEN_AI.requestTopP, request.topP);
  if (request.topK !== undefined) span.setAttribute(GEN_AI.requestTopK, request.topK);
  if (request.stopSequences !== undefined && request.stopSequences.length > 0)
    span.setAttribute(GEN_AI.requestStopSequences, request.stopSequences);
  if (request.seed !== undefined) span.setAttribute(GEN_AI.requestSeed, request.seed);
}

/** Host and port of each provider base URL, parsed once (a handful of providers, each parsed on every attempt otherwise). */
const servers = new Map<string, { address: string; port: number }>();

function serverOf(baseUrl: string): { address: string; port: number } {
  let server = servers.get(baseUrl);
  if (server === undefined) {
    const url = new URL(baseUrl);
    server = { address: url.hostname, port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port) };
    servers.set(baseUrl, server);
  }
  return server;
}

/** One upstream attempt: a client span, and the `traceparent` the upstream receives (this span's). */
class AttemptRecord extends SpanRecord implements AttemptTrace {
  readonly headers: Readonly<Record<string, string>>;
  /** The model the upstream reported, else the one asked for. */
  private answeringModel: string;

  constructor(
    sink: RecordSink,
    /** The request's span: the committed attempt says there who answered. */
    private readonly request: RecordedRequest,
    private readonly facts: UpstreamAttemptFacts,
    operation: GenAiOperation,
  ) {
    super(sink, request.ids, request.spanId, false, spanName(operation, facts.upstreamModel), KIND.client);
    const provider = genAiProviderName(facts.providerKind);
    this.names.push(
      GEN_AI.operationName,
      GEN_AI.providerName,
      GEN_AI.system,
      GEN_AI.requestModel,
      SWITCHYARD.model,
      SWITCHYARD.deployment,
      SWITCHYARD.attempt,
      SWITCHYARD.retry,
    );
    this.values.push(operation, provider, provider, facts.upstreamModel, facts.model, facts.deployment, facts.attempt, facts.retry);
    if (facts.baseUrl !== undefined) {
      const server = serverOf(facts.baseUrl);
      this.names.push(SERVER_ADDRESS, SERVER_PORT);
      this.values.push(server.address, server.port);
    }
    this.headers = w3cHeaders(this.ids, this.spanId);
    this.answeringModel = facts.upstreamModel;
  }

  connected(): void {
    this.addEvent('connect');
  }

  responded(status: number): void {
    this.setAttribute(HTTP_RESPONSE_STATUS_CODE, status);
    this.addEvent('first_byte', { [HTTP_RESPONSE_STATUS_CODE]: status });
  }

  ended(error?: unknown): void {
    this.addEvent('end', error === undefined ? undefined : { [ERROR_TYPE]: errorType(error) });
  }

  committed(): void {
    if (this.done) return;
    this.addEvent('first_token');
    const request = this.request;
    if (request.isEnded) return;
    // The request is answered by this attempt: its provider and model are the request's.
    const provider = genAiProviderName(this.facts.providerKind);
    request.setAttribute(GEN_AI.providerName, provider);
    request.setAttribute(GEN_AI.system, provider);
    request.setAttribute(GEN_AI.responseModel, this.answeringModel);
    request.setAttribute(SWITCHYARD.model, this.facts.model);
    request.setAttribute(SWITCHYARD.deployment, this.facts.deployment);
    request.setAttribute(SWITCHYARD.attempt, this.facts.attempt);
  }

  responseModel(model: string): void {
    this.answeringModel = model;
    this.setAttribute(GEN_AI.responseModel, model);
  }

  finished(usage: Usage, finishReason: FinishReason): void {
    if (!this.done) setUsage(this, usage, finishReason);
  }

  /** Called by the request: the GenAI request settings, known when the attempt starts. */
  generationRequest(request: GenerationSettings): void {
    setGenerationRequest(this, request);
  }
}

/** A sampled request (or batch line): its own span's record, the parent of its steps and attempts. */
export class RecordedRequest extends SpanRecord implements RequestTrace {
  readonly recording = true;
  private failed = false;
  /**
   * The settings of the request being answered, for the attempts' `gen_ai.request.*` attributes (the
   * settings alone: a queued record must not keep the request's messages alive until it is exported).
   */
  private settings: GenerationSettings | undefined;

  startStep(name: string, attributes?: Record<string, TraceAttributeValue>): TraceSpan {
    const step = new SpanRecord(this.sink, this.ids, this.spanId, false, name, KIND.internal);
    if (attributes !== undefined)
      for (const key in attributes) {
        const value = attributes[key];
        if (value !== undefined) step.setAttribute(key, value);
      }
    return step;
  }

  startAttempt(facts: UpstreamAttemptFacts, operation: GenAiOperation): AttemptTrace {
    const attempt = new AttemptRecord(this.sink, this, facts, operation);
    if (this.settings !== undefined) attempt.generationRequest(this.settings);
    return attempt;
  }

  upstreamHeaders(): Record<string, string> {
    return w3cHeaders(this.ids, this.spanId);
  }

  generationRequest(operation: GenAiOperation, request: GenerationRequest): void {
    const { maxOutputTokens, temperature, topP, topK, stopSequences, seed } = request;
    this.settings = { maxOutputTokens, temperature, topP, topK, stopSequences, seed };
    if (this.done) return;
    this.operation(operation, request.model);
    setGenerationRequest(this, request);
  }

  operation(operation: GenAiOperation, model: string): void {
    this.setAttribute(GEN_AI.operationName, operation);
    this.setAttribute(GEN_AI.requestModel, model);
  }

  /** Reported after the request span ended (the client left before the stream did): dropped. */
  usage(usage: Usage, finishReason?: FinishReason): void {
    if (!this.done) setUsage(this, usage, finishReason);
  }

  override fail(error: unknown, status?: number): void {
    if (this.done) return;
    this.failed = true;
    this.put(ERROR_TYPE, errorType(error));
    // HTTP server conventions: a 4xx is the client's doing, not a failed span; a 5xx is.
    if (status !== undefined && status >= 500) {
      this.statusCode = STATUS.error;
      this.statusMessage = errorMessage(error);
    }
  }

  override end(status?: number): void {
    if (this.done) return;
    if (status !== undefined && status > 0) this.put(HTTP_RESPONSE_STATUS_CODE, status);
    if (status !== undefined && status >= 500 && !this.failed) {
      this.put(ERROR_TYPE, String(status));
      this.statusCode = STATUS.error;
    }
    this.finish();
  }

  /** Ends the span at a given time (a batch's root span ends when the batch did). */
  endAt(at: number): void {
    this.finish(at);
  }
}
