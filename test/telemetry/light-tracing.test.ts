// telemetry/otel-tracing.ts and its light span records, exporting over OTLP/HTTP (JSON here; protobuf,
// the default, in otlp-protobuf.test.ts and test/e2e/traces.test.ts) to a real receiver:
// the spans, attributes and parent links a request makes; the caller's traceparent (valid, malformed,
// absent) and tracestate; every sampler setting; the exporter's batching, gzip, and a receiver that is
// down (requests unaffected, memory bounded, the failure logged).
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { ROOT_CONTEXT, SamplingDecision } from '@opentelemetry/api';
import type { TracingConfig } from '../../src/config/index.ts';
import { answeredUsage } from '../../src/core/usage.ts';
import { createOtelTracing } from '../../src/telemetry/otel-tracing.ts';
import { SPAN_NAMES, type ServerRequestFacts, type Tracing } from '../../src/telemetry/trace-types.ts';
import { OtlpReceiver, SPAN_KIND, STATUS_CODE } from '../support/otlp-receiver.ts';

const USAGE = answeredUsage({ inputTokens: 12, outputTokens: 3 });

function facts(headers: Record<string, string> = {}, requestId = 'req_1'): ServerRequestFacts {
  return {
    method: 'POST',
    route: '/v1/chat/completions',
    path: '/v1/chat/completions',
    scheme: 'http',
    serverAddress: '127.0.0.1',
    serverPort: 8080,
    clientAddress: '10.0.0.1',
    userAgent: 'test-agent',
    requestId,
    headers,
  };
}

/** One chat request's tracing calls, as the edge and the generation service make them; returns the upstream's headers. */
async function chatRequest(tracing: Tracing, headers: Record<string, string> = {}, requestId = 'req_1'): Promise<Record<string, string>> {
  const trace = tracing.startServerRequest(facts(headers, requestId));
  const auth = trace.startStep(SPAN_NAMES.auth);
  auth.setAttribute('switchyard.key_id', 'key_1');
  trace.setAttribute('switchyard.key_id', 'key_1');
  auth.end();
  trace.generationRequest('chat', { model: 'gpt', maxOutputTokens: 20, temperature: 0.25, messages: [] } as never);
  const attempt = trace.startAttempt(
    {
      providerKind: 'openai-compatible',
      baseUrl: 'http://upstream:9000/v1',
      upstreamModel: 'gpt-mock',
      model: 'gpt',
      deployment: 'mock',
      attempt: 1,
      retry: 0,
    },
    'chat',
  );
  attempt.connected();
  attempt.responded(200);
  attempt.committed();
  attempt.ended();
  attempt.finished(USAGE, 'stop');
  attempt.end();
  trace.usage(USAGE, 'stop');
  trace.end(200);
  return { ...attempt.headers };
}

function parseTraceparent(header: string | undefined): { traceId: string; parentId: string; flags: string } {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(header ?? '');
  assert.ok(match !== null, `a W3C traceparent: ${header}`);
  return { traceId: match[1]!, parentId: match[2]!, flags: match[3]! };
}

