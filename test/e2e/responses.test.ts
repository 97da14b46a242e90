// The response-style endpoint end to end: a real server, the official `openai` SDK (and raw fetch where
// the wire itself is the subject), the built-in model and mock upstreams of both remote provider kinds
// (OpenAI-compatible and Anthropic) speaking their exact wire formats; stored conversations in the
// server's real database, across a restart.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { MockAnthropicServer, MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { RESPONSE_SPEC_FIELDS } from '../formats/openai-responses/spec-fields.ts';

const BUILTIN = 'switchyard-echo';
const VIA_OPENAI = 'mock-openai-model';
const VIA_ANTHROPIC = 'mock-anthropic-model';
const TEXT_ONLY = 'text-only-model';
const SMALL_CONTEXT = 'small-context-model';
const ALL_CAPABILITIES = ['chat', 'vision', 'function_calling', 'json_mode', 'streaming', 'thinking'] as const;

const SPEC_FIELDS = [...RESPONSE_SPEC_FIELDS, '_metadata'];

const WEATHER_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather for a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

const Weather = z.object({ city: z.string(), temperature: z.number(), sunny: z.boolean() });

interface SseEventBlock {
  event: string | undefined;
  data: Record<string, any>;
}

/** Parses an SSE body into events (comments dropped). */
function parseSse(text: string): SseEventBlock[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '' && !block.startsWith(':'))
    .map((block) => {
      const lines = block.split('\n');
      const data = lines
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length))
        .join('\n');
      return {
        event: lines.find((line) => line.startsWith('event: '))?.slice('event: '.length),
        data: JSON.parse(data) as Record<string, any>,
      };
    });
}

/** Asserts an SDK error: its class, HTTP status, SPEC code and param. */
function isApiError(status: number, code: string, param?: string | null): (error: unknown) => true {
  return (error: unknown) => {
    assert.ok(error instanceof OpenAI.APIError, `expected an APIError, got ${String(error)}`);
    assert.equal(error.status, status, error.message);
    assert.equal(error.code, code, error.message);
    if (param !== undefined) assert.equal(error.param, param, error.message);
    return true;
  };
}

