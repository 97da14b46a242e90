/**
 * The OpenTelemetry SDK as Switchyard runs it: one tracer provider per running service (not
 * registered globally), the configured sampler, a batch span processor and the OTLP/HTTP exporter
 * (JSON encoding) to `tracing.endpoint`. Loaded only when tracing is on (start-tracing.ts). A batch's
 * lines and its root span share one trace (batch-trace.ts).
 *
 * The SDK still reads what it reads itself: OTEL_BSP_* (batch processor), OTEL_EXPORTER_OTLP_TIMEOUT
 * and _COMPRESSION, OTEL_SPAN_*_LIMIT. Endpoint, headers, service name and sampler come from the config.
 */
import {
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  defaultTextMapGetter,
  diag,
  type Attributes,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import type { TracingConfig } from '../config/index.ts';
import { BatchRootSampler, BatchSpanIds, batchContext, batchRootContext } from './batch-trace.ts';
import { SWITCHYARD } from './gen-ai-attributes.ts';
import { OtelRequestTrace, propagator } from './otel-spans.ts';
import type { BatchEndFacts, BatchLineFacts, RequestTrace, ServerRequestFacts, Tracing } from './trace-types.ts';

/** Where the SDK's own complaints (an export that failed, a bad setting) go. */
export interface TracingLogger {
  warn(details: object, message: string): void;
}

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

class OtelTracing implements Tracing {
  private readonly tracer: Tracer;

  constructor(
    private readonly provider: BasicTracerProvider,
    private readonly ids: BatchSpanIds,
  ) {
    this.tracer = provider.getTracer('switchyard');
  }

  startServerRequest(facts: ServerRequestFacts): RequestTrace {
    const parent = propagator.extract(ROOT_CONTEXT, facts.headers, defaultTextMapGetter);
    const attributes: Attributes = {
      [ATTR_HTTP_REQUEST_METHOD]: facts.method,
      [ATTR_URL_PATH]: facts.path,
      [ATTR_URL_SCHEME]: facts.scheme,
      [SWITCHYARD.requestId]: facts.requestId,
    };
    if (facts.route !== undefined) attributes[ATTR_HTTP_ROUTE] = facts.route;
    if (facts.serverAddress !== undefined) attributes[ATTR_SERVER_ADDRESS] = facts.serverAddress;
    if (facts.serverPort !== undefined) attributes[ATTR_SERVER_PORT] = facts.serverPort;
    if (facts.clientAddress !== undefined) attributes[ATTR_CLIENT_ADDRESS] = facts.clientAddress;
    if (facts.userAgent !== undefined) attributes[ATTR_USER_AGENT_ORIGINAL] = facts.userAgent;
    // HTTP server conventions: `{method} {route}`, just the method when the route is unknown.
    const name = facts.route === undefined ? facts.method : `${facts.method} ${facts.route}`;
    const span = this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
    return new OtelRequestTrace(this.tracer, span, parent);
  }

  startBatchLine(facts: BatchLineFacts): RequestTrace {
    const parent = batchContext(facts.batchId);
    const attributes: Attributes = {
      [SWITCHYARD.batchId]: facts.batchId,
      [SWITCHYARD.batchLine]: facts.line,
      [SWITCHYARD.requestId]: facts.requestId,
      [ATTR_URL_PATH]: facts.url,
    };
    const span = this.tracer.startSpan(`batch line ${facts.url}`, { kind: SpanKind.CONSUMER, attributes }, parent);
    return new OtelRequestTrace(this.tracer, span, parent);
  }

  endBatch(facts: BatchEndFacts): void {
    const attributes: Attributes = {
      [SWITCHYARD.batchId]: facts.batchId,
      [SWITCHYARD.batchStatus]: facts.status,
      [SWITCHYARD.batchTotal]: facts.total,
      [SWITCHYARD.batchCompleted]: facts.completed,
      [SWITCHYARD.batchFailed]: facts.failed,
      [ATTR_URL_PATH]: facts.endpoint,
    };
    // Dates, not numbers: the SDK reads a number below its process's start time as relative to it.
    const options = { kind: SpanKind.INTERNAL, attributes, startTime: new Date(facts.createdAt), root: true };
    const span = this.ids.withBatchIds(facts.batchId, () =>
      this.tracer.startSpan(`batch ${facts.endpoint}`, options, batchRootContext(facts.batchId)),
    );
    if (facts.status === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: 'batch failed' });
    span.end(new Date(facts.endedAt));
  }

  forceFlush(): Promise<void> {
    return this.provider.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }
}

/** Builds the SDK for `config` (whose endpoint is set). */
export function createOtelTracing(config: TracingConfig & { endpoint: string }, logger?: TracingLogger): Tracing {
  if (logger !== undefined) {
    // The SDK reports failed exports through its diagnostic logger; warnings and errors reach the log.
    const report = (message: string, ...args: unknown[]): void => logger.warn({ details: args.map(String) }, `tracing: ${message}`);
    const quiet = (): void => undefined;
    diag.setLogger({ error: report, warn: report, info: quiet, debug: quiet, verbose: quiet }, DiagLogLevel.WARN);
  }
  const exporter = new OTLPTraceExporter({ url: config.endpoint, headers: { ...config.headers } });
  const ids = new BatchSpanIds();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }),
    sampler: new BatchRootSampler(samplerOf(config)),
    idGenerator: ids,
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  return new OtelTracing(provider, ids);
}
