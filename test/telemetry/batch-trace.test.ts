// telemetry/batch-trace.ts: a batch's root span gets the ids its lines name as their parent, and is
// sampled exactly as those lines are, whatever sampler is configured.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { BatchRootSampler, BatchSpanIds, batchContext, batchRootContext } from '../../src/telemetry/batch-trace.ts';
import { samplerOf } from '../../src/telemetry/otel-tracing.ts';

const SAMPLERS = [
  { sampler: 'always_on' },
  { sampler: 'always_off' },
  { sampler: 'traceidratio', samplerArg: 0.5 },
  { sampler: 'parentbased_always_on' },
  { sampler: 'parentbased_always_off' },
  { sampler: 'parentbased_traceidratio', samplerArg: 0.5 },
] as const;

function lineParent(batchId: string) {
  return trace.getSpanContext(batchContext(batchId))!;
}

describe('batch traces', () => {
  test('the root span started under batchRootContext gets the batch’s ids; every other span random ones', () => {
    const exporter = new InMemorySpanExporter();
    const ids = new BatchSpanIds();
    const provider = new BasicTracerProvider({
      sampler: new BatchRootSampler(samplerOf({ sampler: 'always_on' })),
      idGenerator: ids,
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const tracer = provider.getTracer('test');
    const root = ids.withBatchIds('batch-abc', () => tracer.startSpan('batch', { root: true }, batchRootContext('batch-abc')));
    const line = tracer.startSpan('batch line', { kind: SpanKind.CONSUMER }, batchContext('batch-abc'));
    const other = tracer.startSpan('request', {}, ROOT_CONTEXT);
    for (const span of [line, other, root]) span.end();
    const parent = lineParent('batch-abc');
    assert.deepEqual([root.spanContext().traceId, root.spanContext().spanId], [parent.traceId, parent.spanId]);
    assert.equal(line.spanContext().traceId, parent.traceId);
    assert.notEqual(other.spanContext().traceId, parent.traceId);
    assert.notEqual(other.spanContext().spanId, parent.spanId);
    const exported = exporter.getFinishedSpans();
    assert.equal(exported.find((span) => span.name === 'batch')?.parentSpanContext, undefined, 'a root');
    assert.equal(exported.find((span) => span.name === 'batch line')?.parentSpanContext?.spanId, parent.spanId);
  });

  test('the root span is sampled as the batch’s lines are, for every configured sampler', () => {
    for (const config of SAMPLERS) {
      const sampler = samplerOf(config);
      const wrapped = new BatchRootSampler(sampler);
      for (let index = 0; index < 40; index++) {
        const batchId = `batch-${index}`;
        const { traceId } = lineParent(batchId);
        const line = sampler.shouldSample(batchContext(batchId), traceId, 'batch line', SpanKind.CONSUMER, {}, []).decision;
        const root = wrapped.shouldSample(batchRootContext(batchId), traceId, 'batch', SpanKind.INTERNAL, {}, []).decision;
        assert.equal(root, line, `${config.sampler}, ${batchId}`);
      }
    }
  });

  test('other spans are sampled by the configured sampler alone', () => {
    const wrapped = new BatchRootSampler(samplerOf({ sampler: 'parentbased_always_off' }));
    const { traceId } = lineParent('batch-x');
    assert.equal(wrapped.shouldSample(ROOT_CONTEXT, traceId, 'request', SpanKind.SERVER, {}, []).decision, 0, 'NOT_RECORD');
    assert.match(wrapped.toString(), /^BatchRootSampler\{ParentBased/);
  });
});
