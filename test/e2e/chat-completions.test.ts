// POST /v1/chat/completions end to end: a real server, the official `openai` SDK (and raw fetch where
// the wire itself is the subject), the built-in model and mock upstreams of both remote provider kinds
// (OpenAI-compatible and Anthropic) speaking their exact wire formats.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI, { type APIError } from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { MockAnthropicServer, MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const BUILTIN = 'switchyard-echo';
const VIA_OPENAI = 'mock-openai-model';
const VIA_ANTHROPIC = 'mock-anthropic-model';
const TEXT_ONLY = 'text-only-model';
const ALL_CAPABILITIES = ['chat', 'vision', 'function_calling', 'json_mode', 'streaming', 'thinking'] as const;

/** A 1x1 PNG as a data URL. */
const PIXEL_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather for a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const TIME_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_time',
    description: 'Current time in a time zone.',
    parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] },
  },
};

const Weather = z.object({ city: z.string(), temperature: z.number(), sunny: z.boolean() });

interface SseBlock {
  comment: boolean;
  event: string | undefined;
  data: string;
}

/** Splits an SSE body into blocks (comments kept, flagged), data lines joined. */
function parseSse(text: string): SseBlock[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      return {
        comment: lines.every((line) => line.startsWith(':')),
        event: lines.find((line) => line.startsWith('event: '))?.slice('event: '.length),
        data: lines
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice('data: '.length))
          .join('\n'),
      };
    });
}

