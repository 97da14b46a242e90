/**
 * Issue 16: an upstream 200 whose body is no answer is a fault, never an empty success. Before any
 * output the provider throws (so the generation service retries, falls back or answers the SPEC
 * envelope); after output it ends the stream with an `error` part. Against real mock upstreams.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { LanguageModel, ProviderInstance } from '../../src/core/language-model.ts';
import { UpstreamError } from '../../src/core/upstream-error.ts';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.ts';
import { createOpenAICompatibleProvider } from '../../src/providers/openai-compatible/openai-compatible-provider.ts';
import { MockAnthropicServer, MockOpenAIServer, type MockSseEvent } from '../support/mock-upstreams/index.ts';
import { collect, rejection, userRequest } from './helpers.ts';

const OPENAI_KEY = 'sk-upstream-openai-secret-0123456789';
const ANTHROPIC_KEY = 'sk-ant-upstream-secret-0123456789';

/** Calls the model and expects a thrown UpstreamError that names no URL or key. */
async function expectThrownFault(model: LanguageModel, whole: boolean, secrets: string[]): Promise<UpstreamError> {
  const error = await rejection(
    collect(model.stream(userRequest('Hi'), { signal: new AbortController().signal, preferWholeResponse: whole })),
  );
  assert.ok(error instanceof UpstreamError, `expected an UpstreamError, got ${String(error)}`);
  assert.equal(error.status, 500);
  assert.equal(error.type, 'server_error');
  assert.equal(error.code, 'service_unavailable');
  assert.equal(error.retryable, true);
  for (const secret of secrets) assert.ok(!error.message.includes(secret), `message leaks ${secret}: ${error.message}`);
  return error;
}

const jsonHeaders = { 'content-type': 'application/json' };
const sseHeaders = { 'content-type': 'text/event-stream' };

describe('openai-compatible: malformed 200 answers are faults', () => {
  const server = new MockOpenAIServer();
  let provider: ProviderInstance;
  let model: LanguageModel;
  before(async () => {
    await server.start();
    provider = createOpenAICompatibleProvider(
      {
        kind: 'openai-compatible',
        id: 'faulty',
        baseUrl: server.baseUrl,
        apiKeyValue: OPENAI_KEY,
        timeoutMs: 5000,
        maxRetries: 0,
        headers: {},
      },
      {},
    );
    model = provider.languageModel!('m');
  });
  after(async () => {
    await provider.close?.();
    await server.close();
  });
  beforeEach(() => server.reset());
  const secrets = (): string[] => [OPENAI_KEY, server.baseUrl, '127.0.0.1'];

  const wholeCases: Array<[string, string, RegExp]> = [
    ['an empty body', '', /empty/],
    ['a body that is not JSON', '{"choices": [', /not JSON/],
    ['JSON without choices', '{"id":"x","object":"chat.completion"}', /no choices/],
    ['a choice without a message', '{"choices":[{"index":0,"finish_reason":"stop"}]}', /no choices/],
  ];
  for (const [name, body, pattern] of wholeCases) {
    test(`whole answer: ${name} is thrown`, async () => {
      server.enqueue({ type: 'raw', status: 200, body, headers: jsonHeaders });
      const error = await expectThrownFault(model, true, secrets());
      assert.match(error.message, pattern);
      assert.equal(error.kind, 'malformed');
    });
    test(`streamed request answered with JSON: ${name} is thrown`, async () => {
      server.enqueue({ type: 'raw', status: 200, body, headers: jsonHeaders });
      assert.match((await expectThrownFault(model, false, secrets())).message, pattern);
    });
  }

  test('whole answer: an `error` object in a 200 is thrown with the sanitised message', async () => {
    server.enqueue({
      type: 'raw',
      status: 200,
      body: JSON.stringify({ error: { message: `overloaded at ${server.baseUrl} with ${OPENAI_KEY}` } }),
      headers: jsonHeaders,
    });
    const error = await expectThrownFault(model, true, secrets());
    assert.match(error.message, /overloaded/);
  });

  const streamCases: Array<[string, MockSseEvent[], RegExp]> = [
    ['an empty stream', [], /empty/],
    ['an event that is not JSON', [{ data: '{"choices": [' }, { data: '[DONE]' }], /not JSON/],
    ['[DONE] without any choice', [{ data: { id: 'c1', object: 'chat.completion.chunk' } }, { data: '[DONE]' }], /no choices/],
    ['an `error` key', [{ data: { error: { message: `boom ${OPENAI_KEY}`, type: 'server_error' } } }], /boom/],
    [
      'an SSE event named error',
      [{ event: 'error', data: { message: 'boom at http://upstream.internal:9/v1' } }, { data: '[DONE]' }],
      /boom at \[url\]/,
    ],
    ['a stream cut before its finish', [{ data: { id: 'c1', choices: [{ index: 0, delta: { role: 'assistant' } }] } }], /ended before/],
  ];
  for (const [name, events, pattern] of streamCases) {
    test(`stream: ${name} before any output is thrown`, async () => {
      server.enqueue({ type: 'events', events });
      if (events.length === 0) {
        server.reset();
        server.enqueue({ type: 'raw', status: 200, body: '', headers: sseHeaders });
      }
      assert.match((await expectThrownFault(model, false, secrets())).message, pattern);
    });
  }

  const text = (content: string): MockSseEvent => ({ data: { id: 'c1', model: 'm', choices: [{ index: 0, delta: { content } }] } });
  const afterOutput: Array<[string, MockSseEvent[]]> = [
    ['an `error` key', [text('Hel'), { data: { error: { message: 'overloaded' } } }]],
    ['an SSE event named error', [text('Hel'), { event: 'error', data: { message: 'overloaded' } }]],
    ['an event that is not JSON', [text('Hel'), { data: 'garbage' }]],
    ['a stream cut before its finish', [text('Hel')]],
  ];
  for (const [name, events] of afterOutput) {
    test(`stream: ${name} after output ends the stream with an error part`, async () => {
      server.enqueue({ type: 'events', events });
      const parts = await collect(model.stream(userRequest('Hi'), { signal: new AbortController().signal }));
      assert.ok(parts.some((part) => part.type === 'text-delta'));
      const last = parts.at(-1);
      assert.equal(last?.type, 'error');
      assert.ok(!parts.some((part) => part.type === 'finish'));
      if (last?.type === 'error') assert.equal(last.error.status, 500);
    });
  }

  test('a complete stream with [DONE] and no finish reason is still an answer', async () => {
    server.enqueue({ type: 'events', events: [text('Hello'), { data: '[DONE]' }] });
    const parts = await collect(model.stream(userRequest('Hi'), { signal: new AbortController().signal }));
    assert.equal(parts.at(-1)?.type, 'finish');
  });
});

