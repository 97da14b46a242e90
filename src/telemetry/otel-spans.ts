/**
 * The spans themselves, over the OpenTelemetry API: a request's server span and the context its
 * children start under, step spans, and upstream attempts (client spans whose `traceparent` goes
 * upstream). Loaded only when tracing is on (start-tracing.ts).
 */
import {
  SpanKind,
  SpanStatusCode,
  defaultTextMapSetter,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from '@opentelemetry/semantic-conventions';
import type { FinishReason, GenerationRequest } from '../core/generation.ts';
import type { Usage } from '../core/usage.ts';
import { GEN_AI, SWITCHYARD, genAiFinishReason, genAiProviderName } from './gen-ai-attributes.ts';
import type { AttemptTrace, GenAiOperation, RequestTrace, TraceAttributeValue, TraceSpan, UpstreamAttemptFacts } from './trace-types.ts';

export const propagator = new W3CTraceContextPropagator();

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

/** W3C trace-context headers (`traceparent`, `tracestate`) of `context`. */
export function traceHeaders(context: Context): Record<string, string> {
  const headers: Record<string, string> = {};
  propagator.inject(context, headers, defaultTextMapSetter);
  return headers;
}

/**
 * A step span. Everything reported after its end is dropped here: the SDK would warn about each one,
 * and a body released after its attempt ended (an output cap that cut the stream) reports its end late.
 */
export class OtelSpan implements TraceSpan {
  protected done = false;

  constructor(protected readonly span: Span) {}

  setAttribute(name: string, value: TraceAttributeValue | undefined): void {
    if (value !== undefined && !this.done) this.span.setAttribute(name, value as string);
  }

  addEvent(name: string, attributes?: Record<string, TraceAttributeValue>): void {
    if (!this.done) this.span.addEvent(name, attributes as Attributes | undefined);
  }

  fail(error: unknown): void {
    if (this.done) return;
    const type = errorType(error);
    this.span.setAttribute(ATTR_ERROR_TYPE, type);
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    this.span.end();
  }
}

/** One upstream attempt: a client span, and the `traceparent` the upstream receives (this span's). */
export class OtelAttempt extends OtelSpan implements AttemptTrace {
  readonly headers: Readonly<Record<string, string>>;
  /** The model the upstream reported, else the one asked for. */
  private answeringModel: string;

  constructor(
    span: Span,
    parent: Context,
    /** The request's span: the committed attempt says there who answered. */
    private readonly requestSpan: Span,
    private readonly facts: UpstreamAttemptFacts,
  ) {
    super(span);
    this.headers = traceHeaders(trace.setSpan(parent, span));
    this.answeringModel = facts.upstreamModel;
  }

  connected(): void {
    this.addEvent('connect');
  }

  responded(status: number): void {
    this.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    this.addEvent('first_byte', { [ATTR_HTTP_RESPONSE_STATUS_CODE]: status });
  }

  ended(error?: unknown): void {
    this.addEvent('end', error === undefined ? undefined : { [ATTR_ERROR_TYPE]: errorType(error) });
  }

  committed(): void {
    if (this.done) return;
    this.span.addEvent('first_token');
    if (!this.requestSpan.isRecording()) return;
    // The request is answered by this attempt: its provider and model are the request's.
    const provider = genAiProviderName(this.facts.providerKind);
    this.requestSpan.setAttribute(GEN_AI.providerName, provider);
    this.requestSpan.setAttribute(GEN_AI.system, provider);
    this.requestSpan.setAttribute(GEN_AI.responseModel, this.answeringModel);
    this.requestSpan.setAttribute(SWITCHYARD.model, this.facts.model);
    this.requestSpan.setAttribute(SWITCHYARD.deployment, this.facts.deployment);
    this.requestSpan.setAttribute(SWITCHYARD.attempt, this.facts.attempt);
  }

  responseModel(model: string): void {
    this.answeringModel = model;
    this.setAttribute(GEN_AI.responseModel, model);
  }

  finished(usage: Usage, finishReason: FinishReason): void {
    if (!this.done) setUsage(this.span, usage, finishReason);
  }
}

function setUsage(span: Span, usage: Usage, finishReason: FinishReason | undefined): void {
  span.setAttribute(GEN_AI.usageInputTokens, usage.inputTokens);
  span.setAttribute(GEN_AI.usageOutputTokens, usage.outputTokens);
  if (usage.cachedInputTokens > 0) span.setAttribute(GEN_AI.usageCacheReadInputTokens, usage.cachedInputTokens);
  if (usage.cacheWriteInputTokens > 0) span.setAttribute(GEN_AI.usageCacheCreationInputTokens, usage.cacheWriteInputTokens);
  if (usage.reasoningTokens > 0) span.setAttribute(GEN_AI.usageReasoningOutputTokens, usage.reasoningTokens);
  if (usage.estimated) span.setAttribute(SWITCHYARD.usageEstimated, true);
  if (finishReason !== undefined) span.setAttribute(GEN_AI.responseFinishReasons, [genAiFinishReason(finishReason)]);
}

/** The request settings the GenAI conventions name, those the request set. */
function setGenerationRequest(span: Span, request: GenerationRequest): void {
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

/** A traced request (or batch line): its span and the context its children start under. */
export class OtelRequestTrace implements RequestTrace {
  private ended = false;
  private failed = false;
  private readonly context: Context;
  /** The request being answered, kept for the attempts' `gen_ai.request.*` attributes. */
  private request: GenerationRequest | undefined;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
    parent: Context,
  ) {
    this.context = trace.setSpan(parent, span);
  }

  startStep(name: string, attributes?: Record<string, TraceAttributeValue>): TraceSpan {
    return new OtelSpan(this.tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes: attributes as Attributes }, this.context));
  }

  startAttempt(facts: UpstreamAttemptFacts, operation: GenAiOperation): AttemptTrace {
    const provider = genAiProviderName(facts.providerKind);
    const attributes: Attributes = {
      [GEN_AI.operationName]: operation,
      [GEN_AI.providerName]: provider,
      [GEN_AI.system]: provider,
      [GEN_AI.requestModel]: facts.upstreamModel,
      [SWITCHYARD.model]: facts.model,
      [SWITCHYARD.deployment]: facts.deployment,
      [SWITCHYARD.attempt]: facts.attempt,
      [SWITCHYARD.retry]: facts.retry,
    };
    if (facts.baseUrl !== undefined) {
      const server = serverOf(facts.baseUrl);
      attributes[ATTR_SERVER_ADDRESS] = server.address;
      attributes[ATTR_SERVER_PORT] = server.port;
    }
    const span = this.tracer.startSpan(`${operation} ${facts.upstreamModel}`, { kind: SpanKind.CLIENT, attributes }, this.context);
    if (this.request !== undefined) setGenerationRequest(span, this.request);
    return new OtelAttempt(span, this.context, this.span, facts);
  }

  upstreamHeaders(): Record<string, string> {
    return traceHeaders(this.context);
  }

  generationRequest(operation: GenAiOperation, request: GenerationRequest): void {
    this.request = request;
    if (this.ended) return;
    this.operation(operation, request.model);
    setGenerationRequest(this.span, request);
  }

  operation(operation: GenAiOperation, model: string): void {
    if (this.ended) return;
    this.span.setAttribute(GEN_AI.operationName, operation);
    this.span.setAttribute(GEN_AI.requestModel, model);
  }

  /** Reported after the request span ended (the client left before the stream did): dropped. */
  usage(usage: Usage, finishReason?: FinishReason): void {
    if (!this.ended) setUsage(this.span, usage, finishReason);
  }

  setAttribute(name: string, value: TraceAttributeValue | undefined): void {
    if (value !== undefined && !this.ended) this.span.setAttribute(name, value as string);
  }

  addEvent(name: string, attributes?: Record<string, TraceAttributeValue>): void {
    if (!this.ended) this.span.addEvent(name, attributes as Attributes | undefined);
  }

  fail(error: unknown, status: number): void {
    if (this.ended) return;
    this.failed = true;
    this.span.setAttribute(ATTR_ERROR_TYPE, errorType(error));
    // HTTP server conventions: a 4xx is the client's doing, not a failed span; a 5xx is.
    if (status >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
  }

  end(status: number): void {
    if (this.ended) return;
    this.ended = true;
    if (status > 0) this.span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    if (status >= 500 && !this.failed) {
      this.span.setAttribute(ATTR_ERROR_TYPE, String(status));
      this.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.span.end();
  }
}
