// telemetry/otlp-proto.ts, the hand-written OTLP/HTTP protobuf encoder, read by a real receiver that
// decodes with protobufjs and the official opentelemetry-proto files: every field Switchyard sends
// (ids, parent ids, kinds, times, status, attributes of each type, events, dropped counts, flags,
// trace state, resource, scope), the same spans as the JSON encoding gives them, large batches
// (multi-byte lengths) and the default protocol.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TracingConfig } from '../../src/config/index.ts';
import { loadConfig } from '../../src/config/index.ts';
import { answeredUsage } from '../../src/core/usage.ts';
import { createOtelTracing } from '../../src/telemetry/otel-tracing.ts';
import { SPAN_NAMES, type ServerRequestFacts, type Tracing } from '../../src/telemetry/trace-types.ts';
import { OtlpReceiver, SPAN_KIND, STATUS_CODE, type ReceivedSpan } from '../support/otlp-receiver.ts';

const USAGE = answeredUsage({ inputTokens: 12, outputTokens: 3, cachedInputTokens: 4 });
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const LONG_TEXT = 'ü'.repeat(40) + 'x'.repeat(200);

function facts(requestId: string, headers: Record<string, string>): ServerRequestFacts {
  return {
    method: 'POST',
    route: '/v1/chat/completions',
    path: '/v1/chat/completions',
    scheme: 'http',
    serverAddress: '127.0.0.1',
    serverPort: 8080,
    clientAddress: '10.0.0.1',
    userAgent: 'test-agent ✓',
    requestId,
    headers,
  };
}

/** A request that touches every field: steps (one failed), an attempt with events, attributes of each type, a 5xx. */
function everything(tracing: Tracing, requestId: string): void {
  const trace = tracing.startServerRequest(
    facts(requestId, { traceparent: `00-${CALLER_TRACE}-00f067aa0ba902b7-01`, tracestate: 'vendor=abc,other=x' }),
  );
  const auth = trace.startStep(SPAN_NAMES.auth, { 'switchyard.key_id': 'key_1', 'switchyard.cached': true });
  // More attributes than the limit (128): the rest counted as dropped.
  for (let index = 0; index < 140; index++) auth.setAttribute(`switchyard.extra.${index}`, index);
  auth.end();
  const admit = trace.startStep(SPAN_NAMES.admit);
  admit.setAttribute('switchyard.limit.tokens', 9_007_199_254_740_991);
  admit.setAttribute('switchyard.limit.negative', -42);
  admit.setAttribute('switchyard.limit.ratio', 0.125);
  admit.setAttribute('switchyard.limit.huge', 1e21);
  admit.setAttribute('switchyard.empty', '');
  admit.setAttribute('switchyard.long', LONG_TEXT);
  admit.addEvent('queued', { 'switchyard.position': 3, 'switchyard.why': 'tier' });
  admit.fail(Object.assign(new Error('too many requests'), { code: 'rate_limited', status: 429 }));
  admit.end();
  // More events than the limit (128): the oldest dropped and counted.
  const ledger = trace.startStep(SPAN_NAMES.ledger);
  for (let index = 0; index < 130; index++) ledger.addEvent(`tick ${index}`);
  ledger.end();
  trace.generationRequest('chat', {
    model: 'gpt',
    maxOutputTokens: 20,
    temperature: 0.25,
    stopSequences: ['\n\n', 'END'],
    messages: [],
  } as never);
  const attempt = trace.startAttempt(
    {
      providerKind: 'anthropic',
      baseUrl: 'https://upstream.example:9443/v1',
      upstreamModel: 'claude-mock',
      model: 'gpt',
      deployment: 'mock#2',
      attempt: 2,
      retry: 1,
    },
    'chat',
  );
  attempt.connected();
  attempt.responded(200);
  attempt.committed();
  attempt.responseModel('claude-mock-2026');
  attempt.ended(Object.assign(new Error('gone'), { code: 'upstream_closed' }));
  attempt.finished(USAGE, 'length');
  attempt.end();
  trace.usage(USAGE, 'length');
  trace.fail(Object.assign(new Error('backend ended without a result'), { code: 'upstream_error', status: 502 }), 502);
  trace.end(502);
}

