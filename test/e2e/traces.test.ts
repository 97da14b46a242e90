// Traces end to end: a real server exporting over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT) to a real
// receiver started here, the official SDKs as callers, mock upstreams of both remote provider kinds.
// Checks the tree (request, auth, limits, upstream attempts, ledger; batch lines), the GenAI and HTTP
// attributes, the caller's `traceparent` as parent, and the `traceparent` each upstream receives; and
// that with tracing off nothing is propagated.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { MockAnthropicServer, MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { OtlpReceiver, SPAN_KIND, STATUS_CODE, type ReceivedSpan } from '../support/otlp-receiver.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { until } from '../support/until.ts';

const VIA_ANTHROPIC = 'traced-claude';
const VIA_OPENAI = 'traced-gpt';
const RETRIED = 'traced-retried';
const EMBEDDER = 'traced-embedder';

/** `00-<trace id>-<parent id>-01`, as a caller that samples its trace sends it. */
function callerTraceparent(): { traceId: string; spanId: string; header: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, header: `00-${traceId}-${spanId}-01` };
}

/** The W3C header's parts. */
function parseTraceparent(header: unknown): { traceId: string; parentId: string; flags: string } {
  assert.equal(typeof header, 'string', 'a traceparent header');
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(header as string);
  assert.ok(match !== null, `a W3C traceparent: ${String(header)}`);
  return { traceId: match[1]!, parentId: match[2]!, flags: match[3]! };
}

function only(spans: ReceivedSpan[], predicate: (span: ReceivedSpan) => boolean, what: string): ReceivedSpan {
  const found = spans.filter(predicate);
  assert.equal(found.length, 1, `one ${what} span, got ${found.length}: ${spans.map((span) => span.name).join(', ')}`);
  return found[0]!;
}

/**
 * Checks an attempt's events: connect, first byte, first token and end of the body, each once, in the
 * order the exchange allows (a short body can end before its first token has been read: no order there).
 */
function assertAttemptEvents(span: ReceivedSpan): void {
  assert.deepEqual(span.events.map((event) => event.name).sort(), ['connect', 'end', 'first_byte', 'first_token']);
  const at = (name: string): bigint => span.events.find((event) => event.name === name)!.timeUnixNano;
  assert.ok(span.startTimeUnixNano <= at('connect'));
  assert.ok(at('connect') <= at('first_byte'));
  assert.ok(at('first_byte') <= at('first_token'));
  assert.ok(at('first_byte') <= at('end'));
  assert.ok(at('first_token') <= span.endTimeUnixNano && at('end') <= span.endTimeUnixNano);
}

