/**
 * Traces (OpenTelemetry): the `tracing` config section and the standard OTEL_* environment variables
 * it is read from. Tracing is on only when an OTLP endpoint is known; src/telemetry/ builds the SDK
 * from the resolved section.
 */
import { z } from 'zod';

/** The sampler names of the OpenTelemetry environment specification (OTEL_TRACES_SAMPLER). */
export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

export const tracingSchema = z.strictObject({
  /**
   * Where spans are POSTed (OTLP/HTTP), the full URL including `/v1/traces`. Unset: tracing is off
   * and costs nothing.
   */
  endpoint: z.url({ protocol: /^https?$/ }).optional(),
  /**
   * The OTLP/HTTP encoding (OTEL_EXPORTER_OTLP_PROTOCOL): `http/protobuf` (the specification's
   * default, `application/x-protobuf`) or `http/json`.
   */
  protocol: z.enum(['http/protobuf', 'http/json']).default('http/protobuf'),
  /** `service.name` of every span (OTEL_SERVICE_NAME). */
  serviceName: z.string().min(1).default('switchyard'),
  /** Which traces are kept (OTEL_TRACES_SAMPLER); the default follows the caller's `traceparent` decision. */
  sampler: z.enum(TRACE_SAMPLERS).default('parentbased_always_on'),
  /** The ratio of the `traceidratio` samplers, 0..1 (OTEL_TRACES_SAMPLER_ARG); default 1. */
  samplerArg: z.number().min(0).max(1).optional(),
  /** Extra headers of every export request (OTEL_EXPORTER_OTLP_HEADERS, `key=value,key2=value2`). */
  headers: z.record(z.string(), z.string()).default({}),
  /** `gzip` compresses every export request (OTEL_EXPORTER_OTLP_COMPRESSION); default none. */
  compression: z.enum(['gzip', 'none']).optional(),
  /** One export request's bound, ms (OTEL_EXPORTER_OTLP_TIMEOUT); default 10000. */
  timeoutMillis: z.number().int().positive().optional(),
  /** Spans wait at most this long before they are exported, ms (OTEL_BSP_SCHEDULE_DELAY); default 5000. */
  scheduleDelayMillis: z.number().int().positive().optional(),
  /** Spans waiting for export at most; more are dropped (OTEL_BSP_MAX_QUEUE_SIZE); default 2048. */
  maxQueueSize: z.number().int().positive().optional(),
  /** Spans in one export request at most (OTEL_BSP_MAX_EXPORT_BATCH_SIZE); default 512. */
  maxExportBatchSize: z.number().int().positive().optional(),
  /** One export's bound, its retries included, ms (OTEL_BSP_EXPORT_TIMEOUT); default 30000. */
  exportTimeoutMillis: z.number().int().positive().optional(),
});
export type TracingConfig = z.infer<typeof tracingSchema>;

/** `key=value,key2=value2` (values URL-encoded, as the OTLP exporter specification writes them). */
function headersFromEnv(name: string, value: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of value.split(',')) {
    if (pair.trim() === '') continue;
    const separator = pair.indexOf('=');
    if (separator <= 0) throw new Error(`${name} must be key=value pairs separated by commas, e.g. ${name}=authorization=Bearer%20abc.`);
    headers[pair.slice(0, separator).trim()] = decodeURIComponent(pair.slice(separator + 1).trim());
  }
  return headers;
}

/** The exporter's and batch processor's numeric settings, each from the first variable set of its names. */
const EXPORT_NUMBERS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['timeoutMillis', ['OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', 'OTEL_EXPORTER_OTLP_TIMEOUT']],
  ['scheduleDelayMillis', ['OTEL_BSP_SCHEDULE_DELAY']],
  ['maxQueueSize', ['OTEL_BSP_MAX_QUEUE_SIZE']],
  ['maxExportBatchSize', ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE']],
  ['exportTimeoutMillis', ['OTEL_BSP_EXPORT_TIMEOUT']],
];

/**
 * The tracing section from the OTEL_* variables, or undefined when none is set. OTEL_SDK_DISABLED=true
 * or OTEL_TRACES_EXPORTER=none turn tracing off whatever else is set. Throws an Error (the loader
 * words it as a ConfigError) for a value that cannot be read.
 */
export function tracingFromEnvironment(env: NodeJS.ProcessEnv): Record<string, unknown> | undefined {
  const tracing: Record<string, unknown> = {};
  const tracesEndpoint = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'];
  const endpoint = env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  // The signal-specific URL is used as given; the generic one gets the traces path appended (OTLP spec).
  if (tracesEndpoint) tracing['endpoint'] = tracesEndpoint;
  else if (endpoint) tracing['endpoint'] = `${endpoint.replace(/\/+$/, '')}/v1/traces`;
  if (env['OTEL_SERVICE_NAME']) tracing['serviceName'] = env['OTEL_SERVICE_NAME'];
  if (env['OTEL_TRACES_SAMPLER']) tracing['sampler'] = env['OTEL_TRACES_SAMPLER'].trim().toLowerCase();
  const samplerArg = env['OTEL_TRACES_SAMPLER_ARG'];
  if (samplerArg) {
    const ratio = Number(samplerArg);
    if (!Number.isFinite(ratio))
      throw new Error(`OTEL_TRACES_SAMPLER_ARG=${samplerArg} is not a number. Set a ratio from 0 to 1, e.g. 0.1.`);
    tracing['samplerArg'] = ratio;
  }
  const headers = env['OTEL_EXPORTER_OTLP_TRACES_HEADERS'] || env['OTEL_EXPORTER_OTLP_HEADERS'];
  if (headers) {
    const name = env['OTEL_EXPORTER_OTLP_TRACES_HEADERS'] ? 'OTEL_EXPORTER_OTLP_TRACES_HEADERS' : 'OTEL_EXPORTER_OTLP_HEADERS';
    tracing['headers'] = headersFromEnv(name, headers);
  }
  const compression = (env['OTEL_EXPORTER_OTLP_TRACES_COMPRESSION'] || env['OTEL_EXPORTER_OTLP_COMPRESSION'])?.trim().toLowerCase();
  if (compression) {
    if (compression !== 'gzip' && compression !== 'none')
      throw new Error(`OTEL_EXPORTER_OTLP_COMPRESSION=${compression} is not supported. Set gzip or none.`);
    tracing['compression'] = compression;
  }
  for (const [key, names] of EXPORT_NUMBERS) {
    const name = names.find((each) => env[each]);
    if (name === undefined) continue;
    const value = Number(env[name]);
    if (!Number.isInteger(value) || value <= 0) throw new Error(`${name}=${env[name]} is not a positive whole number.`);
    tracing[key] = value;
  }
  const protocol = (env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] || env['OTEL_EXPORTER_OTLP_PROTOCOL'])?.trim().toLowerCase();
  if (protocol) {
    if (protocol !== 'http/json' && protocol !== 'http/protobuf')
      throw new Error(
        `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported: spans are sent over OTLP/HTTP. Set http/protobuf or http/json.`,
      );
    tracing['protocol'] = protocol;
  }
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true' || env['OTEL_TRACES_EXPORTER']?.trim().toLowerCase() === 'none') {
    // Off whatever the endpoint says; the other settings are still checked above.
    return { ...tracing, endpoint: undefined };
  }
  return Object.keys(tracing).length === 0 ? undefined : tracing;
}
