import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { assembleResult } from '../../src/core/assemble-result.ts';
import type { GenerationRequest } from '../../src/core/generation.ts';
import type { LanguageModel, ProviderInstance } from '../../src/core/language-model.ts';
import { ServiceError } from '../../src/core/service-error.ts';
import { UpstreamError } from '../../src/core/upstream-error.ts';
import { createAnthropicProvider, type AnthropicProviderConfig } from '../../src/providers/anthropic/anthropic-provider.ts';
import { convertToAnthropicRequest } from '../../src/providers/anthropic/convert-to-anthropic-request.ts';
import { mapAnthropicStopReason } from '../../src/providers/anthropic/map-anthropic-stop-reason.ts';
import { anthropicFixtureEvents, MockAnthropicServer, readChunkFixture, readJsonFixture } from '../support/mock-upstreams/index.ts';
import { collect, finishOf, joinedDeltas, rejection, userRequest } from './helpers.ts';

const API_KEY = 'sk-ant-test-secret-0123456789';
const options = { upstreamModel: 'claude-upstream', defaultMaxOutputTokens: 1000 };

function fixtureDeltas(name: string, field: 'text' | 'thinking' | 'partial_json'): string {
  return readChunkFixture(name)
    .map((event) => (event as { delta?: Record<string, unknown> }).delta?.[field])
    .filter((value): value is string => typeof value === 'string')
    .join('');
}

