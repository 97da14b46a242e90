/**
 * Tracing as Switchyard runs it, built to cost little per request: the sampler of OTEL_TRACES_SAMPLER
 * (the SDK's own samplers) decides once per request, a sampled request is a few light span records
 * (span-records.ts: ids, times and attributes as plain arrays), encoded to OTLP/HTTP protobuf
 * (otlp-proto.ts, the default) or JSON (otlp-json.ts) only when a batch is exported, by the batching exporter (otlp-export.ts, the batch span
 * processor's settings). No SDK `Span`, no tracer provider, no context manager: the request carries
 * its trace (`request.trace`, `caller.trace`). W3C `traceparent`/`tracestate` are read with the SDK's
 * propagator and written as it writes them. The resource is the SDK's default resource (the
 * `telemetry.sdk.*` attributes) with `service.name`. A batch's lines and its root span share one trace
 * (batch-trace.ts). Loaded only when tracing is on (start-tracing.ts).
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  defaultTextMapGetter,
  isSpanContextValid,
  trace,
  type Attributes,
  type Context,
  type SpanContext,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';
import type { TracingConfig } from '../config/index.ts';
import { BatchRootSampler, BatchSpanIds, batchContext, batchRootContext } from './batch-trace.ts';
import { SWITCHYARD } from './gen-ai-attributes.ts';
import { EXPORT_DEFAULTS, OtlpExporter, type ExportLogger } from './otlp-export.ts';
import { OtlpJsonEncoder } from './otlp-json.ts';
import { OtlpProtoEncoder } from './otlp-proto.ts';
import { KIND, RecordedRequest, STATUS, spanName, type RecordSink, type SpanRecord, type TraceIds } from './span-records.ts';
import { UnsampledRequest } from './unsampled-request.ts';
import type { BatchEndFacts, BatchLineFacts, RequestTrace, ServerRequestFacts, Tracing } from './trace-types.ts';

/** Where export failures and dropped spans go. */
export type TracingLogger = ExportLogger;

