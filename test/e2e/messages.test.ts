// The message-style endpoint end to end: a real server, both official Anthropic SDKs (1.x sends
// `Authorization: Bearer` and anthropic-version 2026-10-21; 0.x sends `x-api-key` and 2023-06-01), the
// built-in model and mock upstreams of every remote provider kind (OpenAI-compatible and Anthropic).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import AnthropicZero from 'anthropic-sdk-0x';
import { MockAnthropicServer, MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/** What the tests use of either SDK; both versions have this surface. */
type Client = Anthropic;
type ErrorClasses = Pick<
  typeof Anthropic,
  | 'APIError'
  | 'BadRequestError'
  | 'AuthenticationError'
  | 'PermissionDeniedError'
  | 'NotFoundError'
  | 'RateLimitError'
  | 'InternalServerError'
>;

interface Sdk {
  name: string;
  client(apiKey: string, origin: string): Client;
  errors: ErrorClasses;
}

const SDKS: Sdk[] = [
  {
    name: '@anthropic-ai/sdk 1.x',
    client: (apiKey, origin) => new Anthropic({ apiKey, baseURL: origin, maxRetries: 0 }),
    errors: Anthropic,
  },
  {
    name: 'anthropic-sdk-0x (0.137)',
    client: (apiKey, origin) => new AnthropicZero({ apiKey, baseURL: origin, maxRetries: 0 }) as unknown as Client,
    errors: AnthropicZero as unknown as ErrorClasses,
  },
];

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

const BUILTIN = 'switchyard-echo';
const VIA_OPENAI = 'mock-openai-model';
const VIA_ANTHROPIC = 'mock-anthropic-model';
const ALL_CAPABILITIES = ['chat', 'vision', 'function_calling', 'json_mode', 'streaming', 'thinking'] as const;

/** Raw request, to see the wire (headers, SSE lines) the SDKs hide. */
async function rawPost(
  server: TestServer,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(`${server.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': server.key, 'anthropic-version': '2023-06-01', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Parses an SSE body into events (event name, parsed data), comments dropped. */
function parseSse(text: string): Array<{ event: string | undefined; data: Record<string, unknown> }> {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '' && !block.startsWith(':'))
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length);
      const data = lines
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length))
        .join('\n');
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}

describe('POST /v1/messages end to end', () => {
  let server: TestServer;
  let openai: MockOpenAIServer;
  let anthropic: MockAnthropicServer;

  before(async () => {
    openai = await new MockOpenAIServer().start();
    anthropic = await new MockAnthropicServer().start();
    server = await startTestServer({
      config: {
        server: { keepAliveSeconds: 0.05 },
        providers: {
          'mock-openai': { kind: 'openai-compatible', baseUrl: openai.baseUrl, apiKey: 'sk-upstream', maxRetries: 0 },
          'mock-anthropic': { kind: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant-upstream', maxRetries: 0 },
          // OpenAI's own API has no top_k: the backend drops it and says so.
          'mock-openai-dialect': {
            kind: 'openai-compatible',
            dialect: 'openai',
            baseUrl: openai.baseUrl,
            apiKey: 'sk-upstream',
            maxRetries: 0,
          },
        },
        models: [
          {
            id: VIA_OPENAI,
            provider: 'mock-openai',
            upstreamModel: 'gpt-mock',
            capabilities: [...ALL_CAPABILITIES],
            aliases: ['oa-alias'],
          },
          { id: VIA_ANTHROPIC, provider: 'mock-anthropic', upstreamModel: 'claude-mock', capabilities: [...ALL_CAPABILITIES] },
          { id: 'text-only-model', provider: 'mock-openai', upstreamModel: 'gpt-mock', capabilities: ['chat'] },
          { id: 'openai-dialect-model', provider: 'mock-openai-dialect', upstreamModel: 'gpt-mock', capabilities: [...ALL_CAPABILITIES] },
        ],
      },
    });
  });

  after(async () => {
    await server.close();
    await openai.close();
    await anthropic.close();
  });

  beforeEach(() => {
    openai.reset();
    anthropic.reset();
  });

  for (const sdk of SDKS) {
    describe(sdk.name, () => {
      let client: Client;
      before(() => {
        client = sdk.client(server.key, server.origin);
      });

      test('create with the built-in model', async () => {
        const message = await client.messages.create({
          model: BUILTIN,
          max_tokens: 64,
          messages: [{ role: 'user', content: 'Hello there' }],
        });
        assert.match(message.id, /^msg_/);
        assert.equal(message.type, 'message');
        assert.equal(message.role, 'assistant');
        assert.equal(message.model, BUILTIN);
        assert.equal(message.stop_reason, 'end_turn');
        assert.equal(message.stop_sequence, null);
        const text = message.content.find((block) => block.type === 'text');
        assert.ok(text?.type === 'text' && text.text.includes('Hello there'), JSON.stringify(message.content));
        assert.ok(message.usage.input_tokens > 0);
        assert.ok(message.usage.output_tokens > 0);
        assert.equal(typeof message.usage.cache_creation_input_tokens, 'number');
        assert.equal(typeof message.usage.cache_read_input_tokens, 'number');
      });

      test('messages.stream() and finalMessage() with the built-in model', async () => {
        const stream = client.messages.stream({
          model: BUILTIN,
          max_tokens: 64,
          messages: [{ role: 'user', content: 'Stream me please' }],
        });
        let streamed = '';
        stream.on('text', (delta) => {
          streamed += delta;
        });
        const final = await stream.finalMessage();
        const text = final.content.find((block) => block.type === 'text');
        assert.ok(text?.type === 'text');
        assert.equal(streamed, text.text);
        assert.ok(streamed.includes('Stream me please'));
        assert.equal(final.stop_reason, 'end_turn');
        assert.ok(final.usage.output_tokens > 0);
      });

      test('forced tool with the built-in model, streamed and not', async () => {
        const request = {
          model: BUILTIN,
          max_tokens: 128,
          tools: [WEATHER_TOOL],
          tool_choice: { type: 'tool' as const, name: 'get_weather' },
          messages: [{ role: 'user' as const, content: 'Weather in Paris?' }],
        };
        const message = await client.messages.create(request);
        assert.equal(message.stop_reason, 'tool_use');
        const toolUse = message.content.find((block) => block.type === 'tool_use');
        assert.ok(toolUse?.type === 'tool_use');
        assert.equal(toolUse.name, 'get_weather');
        assert.equal(typeof toolUse.input, 'object');

        let json = '';
        const stream = client.messages.stream(request);
        stream.on('inputJson', (delta) => {
          json += delta;
        });
        const final = await stream.finalMessage();
        const streamedToolUse = final.content.find((block) => block.type === 'tool_use');
        assert.ok(streamedToolUse?.type === 'tool_use');
        assert.equal(final.stop_reason, 'tool_use');
        assert.deepEqual(streamedToolUse.input, json === '' ? {} : JSON.parse(json));
      });

      test('auto tools through an OpenAI-compatible upstream: parallel calls, not streamed', async () => {
        openai.enqueue({
          type: 'reply',
          reply: {
            text: 'Checking both.',
            toolCalls: [
              { id: 'call_paris', name: 'get_weather', arguments: { city: 'Paris' } },
              { id: 'call_rome', name: 'get_weather', arguments: { city: 'Rome' } },
            ],
          },
        });
        const message = await client.messages.create({
          model: VIA_OPENAI,
          max_tokens: 128,
          tools: [WEATHER_TOOL],
          tool_choice: { type: 'auto' },
          messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }],
        });
        assert.equal(message.stop_reason, 'tool_use');
        assert.deepEqual(
          message.content.map((block) => block.type),
          ['text', 'tool_use', 'tool_use'],
        );
        assert.deepEqual(message.content.slice(1), [
          { type: 'tool_use', id: 'call_paris', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_rome', name: 'get_weather', input: { city: 'Rome' } },
        ]);
        const upstreamBody = openai.requests[0]?.body as { tools?: Array<{ function: { name: string } }>; tool_choice?: unknown };
        assert.equal(upstreamBody.tools?.[0]?.function.name, 'get_weather');
      });

      test('auto tools through an OpenAI-compatible upstream, streamed: input_json_delta joins to valid JSON', async () => {
        openai.enqueue({
          type: 'reply',
          reply: {
            toolCalls: [
              { id: 'call_a', name: 'get_weather', arguments: { city: 'Paris' } },
              { id: 'call_b', name: 'get_weather', arguments: { city: 'Rome', unit: 'celsius' } },
            ],
          },
        });
        const stream = client.messages.stream({
          model: VIA_OPENAI,
          max_tokens: 128,
          tools: [WEATHER_TOOL],
          messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }],
        });
        const final = await stream.finalMessage();
        assert.equal(final.stop_reason, 'tool_use');
        assert.deepEqual(final.content, [
          { type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_b', name: 'get_weather', input: { city: 'Rome', unit: 'celsius' } },
        ]);
      });

      test('a tool round trip: tool_result reaches the OpenAI-compatible upstream as a tool message', async () => {
        openai.enqueue({ type: 'reply', reply: { text: 'It is 18C in Paris.' } });
        const message = await client.messages.create({
          model: VIA_OPENAI,
          max_tokens: 128,
          tools: [WEATHER_TOOL],
          messages: [
            { role: 'user', content: 'Weather in Paris?' },
            { role: 'assistant', content: [{ type: 'tool_use', id: 'call_paris', name: 'get_weather', input: { city: 'Paris' } }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_paris', content: '18C, sunny' }] },
          ],
        });
        assert.deepEqual(message.content, [{ type: 'text', text: 'It is 18C in Paris.' }]);
        const upstreamMessages = (openai.requests[0]?.body as { messages: Array<Record<string, unknown>> }).messages;
        const toolMessage = upstreamMessages.find((entry) => entry['role'] === 'tool');
        assert.equal(toolMessage?.['tool_call_id'], 'call_paris');
        assert.equal(toolMessage?.['content'], '18C, sunny');
      });

      test('thinking through an Anthropic upstream: thinking and signature pass through, streamed and not', async () => {
        const reply = { thinking: { text: 'Two plus two is four.', signature: 'EqQBsig-mock==' }, text: 'Four.' };
        anthropic.enqueue({ type: 'reply', reply }, { type: 'reply', reply });
        const request = {
          model: VIA_ANTHROPIC,
          max_tokens: 4096,
          thinking: { type: 'enabled' as const, budget_tokens: 2048 },
          messages: [{ role: 'user' as const, content: 'What is 2 + 2?' }],
        };
        const message = await client.messages.create(request);
        assert.deepEqual(message.content, [
          { type: 'thinking', thinking: 'Two plus two is four.', signature: 'EqQBsig-mock==' },
          { type: 'text', text: 'Four.' },
        ]);
        const upstreamThinking = (anthropic.requests[0]?.body as { thinking?: unknown }).thinking;
        assert.deepEqual(upstreamThinking, { type: 'enabled', budget_tokens: 2048 });

        const stream = client.messages.stream(request);
        let signature = '';
        stream.on('streamEvent', (event) => {
          if (event.type === 'content_block_delta' && event.delta.type === 'signature_delta') signature += event.delta.signature;
        });
        const final = await stream.finalMessage();
        assert.equal(signature, 'EqQBsig-mock==');
        assert.deepEqual(final.content, message.content);
      });

      test('thinking from an OpenAI-compatible upstream (reasoning_content) arrives as a thinking block', async () => {
        openai.enqueue({ type: 'reply', reply: { reasoning: 'Let me add.', text: 'Four.' } });
        const final = await client.messages
          .stream({
            model: VIA_OPENAI,
            max_tokens: 4096,
            thinking: { type: 'enabled', budget_tokens: 1024 },
            messages: [{ role: 'user', content: 'What is 2 + 2?' }],
          })
          .finalMessage();
        assert.deepEqual(final.content, [
          { type: 'thinking', thinking: 'Let me add.', signature: '' },
          { type: 'text', text: 'Four.' },
        ]);
      });

      test('stop sequences and cache usage from an Anthropic upstream are reported as such', async () => {
        anthropic.enqueue({
          type: 'reply',
          reply: {
            text: 'one two',
            stopReason: 'stop_sequence',
            stopSequence: ' three',
            usage: { input_tokens: 5, output_tokens: 2, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 },
          },
        });
        const message = await client.messages.create({
          model: VIA_ANTHROPIC,
          max_tokens: 64,
          stop_sequences: [' three'],
          messages: [{ role: 'user', content: 'Count' }],
        });
        assert.equal(message.stop_reason, 'stop_sequence');
        assert.equal(message.stop_sequence, ' three');
        assert.deepEqual(message.usage, {
          input_tokens: 5,
          output_tokens: 2,
          cache_read_input_tokens: 100,
          cache_creation_input_tokens: 20,
          // No `cache_creation` split from the upstream: every write is a 5-minute one (Anthropic's default).
          cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 0 },
        });
      });

      test('count_tokens', async () => {
        const small = await client.messages.countTokens({ model: BUILTIN, messages: [{ role: 'user', content: 'Hi' }] });
        const large = await client.messages.countTokens({
          model: BUILTIN,
          system: 'You are a careful assistant who answers about the weather.',
          tools: [WEATHER_TOOL],
          messages: [{ role: 'user', content: 'What is the weather like in Paris today, and should I bring an umbrella?' }],
        });
        assert.ok(small.input_tokens > 0);
        assert.ok(large.input_tokens > small.input_tokens);
      });

      test('error classes: 400, 401, 403, 404, upstream 429 and 500', async () => {
        const { errors } = sdk;
        await assert.rejects(
          client.messages.create({ model: BUILTIN, max_tokens: 0, messages: [{ role: 'user', content: 'x' }] }),
          (error: unknown) => {
            assert.ok(error instanceof errors.BadRequestError);
            assert.equal(error.status, 400);
            const body = error.error as { type: string; error: { type: string; code: string; param: string } };
            assert.equal(body.type, 'error');
            assert.deepEqual(
              [body.error.type, body.error.code, body.error.param],
              ['invalid_request_error', 'invalid_parameter', 'max_tokens'],
            );
            return true;
          },
        );
        await assert.rejects(
          client.messages.create({ model: BUILTIN, max_tokens: 10, messages: [{ role: 'assistant', content: 'x' }] }),
          (error: unknown) =>
            error instanceof errors.BadRequestError && (error.error as { error: { code: string } }).error.code === 'invalid_messages',
        );
        await assert.rejects(
          sdk
            .client('sk-not-a-real-key', server.origin)
            .messages.create({ model: BUILTIN, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
          errors.AuthenticationError,
        );
        const limited = await server.createKey({ permissions: ['chat.completions'] });
        await assert.rejects(
          sdk
            .client(limited.key, server.origin)
            .messages.create({ model: BUILTIN, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
          errors.PermissionDeniedError,
        );
        await assert.rejects(
          client.messages.create({ model: 'no-such-model', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
          errors.NotFoundError,
        );
        await assert.rejects(
          client.messages.countTokens({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
          errors.NotFoundError,
        );
        openai.enqueue({ type: 'error', status: 429, message: 'Upstream rate limit.', headers: { 'retry-after': '0' } });
        await assert.rejects(
          client.messages.create({ model: VIA_OPENAI, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
          errors.RateLimitError,
        );
        openai.enqueue({ type: 'error', status: 500, message: 'Upstream exploded.' });
        await assert.rejects(
          client.messages.create({ model: VIA_OPENAI, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
          errors.InternalServerError,
        );
      });

      test('a model without a needed capability is a 400 naming the wire field', async () => {
        await assert.rejects(
          client.messages.create({
            model: 'text-only-model',
            max_tokens: 10,
            messages: [
              {
                role: 'user',
                content: [
                  { type: 'text', text: 'What is this?' },
                  { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
                ],
              },
            ],
          }),
          (error: unknown) => {
            assert.ok(error instanceof sdk.errors.BadRequestError);
            assert.equal((error.error as { error: { param: string } }).error.param, 'messages[0].content[1]');
            return true;
          },
        );
      });

      test('an upstream failure after the stream began ends it with an error event the SDK raises', async () => {
        anthropic.enqueue({
          type: 'reply',
          reply: { text: 'Partial answer', errorEvent: { type: 'overloaded_error', message: 'Overloaded' } },
        });
        const stream = client.messages.stream({ model: VIA_ANTHROPIC, max_tokens: 64, messages: [{ role: 'user', content: 'Go' }] });
        await assert.rejects(stream.finalMessage(), (error: unknown) => {
          assert.ok(error instanceof sdk.errors.APIError);
          assert.equal((error as unknown as { type: string }).type, 'overloaded_error');
          assert.match(error.message, /Overloaded/);
          return true;
        });
      });

      test('a client that stops reading mid-stream makes the server abort the upstream request', async () => {
        openai.enqueue({ type: 'reply', reply: { text: 'one two three four five six seven eight nine ten' }, delayMs: 50 });
        const stream = client.messages.stream({ model: VIA_OPENAI, max_tokens: 64, messages: [{ role: 'user', content: 'Count slowly' }] });
        for await (const event of stream) {
          if (event.type === 'content_block_delta') break;
        }
        await openai.waitForRequests(1);
        assert.equal(await openai.requests[0]?.outcome, 'closed-by-client');
      });
    });
  }

  describe('settings a backend does not honour are reported, never dropped silently', () => {
    const post = (body: Record<string, unknown>): Promise<Response> =>
      fetch(`${server.origin}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': server.key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    for (const stream of [false, true]) {
      test(`top_k to an upstream without it: left out upstream and named in the header (stream: ${stream})`, async () => {
        const response = await post({
          model: 'openai-dialect-model',
          max_tokens: 32,
          top_k: 5,
          stream,
          messages: [{ role: 'user', content: 'hi' }],
        });
        assert.equal(response.status, 200);
        await response.text();
        assert.equal(response.headers.get('x-switchyard-ignored-parameters'), 'top_k');
        const upstreamBody = openai.requests[0]!.body as Record<string, unknown>;
        assert.equal(upstreamBody['top_k'], undefined);
        assert.equal(upstreamBody['max_completion_tokens'], 32);
      });
    }

    test('temperature with thinking on an Anthropic backend: refused by the API, so left out and named', async () => {
      const response = await post({
        model: VIA_ANTHROPIC,
        max_tokens: 4096,
        temperature: 0.3,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'hi' }],
      });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-switchyard-ignored-parameters'), 'temperature');
      assert.equal((anthropic.requests[0]!.body as Record<string, unknown>)['temperature'], undefined);
    });

    test('a generic compatible upstream takes top_k: no header', async () => {
      const response = await post({ model: VIA_OPENAI, max_tokens: 32, top_k: 5, messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-switchyard-ignored-parameters'), null);
      assert.equal((openai.requests[0]!.body as Record<string, unknown>)['top_k'], 5);
    });
  });

  describe('translation matrix: backend kind x streaming x text or tool call give the same message', () => {
    const backends = [
      {
        name: 'OpenAI-compatible upstream',
        model: VIA_OPENAI,
        text: () => openai.enqueue({ type: 'reply', reply: { text: 'The answer is 42.' } }),
        tool: () =>
          openai.enqueue({
            type: 'reply',
            reply: { toolCalls: [{ id: 'call_matrix', name: 'get_weather', arguments: { city: 'Paris' } }] },
          }),
      },
      {
        name: 'Anthropic upstream',
        model: VIA_ANTHROPIC,
        text: () => anthropic.enqueue({ type: 'reply', reply: { text: 'The answer is 42.' } }),
        tool: () =>
          anthropic.enqueue({
            type: 'reply',
            reply: { toolUses: [{ id: 'toolu_matrix', name: 'get_weather', input: { city: 'Paris' } }] },
          }),
      },
    ];
    const expected = {
      text: { stop_reason: 'end_turn', content: [{ type: 'text', text: 'The answer is 42.' }] },
      tool: { stop_reason: 'tool_use', content: [{ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } }] },
    };
    for (const backend of backends) {
      for (const streaming of [false, true]) {
        for (const kind of ['text', 'tool'] as const) {
          test(`${backend.name}, ${streaming ? 'streamed' : 'not streamed'}, ${kind}`, async () => {
            const client = new Anthropic({ apiKey: server.key, baseURL: server.origin, maxRetries: 0 });
            backend[kind]();
            const request = {
              model: backend.model,
              max_tokens: 128,
              tools: [WEATHER_TOOL],
              messages: [{ role: 'user' as const, content: kind === 'text' ? 'What is six times seven?' : 'Weather in Paris?' }],
            };
            const message = streaming ? await client.messages.stream(request).finalMessage() : await client.messages.create(request);
            const content = (JSON.parse(JSON.stringify(message.content)) as Array<Record<string, unknown>>).map(
              ({ id: _id, ...rest }) => rest,
            );
            assert.deepEqual({ stop_reason: message.stop_reason, content }, expected[kind]);
            assert.equal(message.model, backend.model);
            assert.ok(message.usage.output_tokens > 0);
          });
        }
      }
    }
  });

  test('raw wire: every event is named, pings while the upstream is slow, x-api-key and anthropic-version 2023-06-01', async () => {
    openai.enqueue({ type: 'reply', reply: { text: 'slow words' }, delayMs: 250 });
    const response = await rawPost(server, '/v1/messages', {
      model: VIA_OPENAI,
      max_tokens: 64,
      stream: true,
      messages: [{ role: 'user', content: 'x' }],
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.match(response.headers.get('request-id') ?? '', /^req_/);
    const events = parseSse(response.text);
    for (const event of events) assert.equal(event.event, event.data['type']);
    const names = events.map((event) => event.event).filter((name) => name !== 'ping');
    assert.deepEqual(names.slice(0, 2), ['message_start', 'content_block_start']);
    assert.deepEqual(names.slice(-4), ['content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    assert.ok(
      events.some((event) => event.event === 'ping'),
      'ping events are the keep-alive of this endpoint',
    );
  });

  test('raw wire: error bodies are the SPEC envelope plus top-level type "error"', async () => {
    const response = await rawPost(server, '/v1/messages', { model: BUILTIN, messages: [{ role: 'user', content: 'x' }] });
    assert.equal(response.status, 400);
    const body = JSON.parse(response.text) as Record<string, any>;
    assert.equal(body['type'], 'error');
    assert.deepEqual(Object.keys(body.error).sort(), ['code', 'details', 'message', 'param', 'type']);
    assert.deepEqual([body.error.code, body.error.param], ['missing_parameter', 'max_tokens']);
    assert.equal(body.info_metadata.status, false);

    const unauthenticated = await rawPost(
      server,
      '/v1/messages/count_tokens',
      { model: BUILTIN, messages: [] },
      { 'x-api-key': 'sk-wrong' },
    );
    assert.equal(unauthenticated.status, 401);
    assert.equal((JSON.parse(unauthenticated.text) as Record<string, unknown>)['type'], 'error');
  });

  test('raw wire: a success body carries _metadata; Bearer and anthropic-version 2026-10-21 work too', async () => {
    const response = await rawPost(
      server,
      '/v1/messages',
      { model: 'oa-alias', max_tokens: 32, messages: [{ role: 'user', content: 'alias please' }] },
      { 'x-api-key': '', authorization: `Bearer ${server.key}`, 'anthropic-version': '2026-10-21' },
    );
    assert.equal(response.status, 200, response.text);
    const body = JSON.parse(response.text) as Record<string, any>;
    assert.equal(body['model'], 'oa-alias', 'the model is echoed as the client spelled it');
    assert.equal(body['_metadata'].status, true);
    assert.deepEqual(body['content'], [{ type: 'text', text: 'Mock: alias please' }]);
  });
});