describe('light tracing over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  const started: Tracing[] = [];

  function tracingWith(
    config: Omit<Partial<TracingConfig>, 'endpoint'> = {},
    logger?: { warn(details: object, message: string): void },
  ): Tracing {
    const tracing = createOtelTracing(
      {
        endpoint: `${receiver.endpoint}/v1/traces`,
        serviceName: 'light-test',
        sampler: 'parentbased_always_on',
        headers: {},
        protocol: 'http/json',
        ...config,
      },
      logger,
    );
    started.push(tracing);
    return tracing;
  }

  before(async () => {
    receiver = await new OtlpReceiver().start();
  });
  after(async () => {
    for (const tracing of started) await tracing.shutdown();
    await receiver.close();
  });

  test('a request: server, step and client spans with their attributes, parents, events and the resource', async () => {
    const tracing = tracingWith();
    const sent = parseTraceparent((await chatRequest(tracing, {}, 'req_tree'))['traceparent']);
    await tracing.forceFlush();
    const spans = receiver.trace(sent.traceId);
    assert.deepEqual(spans.map((span) => span.name).sort(), ['POST /v1/chat/completions', 'chat gpt-mock', 'switchyard.auth']);
    const request = spans.find((span) => span.kind === SPAN_KIND.server)!;
    assert.equal(request.parentSpanId, '');
    assert.equal(request.attributes['switchyard.request_id'], 'req_tree');
    assert.equal(request.attributes['http.request.method'], 'POST');
    assert.equal(request.attributes['http.route'], '/v1/chat/completions');
    assert.equal(request.attributes['server.port'], 8080);
    assert.equal(request.attributes['user_agent.original'], 'test-agent');
    assert.equal(request.attributes['gen_ai.request.temperature'], 0.25);
    assert.equal(request.attributes['gen_ai.provider.name'], 'openai');
    assert.deepEqual(request.attributes['gen_ai.response.finish_reasons'], ['stop']);
    assert.equal(request.attributes['http.response.status_code'], 200);
    assert.equal(request.status.code, STATUS_CODE.unset);
    assert.equal(request.resource['service.name'], 'light-test');
    assert.equal(request.resource['telemetry.sdk.language'], 'nodejs');
    const attempt = spans.find((span) => span.kind === SPAN_KIND.client)!;
    assert.equal(attempt.parentSpanId, request.spanId);
    assert.equal(sent.parentId, attempt.spanId);
    assert.equal(sent.flags, '01');
    assert.equal(attempt.attributes['server.address'], 'upstream');
    assert.equal(attempt.attributes['gen_ai.request.max_tokens'], 20);
    assert.deepEqual(
      attempt.events.map((event) => event.name),
      ['connect', 'first_byte', 'first_token', 'end'],
    );
    assert.equal(attempt.events[1]!.attributes['http.response.status_code'], 200);
    assert.ok(attempt.startTimeUnixNano >= request.startTimeUnixNano && attempt.endTimeUnixNano <= request.endTimeUnixNano);
    const auth = spans.find((span) => span.name === 'switchyard.auth')!;
    assert.equal(auth.parentSpanId, request.spanId);
    assert.equal(auth.kind, SPAN_KIND.internal);
  });

  test('the caller’s traceparent and tracestate: parent and trace kept, sent on upstream', async () => {
    const tracing = tracingWith();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const headers = await chatRequest(tracing, { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, tracestate: 'vendor=abc' });
    const sent = parseTraceparent(headers['traceparent']);
    assert.equal(sent.traceId, traceId);
    assert.equal(headers['tracestate'], 'vendor=abc');
    await tracing.forceFlush();
    const request = receiver.trace(traceId).find((span) => span.kind === SPAN_KIND.server)!;
    assert.equal(request.parentSpanId, '00f067aa0ba902b7');
  });

  test('a malformed or absent traceparent: a new trace, the request span its root', async () => {
    const tracing = tracingWith();
    for (const headers of [{ traceparent: 'not-a-traceparent' }, { traceparent: `00-${'0'.repeat(32)}-${'0'.repeat(16)}-01` }, {}]) {
      const sent = parseTraceparent((await chatRequest(tracing, headers))['traceparent']);
      assert.notEqual(sent.traceId, '0'.repeat(32));
      await tracing.forceFlush();
      const request = receiver.trace(sent.traceId).find((span) => span.kind === SPAN_KIND.server);
      assert.ok(request !== undefined, `the request of ${JSON.stringify(headers)} exported`);
      assert.equal(request.parentSpanId, '');
    }
  });

  test('sampler off: nothing exported, the trace still goes upstream unsampled', async () => {
    const tracing = tracingWith({ sampler: 'always_off' });
    const traceId = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
    const sent = parseTraceparent((await chatRequest(tracing, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` }))['traceparent']);
    assert.equal(sent.traceId, traceId);
    assert.equal(sent.flags, '00');
    const own = parseTraceparent((await chatRequest(tracing))['traceparent']);
    assert.equal(own.flags, '00');
    await tracing.forceFlush();
    assert.equal(receiver.trace(traceId).length + receiver.trace(own.traceId).length, 0);
  });

  test('parent-based: a caller’s unsampled decision is followed', async () => {
    const tracing = tracingWith();
    const traceId = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
    const sent = parseTraceparent((await chatRequest(tracing, { traceparent: `00-${traceId}-00f067aa0ba902b7-00` }))['traceparent']);
    assert.equal(sent.flags, '00');
    await tracing.forceFlush();
    assert.equal(receiver.trace(traceId).length, 0);
  });

  test('a ratio: whole requests are kept exactly as the SDK’s ratio sampler decides for their trace id', async () => {
    const tracing = tracingWith({ sampler: 'parentbased_traceidratio', samplerArg: 0.5 });
    const sdk = new TraceIdRatioBasedSampler(0.5);
    const sentIds: string[] = [];
    for (let index = 0; index < 40; index++) sentIds.push(parseTraceparent((await chatRequest(tracing))['traceparent']).traceId);
    await tracing.forceFlush();
    let kept = 0;
    for (const traceId of sentIds) {
      const expected = sdk.shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED;
      const spans = receiver.trace(traceId);
      assert.equal(spans.length, expected ? 3 : 0, `trace ${traceId}: all of its spans or none`);
      if (expected) kept++;
    }
    assert.ok(kept > 0 && kept < 40, `some kept, some not: ${kept} of 40`);
  });

  test('batches of at most OTEL_BSP_MAX_EXPORT_BATCH_SIZE spans; gzip when asked', async () => {
    const before = receiver.exportHeaders.length;
    const tracing = tracingWith({ maxExportBatchSize: 2, compression: 'gzip' });
    const sent = parseTraceparent((await chatRequest(tracing))['traceparent']);
    await tracing.forceFlush();
    assert.equal(receiver.trace(sent.traceId).length, 3);
    const exports = receiver.exportHeaders.slice(before);
    assert.ok(exports.length >= 2, `3 spans in batches of 2: ${exports.length} exports`);
    assert.ok(exports.every((headers) => headers['content-encoding'] === 'gzip'));
  });

  test('a receiver that is down: requests go on, the queue stays bounded, the failure is logged, flush and shutdown end', async () => {
    // A port that refuses connections: listen, read the port, close.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const warnings: string[] = [];
    const tracing = createOtelTracing(
      {
        endpoint: `http://127.0.0.1:${port}/v1/traces`,
        serviceName: 'down',
        sampler: 'always_on',
        headers: {},
        protocol: 'http/protobuf',
        maxQueueSize: 30,
        maxExportBatchSize: 10,
        exportTimeoutMillis: 2_000,
      },
      { warn: (_details, message) => warnings.push(message) },
    );
    for (let index = 0; index < 200; index++) {
      const headers = await chatRequest(tracing);
      parseTraceparent(headers['traceparent']);
    }
    await tracing.forceFlush();
    await tracing.shutdown();
    assert.ok(
      warnings.some((message) => /export of \d+ spans failed/.test(message)),
      warnings.join('; '),
    );
    assert.ok(
      warnings.some((message) => /dropped \d+ spans: the export queue was full/.test(message)),
      warnings.join('; '),
    );
  });
});
