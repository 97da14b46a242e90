/**
 * Starts tracing when the config names an OTLP endpoint, else returns undefined: with tracing off no
 * OpenTelemetry module is even loaded (the SDK and exporter cost start time), and every hook in the
 * service is a `trace?.` on an undefined field.
 */
import type { TracingConfig } from '../config/index.ts';
import type { TracingLogger } from './otel-tracing.ts';
import type { Tracing } from './trace-types.ts';

export async function startTracing(config: TracingConfig, logger?: TracingLogger): Promise<Tracing | undefined> {
  const endpoint = config.endpoint;
  if (endpoint === undefined) return undefined;
  const { createOtelTracing } = await import('./otel-tracing.ts');
  return createOtelTracing({ ...config, endpoint }, logger);
}
