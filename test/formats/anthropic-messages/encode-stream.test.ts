import { sequenceBlocks } from '../../../src/core/sequence-blocks.ts';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { MessageStream as MessageStream0x } from 'anthropic-sdk-0x/lib/MessageStream';
import { encodeMessagesStream, messagesPingEvent } from '../../../src/formats/anthropic-messages/encode-stream.ts';
import { encodeMessagesResponse } from '../../../src/formats/anthropic-messages/encode-response.ts';
import { assembleResult } from '../../../src/core/assemble-result.ts';
import { serverError, ServiceError } from '../../../src/core/service-error.ts';
import type { StreamPart } from '../../../src/core/stream-parts.ts';
import { answeredUsage, type Usage } from '../../../src/core/usage.ts';
import type { SseEvent } from '../../../src/core/sse-event.ts';

const OPTIONS = { model: 'claude-test', messageId: 'msg_test' };

function usage(inputTokens: number, outputTokens: number, cached = 0, cacheWrite = 0): Usage {
  return { ...answeredUsage(), inputTokens, cachedInputTokens: cached, cacheWriteInputTokens: cacheWrite, outputTokens };
}

async function* fromParts(parts: StreamPart[], thenThrow?: unknown): AsyncGenerator<StreamPart> {
  for (const part of parts) yield part;
  if (thenThrow !== undefined) throw thenThrow;
}

async function collect(
  parts: StreamPart[],
  options: Parameters<typeof encodeMessagesStream>[1] = OPTIONS,
  thenThrow?: unknown,
): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of encodeMessagesStream(sequenceBlocks(fromParts(parts, thenThrow)), options)) events.push(event);
  return events;
}

type Data = Record<string, unknown> & {
  type: string;
  index?: number;
  delta?: Record<string, unknown>;
  content_block?: Record<string, unknown>;
};

/** An event's payload; the deltas leave as finished JSON text, the other events as objects. */
function payload(event: SseEvent): Data {
  return (typeof event.data === 'string' ? JSON.parse(event.data) : event.data) as Data;
}

function payloads(events: SseEvent[]): Data[] {
  return events.map(payload);
}

/** The wire order of events as compact strings, e.g. `start 0 tool_use`, `delta 0 input_json_delta`, `stop 0`. */
function outline(events: SseEvent[]): string[] {
  return payloads(events).map((data) => {
    switch (data.type) {
      case 'content_block_start':
        return `start ${data.index} ${String(data.content_block?.['type'])}`;
      case 'content_block_delta':
        return `delta ${data.index} ${String(data.delta?.['type'])}`;
      case 'content_block_stop':
        return `stop ${data.index}`;
      default:
        return data.type;
    }
  });
}

/** Structural checks every Anthropic stream must pass: named events, nesting, increasing indexes. */
function assertWellFormed(events: SseEvent[]): void {
  let open: number | undefined;
  let nextIndex = 0;
  for (const event of events) {
    const data = payload(event);
    assert.equal(event.event, data.type, 'every event is named after its payload type');
    if (data.type === 'content_block_start') {
      assert.equal(open, undefined, 'a block starts only after the previous one stopped');
      assert.equal(data.index, nextIndex++, 'indexes increase by one');
      open = data.index;
    } else if (data.type === 'content_block_delta') {
      assert.equal(data.index, open, 'deltas belong to the open block');
    } else if (data.type === 'content_block_stop') {
      assert.equal(data.index, open);
      open = undefined;
    }
  }
  assert.equal(open, undefined, 'no block is left open');
  assert.equal(events[0]?.event, 'message_start');
}

/** Joins the deltas of one block index. */
function joined(events: SseEvent[], index: number, field: 'text' | 'partial_json' | 'thinking' | 'signature'): string {
  return payloads(events)
    .filter((data) => data.type === 'content_block_delta' && data.index === index && typeof data.delta?.[field] === 'string')
    .map((data) => data.delta![field] as string)
    .join('');
}