/** The sampler OTEL_TRACES_SAMPLER names, built from the SDK's samplers. */
export function samplerOf(config: Pick<TracingConfig, 'sampler' | 'samplerArg'>): Sampler {
  const ratio = (): Sampler => new TraceIdRatioBasedSampler(config.samplerArg ?? 1);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

const propagator = new W3CTraceContextPropagator();
const NO_ATTRIBUTES: Attributes = Object.freeze({});

const ATTR = {
  method: 'http.request.method',
  route: 'http.route',
  path: 'url.path',
  scheme: 'url.scheme',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  clientAddress: 'client.address',
  userAgent: 'user_agent.original',
} as const;

/** The caller's span context from its `traceparent` (and `tracestate`), when it sent a valid one. */
function callerContext(headers: ServerRequestFacts['headers']): Context {
  if (headers['traceparent'] === undefined) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
}

class LightTracing implements Tracing, RecordSink {
  constructor(
    private readonly sampler: Sampler,
    private readonly ids: BatchSpanIds,
    private readonly exporter: OtlpExporter<SpanRecord>,
  ) {}

  ended(record: SpanRecord): void {
    this.exporter.add(record);
  }

  spanId(): string {
    return this.ids.generateSpanId();
  }

  /** The sampler's decision for a span starting under `context` (the SDK asks it once per span; every span of a request gets the same answer). */
  private decide(context: Context, name: string, kind: SpanKind): { ids: TraceIds; parent: SpanContext | undefined } {
    const found = trace.getSpanContext(context);
    const parent = found !== undefined && isSpanContextValid(found) ? found : undefined;
    const traceId = parent?.traceId ?? this.ids.generateTraceId();
    const result = this.sampler.shouldSample(context, traceId, name, kind, NO_ATTRIBUTES, []);
    const sampled = result.decision === SamplingDecision.RECORD_AND_SAMPLED;
    return { ids: { traceId, sampled, traceState: result.traceState ?? parent?.traceState }, parent };
  }

  startServerRequest(facts: ServerRequestFacts): RequestTrace {
    // HTTP server conventions: `{method} {route}`, just the method when the route is unknown.
    const name = facts.route === undefined ? facts.method : spanName(facts.method, facts.route);
    const { ids, parent } = this.decide(callerContext(facts.headers), name, SpanKind.SERVER);
    if (!ids.sampled) return new UnsampledRequest(this, ids);
    const span = new RecordedRequest(this, ids, parent?.spanId ?? '', parent?.isRemote === true, name, KIND.server);
    span.names.push(ATTR.method, ATTR.path, ATTR.scheme, SWITCHYARD.requestId);
    span.values.push(facts.method, facts.path, facts.scheme, facts.requestId);
    if (facts.route !== undefined) span.setAttribute(ATTR.route, facts.route);
    if (facts.serverAddress !== undefined) span.setAttribute(ATTR.serverAddress, facts.serverAddress);
    if (facts.serverPort !== undefined) span.setAttribute(ATTR.serverPort, facts.serverPort);
    if (facts.clientAddress !== undefined) span.setAttribute(ATTR.clientAddress, facts.clientAddress);
    if (facts.userAgent !== undefined) span.setAttribute(ATTR.userAgent, facts.userAgent);
    return span;
  }

  startBatchLine(facts: BatchLineFacts): RequestTrace {
    const name = `batch line ${facts.url}`;
    const { ids, parent } = this.decide(batchContext(facts.batchId), name, SpanKind.CONSUMER);
    if (!ids.sampled) return new UnsampledRequest(this, ids);
    const span = new RecordedRequest(this, ids, parent!.spanId, true, name, KIND.consumer);
    span.names.push(SWITCHYARD.batchId, SWITCHYARD.batchLine, SWITCHYARD.requestId, ATTR.path);
    span.values.push(facts.batchId, facts.line, facts.requestId, facts.url);
    return span;
  }

  endBatch(facts: BatchEndFacts): void {
    const name = `batch ${facts.endpoint}`;
    // The batch's own ids (batch-trace.ts); sampled as its lines are (BatchRootSampler).
    const { ids, spanId } = this.ids.withBatchIds(facts.batchId, () => {
      const decided = this.decide(batchRootContext(facts.batchId), name, SpanKind.INTERNAL);
      return { ids: decided.ids, spanId: this.ids.generateSpanId() };
    });
    if (!ids.sampled) return;
    const span = new RecordedRequest(this, { ...ids, traceState: undefined }, '', false, name, KIND.internal, spanId, facts.createdAt);
    span.names.push(
      SWITCHYARD.batchId,
      SWITCHYARD.batchStatus,
      SWITCHYARD.batchTotal,
      SWITCHYARD.batchCompleted,
      SWITCHYARD.batchFailed,
      ATTR.path,
    );
    span.values.push(facts.batchId, facts.status, facts.total, facts.completed, facts.failed, facts.endpoint);
    if (facts.status === 'failed') {
      span.statusCode = STATUS.error;
      span.statusMessage = 'batch failed';
    }
    span.endAt(facts.endedAt);
  }

  forceFlush(): Promise<void> {
    return this.exporter.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.exporter.shutdown();
  }
}

/** Builds tracing for `config` (whose endpoint is set). */
export function createOtelTracing(config: TracingConfig & { endpoint: string }, logger?: TracingLogger): Tracing {
  const resource = defaultResource().merge(resourceFromAttributes({ 'service.name': config.serviceName }));
  const encoder =
    config.protocol === 'http/json'
      ? new OtlpJsonEncoder(resource.attributes, 'switchyard')
      : new OtlpProtoEncoder(resource.attributes, 'switchyard');
  const exporter = new OtlpExporter<SpanRecord>(
    {
      url: config.endpoint,
      contentType: encoder.contentType,
      headers: { ...config.headers },
      compression: config.compression ?? EXPORT_DEFAULTS.compression,
      timeoutMillis: config.timeoutMillis ?? EXPORT_DEFAULTS.timeoutMillis,
      scheduleDelayMillis: config.scheduleDelayMillis ?? EXPORT_DEFAULTS.scheduleDelayMillis,
      maxQueueSize: config.maxQueueSize ?? EXPORT_DEFAULTS.maxQueueSize,
      maxExportBatchSize: Math.min(
        config.maxExportBatchSize ?? EXPORT_DEFAULTS.maxExportBatchSize,
        config.maxQueueSize ?? EXPORT_DEFAULTS.maxQueueSize,
      ),
      exportTimeoutMillis: config.exportTimeoutMillis ?? EXPORT_DEFAULTS.exportTimeoutMillis,
    },
    (records) => encoder.encode(records),
    logger,
  );
  return new LightTracing(new BatchRootSampler(samplerOf(config)), new BatchSpanIds(), exporter);
}