describe('POST /v1/responses end to end', () => {
  let server: TestServer;
  let openai: MockOpenAIServer;
  let anthropic: MockAnthropicServer;
  let client: OpenAI;

  async function rawRequest(
    method: string,
    path: string,
    body?: unknown,
    key = server.key,
  ): Promise<{ status: number; headers: Headers; text: string }> {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  before(async () => {
    openai = await new MockOpenAIServer().start();
    anthropic = await new MockAnthropicServer().start();
    server = await startTestServer({
      config: {
        providers: {
          'mock-openai': { kind: 'openai-compatible', baseUrl: openai.baseUrl, apiKey: 'sk-upstream-secret', maxRetries: 0 },
          'mock-anthropic': { kind: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant-upstream-secret', maxRetries: 0 },
        },
        models: [
          { id: VIA_OPENAI, provider: 'mock-openai', upstreamModel: 'gpt-mock', capabilities: [...ALL_CAPABILITIES] },
          {
            id: VIA_ANTHROPIC,
            provider: 'mock-anthropic',
            upstreamModel: 'claude-mock',
            capabilities: [...ALL_CAPABILITIES],
            contextWindow: 200_000,
          },
          { id: TEXT_ONLY, provider: 'mock-openai', upstreamModel: 'gpt-mock', capabilities: ['chat'] },
          {
            id: SMALL_CONTEXT,
            provider: 'mock-openai',
            upstreamModel: 'gpt-mock',
            capabilities: ['chat', 'streaming'],
            contextWindow: 400,
          },
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

  describe('create', () => {
    test('the built-in model: the SPEC Response object, field for field, with _metadata', async () => {
      const { data: response, response: http } = await client.responses
        .create({
          model: BUILTIN,
          input: 'Hello there',
          max_output_tokens: 64,
          instructions: 'Be brief.',
          metadata: { ticket: '42' },
          user: 'end-user-1',
        })
        .withResponse();
      assert.deepEqual(
        Object.keys(response).filter((key) => key !== 'output_text'),
        SPEC_FIELDS,
      );
      assert.match(response.id, /^resp_[0-9a-f]{48}$/);
      assert.equal(response.object, 'response');
      assert.ok(Number.isInteger(response.created_at));
      assert.equal(response.status, 'completed');
      assert.equal(response.error, null);
      assert.equal(response.incomplete_details, null);
      assert.equal(response.instructions, 'Be brief.');
      assert.equal(response.max_output_tokens, 64);
      assert.equal(response.model, BUILTIN);
      assert.equal(response.output_text, 'Echo: Hello there');
      const message = response.output[0]!;
      assert.equal(message.type, 'message');
      assert.match(message.id!, /^msg_[0-9a-f]{48}$/);
      assert.deepEqual(message.type === 'message' ? message.content : [], [
        { type: 'output_text', text: 'Echo: Hello there', annotations: [] },
      ]);
      assert.equal(response.parallel_tool_calls, true);
      assert.equal(response.previous_response_id, null);
      assert.deepEqual(response.reasoning, { effort: null, summary: null });
      assert.equal((response as unknown as { store: boolean }).store, true);
      assert.equal(response.temperature, 0.7);
      assert.deepEqual(response.text, { format: { type: 'text' } });
      assert.equal(response.tool_choice, 'auto');
      assert.deepEqual(response.tools, []);
      assert.equal(response.top_p, 1);
      assert.equal(response.truncation, 'disabled');
      assert.equal(response.user, 'end-user-1');
      assert.deepEqual(response.metadata, { ticket: '42' });
      const usage = response.usage!;
      assert.ok(usage.input_tokens > 0 && usage.output_tokens > 0);
      assert.equal(usage.total_tokens, usage.input_tokens + usage.output_tokens);
      assert.deepEqual(Object.keys(usage.input_tokens_details).sort(), [
        'audio_tokens',
        'cache_write_tokens',
        'cached_tokens',
        'text_tokens',
      ]);
      assert.deepEqual(Object.keys(usage.output_tokens_details).sort(), ['audio_tokens', 'reasoning_tokens', 'text_tokens']);
      const metadata = (response as unknown as { _metadata: Record<string, unknown> })._metadata;
      assert.equal(metadata['status'], true);
      assert.equal(http.headers.get('x-request-id'), metadata['request_id']);
    });

    test('through an OpenAI-compatible upstream: instructions, sampling and the token cap reach it', async () => {
      const response = await client.responses.create({
        model: VIA_OPENAI,
        instructions: 'Answer in French.',
        input: 'Good morning',
        max_output_tokens: 50,
        top_p: 0.9,
      });
      assert.equal(response.output_text, 'Mock: Good morning');
      const body = openai.requests[0]!.body as Record<string, any>;
      assert.equal(body['model'], 'gpt-mock');
      assert.deepEqual(
        body['messages'].map((message: { role: string }) => message.role),
        ['system', 'user'],
      );
      assert.equal(body['temperature'], 0.7, 'the SPEC default temperature is sent');
      assert.equal(body['top_p'], 0.9);
      assert.equal(body['max_completion_tokens'] ?? body['max_tokens'], 50);
    });

    test('through an Anthropic upstream: reasoning.effort becomes a thinking budget; the signature comes back as encrypted_content', async () => {
      anthropic.enqueue({ type: 'reply', reply: { thinking: { text: 'Considering.', signature: 'sig-anthropic' }, text: 'Bonjour.' } });
      const response = await client.responses.create({
        model: VIA_ANTHROPIC,
        input: 'Hello',
        max_output_tokens: 20_000,
        reasoning: { effort: 'high' },
      });
      const body = anthropic.requests[0]!.body as Record<string, any>;
      assert.deepEqual(body['thinking'], { type: 'enabled', budget_tokens: 16_384 });
      assert.equal(body['max_tokens'], 20_000);
      assert.equal(response.output_text, 'Bonjour.');
      const reasoning = response.output[0]!;
      assert.equal(reasoning.type, 'reasoning');
      assert.match(reasoning.id, /^rs_[0-9a-f]{48}$/);
      assert.equal(reasoning.type === 'reasoning' ? reasoning.encrypted_content : undefined, 'sig-anthropic');
      assert.deepEqual(reasoning.type === 'reasoning' ? reasoning.content : undefined, [{ type: 'reasoning_text', text: 'Considering.' }]);
      assert.deepEqual(response.reasoning, { effort: 'high', summary: null });
    });

    test('an answer cut by max_output_tokens is incomplete with the reason', async () => {
      const response = await client.responses.create({
        model: BUILTIN,
        input: 'one two three four five six seven eight nine ten',
        max_output_tokens: 3,
      });
      assert.equal(response.status, 'incomplete');
      assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
      assert.equal(response.output[0]!.type === 'message' ? response.output[0]!.status : '', 'incomplete');
    });

    test('max_tokens, the deprecated alias, works and the answer carries a deprecation warning', async () => {
      const raw = await rawRequest('POST', '/responses', { model: BUILTIN, input: 'Hi', max_tokens: 20 });
      assert.equal(raw.status, 200);
      assert.equal(JSON.parse(raw.text).max_output_tokens, 20);
      assert.equal(raw.headers.get('deprecation'), 'true');
      assert.match(raw.headers.get('warning') ?? '', /^299 .*max_tokens.*deprecated/);
      const current = await rawRequest('POST', '/responses', { model: BUILTIN, input: 'Hi', max_output_tokens: 20 });
      assert.equal(current.headers.get('deprecation'), null);
    });

    test('valid parameters that are not honoured are named in a header', async () => {
      const raw = await rawRequest('POST', '/responses', {
        model: BUILTIN,
        input: 'Hi',
        max_output_tokens: 20,
        text: { verbosity: 'low' },
      });
      assert.equal(raw.status, 200);
      assert.equal(raw.headers.get('x-switchyard-ignored-parameters'), 'text.verbosity');
    });
  });

  describe('streaming', () => {
    for (const model of [BUILTIN, VIA_OPENAI, VIA_ANTHROPIC]) {
      test(`responses.stream() with finalResponse() through ${model}`, async () => {
        const stream = client.responses.stream({ model, input: 'stream this please', max_output_tokens: 64 });
        const deltas: string[] = [];
        const types: string[] = [];
        stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
        stream.on('event', (event) => types.push(event.type));
        const final = await stream.finalResponse();
        const expected = model === BUILTIN ? 'Echo: stream this please' : 'Mock: stream this please';
        assert.equal(final.output_text, expected);
        assert.equal(deltas.join(''), expected);
        assert.equal(final.status, 'completed');
        assert.ok((final.usage?.total_tokens ?? 0) > 0);
        assert.deepEqual(types.slice(0, 4), [
          'response.created',
          'response.in_progress',
          'response.output_item.added',
          'response.content_part.added',
        ]);
        assert.equal(types.at(-1), 'response.completed');
        // Stored before the stream ended.
        assert.equal((await client.responses.retrieve(final.id)).output_text, expected);
      });
    }

    test('the wire: event lines equal the type, sequence numbers increase on every event, no [DONE]', async () => {
      const raw = await rawRequest('POST', '/responses', { model: BUILTIN, input: 'wire check', max_output_tokens: 64, stream: true });
      assert.equal(raw.status, 200);
      assert.match(raw.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.ok(!raw.text.includes('[DONE]'));
      const events = parseSse(raw.text);
      events.forEach((event, index) => {
        assert.equal(event.event, event.data['type']);
        assert.equal(event.data['sequence_number'], index);
      });
      const completed = events.at(-1)!.data;
      assert.equal(completed['type'], 'response.completed');
      const item = completed['response'].output[0];
      for (const event of events.filter((candidate) => 'item_id' in candidate.data)) assert.equal(event.data['item_id'], item.id);
    });

    test('a stream cut by the upstream after it began ends with response.failed, and the failed response is stored', async () => {
      openai.enqueue({ type: 'reply', reply: { text: 'one two three four five six' }, interrupt: { afterEvents: 3, how: 'reset' } });
      const stream = client.responses.stream({ model: VIA_OPENAI, input: 'cut me', max_output_tokens: 64 });
      const types: string[] = [];
      stream.on('event', (event) => types.push(event.type));
      const final = await stream.finalResponse();
      assert.equal(final.status, 'failed');
      assert.equal(final.error?.code, 'server_error');
      assert.equal(types.at(-1), 'response.failed');
      assert.doesNotMatch(JSON.stringify(final), /127\.0\.0\.1|sk-upstream-secret/);
      assert.equal((await client.responses.retrieve(final.id)).status, 'failed');
    });
  });

  describe('function calling across two turns with previous_response_id', () => {
    test('the built-in model: a forced call, then its output continues the stored conversation', async () => {
      const first = await client.responses.create({
        model: BUILTIN,
        input: 'Weather in Paris?',
        max_output_tokens: 64,
        tools: [WEATHER_TOOL],
        tool_choice: 'required',
      });
      const call = first.output.find((item) => item.type === 'function_call');
      assert.ok(call !== undefined && call.type === 'function_call');
      assert.match(call.id!, /^fc_[0-9a-f]{48}$/);
      assert.equal(call.name, 'get_weather');
      assert.ok(typeof JSON.parse(call.arguments).city === 'string');
      const second = await client.responses.create({
        model: BUILTIN,
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temperature":21}' }],
        max_output_tokens: 64,
        tools: [WEATHER_TOOL],
      });
      assert.equal(second.previous_response_id, first.id);
      assert.equal(second.output_text, 'Echo: {"temperature":21}');
    });

    test('through an OpenAI-compatible upstream: the second request carries the whole chain, not the old instructions', async () => {
      openai.enqueue({ type: 'reply', reply: { toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: { city: 'Paris' } }] } });
      const first = await client.responses.create({
        model: VIA_OPENAI,
        instructions: 'Use tools.',
        input: 'Weather in Paris?',
        max_output_tokens: 64,
        tools: [WEATHER_TOOL],
      });
      const call = first.output[0]!;
      assert.ok(call.type === 'function_call');
      assert.equal(call.call_id, 'call_w1');
      assert.equal(call.arguments, '{"city":"Paris"}');
      const second = await client.responses.create({
        model: VIA_OPENAI,
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: 'call_w1', output: 'sunny, 21 C' }],
        max_output_tokens: 64,
        tools: [WEATHER_TOOL],
      });
      assert.ok(second.output_text.startsWith('Mock:'));
      const messages = (openai.requests[1]!.body as { messages: Array<Record<string, any>> }).messages;
      assert.deepEqual(
        messages.map((message) => message['role']),
        ['user', 'assistant', 'tool'],
        'no system message: instructions are not carried over',
      );
      assert.equal(messages[1]!['tool_calls'][0].id, 'call_w1');
      assert.equal(messages[2]!['tool_call_id'], 'call_w1');
      assert.equal(messages[2]!['content'], 'sunny, 21 C');
    });

    test('through an Anthropic upstream, streamed: tool_use then tool_result, with the thinking signature sent back', async () => {
      anthropic.enqueue({
        type: 'reply',
        reply: {
          thinking: { text: 'Need the weather.', signature: 'sig-1' },
          toolUses: [{ id: 'toolu_w1', name: 'get_weather', input: { city: 'Rome' } }],
        },
      });
      const first = await client.responses
        .stream({
          model: VIA_ANTHROPIC,
          input: 'Weather in Rome?',
          max_output_tokens: 4096,
          tools: [WEATHER_TOOL],
          reasoning: { effort: 'low' },
        })
        .finalResponse();
      assert.deepEqual(
        first.output.map((item) => item.type),
        ['reasoning', 'function_call'],
      );
      const second = await client.responses
        .stream({
          model: VIA_ANTHROPIC,
          previous_response_id: first.id,
          input: [{ type: 'function_call_output', call_id: 'toolu_w1', output: 'rainy' }],
          max_output_tokens: 4096,
          tools: [WEATHER_TOOL],
          reasoning: { effort: 'low' },
        })
        .finalResponse();
      assert.equal(second.status, 'completed');
      const messages = (anthropic.requests[1]!.body as { messages: Array<{ role: string; content: Array<Record<string, any>> }> }).messages;
      assert.deepEqual(
        messages.map((message) => message.role),
        ['user', 'assistant', 'user'],
      );
      assert.deepEqual(messages[1]!.content[0], { type: 'thinking', thinking: 'Need the weather.', signature: 'sig-1' });
      assert.equal(messages[1]!.content[1]!['type'], 'tool_use');
      assert.equal(messages[2]!.content[0]!['type'], 'tool_result');
      assert.equal(messages[2]!.content[0]!['tool_use_id'], 'toolu_w1');
    });

    test('a function_call_output that answers nothing in the chain is 400 invalid_messages', async () => {
      const first = await client.responses.create({ model: BUILTIN, input: 'Hi', max_output_tokens: 32 });
      await assert.rejects(
        client.responses.create({
          model: BUILTIN,
          previous_response_id: first.id,
          input: [{ type: 'function_call_output', call_id: 'call_nope', output: 'x' }],
          max_output_tokens: 32,
        }),
        isApiError(400, 'invalid_messages', 'input[0].call_id'),
      );
    });
  });

  describe('json_schema output', () => {
    test('responses.parse() with a zod text format on the built-in model', async () => {
      const parsed = await client.responses.parse({
        model: BUILTIN,
        input: 'Weather in Paris',
        max_output_tokens: 200,
        text: { format: zodTextFormat(Weather, 'weather') },
      });
      assert.equal(parsed.status, 'completed');
      assert.ok(Weather.safeParse(parsed.output_parsed).success);
      assert.equal(parsed.text?.format?.type, 'json_schema');
    });

    test('through an OpenAI-compatible upstream: the schema reaches it as response_format; streamed and parsed', async () => {
      openai.enqueue({ type: 'reply', reply: { text: '{"city":"Paris","temperature":21,"sunny":true}' } });
      const final = await client.responses
        .stream({
          model: VIA_OPENAI,
          input: 'Weather in Paris',
          max_output_tokens: 200,
          text: { format: zodTextFormat(Weather, 'weather') },
        })
        .finalResponse();
      assert.deepEqual(final.output_parsed, { city: 'Paris', temperature: 21, sunny: true });
      const body = openai.requests[0]!.body as Record<string, any>;
      assert.equal(body['response_format'].type, 'json_schema');
      assert.equal(body['response_format'].json_schema.name, 'weather');
    });
  });

  describe('stored responses', () => {
    test('retrieve, input_items with cursor pages, delete', async () => {
      const input = ['one', 'two', 'three', 'four', 'five'].map((text) => ({ role: 'user' as const, content: text }));
      const created = await client.responses.create({ model: BUILTIN, input, max_output_tokens: 32 });
      const retrieved = await client.responses.retrieve(created.id);
      assert.equal(retrieved.id, created.id);
      assert.equal(retrieved.output_text, 'Echo: five');
      assert.deepEqual(retrieved.output, created.output);

      const ascending: string[] = [];
      for await (const item of client.responses.inputItems.list(created.id, { order: 'asc', limit: 2 })) {
        assert.ok(item.type === 'message');
        assert.match(item.id, /^msg_[0-9a-f]{48}$/);
        ascending.push(item.type === 'message' && item.content[0]?.type === 'input_text' ? item.content[0].text : '');
      }
      assert.deepEqual(ascending, ['one', 'two', 'three', 'four', 'five']);
      const firstPage = await client.responses.inputItems.list(created.id, { limit: 2 });
      assert.equal(firstPage.data.length, 2);
      assert.equal(firstPage.has_more, true);
      assert.equal(
        firstPage.data[0]!.type === 'message' && firstPage.data[0]!.content[0]?.type === 'input_text'
          ? firstPage.data[0]!.content[0].text
          : '',
        'five',
        'desc by default',
      );
      const raw = JSON.parse((await rawRequest('GET', `/responses/${created.id}/input_items?limit=2&order=asc`)).text);
      assert.deepEqual(Object.keys(raw).sort(), ['_metadata', 'data', 'first_id', 'has_more', 'last_id', 'object']);
      assert.equal(raw.first_id, raw.data[0].id);
      assert.equal(raw.last_id, raw.data[1].id);

      const deleted = (await client.responses.delete(created.id)) as unknown as Record<string, unknown>;
      assert.deepEqual(
        { id: deleted['id'], object: deleted['object'], deleted: deleted['deleted'] },
        { id: created.id, object: 'response', deleted: true },
      );
      await assert.rejects(client.responses.retrieve(created.id), isApiError(404, 'response_not_found'));
      const rawDelete = await rawRequest('DELETE', `/responses/${created.id}`);
      assert.equal(rawDelete.status, 404);
    });

    test('the raw delete answer is {id, object: response, deleted: true}', async () => {
      const created = await client.responses.create({ model: BUILTIN, input: 'bye', max_output_tokens: 16 });
      const raw = await rawRequest('DELETE', `/responses/${created.id}`);
      assert.equal(raw.status, 200);
      const body = JSON.parse(raw.text);
      assert.deepEqual({ id: body.id, object: body.object, deleted: body.deleted }, { id: created.id, object: 'response', deleted: true });
    });

    test('store: false is not stored and cannot be continued', async () => {
      const created = await client.responses.create({ model: BUILTIN, input: 'ephemeral', max_output_tokens: 16, store: false });
      assert.equal((created as unknown as { store: boolean }).store, false);
      await assert.rejects(client.responses.retrieve(created.id), isApiError(404, 'response_not_found'));
      await assert.rejects(
        client.responses.create({ model: BUILTIN, input: 'more', max_output_tokens: 16, previous_response_id: created.id }),
        isApiError(400, 'invalid_parameter', 'previous_response_id'),
      );
    });

    test('another organization sees none of it', async () => {
      const created = await client.responses.create({ model: BUILTIN, input: 'private', max_output_tokens: 16 });
      const other = await server.createKey({ organization: 'org-other' });
      const otherClient = new OpenAI({ apiKey: other.key, baseURL: server.baseUrl, maxRetries: 0 });
      await assert.rejects(otherClient.responses.retrieve(created.id), isApiError(404, 'response_not_found'));
      await assert.rejects(otherClient.responses.inputItems.list(created.id), isApiError(404, 'response_not_found'));
      await assert.rejects(otherClient.responses.delete(created.id), isApiError(404, 'response_not_found'));
      await assert.rejects(
        otherClient.responses.create({ model: BUILTIN, input: 'steal', max_output_tokens: 16, previous_response_id: created.id }),
        isApiError(400, 'invalid_parameter', 'previous_response_id'),
      );
      assert.equal((await client.responses.retrieve(created.id)).id, created.id);
    });

    test('a three-turn conversation prepends every earlier turn, oldest first', async () => {
      const first = await client.responses.create({ model: VIA_OPENAI, input: 'turn one', max_output_tokens: 32 });
      const second = await client.responses.create({
        model: VIA_OPENAI,
        input: 'turn two',
        max_output_tokens: 32,
        previous_response_id: first.id,
      });
      await client.responses.create({ model: VIA_OPENAI, input: 'turn three', max_output_tokens: 32, previous_response_id: second.id });
      const messages = (openai.requests[2]!.body as { messages: Array<{ role: string; content: unknown }> }).messages;
      assert.deepEqual(
        messages.map((message) => [message.role, typeof message.content === 'string' ? message.content : JSON.stringify(message.content)]),
        [
          ['user', 'turn one'],
          ['assistant', 'Mock: turn one'],
          ['user', 'turn two'],
          ['assistant', 'Mock: turn two'],
          ['user', 'turn three'],
        ],
      );
    });
  });

  describe('truncation', () => {
    const longTurns = Array.from({ length: 6 }, (_, index) => [
      { role: 'user' as const, content: `question ${index} ${'lorem ipsum dolor sit amet '.repeat(8)}` },
      { role: 'assistant' as const, content: `answer ${index} ${'consectetur adipiscing elit '.repeat(8)}` },
    ]).flat();

    test('disabled (the default): an input longer than the context window is a clear 400 on input', async () => {
      await assert.rejects(
        client.responses.create({ model: SMALL_CONTEXT, input: [...longTurns, { role: 'user', content: 'last' }], max_output_tokens: 50 }),
        (error: unknown) => {
          isApiError(400, 'invalid_parameter', 'input')(error);
          assert.match((error as Error).message, /too long/);
          return true;
        },
      );
      assert.equal(openai.requests.length, 0);
    });

    test('auto: the oldest turns are dropped and the last user turn is kept', async () => {
      const response = await client.responses.create({
        model: SMALL_CONTEXT,
        input: [...longTurns, { role: 'user', content: 'last' }],
        max_output_tokens: 50,
        truncation: 'auto',
      });
      assert.equal(response.truncation, 'auto');
      assert.equal(response.output_text, 'Mock: last');
      const messages = (openai.requests[0]!.body as { messages: Array<{ role: string; content: string }> }).messages;
      assert.ok(messages.length < longTurns.length + 1);
      assert.equal(messages[0]!.role, 'user');
      assert.equal(messages.at(-1)!.content, 'last');
    });
  });

  describe('errors', () => {
    test('request mistakes are 400 with the SPEC code and param', async () => {
      await assert.rejects(
        client.responses.create({ model: BUILTIN, input: 'x' }),
        isApiError(400, 'missing_parameter', 'max_output_tokens'),
      );
      await assert.rejects(
        client.responses.create({ model: BUILTIN, input: 'x', max_output_tokens: 0 }),
        isApiError(400, 'invalid_parameter', 'max_output_tokens'),
      );
      await assert.rejects(
        client.responses.create({ model: BUILTIN, input: 'x', max_output_tokens: 5, temperature: 1.5 }),
        isApiError(400, 'invalid_parameter', 'temperature'),
      );
      await assert.rejects(
        client.responses.create({ model: BUILTIN, input: 'x', max_output_tokens: 5, tools: [{ type: 'web_search' }] }),
        isApiError(400, 'invalid_parameter', 'tools[0].type'),
      );
      await assert.rejects(
        client.responses.create({
          model: BUILTIN,
          input: 'x',
          max_output_tokens: 5,
          metadata: Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v'])),
        }),
        isApiError(400, 'invalid_parameter', 'metadata'),
      );
      await assert.rejects(
        client.responses.create({
          model: BUILTIN,
          input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1', detail: 'auto' }] }],
          max_output_tokens: 5,
        }),
        isApiError(400, 'invalid_parameter', 'input[0].content[0].file_id'),
      );
      await assert.rejects(
        client.responses.create({ model: BUILTIN, input: 'x', max_output_tokens: 5, previous_response_id: 'resp_unknown' }),
        isApiError(400, 'invalid_parameter', 'previous_response_id'),
      );
      const raw = await rawRequest('POST', '/responses', { model: BUILTIN, input: 'x' });
      const body = JSON.parse(raw.text);
      assert.deepEqual(Object.keys(body).sort(), ['error', 'info_metadata']);
      assert.equal(body.error.type, 'invalid_request_error');
    });

    test('model errors: unknown is 404, a missing capability is 400 naming the response-style field', async () => {
      await assert.rejects(
        client.responses.create({ model: 'no-such-model', input: 'x', max_output_tokens: 5 }),
        isApiError(404, 'model_not_found', 'model'),
      );
      await assert.rejects(
        client.responses.create({ model: TEXT_ONLY, input: 'x', max_output_tokens: 5, tools: [WEATHER_TOOL] }),
        isApiError(400, 'invalid_parameter', 'tools'),
      );
      await assert.rejects(
        client.responses.create({ model: TEXT_ONLY, input: 'x', max_output_tokens: 5, text: { format: { type: 'json_object' } } }),
        isApiError(400, 'invalid_parameter', 'text.format'),
      );
      await assert.rejects(
        client.responses.create({ model: TEXT_ONLY, input: 'x', max_output_tokens: 5, reasoning: { effort: 'low' } }),
        isApiError(400, 'invalid_parameter', 'reasoning.effort'),
      );
      await assert.rejects(
        client.responses.create({ model: TEXT_ONLY, input: 'x', max_output_tokens: 5, stream: true }),
        isApiError(400, 'invalid_parameter', 'stream'),
      );
      await assert.rejects(
        client.responses.create({
          model: TEXT_ONLY,
          input: [
            {
              role: 'user',
              content: [
                { type: 'input_text', text: 'see' },
                { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' },
              ],
            },
          ],
          max_output_tokens: 5,
        }),
        isApiError(400, 'invalid_parameter', 'input[0].content[1]'),
      );
    });

    test('auth: a bad key is 401, a key without the responses permission 403', async () => {
      const bad = new OpenAI({ apiKey: 'sk-not-a-key', baseURL: server.baseUrl, maxRetries: 0 });
      await assert.rejects(bad.responses.create({ model: BUILTIN, input: 'x', max_output_tokens: 5 }), OpenAI.AuthenticationError);
      const limited = await server.createKey({ permissions: ['models'] });
      const limitedClient = new OpenAI({ apiKey: limited.key, baseURL: server.baseUrl, maxRetries: 0 });
      await assert.rejects(
        limitedClient.responses.create({ model: BUILTIN, input: 'x', max_output_tokens: 5 }),
        OpenAI.PermissionDeniedError,
      );
      await assert.rejects(limitedClient.responses.retrieve('resp_x'), OpenAI.PermissionDeniedError);
    });

    test('upstream failures before the answer starts: 429 stays 429, 5xx is 500, streaming or not, without leaking the upstream', async () => {
      openai.enqueue({ type: 'error', status: 429, message: 'slow down', headers: { 'retry-after': '1' } });
      await assert.rejects(client.responses.create({ model: VIA_OPENAI, input: 'x', max_output_tokens: 5 }), OpenAI.RateLimitError);
      openai.enqueue({ type: 'error', status: 503, message: 'down at http://10.0.0.1 with sk-upstream-secret' });
      await assert.rejects(client.responses.create({ model: VIA_OPENAI, input: 'x', max_output_tokens: 5 }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.InternalServerError);
        assert.doesNotMatch(error.message, /10\.0\.0\.1|sk-upstream-secret/);
        return true;
      });
      anthropic.enqueue({ type: 'error', status: 500, message: 'boom' });
      await assert.rejects(
        client.responses.stream({ model: VIA_ANTHROPIC, input: 'x', max_output_tokens: 5 }).finalResponse(),
        OpenAI.InternalServerError,
      );
    });

    test('GET with stream=true is refused clearly; unknown ids are 404', async () => {
      const created = await client.responses.create({ model: BUILTIN, input: 'x', max_output_tokens: 8 });
      const raw = await rawRequest('GET', `/responses/${created.id}?stream=true`);
      assert.equal(raw.status, 400);
      assert.equal(JSON.parse(raw.text).error.param, 'stream');
      await assert.rejects(client.responses.inputItems.list('resp_unknown'), isApiError(404, 'response_not_found'));
      await assert.rejects(client.responses.delete('resp_unknown'), OpenAI.NotFoundError);
    });
  });
});

describe('a stored conversation survives a server restart', () => {
  let openai: MockOpenAIServer;
  let dataDir: string;
  const running: TestServer[] = [];

  before(async () => {
    openai = await new MockOpenAIServer().start();
    dataDir = mkdtempSync(join(tmpdir(), 'switchyard-responses-restart-'));
  });
  after(async () => {
    for (const server of running) await server.close();
    await openai.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(): Promise<TestServer> {
    const server = await startTestServer({
      config: {
        dataDir,
        providers: { 'mock-openai': { kind: 'openai-compatible', baseUrl: openai.baseUrl, maxRetries: 0 } },
        models: [{ id: VIA_OPENAI, provider: 'mock-openai', upstreamModel: 'gpt-mock', capabilities: [...ALL_CAPABILITIES] }],
      },
    });
    running.push(server);
    return server;
  }

  test('turn one, restart on the same data directory, turn two continues it with nothing lost', async () => {
    const firstServer = await start();
    const firstClient = new OpenAI({ apiKey: firstServer.key, baseURL: firstServer.baseUrl, maxRetries: 0 });
    openai.enqueue({ type: 'reply', reply: { toolCalls: [{ id: 'call_r1', name: 'get_weather', arguments: { city: 'Oslo' } }] } });
    const first = await firstClient.responses.create({
      model: VIA_OPENAI,
      input: 'Weather in Oslo?',
      max_output_tokens: 64,
      tools: [WEATHER_TOOL],
    });
    await firstServer.runtime.close();

    const afterRestart = await start();
    const client = new OpenAI({ apiKey: afterRestart.key, baseURL: afterRestart.baseUrl, maxRetries: 0 });
    const withoutMetadata = (response: object): Record<string, unknown> => {
      const { _metadata: _ignored, ...rest } = response as Record<string, unknown>;
      return rest;
    };
    assert.deepEqual(withoutMetadata(await client.responses.retrieve(first.id)), withoutMetadata(first), 'the stored response is intact');
    const second = await client.responses
      .stream({
        model: VIA_OPENAI,
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: 'call_r1', output: 'snow' }],
        max_output_tokens: 64,
        tools: [WEATHER_TOOL],
      })
      .finalResponse();
    assert.equal(second.status, 'completed');
    const messages = (openai.requests.at(-1)!.body as { messages: Array<Record<string, any>> }).messages;
    assert.deepEqual(
      messages.map((message) => message['role']),
      ['user', 'assistant', 'tool'],
    );
    assert.equal(messages[0]!['content'], 'Weather in Oslo?');
    assert.equal(messages[1]!['tool_calls'][0].id, 'call_r1');
    const items = await client.responses.inputItems.list(second.id);
    assert.deepEqual(
      items.data.map((item) => item.type),
      ['function_call_output'],
    );
  });
});