/** Runs the events' payloads through an Anthropic SDK MessageStream accumulator and returns its final message. */
async function sdkFinalMessage(
  events: SseEvent[],
  Stream: typeof MessageStream | typeof MessageStream0x = MessageStream,
): Promise<unknown> {
  const lines = payloads(events)
    .filter((data) => data.type !== 'ping')
    .map((data) => `${JSON.stringify(data)}\n`)
    .join('');
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(lines));
      controller.close();
    },
  });
  const final = await Stream.fromReadableStream(body as never).finalMessage();
  // Round-trip through JSON: the SDK's tool_use `input` is a lazy getter. `parsed_output` is the SDK's
  // own structured-output helper field (null without an output format), not part of the wire message.
  const { parsed_output: _parsedOutput, ...message } = JSON.parse(JSON.stringify(final)) as Record<string, unknown>;
  return message;
}

const TEXT_PARTS: StreamPart[] = [
  { type: 'response-metadata', upstreamId: 'up-1', upstreamModel: 'gpt-x' },
  { type: 'text-start', id: 't0' },
  { type: 'text-delta', id: 't0', delta: 'Hello' },
  { type: 'text-delta', id: 't0', delta: '' },
  { type: 'text-delta', id: 't0', delta: ', world' },
  { type: 'text-end', id: 't0' },
  { type: 'finish', finishReason: 'stop', usage: usage(12, 4) },
];

