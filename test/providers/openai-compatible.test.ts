import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { assembleResult } from '../../src/core/assemble-result.ts';
import type { GenerationRequest } from '../../src/core/generation.ts';
import type { LanguageModel, ProviderInstance } from '../../src/core/language-model.ts';
import { ServiceError } from '../../src/core/service-error.ts';
import { UpstreamError } from '../../src/core/upstream-error.ts';
import { convertToOpenAICompatibleRequest } from '../../src/providers/openai-compatible/convert-to-openai-compatible-request.ts';
import { mapOpenAICompatibleFinishReason } from '../../src/providers/openai-compatible/map-openai-compatible-finish-reason.ts';
import {
  createOpenAICompatibleProvider,
  type OpenAICompatibleProviderConfig,
} from '../../src/providers/openai-compatible/openai-compatible-provider.ts';
import { MockOpenAIServer, openAIFixtureEvents, readChunkFixture, readJsonFixture } from '../support/mock-upstreams/index.ts';
import { collect, finishOf, joinedDeltas, rejection, userRequest } from './helpers.ts';

const API_KEY = 'sk-test-secret-key-0123456789';

function fixtureDeltas(name: string, field: 'content' | 'reasoning_content'): string {
  return readChunkFixture(name)
    .map((chunk) => (chunk as { choices: Array<{ delta?: Record<string, unknown> }> }).choices[0]?.delta?.[field])
    .filter((value): value is string => typeof value === 'string')
    .join('');
}

describe('convertToOpenAICompatibleRequest', () => {
  const options = { upstreamModel: 'upstream-model', maxTokensField: 'max_tokens', acceptsTopK: true } as const;

  test('converts every canonical field', () => {
    const request: GenerationRequest = {
      model: 'public-model',
      system: 'Be brief.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', url: 'https://example.com/cat.png', detail: 'low' },
            { type: 'document', text: 'Report body', title: 'Report' },
            { type: 'document', url: 'data:application/pdf;base64,JVBERi0=', title: 'doc.pdf' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'thinking', signature: 'sig' },
            { type: 'text', text: 'Let me check.' },
            { type: 'tool-call', id: 'call_1', name: 'lookup', input: '{"q":"cat"}' },
            { type: 'tool-call', id: 'call_2', name: 'noargs', input: '' },
          ],
        },
        {
          role: 'tool',
          content: [
            { type: 'tool-result', toolCallId: 'call_1', content: 'a cat' },
            { type: 'tool-result', toolCallId: 'call_2', content: [{ type: 'text', text: 'done' }] },
          ],
        },
      ],
      tools: [
        { name: 'lookup', description: 'Looks up', inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, strict: true },
      ],
      toolChoice: { type: 'tool', name: 'lookup' },
      parallelToolCalls: false,
      temperature: 0.5,
      topP: 0.9,
      topK: 40,
      maxOutputTokens: 100,
      stopSequences: ['END'],
      responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true },
      thinking: { budgetTokens: 8000 },
      user: 'user-1',
      seed: 7,
      metadata: { key: 'value' },
    };
    assert.deepEqual(convertToOpenAICompatibleRequest(request, options), {
      model: 'upstream-model',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
            { type: 'text', text: 'Report\n\nReport body' },
            { type: 'file', file: { filename: 'doc.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"cat"}' } },
            { id: 'call_2', type: 'function', function: { name: 'noargs', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'a cat' },
        { role: 'tool', tool_call_id: 'call_2', content: 'done' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'lookup',
            description: 'Looks up',
            parameters: { type: 'object', properties: { q: { type: 'string' } } },
            strict: true,
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
      stop: ['END'],
      max_tokens: 100,
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      seed: 7,
      user: 'user-1',
      reasoning_effort: 'medium',
    });
  });

  test('uses max_completion_tokens and drops top_k for OpenAI itself; json_object; tool choice spellings', () => {
    const body = convertToOpenAICompatibleRequest(
      userRequest('hi', {
        maxOutputTokens: 5,
        topK: 3,
        responseFormat: { type: 'json_object' },
        toolChoice: { type: 'required' },
        reasoningEffort: 'high',
      }),
      { upstreamModel: 'gpt', maxTokensField: 'max_completion_tokens', acceptsTopK: false },
    );
    assert.equal(body.max_completion_tokens, 5);
    assert.equal(body.max_tokens, undefined);
    assert.equal(body.top_k, undefined);
    assert.deepEqual(body.response_format, { type: 'json_object' });
    assert.equal(body.tool_choice, 'required');
    assert.equal(body.reasoning_effort, 'high');
    assert.equal(convertToOpenAICompatibleRequest(userRequest('x', { toolChoice: { type: 'none' } }), options).tool_choice, 'none');
    assert.equal(convertToOpenAICompatibleRequest(userRequest('x', { toolChoice: { type: 'auto' } }), options).tool_choice, 'auto');
    // parallel_tool_calls only goes with tools: OpenAI rejects it alone.
    assert.equal(convertToOpenAICompatibleRequest(userRequest('x', { parallelToolCalls: true }), options).parallel_tool_calls, undefined);
  });

  test('a document by URL and an image inside a tool result are 400s naming the part', () => {
    const documentByUrl: GenerationRequest = {
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'x' },
            { type: 'document', url: 'https://example.com/a.pdf' },
          ],
        },
      ],
    };
    assert.throws(
      () => convertToOpenAICompatibleRequest(documentByUrl, options),
      (error: unknown) => {
        assert.ok(error instanceof ServiceError);
        assert.equal(error.status, 400);
        assert.equal(error.param, 'messages[0].content[1]');
        return true;
      },
    );
    const imageInToolResult: GenerationRequest = {
      model: 'm',
      messages: [
        {
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: 'c', content: [{ type: 'image', url: 'https://example.com/x.png' }] }],
        },
      ],
    };
    assert.throws(() => convertToOpenAICompatibleRequest(imageInToolResult, options), {
      status: 400,
      param: 'messages[0].content[0].content[0]',
    });
  });
});