describe('convertToAnthropicRequest', () => {
  test('converts every canonical field', () => {
    const request: GenerationRequest = {
      model: 'public',
      system: 'Be brief.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image', url: 'https://example.com/cat.png' },
            { type: 'image', url: 'data:image/png;base64,iVBORw0K' },
            { type: 'document', text: 'plain body', title: 'Notes' },
            { type: 'document', url: 'data:application/pdf;base64,JVBERi0=' },
            { type: 'document', url: 'https://example.com/a.pdf' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'signed thought', signature: 'sig-1' },
            { type: 'reasoning', text: 'unsigned thought from another backend' },
            { type: 'reasoning', text: '', redactedData: 'opaque' },
            { type: 'text', text: 'Calling.' },
            { type: 'tool-call', id: 'toolu_1', name: 'lookup', input: '{"q":"cat"}' },
          ],
        },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'toolu_1', content: 'a cat', isError: true }] },
        { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
      ],
      tools: [{ name: 'lookup', description: 'Looks up', inputSchema: { type: 'object' } }],
      toolChoice: { type: 'required' },
      parallelToolCalls: false,
      temperature: 1,
      topP: 0.96,
      topK: 5,
      maxOutputTokens: 4000,
      stopSequences: ['END'],
      thinking: { budgetTokens: 2048 },
      user: 'user-1',
    };
    const { body, jsonToolName, warnings } = convertToAnthropicRequest(request, options);
    assert.equal(jsonToolName, undefined);
    // top_k cannot go with thinking: left out and reported.
    assert.deepEqual(warnings, [{ setting: 'topK', reason: 'refused-with-thinking' }]);
    assert.deepEqual(body, {
      model: 'claude-upstream',
      max_tokens: 4000,
      stream: true,
      system: 'Be brief.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0K' } },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain body' }, title: 'Notes' },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
            { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'signed thought', signature: 'sig-1' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'text', text: 'Calling.' },
            { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'cat' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'a cat', is_error: true },
            { type: 'text', text: 'Thanks' },
          ],
        },
      ],
      tools: [{ name: 'lookup', description: 'Looks up', input_schema: { type: 'object' } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      thinking: { type: 'enabled', budget_tokens: 2048 },
      stop_sequences: ['END'],
      temperature: 1,
      top_p: 0.96,
      metadata: { user_id: 'user-1' },
    });
  });

  test('tool choice spellings', () => {
    const withTools = (toolChoice: GenerationRequest['toolChoice']) =>
      convertToAnthropicRequest(
        userRequest('x', { tools: [{ name: 't', inputSchema: { type: 'object' } }], ...(toolChoice ? { toolChoice } : {}) }),
        options,
      ).body.tool_choice;
    assert.deepEqual(withTools({ type: 'auto' }), { type: 'auto' });
    assert.deepEqual(withTools({ type: 'none' }), { type: 'none' });
    assert.deepEqual(withTools({ type: 'tool', name: 't' }), { type: 'tool', name: 't' });
    assert.equal(withTools(undefined), undefined);
  });

  test('with thinking, sampling settings the API refuses are left out and reported; without, they pass', () => {
    const sampling = { temperature: 0.7, topP: 0.5, topK: 40 };
    const plain = convertToAnthropicRequest(userRequest('x', sampling), options);
    assert.equal(plain.body.temperature, 0.7);
    assert.equal(plain.body.top_p, 0.5);
    assert.equal(plain.body.top_k, 40);
    assert.deepEqual(plain.warnings, []);
    const thinking = convertToAnthropicRequest(userRequest('x', { ...sampling, thinking: { budgetTokens: 2048 } }), options);
    assert.equal(thinking.body.temperature, undefined);
    assert.equal(thinking.body.top_p, undefined);
    assert.equal(thinking.body.top_k, undefined);
    assert.deepEqual(
      thinking.warnings.map((warning) => warning.setting),
      ['temperature', 'topP', 'topK'],
    );
    const allowed = convertToAnthropicRequest(userRequest('x', { temperature: 1, topP: 0.97, thinking: { budgetTokens: 2048 } }), options);
    assert.equal(allowed.body.temperature, 1);
    assert.equal(allowed.body.top_p, 0.97);
    assert.deepEqual(allowed.warnings, []);
  });

  test('max_tokens: the request cap, else the model default, raised above a thinking budget', () => {
    assert.equal(convertToAnthropicRequest(userRequest('x'), options).body.max_tokens, 1000);
    const thinking = convertToAnthropicRequest(userRequest('x', { thinking: { budgetTokens: 3000 } }), options).body;
    assert.equal(thinking.max_tokens, 4000);
    assert.deepEqual(thinking.thinking, { type: 'enabled', budget_tokens: 3000 });
    const effort = convertToAnthropicRequest(userRequest('x', { reasoningEffort: 'medium', maxOutputTokens: 2000 }), options).body;
    assert.deepEqual(effort.thinking, { type: 'enabled', budget_tokens: 1999 });
    const noRoom = convertToAnthropicRequest(userRequest('x', { reasoningEffort: 'low', maxOutputTokens: 500 }), options).body;
    assert.equal(noRoom.thinking, undefined);
  });

  test('a JSON schema goes natively as output_config.format, also beside tools', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const converted = convertToAnthropicRequest(userRequest('x', { responseFormat: { type: 'json_schema', name: 'a', schema } }), options);
    assert.equal(converted.jsonToolName, undefined);
    assert.deepEqual(converted.body.output_config, { format: { type: 'json_schema', schema } });
    assert.equal(converted.body.tools, undefined);
    const withTools = convertToAnthropicRequest(
      userRequest('x', { responseFormat: { type: 'json_schema', name: 'a', schema }, tools: [{ name: 't', inputSchema: {} }] }),
      options,
    );
    assert.deepEqual(withTools.body.output_config, { format: { type: 'json_schema', schema } });
    assert.deepEqual(
      withTools.body.tools?.map((tool) => tool.name),
      ['t'],
    );
  });

  test('json_object becomes a forced json tool; with other tools it is a 400', () => {
    const converted = convertToAnthropicRequest(userRequest('x', { responseFormat: { type: 'json_object' } }), options);
    assert.equal(converted.jsonToolName, 'json');
    assert.deepEqual(converted.body.tools, [
      { name: 'json', description: 'Respond with a JSON document.', input_schema: { type: 'object', additionalProperties: true } },
    ]);
    assert.deepEqual(converted.body.tool_choice, { type: 'tool', name: 'json' });
    assert.throws(
      () =>
        convertToAnthropicRequest(
          userRequest('x', { responseFormat: { type: 'json_object' }, tools: [{ name: 't', inputSchema: {} }] }),
          options,
        ),
      { status: 400, param: 'response_format' },
    );
  });

  test('tool-call arguments that are not a JSON object are a 400 invalid_messages', () => {
    const request: GenerationRequest = {
      model: 'm',
      messages: [{ role: 'assistant', content: [{ type: 'tool-call', id: 'a', name: 'b', input: '[1' }] }],
    };
    assert.throws(() => convertToAnthropicRequest(request, options), {
      status: 400,
      code: 'invalid_messages',
      param: 'messages[0].content[0].input',
    });
  });
});