describe('encodeMessagesStream', () => {
  test('text: message_start, one block, message_delta with usage, message_stop', async () => {
    const events = await collect(TEXT_PARTS, { ...OPTIONS, inputTokens: 11 });
    assertWellFormed(events);
    assert.deepEqual(outline(events), [
      'message_start',
      'start 0 text',
      'delta 0 text_delta',
      'delta 0 text_delta',
      'stop 0',
      'message_delta',
      'message_stop',
    ]);
    assert.deepEqual(events[0], {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id: 'msg_test',
          type: 'message',
          role: 'assistant',
          model: 'claude-test',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 11, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        },
      },
    });
    assert.deepEqual(events[1]?.data, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    assert.equal(joined(events, 0, 'text'), 'Hello, world');
    assert.deepEqual(events.at(-2), {
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { input_tokens: 12, output_tokens: 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    });
    assert.deepEqual(events.at(-1), { event: 'message_stop', data: { type: 'message_stop' } });
  });

  test('message_start input tokens default to 0 and a new msg_ id is made when none is given', async () => {
    const events = await collect(TEXT_PARTS, { model: 'm' });
    const message = (events[0]?.data as { message: { id: string; usage: { input_tokens: number } } }).message;
    assert.match(message.id, /^msg_[A-Za-z0-9]{24}$/);
    assert.equal(message.usage.input_tokens, 0);
  });

  test('tool_use: input_json_delta fragments join to valid JSON; stop reason tool_use; cache usage split out', async () => {
    const events = await collect([
      { type: 'tool-input-start', id: 'toolu_01A', toolName: 'get_weather' },
      { type: 'tool-input-delta', id: 'toolu_01A', delta: '{"ci' },
      { type: 'tool-input-delta', id: 'toolu_01A', delta: 'ty": "Par' },
      { type: 'tool-input-delta', id: 'toolu_01A', delta: 'is"}' },
      { type: 'tool-input-end', id: 'toolu_01A' },
      { type: 'finish', finishReason: 'tool-calls', usage: usage(100, 20, 60, 30) },
    ]);
    assertWellFormed(events);
    assert.deepEqual(events[1]?.data, {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: {} },
    });
    assert.deepEqual(JSON.parse(joined(events, 0, 'partial_json')), { city: 'Paris' });
    const delta = events.at(-2)?.data as Data;
    assert.deepEqual(delta['delta'], { stop_reason: 'tool_use', stop_sequence: null });
    assert.deepEqual(delta['usage'], { input_tokens: 10, output_tokens: 20, cache_creation_input_tokens: 30, cache_read_input_tokens: 60 });
  });

  test('thinking with signature, redacted thinking, then text', async () => {
    const events = await collect([
      { type: 'reasoning-start', id: 'r0' },
      { type: 'reasoning-delta', id: 'r0', delta: 'Let me ' },
      { type: 'reasoning-delta', id: 'r0', delta: 'think.' },
      { type: 'reasoning-signature', id: 'r0', signature: 'EqQBsig==' },
      { type: 'reasoning-end', id: 'r0' },
      { type: 'reasoning-redacted', id: 'r1', data: 'opaque' },
      { type: 'text-start', id: 't0' },
      { type: 'text-delta', id: 't0', delta: '42' },
      { type: 'text-end', id: 't0' },
      { type: 'finish', finishReason: 'stop', usage: usage(5, 30) },
    ]);
    assertWellFormed(events);
    assert.deepEqual(outline(events), [
      'message_start',
      'start 0 thinking',
      'delta 0 thinking_delta',
      'delta 0 thinking_delta',
      'delta 0 signature_delta',
      'stop 0',
      'start 1 redacted_thinking',
      'stop 1',
      'start 2 text',
      'delta 2 text_delta',
      'stop 2',
      'message_delta',
      'message_stop',
    ]);
    assert.deepEqual(events[1]?.data, {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    });
    assert.equal(joined(events, 0, 'thinking'), 'Let me think.');
    assert.equal(joined(events, 0, 'signature'), 'EqQBsig==');
    assert.deepEqual(events[6]?.data, {
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'redacted_thinking', data: 'opaque' },
    });
  });

  test('interleaved parallel tool calls (OpenAI-style) come out as properly nested blocks, nothing lost', async () => {
    const parts: StreamPart[] = [
      { type: 'text-start', id: 'text' },
      { type: 'text-delta', id: 'text', delta: 'Checking both.' },
      { type: 'tool-input-start', id: 'call_A', toolName: 'get_weather' },
      { type: 'tool-input-delta', id: 'call_A', delta: '{"city":' },
      { type: 'tool-input-start', id: 'call_B', toolName: 'get_time' },
      { type: 'tool-input-delta', id: 'call_B', delta: '{"zone":' },
      { type: 'tool-input-delta', id: 'call_A', delta: '"Paris"}' },
      { type: 'tool-input-delta', id: 'call_B', delta: '"CET"}' },
      { type: 'text-delta', id: 'text', delta: ' One moment.' },
      // Blocks end in a different order from their starts, and the text only at the finish.
      { type: 'tool-input-end', id: 'call_B' },
      { type: 'tool-input-end', id: 'call_A' },
      { type: 'text-end', id: 'text' },
      { type: 'finish', finishReason: 'tool-calls', usage: usage(50, 40) },
    ];
    const events = await collect(parts);
    assertWellFormed(events);
    assert.deepEqual(outline(events), [
      'message_start',
      'start 0 text',
      'delta 0 text_delta',
      'delta 0 text_delta',
      'stop 0',
      'start 1 tool_use',
      'delta 1 input_json_delta',
      'delta 1 input_json_delta',
      'stop 1',
      'start 2 tool_use',
      'delta 2 input_json_delta',
      'delta 2 input_json_delta',
      'stop 2',
      'message_delta',
      'message_stop',
    ]);
    assert.equal(joined(events, 0, 'text'), 'Checking both. One moment.');
    assert.deepEqual(JSON.parse(joined(events, 1, 'partial_json')), { city: 'Paris' });
    assert.deepEqual(JSON.parse(joined(events, 2, 'partial_json')), { zone: 'CET' });
    assert.equal((events[5]?.data as Data).content_block?.['id'], 'call_A');
    assert.equal((events[9]?.data as Data).content_block?.['id'], 'call_B');
  });

  test('the first block streams live while later ones wait; a later block streams live once it owns the wire', async () => {
    // Pull events one by one to see when each comes out relative to the parts consumed.
    const seen: string[] = [];
    async function* parts(): AsyncGenerator<StreamPart> {
      const steps: StreamPart[] = [
        { type: 'tool-input-start', id: 'a', toolName: 'f' },
        { type: 'tool-input-start', id: 'b', toolName: 'g' },
        { type: 'tool-input-delta', id: 'b', delta: '{"x":1}' },
        { type: 'tool-input-delta', id: 'a', delta: '{}' },
        { type: 'tool-input-end', id: 'a' },
        { type: 'tool-input-delta', id: 'b', delta: ' ' },
        { type: 'tool-input-end', id: 'b' },
        { type: 'finish', finishReason: 'tool-calls', usage: usage(1, 1) },
      ];
      for (const step of steps) {
        seen.push(`part ${step.type} ${'id' in step ? step.id : ''}`);
        yield step;
      }
    }
    for await (const event of encodeMessagesStream(sequenceBlocks(parts()), OPTIONS)) seen.push(`event ${outline([event])[0]}`);
    assert.deepEqual(seen, [
      'part tool-input-start a',
      'event message_start',
      'event start 0 tool_use',
      'part tool-input-start b',
      'part tool-input-delta b',
      'part tool-input-delta a',
      'event delta 0 input_json_delta',
      'part tool-input-end a',
      'event stop 0',
      'event start 1 tool_use',
      'event delta 1 input_json_delta',
      'part tool-input-delta b',
      'event delta 1 input_json_delta',
      'part tool-input-end b',
      'event stop 1',
      'part finish ',
      'event message_delta',
      'event message_stop',
    ]);
  });

  test('blocks never ended by the provider are closed in start order at the finish', async () => {
    const events = await collect([
      { type: 'text-start', id: '0' },
      { type: 'text-delta', id: '0', delta: 'a' },
      { type: 'tool-input-start', id: 'call_1', toolName: 'f' },
      { type: 'tool-input-delta', id: 'call_1', delta: '{"k":"v"}' },
      { type: 'finish', finishReason: 'length', usage: usage(1, 1) },
    ]);
    assertWellFormed(events);
    assert.deepEqual(outline(events).slice(1, -2), [
      'start 0 text',
      'delta 0 text_delta',
      'stop 0',
      'start 1 tool_use',
      'delta 1 input_json_delta',
      'stop 1',
    ]);
    assert.deepEqual((events.at(-2)?.data as Data)['delta'], { stop_reason: 'max_tokens', stop_sequence: null });
  });

  test('stop sequence is reported as such', async () => {
    const events = await collect([
      { type: 'text-start', id: '0' },
      { type: 'text-delta', id: '0', delta: 'one two' },
      { type: 'text-end', id: '0' },
      { type: 'finish', finishReason: 'stop-sequence', stopSequence: 'three', usage: usage(3, 2) },
    ]);
    assert.deepEqual((events.at(-2)?.data as Data)['delta'], { stop_reason: 'stop_sequence', stop_sequence: 'three' });
  });

  test('an error part after the stream began ends it with event: error (overloaded_error or api_error)', async () => {
    const overloaded = await collect([
      { type: 'text-start', id: '0' },
      { type: 'text-delta', id: '0', delta: 'partial' },
      { type: 'error', error: serverError('service_unavailable', 'The upstream is overloaded.') },
    ]);
    assert.deepEqual(outline(overloaded), ['message_start', 'start 0 text', 'delta 0 text_delta', 'error']);
    assert.deepEqual(overloaded.at(-1), {
      event: 'error',
      data: { type: 'error', error: { type: 'overloaded_error', message: 'The upstream is overloaded.', code: 'service_unavailable' } },
    });

    const internal = await collect([
      { type: 'text-start', id: '0' },
      { type: 'error', error: serverError('timeout', 'The upstream timed out.') },
    ]);
    assert.deepEqual((internal.at(-1)?.data as Data)['error'], { type: 'api_error', message: 'The upstream timed out.', code: 'timeout' });
  });

  test('a source that throws after the stream began ends with event: error, without leaking the message of a non-ServiceError', async () => {
    const events = await collect([{ type: 'text-start', id: '0' }], OPTIONS, new Error('connect ECONNREFUSED http://secret-upstream:9000'));
    assert.equal(events.at(-1)?.event, 'error');
    assert.deepEqual((events.at(-1)?.data as Data)['error'], {
      type: 'api_error',
      message: 'The generation failed with an internal error.',
      code: 'internal_error',
    });
  });

  test('a source that ends without finish ends with event: error', async () => {
    const events = await collect([
      { type: 'text-start', id: '0' },
      { type: 'text-delta', id: '0', delta: 'x' },
    ]);
    assert.equal(events.at(-1)?.event, 'error');
    assert.equal((events.at(-1)?.data as { error: { code: string } }).error.code, 'internal_error');
  });

  test('an error before anything was emitted is thrown, so the edge can answer with an HTTP status', async () => {
    const rateLimited = new ServiceError({ status: 429, type: 'rate_limit_exceeded', code: 'rpm_exceeded', message: 'Slow down.' });
    await assert.rejects(
      collect([
        { type: 'response-metadata', upstreamId: 'x' },
        { type: 'error', error: rateLimited },
      ]),
      rateLimited,
    );
    const thrown = serverError('service_unavailable', 'No upstream.');
    await assert.rejects(collect([], OPTIONS, thrown), thrown);
    await assert.rejects(collect([]), (error: unknown) => error instanceof ServiceError && error.code === 'internal_error');
  });

  test('stopping early returns the source iterator (the provider can abort its upstream call)', async () => {
    let returned = false;
    async function* endless(): AsyncGenerator<StreamPart> {
      try {
        yield { type: 'text-start', id: '0' };
        for (;;) yield { type: 'text-delta', id: '0', delta: 'x' };
      } finally {
        returned = true;
      }
    }
    let count = 0;
    for await (const _event of encodeMessagesStream(sequenceBlocks(endless()), OPTIONS)) if (++count === 5) break;
    assert.equal(returned, true);
  });

  test('ping event for keep-alives', () => {
    assert.deepEqual(messagesPingEvent(), { event: 'ping', data: { type: 'ping' } });
  });
});