/** Spans keyed by name, without what differs between two runs (ids, times) and the encoding. */
function comparable(spans: ReceivedSpan[]): Record<string, unknown> {
  const byName: Record<string, unknown> = {};
  for (const span of spans) {
    byName[span.name] = {
      kind: span.kind,
      attributes: span.attributes,
      events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
      status: span.status,
      flags: span.flags,
      traceState: span.traceState,
      droppedAttributesCount: span.droppedAttributesCount,
      droppedEventsCount: span.droppedEventsCount,
      links: span.links,
      resource: span.resource,
      scope: span.scope,
      hasParent: span.parentSpanId !== '',
    };
  }
  return byName;
}

describe('OTLP/HTTP protobuf export', () => {
  let receiver: OtlpReceiver;
  const started: Tracing[] = [];

  function tracingWith(config: Omit<Partial<TracingConfig>, 'endpoint'> = {}): Tracing {
    const tracing = createOtelTracing({
      endpoint: `${receiver.endpoint}/v1/traces`,
      serviceName: 'proto-test',
      sampler: 'parentbased_always_on',
      headers: {},
      protocol: 'http/protobuf',
      ...config,
    });
    started.push(tracing);
    return tracing;
  }

  function spansOf(requestId: string): ReceivedSpan[] {
    const request = receiver.spans.find((span) => span.attributes['switchyard.request_id'] === requestId);
    assert.ok(request !== undefined, `the request span of ${requestId}`);
    return receiver.spans.filter((span) => span.traceId === request.traceId && (span === request || span.parentSpanId === request.spanId));
  }

  before(async () => {
    receiver = await new OtlpReceiver().start();
  });
  after(async () => {
    for (const tracing of started) await tracing.shutdown();
    await receiver.close();
  });

  test('http/protobuf is the default protocol; http/json stays selectable; anything else is refused', () => {
    const base = { dataDir: '/tmp/unused', bootstrapKey: false as const };
    const byDefault = loadConfig({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, overrides: base });
    assert.equal(byDefault.tracing.protocol, 'http/protobuf');
    const json = loadConfig({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
      overrides: base,
    });
    assert.equal(json.tracing.protocol, 'http/json');
    const traces = loadConfig({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      },
      overrides: base,
    });
    assert.equal(traces.tracing.protocol, 'http/protobuf');
    assert.throws(
      () =>
        loadConfig({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, overrides: base }),
      /OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported/,
    );
  });

  test('every field, decoded by protobufjs with the official .proto files', async () => {
    const before = receiver.exportHeaders.length;
    const tracing = tracingWith();
    const startedAt = BigInt(Math.floor((performance.timeOrigin + performance.now()) * 1000)) * 1000n;
    everything(tracing, 'req_proto');
    const endedAt = BigInt(Math.ceil((performance.timeOrigin + performance.now()) * 1000)) * 1000n;
    await tracing.forceFlush();
    assert.deepEqual(receiver.rejected, []);
    assert.ok(receiver.exportHeaders.slice(before).every((headers) => headers['content-type'] === 'application/x-protobuf'));
    const spans = spansOf('req_proto');
    assert.deepEqual(spans.map((span) => span.name).sort(), [
      'POST /v1/chat/completions',
      'chat claude-mock',
      SPAN_NAMES.auth,
      SPAN_NAMES.ledger,
      SPAN_NAMES.admit,
    ]);
    assert.ok(spans.every((span) => span.encoding === 'protobuf'));

    const request = spans.find((span) => span.kind === SPAN_KIND.server)!;
    assert.equal(request.traceId, CALLER_TRACE);
    assert.match(request.spanId, /^[0-9a-f]{16}$/);
    assert.equal(request.parentSpanId, '00f067aa0ba902b7');
    assert.equal(request.traceState, 'vendor=abc,other=x');
    assert.equal(request.flags, 0x301, 'sampled, has-is-remote, is-remote');
    assert.ok(request.startTimeUnixNano >= startedAt && request.startTimeUnixNano <= request.endTimeUnixNano);
    assert.ok(request.endTimeUnixNano <= endedAt);
    assert.equal(request.startTimeUnixNano % 1000n, 0n, 'to the microsecond');
    assert.equal(request.attributes['http.request.method'], 'POST');
    assert.equal(request.attributes['server.port'], 8080);
    assert.equal(request.attributes['user_agent.original'], 'test-agent ✓');
    assert.equal(request.attributes['gen_ai.request.temperature'], 0.25);
    assert.deepEqual(request.attributes['gen_ai.request.stop_sequences'], ['\n\n', 'END']);
    assert.deepEqual(request.attributes['gen_ai.response.finish_reasons'], ['length']);
    assert.equal(request.attributes['gen_ai.usage.cache_read.input_tokens'], 4);
    assert.equal(request.attributes['gen_ai.provider.name'], 'anthropic');
    assert.equal(request.attributes['http.response.status_code'], 502);
    assert.equal(request.attributes['error.type'], 'upstream_error');
    assert.equal(request.status.code, STATUS_CODE.error);
    assert.equal(request.status.message, 'backend ended without a result');
    assert.equal(request.droppedAttributesCount, 0);
    assert.equal(request.resource['service.name'], 'proto-test');
    assert.equal(request.resource['telemetry.sdk.language'], 'nodejs');
    assert.equal(request.scope, 'switchyard');
    assert.deepEqual(request.links, []);

    const auth = spans.find((span) => span.name === SPAN_NAMES.auth)!;
    assert.equal(auth.kind, SPAN_KIND.internal);
    assert.equal(auth.parentSpanId, request.spanId);
    assert.equal(auth.flags, 0x101, 'sampled, has-is-remote, local parent');
    assert.equal(auth.attributes['switchyard.cached'], true);
    assert.equal(Object.keys(auth.attributes).length, 128);
    assert.equal(auth.attributes['switchyard.extra.125'], 125);
    assert.equal(auth.droppedAttributesCount, 142 - 128);
    assert.equal(auth.status.code, STATUS_CODE.unset);

    const admit = spans.find((span) => span.name === SPAN_NAMES.admit)!;
    assert.equal(admit.attributes['switchyard.limit.tokens'], 9_007_199_254_740_991);
    assert.equal(admit.attributes['switchyard.limit.negative'], -42);
    assert.equal(admit.attributes['switchyard.limit.ratio'], 0.125);
    assert.equal(admit.attributes['switchyard.limit.huge'], 1e21);
    assert.equal(admit.attributes['switchyard.empty'], '');
    assert.equal(admit.attributes['switchyard.long'], LONG_TEXT);
    assert.equal(admit.attributes['error.type'], 'rate_limited');
    assert.equal(admit.status.code, STATUS_CODE.error);
    assert.equal(admit.status.message, 'too many requests');
    assert.deepEqual(admit.events, [
      { name: 'queued', attributes: { 'switchyard.position': 3, 'switchyard.why': 'tier' }, timeUnixNano: admit.events[0]!.timeUnixNano },
    ]);
    assert.ok(admit.events[0]!.timeUnixNano >= admit.startTimeUnixNano && admit.events[0]!.timeUnixNano <= admit.endTimeUnixNano);

    const ledger = spans.find((span) => span.name === SPAN_NAMES.ledger)!;
    assert.equal(ledger.events.length, 128);
    assert.equal(ledger.events[0]!.name, 'tick 2');
    assert.equal(ledger.droppedEventsCount, 2);

    const attempt = spans.find((span) => span.kind === SPAN_KIND.client)!;
    assert.equal(attempt.parentSpanId, request.spanId);
    assert.equal(attempt.attributes['server.address'], 'upstream.example');
    assert.equal(attempt.attributes['server.port'], 9443);
    assert.equal(attempt.attributes['switchyard.retry'], 1);
    assert.equal(attempt.attributes['gen_ai.response.model'], 'claude-mock-2026');
    assert.equal(attempt.attributes['gen_ai.request.max_tokens'], 20);
    assert.deepEqual(
      attempt.events.map((event) => [event.name, event.attributes]),
      [
        ['connect', {}],
        ['first_byte', { 'http.response.status_code': 200 }],
        ['first_token', {}],
        ['end', { 'error.type': 'upstream_closed' }],
      ],
    );
  });

  test('the same spans as the JSON encoding gives', async () => {
    everything(tracingWith({ protocol: 'http/json' }), 'req_json');
    everything(tracingWith({ protocol: 'http/protobuf' }), 'req_protobuf');
    for (const tracing of started) await tracing.forceFlush();
    const json = spansOf('req_json');
    const proto = spansOf('req_protobuf');
    assert.ok(json.every((span) => span.encoding === 'json'));
    assert.ok(proto.every((span) => span.encoding === 'protobuf'));
    const normalize = (spans: ReceivedSpan[], requestId: string): Record<string, unknown> =>
      JSON.parse(JSON.stringify(comparable(spans)).replaceAll(requestId, 'REQ')) as Record<string, unknown>;
    assert.deepEqual(normalize(proto, 'req_protobuf'), normalize(json, 'req_json'));
  });

  test('a batch root and its lines (consumer spans, remote parent); a full batch of 512 spans in one export', async () => {
    const tracing = tracingWith();
    const line = tracing.startBatchLine({ batchId: 'batch_1', line: 7, url: '/v1/chat/completions', requestId: 'req_line' });
    line.end(200);
    tracing.endBatch({
      batchId: 'batch_1',
      endpoint: '/v1/chat/completions',
      status: 'failed',
      createdAt: Date.now() - 1_000,
      endedAt: Date.now(),
      total: 3,
      completed: 1,
      failed: 2,
    });
    const before = receiver.exportHeaders.length;
    for (let index = 0; index < 128; index++) everything(tracing, `req_many_${index}`);
    await tracing.forceFlush();
    assert.deepEqual(receiver.rejected, []);
    const lineSpan = receiver.spans.find((span) => span.attributes['switchyard.request_id'] === 'req_line')!;
    assert.equal(lineSpan.kind, SPAN_KIND.consumer);
    assert.equal(lineSpan.attributes['switchyard.batch.line'], 7);
    assert.equal(lineSpan.flags, 0x301);
    const root = receiver.spans.find((span) => span.spanId === lineSpan.parentSpanId)!;
    assert.equal(root.traceId, lineSpan.traceId);
    assert.equal(root.parentSpanId, '');
    assert.equal(root.status.code, STATUS_CODE.error);
    assert.equal(root.attributes['switchyard.batch.request_counts.failed'], 2);
    assert.ok(root.endTimeUnixNano - root.startTimeUnixNano >= 999_000_000n);
    for (let index = 0; index < 128; index++) assert.equal(spansOf(`req_many_${index}`).length, 5);
    assert.ok(receiver.exportHeaders.length - before >= 1);
    assert.ok(
      receiver.exportHeaders.slice(before).some((headers) => Number(headers['content-length']) > 128 * 1024),
      'an export larger than 2^17 bytes (three-byte lengths)',
    );
  });

  test('gzip over protobuf', async () => {
    const before = receiver.exportHeaders.length;
    const tracing = tracingWith({ compression: 'gzip' });
    everything(tracing, 'req_gzip');
    await tracing.forceFlush();
    assert.equal(spansOf('req_gzip').length, 5);
    const exports = receiver.exportHeaders.slice(before);
    assert.ok(exports.every((headers) => headers['content-encoding'] === 'gzip' && headers['content-type'] === 'application/x-protobuf'));
  });
});
