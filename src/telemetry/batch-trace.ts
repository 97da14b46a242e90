/**
 * One trace per batch, and a whole one. Every line of a batch, on any instance and at any time, is a
 * span in the batch's trace under one parent: the batch's own root span, whose trace and span ids are
 * derived from the batch id, so every instance names the same parent without asking anyone. That root
 * span is exported once, by the instance whose worker ends the batch (results written, final status
 * recorded), spanning the batch's life from its creation; until then the lines wait for their parent
 * as any long-running trace's children do.
 *
 * Two small hooks in the shapes the SDK defines do it: `BatchSpanIds` (the id generator every span's
 * ids come from, otel-tracing.ts) hands out the batch's ids for the one span started under
 * `batchRootContext`, and `BatchRootSampler` (around the configured sampler) samples that span exactly
 * as the lines under it are sampled, so a batch's trace is exported whole or not at all. Both still
 * plug into an SDK tracer provider as they are (test/telemetry/batch-trace.test.ts).
 */
import { createHash } from 'node:crypto';
import {
  ROOT_CONTEXT,
  TraceFlags,
  createContextKey,
  trace,
  type Attributes,
  type Context,
  type Link,
  type SpanKind,
} from '@opentelemetry/api';
import type { IdGenerator, Sampler, SamplingResult } from '@opentelemetry/sdk-trace-base';
import { PooledRandomIds } from './random-ids.ts';

interface SpanIds {
  traceId: string;
  spanId: string;
}

/** The trace id and root span id of a batch, the same on every instance. */
function batchSpanIds(batchId: string): SpanIds {
  const digest = createHash('sha256').update(`switchyard batch ${batchId}`).digest('hex');
  return { traceId: digest.slice(0, 32), spanId: digest.slice(32, 48) };
}

/** The context a batch's lines start under: the batch's root span, as a remote and sampled parent. */
export function batchContext(batchId: string): Context {
  return trace.setSpanContext(ROOT_CONTEXT, { ...batchSpanIds(batchId), traceFlags: TraceFlags.SAMPLED, isRemote: true });
}

/** Marks the context of a batch's root span with the batch's ids. */
const BATCH_ROOT = createContextKey('switchyard batch root span');

/** The context a batch's root span starts under (no parent; with `root: true`). */
export function batchRootContext(batchId: string): Context {
  return ROOT_CONTEXT.setValue(BATCH_ROOT, batchId);
}

/** Random ids (random-ids.ts), except for a batch's root span, which gets the batch's ids. */
export class BatchSpanIds implements IdGenerator {
  private readonly random = new PooledRandomIds();
  /** The ids of the batch root span being started now; set and used up within one synchronous startSpan. */
  private next: SpanIds | undefined;

  /** Runs `start` (which starts exactly one span, synchronously) with `batchId`'s ids handed out. */
  withBatchIds<T>(batchId: string, start: () => T): T {
    this.next = batchSpanIds(batchId);
    try {
      return start();
    } finally {
      this.next = undefined;
    }
  }

  generateTraceId(): string {
    return this.next?.traceId ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    return this.next?.spanId ?? this.random.generateSpanId();
  }
}

/**
 * The configured sampler, except that a batch's root span is sampled as its lines are: as children of
 * `batchContext` (a parent-based sampler follows that sampled parent; a ratio sampler reads the same
 * trace id; always-off keeps both out).
 */
export class BatchRootSampler implements Sampler {
  constructor(private readonly sampler: Sampler) {}

  shouldSample(context: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    const batchId = context.getValue(BATCH_ROOT);
    const asSampled = typeof batchId === 'string' ? batchContext(batchId) : context;
    return this.sampler.shouldSample(asSampled, traceId, name, kind, attributes, links);
  }

  toString(): string {
    return `BatchRootSampler{${this.sampler.toString()}}`;
  }
}
