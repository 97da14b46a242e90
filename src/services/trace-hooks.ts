/**
 * Tracing hooks of the use cases that need more than a step span (tracing on only): the ledger
 * record's span, the stage that puts a generation's usage and finish reason on the request span, and
 * the client span of a single model call (embeddings, moderation, images: no routing, one attempt).
 */
import type { ModelConfig, ResolvedProviderConfig } from '../config/index.ts';
import type { BatchStage } from '../core/batched.ts';
import type { StreamPart } from '../core/stream-parts.ts';
import { SPAN_NAMES, type AttemptTrace, type GenAiOperation, type RequestTrace } from '../telemetry/trace-types.ts';
import type { LedgerRecord } from './metering/usage-ledger.ts';

/**
 * `sink` itself without a trace; with one, each record handed over is a span with its figures (the
 * database write that follows is batched with other requests' records, usage-ledger.ts).
 */
export function tracedLedgerSink(trace: RequestTrace | undefined, sink: (record: LedgerRecord) => void): (record: LedgerRecord) => void {
  if (trace === undefined || !trace.recording) return sink;
  return (record) => {
    const span = trace.startStep(SPAN_NAMES.ledger, {
      'switchyard.ledger.model': record.model,
      'switchyard.ledger.endpoint': record.endpoint,
      'switchyard.ledger.input_tokens': record.inputTokens,
      'switchyard.ledger.output_tokens': record.outputTokens,
      'switchyard.ledger.cost_usd': record.costUsd,
      'switchyard.ledger.status_code': record.statusCode,
      'switchyard.ledger.batch': record.batch,
    });
    try {
      sink(record);
    } catch (error) {
      span.fail(error);
      throw error;
    } finally {
      span.end();
    }
  };
}

/** Passes the stream on unchanged; puts its usage and finish reason (or its error) on the request span. */
export class GenerationTraceStage implements BatchStage<StreamPart> {
  readonly ended = false;

  constructor(private readonly trace: RequestTrace) {}

  push(batch: readonly StreamPart[]): readonly StreamPart[] {
    for (const part of batch) {
      if (part.type === 'finish') this.trace.usage(part.usage, part.finishReason);
      else if (part.type === 'error') this.trace.fail(part.error, part.error.status);
    }
    return batch;
  }
}

/**
 * The client span of a one-shot model call (embeddings, moderation, images), under the request; its
 * `traceparent` goes upstream when the call is handed the span as `CallOptions.trace`.
 */
export function startModelCallTrace(
  trace: RequestTrace,
  operation: GenAiOperation,
  model: ModelConfig,
  provider: ResolvedProviderConfig | undefined,
): AttemptTrace {
  trace.operation(operation, model.id);
  return trace.startAttempt(
    {
      providerKind: provider?.kind ?? model.provider,
      baseUrl: provider !== undefined && 'baseUrl' in provider ? provider.baseUrl : undefined,
      upstreamModel: model.upstreamModel ?? model.id,
      model: model.id,
      deployment: model.provider,
      attempt: 1,
      retry: 0,
    },
    operation,
  );
}