describe('POST /v1/chat/completions end to end', () => {
  let server: TestServer;
  let openai: MockOpenAIServer;
  let anthropic: MockAnthropicServer;
  let client: OpenAI;

  async function rawPost(body: unknown, key = server.key): Promise<{ status: number; headers: Headers; text: string }> {
    const response = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  before(async () => {
    openai = await new MockOpenAIServer().start();
    anthropic = await new MockAnthropicServer().start();
    server = await startTestServer({
      config: {
        server: { keepAliveSeconds: 0.05 },
        providers: {
          'mock-openai': { kind: 'openai-compatible', baseUrl: openai.baseUrl, apiKey: 'sk-upstream-secret', maxRetries: 0 },
          'mock-anthropic': { kind: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant-upstream-secret', maxRetries: 0 },
        },
        models: [
          { id: VIA_OPENAI, provider: 'mock-openai', upstreamModel: 'gpt-mock', capabilities: [...ALL_CAPABILITIES] },
          { id: VIA_ANTHROPIC, provider: 'mock-anthropic', upstreamModel: 'claude-mock', capabilities: [...ALL_CAPABILITIES] },
          { id: TEXT_ONLY, provider: 'mock-openai', upstreamModel: 'gpt-mock', capabilities: ['chat'] },
        ],
      },
    });
    client = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
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

  describe('text', () => {
    test('create with the built-in model: the full chat.completion object', async () => {
      const { data: completion, response } = await client.chat.completions
        .create({
          model: BUILTIN,
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'Hello there' },
          ],
        })
        .withResponse();
      assert.match(completion.id, /^chatcmpl-[A-Za-z0-9]{29}$/);
      assert.equal(completion.object, 'chat.completion');
      assert.ok(Number.isInteger(completion.created));
      assert.equal(completion.model, BUILTIN);
      assert.equal(completion.choices.length, 1);
      const choice = completion.choices[0]!;
      assert.equal(choice.index, 0);
      assert.equal(choice.finish_reason, 'stop');
      assert.equal(choice.logprobs, null);
      assert.equal(choice.message.role, 'assistant');
      assert.equal(choice.message.content, 'Echo: Hello there');
      assert.equal(choice.message.refusal, null);
      const usage = completion.usage!;
      assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
      assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
      assert.equal(typeof usage.prompt_tokens_details?.cached_tokens, 'number');
      assert.equal(typeof usage.completion_tokens_details?.reasoning_tokens, 'number');
      assert.match(response.headers.get('x-request-id') ?? '', /^req_/);
      assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    });

    test('a prompt that quotes special-token strings is ordinary text: answered and counted, through both paths', async () => {
      const content = 'What does <|endoftext|> mean, and <|im_start|>?';
      const builtin = await client.chat.completions.create({ model: BUILTIN, messages: [{ role: 'user', content }] });
      assert.equal(builtin.choices[0]!.message.content, `Echo: ${content}`);
      assert.ok(builtin.usage!.completion_tokens > 0 && builtin.usage!.prompt_tokens > 0);
      const upstream = await client.chat.completions.create({ model: VIA_OPENAI, messages: [{ role: 'user', content }], stream: true });
      let text = '';
      for await (const chunk of upstream) text += chunk.choices[0]?.delta.content ?? '';
      assert.ok(text.length > 0);
    });

    test('create through an OpenAI-compatible upstream: the canonical request reaches it intact', async () => {
      const completion = await client.chat.completions.create({
        model: VIA_OPENAI,
        messages: [
          { role: 'developer', content: 'Answer in French.' },
          { role: 'user', content: 'Good morning' },
        ],
        temperature: 0.2,
        max_completion_tokens: 50,
        stop: ['END'],
        seed: 7,
        user: 'end-user-1',
      });
      assert.equal(completion.choices[0]?.message.content, 'Mock: Good morning');
      assert.equal(completion.model, VIA_OPENAI);
      const upstream = openai.requests[0]!.body as Record<string, unknown>;
      assert.equal(upstream['model'], 'gpt-mock');
      assert.equal(upstream['temperature'], 0.2);
      assert.deepEqual(upstream['stop'], ['END']);
      assert.equal(upstream['seed'], 7);
      assert.equal(JSON.stringify(upstream['messages']).includes('Answer in French.'), true);
    });

    test('create through an Anthropic upstream', async () => {
      anthropic.enqueue({ type: 'reply', reply: { text: 'Bonjour from Claude' } });
      const completion = await client.chat.completions.create({ model: VIA_ANTHROPIC, messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(completion.choices[0]?.message.content, 'Bonjour from Claude');
      assert.equal(completion.choices[0]?.finish_reason, 'stop');
    });

    test('stream with include_usage: role first, deltas, finish, a usage chunk, then the end', async () => {
      const stream = await client.chat.completions.create({
        model: BUILTIN,
        messages: [{ role: 'user', content: 'Stream these few words please' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      assert.deepEqual(chunks[0]?.choices[0]?.delta, { role: 'assistant', content: '' });
      const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
      assert.equal(text, 'Echo: Stream these few words please');
      assert.ok(chunks.length > 4, 'the answer came in several deltas');
      const usageChunk = chunks.at(-1)!;
      assert.deepEqual(usageChunk.choices, []);
      assert.ok((usageChunk.usage?.completion_tokens ?? 0) > 0);
      assert.equal(chunks.at(-2)?.choices[0]?.finish_reason, 'stop');
      for (const chunk of chunks.slice(0, -1)) assert.equal(chunk.usage, null);
      assert.ok(chunks.every((chunk) => chunk.id === chunks[0]!.id && chunk.object === 'chat.completion.chunk'));
    });

    test('streamed and non-streamed answers agree (through the OpenAI-compatible upstream too)', async () => {
      for (const model of [BUILTIN, VIA_OPENAI, VIA_ANTHROPIC]) {
        if (model === VIA_ANTHROPIC)
          anthropic.enqueue(
            { type: 'reply', reply: { text: 'Same answer both ways' } },
            { type: 'reply', reply: { text: 'Same answer both ways' } },
          );
        const messages = [{ role: 'user' as const, content: 'Agree on this' }];
        const whole = await client.chat.completions.create({ model, messages });
        const runner = client.chat.completions.stream({ model, messages });
        const streamed = await runner.finalChatCompletion();
        assert.equal(streamed.choices[0]?.message.content, whole.choices[0]?.message.content, model);
        assert.equal(streamed.choices[0]?.finish_reason, whole.choices[0]?.finish_reason, model);
      }
    });

    test('the wire of a stream: event-stream headers, data-only events, [DONE] last', async () => {
      const { status, headers, text } = await rawPost({
        model: BUILTIN,
        messages: [{ role: 'user', content: 'wire check' }],
        stream: true,
      });
      assert.equal(status, 200);
      assert.match(headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.match(headers.get('x-request-id') ?? '', /^req_/);
      const blocks = parseSse(text).filter((block) => !block.comment);
      assert.ok(
        blocks.every((block) => block.event === undefined),
        'chat chunks have no event: line',
      );
      assert.equal(blocks.at(-1)?.data, '[DONE]');
      assert.equal(blocks.filter((block) => block.data === '[DONE]').length, 1);
      for (const block of blocks.slice(0, -1)) assert.equal((JSON.parse(block.data) as { error?: unknown }).error, undefined);
    });

    test('keep-alive comments while the upstream is silent do not disturb the SDK', async () => {
      openai.enqueue({ type: 'reply', reply: { text: 'slow but steady' }, delayMs: 150 });
      const { text } = await rawPost({ model: VIA_OPENAI, messages: [{ role: 'user', content: 'slow' }], stream: true });
      assert.ok(
        parseSse(text).some((block) => block.comment),
        'a keep-alive comment was sent',
      );
      openai.enqueue({ type: 'reply', reply: { text: 'slow but steady' }, delayMs: 150 });
      const runner = client.chat.completions.stream({ model: VIA_OPENAI, messages: [{ role: 'user', content: 'slow' }] });
      assert.equal((await runner.finalChatCompletion()).choices[0]?.message.content, 'slow but steady');
    });

    test('chat.completions.stream(): content events and the final completion', async () => {
      const runner = client.chat.completions.stream({ model: BUILTIN, messages: [{ role: 'user', content: 'Use the helper' }] });
      let streamed = '';
      runner.on('content', (delta) => {
        streamed += delta;
      });
      const completion = await runner.finalChatCompletion();
      assert.equal(streamed, 'Echo: Use the helper');
      assert.equal(completion.choices[0]?.message.content, 'Echo: Use the helper');
      assert.equal(await runner.finalContent(), 'Echo: Use the helper');
    });

    test('stop sequences and max_tokens end the answer with stop and length', async () => {
      const stopped = await client.chat.completions.create({
        model: BUILTIN,
        messages: [{ role: 'user', content: 'one two three four' }],
        stop: 'three',
      });
      assert.equal(stopped.choices[0]?.message.content, 'Echo: one two ');
      assert.equal(stopped.choices[0]?.finish_reason, 'stop');
      const capped = await client.chat.completions.create({
        model: BUILTIN,
        messages: [{ role: 'user', content: 'a rather long sentence to cut' }],
        max_tokens: 2,
      });
      assert.equal(capped.choices[0]?.finish_reason, 'length');
      assert.equal(capped.usage?.completion_tokens, 2);
    });

    test('valid parameters that are not honoured are named in a response header', async () => {
      const { response } = await client.chat.completions
        .create({ model: BUILTIN, messages: [{ role: 'user', content: 'x' }], frequency_penalty: 0.5, logit_bias: { '50256': -100 } })
        .withResponse();
      assert.equal(response.headers.get('x-switchyard-ignored-parameters'), 'frequency_penalty, logit_bias');
    });

    test('a client that goes away mid-stream aborts the upstream request', async () => {
      openai.enqueue({
        type: 'reply',
        reply: { text: 'many words arriving slowly one after another until the client leaves' },
        delayMs: 40,
      });
      const stream = await client.chat.completions.create({
        model: VIA_OPENAI,
        messages: [{ role: 'user', content: 'long' }],
        stream: true,
      });
      let received = 0;
      for await (const _chunk of stream) {
        if (++received === 3) break;
      }
      assert.equal(await openai.requests[0]!.outcome, 'closed-by-client');
    });
  });

  describe('structured output', () => {
    test('parse() with a zod json_schema (built-in model)', async () => {
      const completion = await client.chat.completions.parse({
        model: BUILTIN,
        messages: [{ role: 'user', content: 'Weather in Paris as JSON' }],
        response_format: zodResponseFormat(Weather, 'weather'),
      });
      const parsed = completion.choices[0]?.message.parsed;
      assert.ok(parsed !== null && parsed !== undefined);
      assert.deepEqual(Object.keys(parsed).sort(), ['city', 'sunny', 'temperature']);
      assert.equal(Weather.safeParse(parsed).success, true);
    });

    test('stream() with a zod json_schema: parsed at the end', async () => {
      const runner = client.chat.completions.stream({
        model: BUILTIN,
        messages: [{ role: 'user', content: 'Weather as JSON' }],
        response_format: zodResponseFormat(Weather, 'weather'),
      });
      const completion = await runner.finalChatCompletion();
      assert.equal(Weather.safeParse(completion.choices[0]?.message.parsed).success, true);
    });

    test('parse() through the OpenAI-compatible upstream: response_format is passed on', async () => {
      openai.enqueue({ type: 'reply', reply: { text: '{"city":"Oslo","temperature":-3,"sunny":false}' } });
      const completion = await client.chat.completions.parse({
        model: VIA_OPENAI,
        messages: [{ role: 'user', content: 'Weather in Oslo' }],
        response_format: zodResponseFormat(Weather, 'weather'),
      });
      assert.deepEqual(completion.choices[0]?.message.parsed, { city: 'Oslo', temperature: -3, sunny: false });
      const upstream = openai.requests[0]!.body as { response_format?: { type?: string; json_schema?: { name?: string } } };
      assert.equal(upstream.response_format?.type, 'json_schema');
      assert.equal(upstream.response_format?.json_schema?.name, 'weather');
    });

    test('json_object mode answers JSON', async () => {
      const completion = await client.chat.completions.create({
        model: BUILTIN,
        messages: [{ role: 'user', content: 'json please' }],
        response_format: { type: 'json_object' },
      });
      assert.doesNotThrow(() => JSON.parse(completion.choices[0]?.message.content ?? ''));
    });
  });

  describe('tool calls', () => {
    test('not streamed: a forced tool call with JSON arguments, finish tool_calls', async () => {
      const completion = await client.chat.completions.create({
        model: BUILTIN,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [WEATHER_TOOL],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
      });
      const choice = completion.choices[0]!;
      assert.equal(choice.finish_reason, 'tool_calls');
      assert.equal(choice.message.content, null);
      const call = choice.message.tool_calls?.[0];
      assert.ok(call?.type === 'function');
      assert.match(call.id, /^call_/);
      assert.equal(call.function.name, 'get_weather');
      assert.equal(typeof (JSON.parse(call.function.arguments) as { city?: unknown }).city, 'string');
    });

    test('streamed in fragments: parallel calls reach the stream() helper whole, one done event each', async () => {
      const runner = client.chat.completions.stream({
        model: BUILTIN,
        messages: [{ role: 'user', content: 'Weather and time in Paris' }],
        tools: [WEATHER_TOOL, TIME_TOOL],
        tool_choice: 'required',
        parallel_tool_calls: true,
      });
      const done: string[] = [];
      runner.on('tool_calls.function.arguments.done', (event) => done.push(event.name));
      const completion = await runner.finalChatCompletion();
      const calls = completion.choices[0]?.message.tool_calls ?? [];
      assert.deepEqual(
        calls.map((call) => (call.type === 'function' ? call.function.name : '')),
        ['get_weather', 'get_time'],
      );
      for (const call of calls) if (call.type === 'function') assert.doesNotThrow(() => JSON.parse(call.function.arguments));
      assert.deepEqual(done, ['get_weather', 'get_time']);
      assert.equal(completion.choices[0]?.finish_reason, 'tool_calls');
    });

    test('the raw stream: first fragment names the call, later fragments carry arguments only', async () => {
      openai.enqueue({ type: 'reply', reply: { toolCalls: [{ id: 'call_upstream1', name: 'get_weather', arguments: { city: 'Lyon' } }] } });
      const { text } = await rawPost({
        model: VIA_OPENAI,
        messages: [{ role: 'user', content: 'Lyon?' }],
        tools: [WEATHER_TOOL],
        stream: true,
      });
      const chunks = parseSse(text)
        .filter((block) => !block.comment && block.data !== '[DONE]')
        .map(
          (block) =>
            JSON.parse(block.data) as {
              choices: Array<{ delta: { tool_calls?: Array<Record<string, unknown>> }; finish_reason: string | null }>;
            },
        );
      const fragments = chunks.flatMap((chunk) => chunk.choices.flatMap((choice) => choice.delta.tool_calls ?? []));
      assert.deepEqual(fragments[0], {
        index: 0,
        id: 'call_upstream1',
        type: 'function',
        function: { name: 'get_weather', arguments: '' },
      });
      assert.ok(fragments.length > 2);
      for (const fragment of fragments.slice(1)) assert.deepEqual(Object.keys(fragment), ['index', 'function']);
      assert.deepEqual(
        JSON.parse(
          fragments
            .slice(1)
            .map((fragment) => (fragment['function'] as { arguments: string }).arguments)
            .join(''),
        ),
        { city: 'Lyon' },
      );
      assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, 'tool_calls');
    });

    test('through the Anthropic upstream, streamed: tool_use becomes tool_calls', async () => {
      anthropic.enqueue({ type: 'reply', reply: { toolUses: [{ id: 'toolu_01', name: 'get_weather', input: { city: 'Rome' } }] } });
      const runner = client.chat.completions.stream({
        model: VIA_ANTHROPIC,
        messages: [{ role: 'user', content: 'Rome?' }],
        tools: [WEATHER_TOOL],
      });
      const completion = await runner.finalChatCompletion();
      const call = completion.choices[0]?.message.tool_calls?.[0];
      assert.ok(call?.type === 'function');
      assert.equal(call.id, 'toolu_01');
      assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Rome' });
      assert.equal(completion.choices[0]?.finish_reason, 'tool_calls');
    });

    test('tool results go back upstream as tool messages answering their calls', async () => {
      const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
        { role: 'user', content: 'Weather and time?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_t', type: 'function', function: { name: 'get_time', arguments: '{"zone":"CET"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_w', content: 'Sunny, 21 C' },
        { role: 'tool', tool_call_id: 'call_t', content: '12:00' },
      ];
      const completion = await client.chat.completions.create({ model: VIA_OPENAI, messages, tools: [WEATHER_TOOL, TIME_TOOL] });
      assert.equal(completion.choices[0]?.finish_reason, 'stop');
      const upstreamMessages = (openai.requests[0]!.body as { messages: Array<{ role: string; tool_call_id?: string; content?: unknown }> })
        .messages;
      const toolMessages = upstreamMessages.filter((message) => message.role === 'tool');
      assert.deepEqual(
        toolMessages.map((message) => [message.tool_call_id, message.content]),
        [
          ['call_w', 'Sunny, 21 C'],
          ['call_t', '12:00'],
        ],
      );
      const echoed = await client.chat.completions.create({ model: BUILTIN, messages });
      assert.match(echoed.choices[0]?.message.content ?? '', /Sunny, 21 C/);
    });
  });

  describe('vision', () => {
    test('an image_url part (data URL and https URL) is accepted by a vision model', async () => {
      const completion = await client.chat.completions.create({
        model: BUILTIN,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: PIXEL_PNG, detail: 'low' } },
            ],
          },
        ],
      });
      assert.match(completion.choices[0]?.message.content ?? '', /^Echo: What is this\?/);
      await client.chat.completions.create({
        model: VIA_OPENAI,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Describe' },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
            ],
          },
        ],
      });
      const upstreamContent = (openai.requests[0]!.body as { messages: Array<{ content: unknown }> }).messages.at(-1)!.content as Array<{
        type: string;
        image_url?: { url: string };
      }>;
      assert.equal(upstreamContent.find((part) => part.type === 'image_url')?.image_url?.url, 'https://example.com/cat.png');
    });

    test('a model without vision: 400 naming the image by its wire path', async () => {
      await assert.rejects(
        client.chat.completions.create({
          model: TEXT_ONLY,
          messages: [
            { role: 'system', content: 'You see things.' },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Look' },
                { type: 'image_url', image_url: { url: PIXEL_PNG } },
              ],
            },
          ],
        }),
        (error: unknown) => {
          assert.ok(error instanceof OpenAI.BadRequestError);
          assert.equal(error.code, 'invalid_parameter');
          assert.equal(error.param, 'messages[1].content[1].image_url');
          assert.match(error.message, /vision/);
          return true;
        },
      );
      assert.equal(openai.requests.length, 0);
    });
  });

  describe('errors', () => {
    async function rejectsWith(
      promise: Promise<unknown>,
      errorClass: abstract new (...args: never[]) => APIError,
      status: number,
      code: string,
      param?: string | null,
    ): Promise<void> {
      await assert.rejects(promise, (error: unknown) => {
        assert.ok(error instanceof errorClass, `expected ${errorClass.name}, got ${String(error)}`);
        assert.equal(error.status, status);
        assert.equal(error.code, code);
        if (param !== undefined) assert.equal(error.param, param);
        return true;
      });
    }

    test('400 invalid_parameter: temperature outside the SPEC range', async () => {
      await rejectsWith(
        client.chat.completions.create({ model: BUILTIN, messages: [{ role: 'user', content: 'x' }], temperature: 1.5 }),
        OpenAI.BadRequestError,
        400,
        'invalid_parameter',
        'temperature',
      );
    });

    test('400 invalid_parameter: n > 1 with a clear message', async () => {
      await assert.rejects(
        client.chat.completions.create({ model: BUILTIN, messages: [{ role: 'user', content: 'x' }], n: 2 }),
        (error: unknown) => {
          assert.ok(error instanceof OpenAI.BadRequestError);
          assert.equal(error.param, 'n');
          assert.match(error.message, /one choice per request/);
          return true;
        },
      );
    });

    test('400 missing_parameter: no messages', async () => {
      await rejectsWith(
        client.chat.completions.create({ model: BUILTIN } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming),
        OpenAI.BadRequestError,
        400,
        'missing_parameter',
        'messages',
      );
    });

    test('400 invalid_messages: a tool message that answers no call', async () => {
      await rejectsWith(
        client.chat.completions.create({
          model: BUILTIN,
          messages: [
            { role: 'user', content: 'x' },
            { role: 'tool', tool_call_id: 'call_nope', content: 'y' },
          ],
        }),
        OpenAI.BadRequestError,
        400,
        'invalid_messages',
        'messages[1].tool_call_id',
      );
    });

    test('400 invalid_format: a field of the wrong type, and a body that is not JSON', async () => {
      await rejectsWith(
        client.chat.completions.create({
          model: BUILTIN,
          messages: [{ role: 'user', content: 'x' }],
          max_tokens: '5' as unknown as number,
        }),
        OpenAI.BadRequestError,
        400,
        'invalid_format',
        'max_tokens',
      );
      const { status, text } = await rawPost('{"model": "switchyard-echo", "messages": [');
      assert.equal(status, 400);
      assert.equal((JSON.parse(text) as { error: { code: string } }).error.code, 'invalid_format');
    });

    test('400 for a capability the model lacks (tools on a chat-only model)', async () => {
      await rejectsWith(
        client.chat.completions.create({ model: TEXT_ONLY, messages: [{ role: 'user', content: 'x' }], tools: [WEATHER_TOOL] }),
        OpenAI.BadRequestError,
        400,
        'invalid_parameter',
        'tools',
      );
    });

    test('401 for a bad key, 403 for a key without chat.completions', async () => {
      const stranger = new OpenAI({ apiKey: 'sk-not-a-real-key', baseURL: server.baseUrl, maxRetries: 0 });
      await assert.rejects(
        stranger.chat.completions.create({ model: BUILTIN, messages: [{ role: 'user', content: 'x' }] }),
        OpenAI.AuthenticationError,
      );
      const { key } = await server.createKey({ permissions: ['models'] });
      const limited = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
      await rejectsWith(
        limited.chat.completions.create({ model: BUILTIN, messages: [{ role: 'user', content: 'x' }] }),
        OpenAI.PermissionDeniedError,
        403,
        'permission_denied',
      );
    });

    test('404 for an unknown model', async () => {
      await rejectsWith(
        client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
        OpenAI.NotFoundError,
        404,
        'model_not_found',
        'model',
      );
    });

    test('429 and 500 from the upstream reach the SDK as RateLimitError and InternalServerError, without upstream secrets', async () => {
      openai.enqueue({ type: 'error', status: 429, message: 'Slow down', headers: { 'retry-after': '1' } });
      await assert.rejects(
        client.chat.completions.create({ model: VIA_OPENAI, messages: [{ role: 'user', content: 'x' }] }),
        (error: unknown) => {
          assert.ok(error instanceof OpenAI.RateLimitError);
          assert.ok(error.headers.get('retry-after') !== null);
          return true;
        },
      );
      openai.enqueue({ type: 'error', status: 503, message: `backend at ${openai.baseUrl} is down` });
      await assert.rejects(
        client.chat.completions.create({ model: VIA_OPENAI, messages: [{ role: 'user', content: 'x' }] }),
        (error: unknown) => {
          assert.ok(error instanceof OpenAI.InternalServerError);
          assert.equal(error.status, 500);
          assert.doesNotMatch(error.message, /127\.0\.0\.1|sk-upstream/);
          return true;
        },
      );
    });

    test('a stream cut by the upstream ends with an error the SDK throws, never a hang or a [DONE]', async () => {
      openai.enqueue({
        type: 'reply',
        reply: { text: 'this stream will be cut in the middle of its words' },
        interrupt: { afterEvents: 4, how: 'reset' },
      });
      const stream = await client.chat.completions.create({ model: VIA_OPENAI, messages: [{ role: 'user', content: 'x' }], stream: true });
      let text = '';
      await assert.rejects(
        async () => {
          for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
        },
        (error: unknown) => {
          assert.ok(error instanceof OpenAI.APIError);
          assert.equal(error.type, 'server_error');
          assert.doesNotMatch(error.message, /127\.0\.0\.1|sk-upstream/);
          return true;
        },
      );
      assert.ok(text.length > 0, 'the first deltas arrived before the error');
      openai.enqueue({ type: 'reply', reply: { text: 'cut again' }, interrupt: { afterEvents: 2, how: 'reset' } });
      const { text: raw } = await rawPost({ model: VIA_OPENAI, messages: [{ role: 'user', content: 'x' }], stream: true });
      const blocks = parseSse(raw).filter((block) => !block.comment);
      assert.equal(
        blocks.some((block) => block.data === '[DONE]'),
        false,
      );
      assert.ok((JSON.parse(blocks.at(-1)!.data) as { error?: { code: string } }).error?.code);
    });
  });

  describe('SDK retries', () => {
    test('the SDK retries a 429 and then succeeds', async () => {
      const retrying = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 2 });
      openai.enqueue({ type: 'error', status: 429, message: 'Slow down', headers: { 'retry-after-ms': '10' } });
      const completion = await retrying.chat.completions.create({ model: VIA_OPENAI, messages: [{ role: 'user', content: 'retry me' }] });
      assert.equal(completion.choices[0]?.message.content, 'Mock: retry me');
      assert.equal(openai.requests.length, 2);
    });

    test('the SDK retries a 500 and then succeeds', async () => {
      const retrying = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 2 });
      openai.enqueue({ type: 'error', status: 500, message: 'boom' });
      const completion = await retrying.chat.completions.create({ model: VIA_OPENAI, messages: [{ role: 'user', content: 'again' }] });
      assert.equal(completion.choices[0]?.message.content, 'Mock: again');
      assert.equal(openai.requests.length, 2);
    });
  });
});