describe('traces over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  let anthropic: MockAnthropicServer;
  let openai: MockOpenAIServer;
  let server: TestServer;

  /** Waits until the receiver holds the spans `ready` asks for (flushing the exporter each time). */
  async function spansOf(traceId: string, ready: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
    return until(async () => {
      await server.runtime.tracing!.forceFlush();
      const spans = receiver.trace(traceId);
      return ready(spans) ? spans : undefined;
    }, `the spans of trace ${traceId}`);
  }

  before(async () => {
    receiver = await new OtlpReceiver().start();
    anthropic = await new MockAnthropicServer().start();
    openai = await new MockOpenAIServer().start();
    server = await startTestServer({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SERVICE_NAME: 'switchyard-under-test' },
      config: {
        providers: {
          'mock-anthropic': { kind: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant-upstream', maxRetries: 0 },
          'mock-openai': { kind: 'openai-compatible', baseUrl: openai.baseUrl, apiKey: 'sk-upstream', maxRetries: 0 },
          'mock-openai-retried': { kind: 'openai-compatible', baseUrl: openai.baseUrl, apiKey: 'sk-upstream', maxRetries: 1 },
        },
        models: [
          { id: VIA_ANTHROPIC, provider: 'mock-anthropic', upstreamModel: 'claude-mock', capabilities: ['chat', 'streaming'] },
          { id: VIA_OPENAI, provider: 'mock-openai', upstreamModel: 'gpt-mock', capabilities: ['chat', 'streaming'] },
          { id: RETRIED, provider: 'mock-openai-retried', upstreamModel: 'gpt-retried', capabilities: ['chat', 'streaming'] },
          { id: EMBEDDER, provider: 'mock-openai', upstreamModel: 'embed-mock', capabilities: ['embeddings'] },
        ],
      },
    });
    assert.ok(server.runtime.tracing !== undefined, 'tracing is on when OTEL_EXPORTER_OTLP_ENDPOINT is set');
  });
  beforeEach(() => {
    anthropic.reset();
    openai.reset();
  });
  after(async () => {
    await server?.close();
    await anthropic?.close();
    await openai?.close();
    await receiver?.close();
  });

  test('a streamed /v1/messages request: one trace under the caller’s traceparent, with auth, limits, attempt and ledger spans', async () => {
    const caller = callerTraceparent();
    anthropic.enqueue({
      type: 'reply',
      reply: { text: 'Traced hello.', usage: { input_tokens: 21, output_tokens: 7 }, model: 'claude-mock-2026' },
    });
    const client = new Anthropic({
      apiKey: server.key,
      baseURL: server.origin,
      maxRetries: 0,
      defaultHeaders: { traceparent: caller.header },
    });
    const stream = await client.messages.create({
      model: VIA_ANTHROPIC,
      max_tokens: 64,
      stop_sequences: ['THE END'],
      stream: true,
      messages: [{ role: 'user', content: 'Say hello.' }],
    });
    let text = '';
    for await (const event of stream)
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
    assert.equal(text, 'Traced hello.');

    const spans = await spansOf(caller.traceId, (received) => received.some((span) => span.name === 'switchyard.ledger.record'));
    assert.ok(
      spans.every((span) => span.traceId === caller.traceId),
      'every span is in the caller’s trace',
    );
    const request = only(spans, (span) => span.kind === SPAN_KIND.server, 'server');
    assert.equal(request.parentSpanId, caller.spanId, 'the request span is the child of the caller’s span');
    assert.equal(request.name, 'POST /v1/messages');
    assert.equal(request.resource['service.name'], 'switchyard-under-test');
    const attributes = request.attributes;
    assert.equal(attributes['http.request.method'], 'POST');
    assert.equal(attributes['http.route'], '/v1/messages');
    assert.equal(attributes['url.path'], '/v1/messages');
    assert.equal(attributes['http.response.status_code'], 200);
    assert.match(String(attributes['switchyard.request_id']), /^req/);
    assert.equal(attributes['gen_ai.operation.name'], 'chat');
    assert.equal(attributes['gen_ai.request.model'], VIA_ANTHROPIC);
    assert.equal(attributes['gen_ai.request.max_tokens'], 64);
    assert.deepEqual(attributes['gen_ai.request.stop_sequences'], ['THE END']);
    assert.equal(attributes['gen_ai.response.model'], 'claude-mock-2026', 'the model the upstream reported');
    assert.equal(attributes['gen_ai.provider.name'], 'anthropic');
    assert.equal(attributes['gen_ai.system'], 'anthropic');
    assert.equal(attributes['gen_ai.usage.input_tokens'], 21);
    assert.equal(attributes['gen_ai.usage.output_tokens'], 7);
    assert.deepEqual(attributes['gen_ai.response.finish_reasons'], ['stop']);
    assert.equal(attributes['switchyard.model'], VIA_ANTHROPIC);
    assert.equal(attributes['switchyard.deployment'], 'mock-anthropic');
    assert.equal(request.status.code, STATUS_CODE.unset);

    const children = spans.filter((span) => span.parentSpanId === request.spanId);
    const auth = only(children, (span) => span.name === 'switchyard.auth', 'auth');
    assert.equal(auth.attributes['switchyard.tier'], 'Developer');
    assert.match(String(auth.attributes['switchyard.key_id']), /.+/);
    only(children, (span) => span.name === 'switchyard.limits.admit', 'admission');
    only(children, (span) => span.name === 'switchyard.limits.settle', 'settle');
    const ledger = only(children, (span) => span.name === 'switchyard.ledger.record', 'ledger');
    assert.equal(ledger.attributes['switchyard.ledger.input_tokens'], 21);
    assert.equal(ledger.attributes['switchyard.ledger.output_tokens'], 7);
    assert.equal(ledger.attributes['switchyard.ledger.status_code'], 200);
    const attempt = only(children, (span) => span.kind === SPAN_KIND.client, 'upstream attempt');
    assert.equal(attempt.name, 'chat claude-mock');
    assert.equal(attempt.attributes['gen_ai.provider.name'], 'anthropic');
    assert.equal(attempt.attributes['gen_ai.request.model'], 'claude-mock');
    assert.equal(attempt.attributes['gen_ai.response.model'], 'claude-mock-2026');
    assert.equal(attempt.attributes['gen_ai.usage.output_tokens'], 7);
    assert.equal(attempt.attributes['http.response.status_code'], 200);
    assert.equal(attempt.attributes['server.address'], '127.0.0.1');
    assert.equal(attempt.attributes['switchyard.attempt'], 1);
    assert.equal(attempt.attributes['switchyard.retry'], 0);
    assertAttemptEvents(attempt);
    // The order the time went in: the key, then the limits, then the upstream, then settling and the ledger.
    assert.ok(auth.endTimeUnixNano <= attempt.startTimeUnixNano);
    assert.ok(attempt.startTimeUnixNano <= ledger.startTimeUnixNano);

    // The upstream received the attempt's own context: the caller's trace id, the attempt span as parent.
    assert.equal(anthropic.requests.length, 1);
    const sent = parseTraceparent(anthropic.requests[0]!.headers['traceparent']);
    assert.equal(sent.traceId, caller.traceId);
    assert.equal(sent.parentId, attempt.spanId);
    assert.equal(sent.flags, '01');
  });

  test('a chat completions JSON request through an OpenAI-compatible upstream: a new trace, propagated upstream', async () => {
    openai.enqueue({
      type: 'reply',
      reply: { text: 'Plain answer.', usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } },
    });
    const client = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: VIA_OPENAI,
      max_tokens: 20,
      temperature: 0.25,
      top_p: 0.5,
      messages: [{ role: 'user', content: 'Answer plainly.' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'Plain answer.');
    const sent = parseTraceparent(openai.requests[0]!.headers['traceparent']);

    const spans = await spansOf(sent.traceId, (received) => received.some((span) => span.name === 'switchyard.ledger.record'));
    const request = only(spans, (span) => span.kind === SPAN_KIND.server, 'server');
    assert.equal(request.parentSpanId, '', 'without a caller traceparent the request span is the root');
    assert.equal(request.name, 'POST /v1/chat/completions');
    assert.equal(request.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(request.attributes['gen_ai.request.model'], VIA_OPENAI);
    assert.equal(request.attributes['gen_ai.request.top_p'], 0.5);
    assert.equal(request.attributes['gen_ai.request.temperature'], 0.25);
    assert.equal(request.attributes['gen_ai.request.max_tokens'], 20);
    assert.equal(request.attributes['gen_ai.provider.name'], 'openai');
    assert.equal(request.attributes['gen_ai.response.model'], 'gpt-mock');
    assert.equal(request.attributes['gen_ai.usage.input_tokens'], 12);
    assert.equal(request.attributes['gen_ai.usage.output_tokens'], 3);
    const attempt = only(spans, (span) => span.kind === SPAN_KIND.client, 'upstream attempt');
    assert.equal(attempt.parentSpanId, request.spanId);
    assert.equal(sent.parentId, attempt.spanId);
    assertAttemptEvents(attempt);
    for (const name of ['switchyard.auth', 'switchyard.limits.admit', 'switchyard.limits.settle', 'switchyard.ledger.record'])
      only(spans, (span) => span.name === name && span.parentSpanId === request.spanId, name);
  });

  test('a retried upstream call: one attempt span per try, the failed one marked, each try sent its own traceparent', async () => {
    openai.enqueue({ type: 'error', status: 503, message: 'overloaded' }, { type: 'reply', reply: { text: 'Second time lucky.' } });
    const client = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: RETRIED, messages: [{ role: 'user', content: 'Try again.' }] });
    assert.equal(completion.choices[0]!.message.content, 'Second time lucky.');
    assert.equal(openai.requests.length, 2);
    const first = parseTraceparent(openai.requests[0]!.headers['traceparent']);
    const second = parseTraceparent(openai.requests[1]!.headers['traceparent']);
    assert.equal(first.traceId, second.traceId);
    assert.notEqual(first.parentId, second.parentId);

    const spans = await spansOf(first.traceId, (received) => received.some((span) => span.name === 'switchyard.ledger.record'));
    const attempts = spans
      .filter((span) => span.kind === SPAN_KIND.client)
      .sort((a, b) => Number(a.startTimeUnixNano - b.startTimeUnixNano));
    assert.equal(attempts.length, 2);
    assert.deepEqual(
      attempts.map((span) => span.spanId),
      [first.parentId, second.parentId],
    );
    assert.equal(attempts[0]!.status.code, STATUS_CODE.error);
    assert.equal(attempts[0]!.attributes['http.response.status_code'], 503);
    assert.match(String(attempts[0]!.attributes['error.type']), /.+/);
    assert.equal(attempts[0]!.attributes['switchyard.retry'], 0);
    assert.equal(attempts[1]!.status.code, STATUS_CODE.unset);
    assert.equal(attempts[1]!.attributes['switchyard.retry'], 1);
    assert.equal(attempts[1]!.attributes['switchyard.attempt'], 2);
  });

  test('an embeddings request: its one upstream call is a client span whose traceparent the upstream receives', async () => {
    openai.enqueue({
      type: 'json',
      body: {
        object: 'list',
        model: 'embed-mock',
        data: [{ object: 'embedding', index: 0, embedding: [0.5, 0.25] }],
        usage: { prompt_tokens: 4, total_tokens: 4 },
      },
    });
    const caller = callerTraceparent();
    const client = new OpenAI({
      apiKey: server.key,
      baseURL: server.baseUrl,
      maxRetries: 0,
      defaultHeaders: { traceparent: caller.header },
    });
    const embedded = await client.embeddings.create({ model: EMBEDDER, input: 'vector me', encoding_format: 'float' });
    assert.deepEqual(embedded.data[0]!.embedding, [0.5, 0.25]);
    const sent = parseTraceparent(openai.requests[0]!.headers['traceparent']);
    assert.equal(sent.traceId, caller.traceId);

    const spans = await spansOf(caller.traceId, (received) => received.some((span) => span.name === 'switchyard.ledger.record'));
    const request = only(spans, (span) => span.kind === SPAN_KIND.server, 'server');
    assert.equal(request.attributes['gen_ai.operation.name'], 'embeddings');
    assert.equal(request.attributes['gen_ai.request.model'], EMBEDDER);
    assert.equal(request.attributes['gen_ai.usage.input_tokens'], 4);
    const call = only(spans, (span) => span.kind === SPAN_KIND.client, 'upstream call');
    assert.equal(call.name, 'embeddings embed-mock');
    assert.equal(call.parentSpanId, request.spanId);
    assert.equal(sent.parentId, call.spanId);
    only(spans, (span) => span.name === 'switchyard.limits.admit' && span.parentSpanId === request.spanId, 'admission');
  });

  test('a client that leaves mid-stream: the request span ends 499, the attempt span ends, the ledger records 499', async () => {
    const caller = callerTraceparent();
    anthropic.enqueue({ type: 'reply', reply: { text: 'one two three four five six seven eight nine ten' }, delayMs: 50 });
    const client = new Anthropic({
      apiKey: server.key,
      baseURL: server.origin,
      maxRetries: 0,
      defaultHeaders: { traceparent: caller.header },
    });
    const stream = client.messages.stream({ model: VIA_ANTHROPIC, max_tokens: 64, messages: [{ role: 'user', content: 'Count slowly' }] });
    for await (const event of stream) if (event.type === 'content_block_delta') break;
    assert.equal(await anthropic.requests[0]?.outcome, 'closed-by-client');

    const spans = await spansOf(caller.traceId, (received) =>
      ['switchyard.ledger.record', 'POST /v1/messages', 'chat claude-mock'].every((name) => received.some((span) => span.name === name)),
    );
    const request = only(spans, (span) => span.kind === SPAN_KIND.server, 'server');
    assert.equal(request.attributes['http.response.status_code'], 499);
    assert.equal(request.status.code, STATUS_CODE.unset, 'a client that left is not a server failure');
    const ledger = only(spans, (span) => span.name === 'switchyard.ledger.record', 'ledger');
    assert.equal(ledger.attributes['switchyard.ledger.status_code'], 499);
    const attempt = only(spans, (span) => span.kind === SPAN_KIND.client, 'attempt');
    assert.ok(attempt.events.some((event) => event.name === 'first_token'));
  });

  test('a client that leaves before a JSON answer: the request span ends 499', async () => {
    const caller = callerTraceparent();
    openai.enqueue({ type: 'reply', reply: { text: 'Too late.' }, delayMs: 1_000 });
    const seen = openai.requests.length;
    const leaving = new AbortController();
    const answer = fetch(`${server.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json', traceparent: caller.header },
      body: JSON.stringify({ model: VIA_OPENAI, max_tokens: 20, messages: [{ role: 'user', content: 'Take your time.' }] }),
      signal: leaving.signal,
    });
    // The client leaves once the upstream has the request (the answer is not written yet).
    await until(async () => (openai.requests.length > seen ? true : undefined), 'the upstream call');
    leaving.abort();
    await assert.rejects(answer);
    const spans = await spansOf(caller.traceId, (received) => received.some((span) => span.kind === SPAN_KIND.server));
    const request = only(spans, (span) => span.kind === SPAN_KIND.server, 'server');
    assert.equal(request.attributes['http.response.status_code'], 499);
    assert.equal(request.status.code, STATUS_CODE.unset, 'a client that left is not a server failure');
  });

  test('health, readiness and metrics probes are not traced', async () => {
    const caller = callerTraceparent();
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const response = await fetch(`${server.origin}${path}`, { headers: { traceparent: caller.header } });
      assert.equal(response.status, 200, path);
      await response.arrayBuffer();
    }
    // A traced request after them, flushed with them: only its own span arrives.
    const marker = callerTraceparent();
    await (
      await fetch(`${server.baseUrl}/models`, { headers: { authorization: `Bearer ${server.key}`, traceparent: marker.header } })
    ).arrayBuffer();
    await spansOf(marker.traceId, (received) => received.some((span) => span.kind === SPAN_KIND.server));
    assert.deepEqual(receiver.trace(caller.traceId), []);
  });

  test('a refused request: the server span carries the status and error type, auth fails, nothing goes upstream', async () => {
    const caller = callerTraceparent();
    const response = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-not-a-key', 'content-type': 'application/json', traceparent: caller.header },
      body: JSON.stringify({ model: VIA_OPENAI, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(response.status, 401);
    const spans = await spansOf(caller.traceId, (received) => received.some((span) => span.kind === SPAN_KIND.server));
    const request = only(spans, (span) => span.kind === SPAN_KIND.server, 'server');
    assert.equal(request.attributes['http.response.status_code'], 401);
    assert.match(String(request.attributes['error.type']), /.+/);
    const auth = only(spans, (span) => span.name === 'switchyard.auth', 'auth');
    assert.equal(auth.status.code, STATUS_CODE.error);
    assert.equal(openai.requests.length, 0);
  });

  test('batch lines: one span per line, in one trace per batch under its exported root span, with their attempts under them', async () => {
    const client = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
    const lines = ['one', 'two']
      .map((text, index) =>
        JSON.stringify({
          custom_id: `line-${index + 1}`,
          method: 'POST',
          url: '/v1/chat/completions',
          body: { model: VIA_OPENAI, messages: [{ role: 'user', content: text }] },
        }),
      )
      .join('\n');
    const file = await client.files.create({ file: await toFile(Buffer.from(`${lines}\n`), 'lines.jsonl'), purpose: 'batch' });
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await until(async () => ((await client.batches.retrieve(batch.id)).status === 'completed' ? true : undefined), 'the batch to complete');

    assert.equal(openai.requests.length, 2);
    const sent = openai.requests.map((request) => parseTraceparent(request.headers['traceparent']));
    assert.equal(sent[0]!.traceId, sent[1]!.traceId, 'the lines of one batch share its trace');
    const spans = await spansOf(
      sent[0]!.traceId,
      (received) =>
        received.filter((span) => span.name === 'switchyard.ledger.record').length === 2 &&
        received.some((span) => span.name === 'batch /v1/chat/completions'),
    );
    const lineSpans = spans.filter((span) => span.name === 'batch line /v1/chat/completions');
    assert.equal(lineSpans.length, 2);
    assert.deepEqual(lineSpans.map((span) => span.attributes['switchyard.batch.line']).sort(), [1, 2]);
    for (const line of lineSpans) {
      assert.equal(line.attributes['switchyard.batch.id'], batch.id);
      assert.equal(line.attributes['http.response.status_code'], 200);
      assert.equal(line.attributes['gen_ai.operation.name'], 'chat');
      assert.equal(line.attributes['gen_ai.usage.output_tokens'] !== undefined, true);
      assert.equal(line.parentSpanId, lineSpans[0]!.parentSpanId, 'both lines hang under the batch');
      const attempt = only(spans, (span) => span.kind === SPAN_KIND.client && span.parentSpanId === line.spanId, 'line attempt');
      assert.ok(sent.some((header) => header.parentId === attempt.spanId));
      only(spans, (span) => span.name === 'switchyard.ledger.record' && span.parentSpanId === line.spanId, 'line ledger');
    }
    // The parent the lines name is a real span: the batch's root, exported once the batch ended.
    const root = only(spans, (span) => span.parentSpanId === '', 'root');
    assert.equal(root.spanId, lineSpans[0]!.parentSpanId, 'the lines hang under the batch’s root span');
    assert.equal(root.name, 'batch /v1/chat/completions');
    assert.equal(root.kind, SPAN_KIND.internal);
    assert.equal(root.attributes['switchyard.batch.id'], batch.id);
    assert.equal(root.attributes['switchyard.batch.status'], 'completed');
    assert.deepEqual(
      ['total', 'completed', 'failed'].map((count) => root.attributes[`switchyard.batch.request_counts.${count}`]),
      [2, 2, 0],
    );
    const finished = await client.batches.retrieve(batch.id);
    assert.equal(root.startTimeUnixNano / 1_000_000_000n, BigInt(finished.created_at), 'the batch span starts when the batch was created');
    for (const line of lineSpans) {
      assert.ok(
        root.startTimeUnixNano <= line.startTimeUnixNano && line.endTimeUnixNano <= root.endTimeUnixNano,
        'the batch spans its lines',
      );
    }
    const ids = new Set(spans.map((span) => span.spanId));
    assert.deepEqual(
      spans.filter((span) => span.parentSpanId !== '' && !ids.has(span.parentSpanId)).map((span) => span.name),
      [],
      'a whole trace: every parent was exported',
    );
  });
});

describe('traces off (no OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  let openai: MockOpenAIServer;
  let anthropic: MockAnthropicServer;
  let server: TestServer;

  before(async () => {
    openai = await new MockOpenAIServer().start();
    anthropic = await new MockAnthropicServer().start();
    server = await startTestServer({
      env: { OTEL_SERVICE_NAME: 'not-exported' },
      config: {
        providers: {
          'mock-openai': { kind: 'openai-compatible', baseUrl: openai.baseUrl, maxRetries: 0 },
          'mock-anthropic': { kind: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant-upstream', maxRetries: 0 },
        },
        models: [
          { id: VIA_OPENAI, provider: 'mock-openai', upstreamModel: 'gpt-mock', capabilities: ['chat', 'streaming'] },
          { id: VIA_ANTHROPIC, provider: 'mock-anthropic', upstreamModel: 'claude-mock', capabilities: ['chat', 'streaming'] },
        ],
      },
    });
  });
  after(async () => {
    await server?.close();
    await openai?.close();
    await anthropic?.close();
  });

  test('no tracing is started and no traceparent goes upstream, not even the caller’s', async () => {
    assert.equal(server.runtime.tracing, undefined);
    const caller = callerTraceparent();
    const openaiClient = new OpenAI({
      apiKey: server.key,
      baseURL: server.baseUrl,
      maxRetries: 0,
      defaultHeaders: { traceparent: caller.header },
    });
    await openaiClient.chat.completions.create({ model: VIA_OPENAI, messages: [{ role: 'user', content: 'hi' }] });
    const anthropicClient = new Anthropic({
      apiKey: server.key,
      baseURL: server.origin,
      maxRetries: 0,
      defaultHeaders: { traceparent: caller.header },
    });
    const stream = await anthropicClient.messages.create({
      model: VIA_ANTHROPIC,
      max_tokens: 16,
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    for await (const _event of stream) void _event;
    assert.equal(openai.requests.length, 1);
    assert.equal(anthropic.requests.length, 1);
    for (const request of [...openai.requests, ...anthropic.requests]) {
      assert.equal(request.headers['traceparent'], undefined);
      assert.equal(request.headers['tracestate'], undefined);
    }
  });
});