describe('anthropic: malformed 200 answers are faults', () => {
  const server = new MockAnthropicServer();
  let provider: ProviderInstance;
  let model: LanguageModel;
  before(async () => {
    await server.start();
    provider = createAnthropicProvider(
      {
        kind: 'anthropic',
        id: 'faulty',
        baseUrl: server.baseUrl,
        apiKeyValue: ANTHROPIC_KEY,
        anthropicVersion: '2023-06-01',
        timeoutMs: 5000,
        maxRetries: 0,
        headers: {},
      },
      {},
    );
    model = provider.languageModel!('claude', { defaultMaxOutputTokens: 100 });
  });
  after(async () => {
    await provider.close?.();
    await server.close();
  });
  beforeEach(() => server.reset());
  const secrets = (): string[] => [ANTHROPIC_KEY, server.baseUrl, '127.0.0.1'];

  const wholeCases: Array<[string, string, RegExp]> = [
    ['an empty body', '', /empty/],
    ['a body that is not JSON', '{"type":"message",', /not JSON/],
    ['a message without content', '{"type":"message","id":"msg_1","role":"assistant"}', /not a message/],
    ['an error object', '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', /Overloaded/],
  ];
  for (const [name, body, pattern] of wholeCases) {
    test(`whole answer: ${name} is thrown`, async () => {
      server.enqueue({ type: 'raw', status: 200, body, headers: jsonHeaders });
      assert.match((await expectThrownFault(model, true, secrets())).message, pattern);
    });
  }

  const start: MockSseEvent = {
    event: 'message_start',
    data: { type: 'message_start', message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 3, output_tokens: 0 } } },
  };
  const streamCases: Array<[string, MockSseEvent[], RegExp]> = [
    ['an event that is not JSON', [{ event: 'message_start', data: '{"type":' }], /not JSON/],
    [
      'an error event',
      [start, { event: 'error', data: { type: 'error', error: { type: 'api_error', message: `boom ${ANTHROPIC_KEY}` } } }],
      /boom/,
    ],
    ['an SSE event named error with other data', [{ event: 'error', data: { message: 'boom' } }], /upstream provider failed/],
    ['a stream cut before message_stop', [start], /ended before/],
  ];
  for (const [name, events, pattern] of streamCases) {
    test(`stream: ${name} before any output is thrown`, async () => {
      server.enqueue({ type: 'events', events });
      assert.match((await expectThrownFault(model, false, secrets())).message, pattern);
    });
  }

  test('stream: an empty body is thrown', async () => {
    server.enqueue({ type: 'raw', status: 200, body: '', headers: sseHeaders });
    assert.match((await expectThrownFault(model, false, secrets())).message, /empty/);
  });

  test('stream: an error event after output ends the stream with an error part', async () => {
    server.enqueue({
      type: 'events',
      events: [
        start,
        { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } } },
        { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
      ],
    });
    const parts = await collect(model.stream(userRequest('Hi'), { signal: new AbortController().signal }));
    assert.ok(parts.some((part) => part.type === 'text-delta'));
    assert.equal(parts.at(-1)?.type, 'error');
  });
});