describe('mapAnthropicStopReason', () => {
  test('maps the documented values', () => {
    assert.equal(mapAnthropicStopReason('end_turn'), 'stop');
    assert.equal(mapAnthropicStopReason('max_tokens'), 'length');
    assert.equal(mapAnthropicStopReason('stop_sequence'), 'stop-sequence');
    assert.equal(mapAnthropicStopReason('tool_use'), 'tool-calls');
    assert.equal(mapAnthropicStopReason('tool_use', true), 'stop');
    assert.equal(mapAnthropicStopReason('refusal'), 'content-filter');
  });
});

describe('anthropic language model against a mock upstream', () => {
  const server = new MockAnthropicServer();
  let provider: ProviderInstance;
  let model: LanguageModel;

  before(async () => {
    await server.start();
    const config: AnthropicProviderConfig = {
      kind: 'anthropic',
      id: 'mock-anthropic',
      baseUrl: server.baseUrl,
      apiKeyValue: API_KEY,
      anthropicVersion: '2023-06-01',
      timeoutMs: 10_000,
      maxRetries: 0,
      headers: { 'anthropic-beta': 'test-beta' },
    };
    provider = createAnthropicProvider(config, {});
    model = provider.languageModel!('claude-upstream', { defaultMaxOutputTokens: 777 });
  });
  after(async () => {
    await provider.close?.();
    await server.close();
  });
  beforeEach(() => server.reset());

  const call = (request: GenerationRequest = userRequest('Hello'), signal = new AbortController().signal) =>
    collect(model.stream(request, { signal }));

  test('posts to /v1/messages with x-api-key, anthropic-version and the default max_tokens', async () => {
    await call(userRequest('Hi', { system: 'sys' }));
    const recorded = server.requests[0]!;
    assert.equal(recorded.path, '/v1/messages');
    assert.equal(recorded.headers['x-api-key'], API_KEY);
    assert.equal(recorded.headers['anthropic-version'], '2023-06-01');
    assert.equal(recorded.headers['anthropic-beta'], 'test-beta');
    assert.deepEqual(recorded.body, {
      model: 'claude-upstream',
      max_tokens: 777,
      stream: true,
      system: 'sys',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    });
    // No request id, no header: the shared upstream-call template adds it only when there is one.
    assert.equal(recorded.headers['x-request-id'], undefined);
  });

  test('forwards the request id as x-request-id (the shared upstream-call template)', async () => {
    await collect(model.stream(userRequest('Hi'), { signal: new AbortController().signal, requestId: 'req_anthropic' }));
    assert.equal(server.requests[0]!.headers['x-request-id'], 'req_anthropic');
  });

  test('replays a recorded text stream (with pings), also when split every 5 bytes', async () => {
    server.enqueue({ type: 'events', events: anthropicFixtureEvents('anthropic-text') });
    const parts = await call();
    assert.deepEqual(parts[0], {
      type: 'response-metadata',
      upstreamId: 'msg_01QC4g3HwBThD4BaNtBckFDJ',
      upstreamModel: 'claude-sonnet-4-5-20250929',
    });
    assert.equal(joinedDeltas(parts, 'text-delta'), fixtureDeltas('anthropic-text', 'text'));
    const finish = finishOf(parts);
    assert.equal(finish.finishReason, 'stop');
    assert.equal(finish.usage.inputTokens, 12);
    assert.equal(finish.usage.outputTokens, 30);
    assert.equal(finish.usage.estimated, false);

    server.enqueue({ type: 'events', events: anthropicFixtureEvents('anthropic-text'), chunkSize: 5 });
    assert.deepEqual(await call(), parts);
  });

  test('thinking deltas and the signature delta become a signed reasoning block', async () => {
    server.enqueue({ type: 'events', events: anthropicFixtureEvents('anthropic-clear-thinking') });
    const parts = await call();
    const signature = parts.find((part) => part.type === 'reasoning-signature');
    assert.ok(signature?.type === 'reasoning-signature' && signature.signature.startsWith('EvQBCkYICxgCKkAx'));
    server.enqueue({ type: 'events', events: anthropicFixtureEvents('anthropic-clear-thinking') });
    const result = await assembleResult(model.stream(userRequest('x'), { signal: new AbortController().signal }));
    assert.equal(result.content.length, 2);
    const [reasoning, text] = result.content;
    assert.ok(reasoning?.type === 'reasoning');
    assert.equal(reasoning.text, fixtureDeltas('anthropic-clear-thinking', 'thinking'));
    assert.equal(reasoning.signature, signature.signature);
    assert.deepEqual(text, { type: 'text', text: '925 ÷ 5 = 185' });
  });

  test('a forced tool call streamed as input_json_delta fragments', async () => {
    server.enqueue({ type: 'events', events: anthropicFixtureEvents('anthropic-json-tool') });
    const parts = await call();
    assert.deepEqual(parts[1], { type: 'tool-input-start', id: 'toolu_01KFbKqPYSuAKujiL6mTfzYA', toolName: 'json' });
    assert.equal(joinedDeltas(parts, 'tool-input-delta'), fixtureDeltas('anthropic-json-tool', 'partial_json'));
    assert.equal(finishOf(parts).finishReason, 'tool-calls');
  });

  test('a tool call with empty input assembles to {}', async () => {
    server.enqueue({ type: 'events', events: anthropicFixtureEvents('anthropic-tool-no-args') });
    const result = await assembleResult(model.stream(userRequest('x'), { signal: new AbortController().signal }));
    assert.deepEqual(result.content, [
      { type: 'text', text: "I'll update the issue list for you." },
      { type: 'tool-call', id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', input: '{}' },
    ]);
  });

  test('parallel tool uses', async () => {
    server.enqueue({ type: 'events', events: anthropicFixtureEvents('anthropic-parallel-tools') });
    const result = await assembleResult(model.stream(userRequest('x'), { signal: new AbortController().signal }));
    assert.deepEqual(result.content, [
      { type: 'text', text: 'Checking both.' },
      { type: 'tool-call', id: 'toolu_01WeatherParis0000000001', name: 'get_weather', input: '{"city": "Paris"}' },
      { type: 'tool-call', id: 'toolu_01TimeTokyo00000000000002', name: 'get_time', input: '{"zone": "Asia/Tokyo"}' },
    ]);
    assert.equal(result.finishReason, 'tool-calls');
  });

  test('redacted thinking, the matched stop sequence and cache usage', async () => {
    server.enqueue({ type: 'events', events: anthropicFixtureEvents('anthropic-stop-sequence-cache') });
    const parts = await call();
    assert.ok(parts.some((part) => part.type === 'reasoning-redacted' && part.data.startsWith('EmwKAhgB')));
    const finish = finishOf(parts);
    assert.equal(finish.finishReason, 'stop-sequence');
    assert.equal(finish.stopSequence, ', 5');
    assert.equal(finish.usage.inputTokens, 14 + 1200 + 2048);
    assert.equal(finish.usage.cachedInputTokens, 2048);
    assert.equal(finish.usage.cacheWriteInputTokens, 1200);
    assert.equal(finish.usage.outputTokens, 12);
  });

  test('JSON output comes back as text from the json tool', async () => {
    server.enqueue({ type: 'reply', reply: { toolUses: [{ name: 'json', input: { answer: 'yes' } }] } });
    const result = await assembleResult(
      model.stream(userRequest('x', { responseFormat: { type: 'json_object' } }), { signal: new AbortController().signal }),
    );
    assert.deepEqual(result.content, [{ type: 'text', text: '{"answer":"yes"}' }]);
    assert.equal(result.finishReason, 'stop');
    assert.deepEqual((server.requests[0]!.body as { tool_choice?: unknown }).tool_choice, { type: 'tool', name: 'json' });
  });

  test('accepts an upstream that answers with a whole JSON message', async () => {
    server.enqueue({ type: 'json', body: readJsonFixture('anthropic-json-tool') });
    const result = await assembleResult(model.stream(userRequest('x'), { signal: new AbortController().signal }));
    assert.equal(result.content[0]?.type, 'tool-call');
    assert.ok(result.content[0]?.type === 'tool-call' && JSON.parse(result.content[0].input).elements.length === 4);
    assert.equal(result.usage.inputTokens, 1151);
  });

  test('an error event mid-stream ends with an error part', async () => {
    server.enqueue({ type: 'reply', reply: { text: 'partial answer', errorEvent: { type: 'overloaded_error', message: 'Overloaded' } } });
    const parts = await call();
    const last = parts.at(-1);
    assert.ok(last?.type === 'error' && last.error instanceof UpstreamError);
    assert.equal(last.error.upstreamStatus, 529);
    assert.equal(last.error.status, 500);
    assert.equal(last.error.code, 'service_unavailable');
  });

  test('a stream cut mid-way ends with an error part', async () => {
    server.enqueue({ type: 'reply', reply: { text: 'a b c d e f g' }, interrupt: { afterEvents: 5, how: 'reset' } });
    const parts = await call();
    assert.ok(parts.some((part) => part.type === 'text-delta'));
    assert.equal(parts.at(-1)?.type, 'error');
  });

  test('HTTP errors are thrown with their status mapped and retry hints kept', async () => {
    server.enqueue({ type: 'error', status: 400, message: 'max_tokens: must be at least 1' });
    const invalid = await rejection(call());
    assert.ok(invalid instanceof UpstreamError);
    assert.equal(invalid.status, 400);
    assert.equal(invalid.message, 'max_tokens: must be at least 1');

    server.enqueue({ type: 'error', status: 529, message: 'Overloaded', headers: { 'retry-after-ms': '1500' } });
    const overloaded = await rejection(call());
    assert.ok(overloaded instanceof UpstreamError);
    assert.equal(overloaded.status, 500);
    assert.equal(overloaded.retryable, true);
    assert.equal(overloaded.retryAfterMs, 1500);

    server.enqueue({ type: 'error', status: 401, message: `invalid x-api-key ${API_KEY}` });
    const unauthorized = await rejection(call());
    assert.ok(unauthorized instanceof ServiceError);
    assert.equal(unauthorized.status, 500);
    assert.ok(!unauthorized.message.includes(API_KEY));
  });

  test('aborting the signal closes the upstream connection', async () => {
    server.enqueue({ type: 'reply', reply: { text: 'one two three' }, interrupt: { afterEvents: 4, how: 'hang' } });
    const controller = new AbortController();
    const iterator = model.stream(userRequest('x'), { signal: controller.signal })[Symbol.asyncIterator]();
    let next = await iterator.next();
    while (!next.done && next.value.type !== 'text-delta') next = await iterator.next();
    controller.abort(new Error('gone'));
    await rejection(iterator.next());
    assert.equal(await server.requests[0]!.outcome, 'closed-by-client');
  });
});