describe('encodeMessagesStream matches real Anthropic streams and the non-streaming answer', () => {
  function recorded(file: string): Data[] {
    return readFileSync(new URL(`../../fixtures/anthropic-messages/${file}`, import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Data);
  }

  /** What must be equal between a real stream and ours: event types, indexes, block starts and deltas, stop reason. */
  function comparable(data: Data[]): unknown[] {
    return data
      .filter((entry) => entry.type !== 'ping')
      .filter(
        (entry) =>
          !(
            entry.type === 'content_block_delta' &&
            ['', undefined].includes(entry.delta?.['partial_json'] as string) &&
            entry.delta?.['type'] === 'input_json_delta'
          ),
      )
      .filter(
        (entry) => !(entry.type === 'content_block_delta' && entry.delta?.['type'] === 'thinking_delta' && entry.delta['thinking'] === ''),
      )
      .map((entry) => {
        if (entry.type === 'message_start') return 'message_start';
        if (entry.type === 'message_delta')
          return { delta: entry['delta'], output_tokens: (entry['usage'] as { output_tokens: number }).output_tokens };
        return entry;
      });
  }

  test('thinking + signature + text: same sequence as the recorded Anthropic stream', async () => {
    const real = recorded('recorded-thinking-stream.jsonl');
    const parts: StreamPart[] = [{ type: 'reasoning-start', id: '0' }];
    for (const entry of real) {
      if (entry.type !== 'content_block_delta') continue;
      const delta = entry.delta!;
      const id = String(entry.index);
      if (delta['type'] === 'thinking_delta') parts.push({ type: 'reasoning-delta', id, delta: delta['thinking'] as string });
      if (delta['type'] === 'signature_delta')
        parts.push(
          { type: 'reasoning-signature', id, signature: delta['signature'] as string },
          { type: 'reasoning-end', id },
          { type: 'text-start', id: '1' },
        );
      if (delta['type'] === 'text_delta') parts.push({ type: 'text-delta', id, delta: delta['text'] as string });
    }
    parts.push({ type: 'text-end', id: '1' }, { type: 'finish', finishReason: 'stop', usage: usage(69, 53) });
    const ours = await collect(parts);
    assertWellFormed(ours);
    assert.deepEqual(comparable(payloads(ours)), comparable(real));
  });

  test('text then a tool_use without arguments: same sequence as the recorded Anthropic stream', async () => {
    const real = recorded('recorded-tool-no-args-stream.jsonl');
    const ours = await collect([
      { type: 'text-start', id: '0' },
      { type: 'text-delta', id: '0', delta: "I'll update the issue list for" },
      { type: 'text-delta', id: '0', delta: ' you.' },
      { type: 'text-end', id: '0' },
      { type: 'tool-input-start', id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', toolName: 'updateIssueList' },
      { type: 'tool-input-delta', id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', delta: '' },
      { type: 'tool-input-end', id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP' },
      { type: 'finish', finishReason: 'tool-calls', usage: usage(565, 48) },
    ]);
    assert.deepEqual(comparable(payloads(ours)), comparable(real));
    const final = (await sdkFinalMessage(ours)) as { content: Array<Record<string, unknown>> };
    assert.deepEqual(final.content[1], { type: 'tool_use', id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', input: {} });
  });

  const conversations: Array<[string, StreamPart[]]> = [
    ['text', TEXT_PARTS],
    [
      'thinking, interleaved tool calls and cache usage',
      [
        { type: 'reasoning-start', id: 'r' },
        { type: 'reasoning-delta', id: 'r', delta: 'Two lookups.' },
        { type: 'reasoning-signature', id: 'r', signature: 'sig' },
        { type: 'tool-input-start', id: 'call_A', toolName: 'get_weather' },
        { type: 'tool-input-start', id: 'call_B', toolName: 'get_weather' },
        { type: 'tool-input-delta', id: 'call_B', delta: '{"city":"Rome"}' },
        { type: 'tool-input-delta', id: 'call_A', delta: '{"city":' },
        { type: 'reasoning-end', id: 'r' },
        { type: 'tool-input-delta', id: 'call_A', delta: '"Paris"}' },
        { type: 'tool-input-end', id: 'call_A' },
        { type: 'tool-input-end', id: 'call_B' },
        { type: 'finish', finishReason: 'tool-calls', usage: usage(300, 80, 200, 50) },
      ],
    ],
    [
      'redacted thinking and a stop sequence',
      [
        { type: 'reasoning-redacted', id: 'x', data: 'opaque' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Counting: 1 2' },
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: 'stop-sequence', stopSequence: ' 3', usage: usage(9, 7) },
      ],
    ],
  ];

  for (const [name, parts] of conversations) {
    test(`${name}: the SDK's finalMessage() (1.x and 0.x) equals the non-streaming response`, async () => {
      const events = await collect(parts);
      assertWellFormed(events);
      const whole = encodeMessagesResponse(await assembleResult(fromParts(parts)), OPTIONS);
      // Everything but the cache writes' split by lifetime, which only whole messages carry (wire-types.ts AnthropicUsage).
      const { cache_creation: lifetimes, ...streamedUsage } = whole.usage;
      assert.equal(lifetimes?.ephemeral_5m_input_tokens, whole.usage.cache_creation_input_tokens);
      const expected = { ...whole, usage: streamedUsage };
      assert.deepEqual(await sdkFinalMessage(events), expected);
      assert.deepEqual(await sdkFinalMessage(events, MessageStream0x), expected);
    });
  }
});