describe('mapOpenAICompatibleFinishReason', () => {
  test('maps the documented values', () => {
    assert.equal(mapOpenAICompatibleFinishReason('stop'), 'stop');
    assert.equal(mapOpenAICompatibleFinishReason('length'), 'length');
    assert.equal(mapOpenAICompatibleFinishReason('tool_calls'), 'tool-calls');
    assert.equal(mapOpenAICompatibleFinishReason('function_call'), 'tool-calls');
    assert.equal(mapOpenAICompatibleFinishReason('content_filter'), 'content-filter');
    assert.equal(mapOpenAICompatibleFinishReason(undefined), 'stop');
  });
});

describe('openai-compatible language model against a mock upstream', () => {
  const server = new MockOpenAIServer();
  let provider: ProviderInstance;
  let model: LanguageModel;

  before(async () => {
    await server.start();
    const config: OpenAICompatibleProviderConfig = {
      kind: 'openai-compatible',
      id: 'mock-openai',
      baseUrl: server.baseUrl,
      apiKeyValue: API_KEY,
      timeoutMs: 10_000,
      maxRetries: 0,
      headers: { 'x-extra': 'yes' },
    };
    provider = createOpenAICompatibleProvider(config, {});
    model = provider.languageModel!('upstream-model');
  });
  after(async () => {
    await provider.close?.();
    await server.close();
  });
  beforeEach(() => server.reset());

  const call = (request: GenerationRequest = userRequest('Hello'), signal = new AbortController().signal) =>
    collect(model.stream(request, { signal, requestId: 'req_test' }));

  test('sends a streaming chat completions request with the key and configured headers', async () => {
    await call(userRequest('Hello there', { maxOutputTokens: 20 }));
    const recorded = server.requests[0]!;
    assert.equal(recorded.method, 'POST');
    assert.equal(recorded.path, '/v1/chat/completions');
    assert.equal(recorded.headers['authorization'], `Bearer ${API_KEY}`);
    assert.equal(recorded.headers['x-extra'], 'yes');
    assert.equal(recorded.headers['x-request-id'], 'req_test');
    assert.deepEqual(recorded.body, {
      model: 'upstream-model',
      messages: [{ role: 'user', content: 'Hello there' }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 20,
    });
  });

  test('replays a recorded OpenAI text stream', async () => {
    server.enqueue({ type: 'events', events: openAIFixtureEvents('openai-text') });
    const parts = await call();
    assert.deepEqual(parts[0], {
      type: 'response-metadata',
      upstreamId: 'chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0',
      upstreamModel: 'gpt-4.1-nano-2025-04-14',
    });
    assert.deepEqual(parts[1], { type: 'text-start', id: 'text-0' });
    assert.equal(joinedDeltas(parts, 'text-delta'), fixtureDeltas('openai-text', 'content'));
    assert.deepEqual(parts.at(-2), { type: 'text-end', id: 'text-0' });
    const finish = finishOf(parts);
    assert.equal(finish.finishReason, 'stop');
    assert.equal(finish.stopSequence, null);
    assert.deepEqual(
      { ...finish.usage, raw: undefined },
      {
        inputTokens: 16,
        cachedInputTokens: 0,
        cacheWriteInputTokens: 0,
        cacheWrite1hInputTokens: 0,
        outputTokens: 300,
        reasoningTokens: 0,
        requests: 1,
        estimated: false,
        raw: undefined,
      },
    );
  });

  test('the same stream written 7 bytes at a time gives the same parts', async () => {
    server.enqueue({ type: 'events', events: openAIFixtureEvents('openai-text') });
    const whole = await call();
    server.enqueue({ type: 'events', events: openAIFixtureEvents('openai-text'), chunkSize: 7 });
    const split = await call();
    assert.deepEqual(split, whole);
  });

  test('maps reasoning_content and reasoning tokens reported beside completion tokens (xAI)', async () => {
    server.enqueue({ type: 'events', events: openAIFixtureEvents('xai-text') });
    const parts = await call();
    assert.equal(joinedDeltas(parts, 'reasoning-delta'), fixtureDeltas('xai-text', 'reasoning_content'));
    assert.equal(joinedDeltas(parts, 'text-delta'), 'Grok');
    const types = parts.map((part) => part.type);
    assert.ok(types.indexOf('reasoning-end') < types.indexOf('text-start'), 'reasoning closes before the text starts');
    const usage = finishOf(parts).usage;
    assert.equal(usage.inputTokens, 12);
    assert.equal(usage.cachedInputTokens, 11);
    assert.equal(usage.outputTokens, 342);
    assert.equal(usage.reasoningTokens, 340);
  });

  test('maps a tool call sent in one fragment after reasoning', async () => {
    server.enqueue({ type: 'events', events: openAIFixtureEvents('xai-tool-call') });
    const parts = await call();
    const start = parts.find((part) => part.type === 'tool-input-start');
    assert.deepEqual(start, { type: 'tool-input-start', id: 'call_79382389', toolName: 'weather' });
    assert.equal(joinedDeltas(parts, 'tool-input-delta', 'call_79382389'), '{"location":"San Francisco"}');
    assert.ok(parts.some((part) => part.type === 'tool-input-end' && part.id === 'call_79382389'));
    assert.equal(finishOf(parts).finishReason, 'tool-calls');
  });

  test('maps parallel tool calls streamed in fragments, one after the other', async () => {
    server.enqueue({ type: 'events', events: openAIFixtureEvents('openai-parallel-tool-calls') });
    const parts = await call();
    const toolParts = parts.filter((part) => part.type.startsWith('tool-input'));
    const first = 'call_weatherParis000000001';
    const second = 'call_timeTokyo00000000000002';
    assert.deepEqual(toolParts[0], { type: 'tool-input-start', id: first, toolName: 'get_weather' });
    const firstEnd = toolParts.findIndex((part) => part.type === 'tool-input-end' && part.id === first);
    const secondStart = toolParts.findIndex((part) => part.type === 'tool-input-start' && part.id === second);
    assert.ok(firstEnd !== -1 && firstEnd < secondStart, 'the first call ends before the second starts');
    assert.equal(joinedDeltas(parts, 'tool-input-delta', first), '{"city": "Paris", "unit": "celsius"}');
    assert.equal(joinedDeltas(parts, 'tool-input-delta', second), '{"zone": "Asia/Tokyo"}');
    const finish = finishOf(parts);
    assert.equal(finish.finishReason, 'tool-calls');
    assert.equal(finish.usage.cachedInputTokens, 64);

    server.enqueue({ type: 'events', events: openAIFixtureEvents('openai-parallel-tool-calls') });
    const result = await assembleResult(model.stream(userRequest('x'), { signal: new AbortController().signal }));
    assert.deepEqual(result.content, [
      { type: 'tool-call', id: first, name: 'get_weather', input: '{"city": "Paris", "unit": "celsius"}' },
      { type: 'tool-call', id: second, name: 'get_time', input: '{"zone": "Asia/Tokyo"}' },
    ]);
  });

  test('non-streaming result assembled from a scripted reply', async () => {
    server.enqueue({
      type: 'reply',
      reply: { reasoning: 'Think first.', text: 'The answer is 4.', usage: { prompt_tokens: 9, completion_tokens: 7 } },
    });
    const result = await assembleResult(model.stream(userRequest('2+2?'), { signal: new AbortController().signal }));
    assert.deepEqual(result.content, [
      { type: 'reasoning', text: 'Think first.' },
      { type: 'text', text: 'The answer is 4.' },
    ]);
    assert.equal(result.finishReason, 'stop');
    assert.equal(result.usage.inputTokens, 9);
    assert.equal(result.usage.outputTokens, 7);
    assert.equal(result.upstreamId, 'chatcmpl-mock0000000000000000000000000');
  });

  test('accepts an upstream that answers with a whole JSON body', async () => {
    server.enqueue({ type: 'json', body: readJsonFixture('xai-tool-call') });
    const result = await assembleResult(model.stream(userRequest('weather?'), { signal: new AbortController().signal }));
    assert.equal(result.finishReason, 'tool-calls');
    assert.equal(result.content[0]?.type, 'reasoning');
    assert.deepEqual(result.content[1], { type: 'tool-call', id: 'call_46427107', name: 'weather', input: '{"location":"San Francisco"}' });
    assert.equal(result.usage.cachedInputTokens, 244);
  });

  test('without upstream usage the finish part is marked estimated (the service counts it)', async () => {
    server.enqueue({ type: 'reply', reply: { text: 'no usage here', usage: null } });
    const usage = finishOf(await call()).usage;
    assert.equal(usage.estimated, true);
    assert.equal(usage.inputTokens, 0);
    assert.equal(usage.outputTokens, 0);
  });

  test('an error event inside the stream ends it with an error part', async () => {
    server.enqueue({
      type: 'events',
      events: [
        { data: { id: 'x', model: 'm', choices: [{ index: 0, delta: { content: 'Hel' } }] } },
        { data: { error: { message: 'The engine is overloaded', type: 'server_error', code: null } } },
      ],
    });
    const parts = await call();
    const last = parts.at(-1);
    assert.equal(last?.type, 'error');
    assert.ok(last?.type === 'error' && last.error instanceof UpstreamError);
    assert.equal(last.error.status, 500);
    assert.match(last.error.message, /overloaded/);
  });

  test('a stream cut mid-way (connection reset) ends with an error part', async () => {
    server.enqueue({ type: 'reply', reply: { text: 'one two three four five six' }, interrupt: { afterEvents: 3, how: 'reset' } });
    const parts = await call();
    assert.equal(joinedDeltas(parts, 'text-delta'), 'one two');
    const last = parts.at(-1);
    assert.ok(last?.type === 'error');
    assert.equal(last.error.status, 500);
    assert.equal(last.error.code, 'service_unavailable');
    assert.ok(last.error instanceof UpstreamError && last.error.kind === 'connection');
  });

  test('a body that ends without finish_reason or [DONE] is an error', async () => {
    server.enqueue({ type: 'events', events: [{ data: { id: 'x', model: 'm', choices: [{ index: 0, delta: { content: 'partial' } }] } }] });
    const parts = await call();
    assert.equal(parts.at(-1)?.type, 'error');
  });

  test('HTTP errors are thrown before any part, mapped and retry hints kept', async () => {
    server.enqueue({
      type: 'error',
      status: 400,
      body: { error: { message: "'messages' is too long", type: 'invalid_request_error', param: 'messages', code: null } },
    });
    const badRequest = await rejection(call());
    assert.ok(badRequest instanceof UpstreamError);
    assert.equal(badRequest.status, 400);
    assert.equal(badRequest.type, 'invalid_request_error');
    assert.equal(badRequest.message, "'messages' is too long");
    assert.equal(badRequest.param, 'messages');
    assert.equal(badRequest.retryable, false);

    server.enqueue({ type: 'error', status: 429, message: 'Slow down', headers: { 'retry-after': '2' } });
    const rateLimited = await rejection(call());
    assert.ok(rateLimited instanceof UpstreamError);
    assert.equal(rateLimited.status, 429);
    assert.equal(rateLimited.retryable, true);
    assert.equal(rateLimited.retryAfterMs, 2000);
    assert.equal(rateLimited.headers['retry-after'], '2');

    server.enqueue({ type: 'error', status: 503, message: 'busy' });
    const unavailable = await rejection(call());
    assert.ok(unavailable instanceof UpstreamError);
    assert.equal(unavailable.status, 500);
    assert.equal(unavailable.code, 'service_unavailable');
    assert.equal(unavailable.retryable, true);

    server.enqueue({ type: 'raw', status: 502, body: '<html><body>Bad gateway</body></html>', headers: { 'content-type': 'text/html' } });
    const badGateway = await rejection(call());
    assert.ok(badGateway instanceof UpstreamError);
    assert.doesNotMatch(badGateway.message, /html/);
  });

  test('error messages never carry the upstream URL or API key', async () => {
    server.enqueue({
      type: 'error',
      status: 400,
      message: `Invalid request to ${server.baseUrl}/chat/completions with key ${API_KEY} (see https://docs.example.com/errors)`,
    });
    const error = await rejection(call());
    assert.ok(error instanceof ServiceError);
    assert.equal(error.status, 400);
    assert.ok(!error.message.includes(API_KEY), error.message);
    assert.ok(!error.message.includes('127.0.0.1'), error.message);
    assert.ok(!error.message.includes('http'), error.message);

    server.enqueue({ type: 'error', status: 401, message: `Incorrect API key provided: ${API_KEY}.` });
    const unauthorized = await rejection(call());
    assert.ok(unauthorized instanceof ServiceError);
    assert.equal(unauthorized.status, 500, "the upstream key is the operator's, not the caller's");
    assert.ok(!unauthorized.message.includes(API_KEY));
  });

  test('a refused connection is a retryable error that names no address', async () => {
    const closed = new MockOpenAIServer();
    await closed.start();
    const baseUrl = closed.baseUrl;
    await closed.close();
    const orphan = createOpenAICompatibleProvider(
      { kind: 'openai-compatible', id: 'gone', baseUrl, timeoutMs: 5000, maxRetries: 0, headers: {} },
      {},
    );
    try {
      const error = await rejection(collect(orphan.languageModel!('m').stream(userRequest('x'), { signal: new AbortController().signal })));
      assert.ok(error instanceof UpstreamError);
      assert.equal(error.kind, 'connection');
      assert.equal(error.retryable, true);
      assert.ok(!error.message.includes('127.0.0.1'), error.message);
    } finally {
      await orphan.close?.();
    }
  });

  test('aborting the signal aborts the upstream request (the mock sees the connection closed)', async () => {
    server.enqueue({ type: 'reply', reply: { text: 'one two three four' }, interrupt: { afterEvents: 2, how: 'hang' } });
    const controller = new AbortController();
    const iterator = model.stream(userRequest('x'), { signal: controller.signal })[Symbol.asyncIterator]();
    const seen: string[] = [];
    for (;;) {
      const next = await iterator.next();
      assert.equal(next.done, false);
      seen.push(next.value!.type);
      if (next.value!.type === 'text-delta') break;
    }
    const reason = new Error('client went away');
    controller.abort(reason);
    const error = await rejection(iterator.next());
    assert.equal(error, reason);
    assert.equal(await server.requests[0]!.outcome, 'closed-by-client');
  });

  test('keeps connections alive between requests instead of opening one per request', async () => {
    for (let index = 0; index < 8; index++) await call();
    assert.equal(server.requests.length, 8);
    // undici releases a connection a tick after the body ends, so back-to-back requests may use two.
    const ports = new Set(server.requests.map((request) => request.remotePort));
    assert.ok(ports.size <= 2, `8 sequential requests used ${ports.size} connections`);
  });
});
