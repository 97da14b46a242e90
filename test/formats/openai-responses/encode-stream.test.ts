import { sequenceBlocks } from '../../../src/core/sequence-blocks.ts';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assembleResult } from '../../../src/core/assemble-result.ts';
import { serverError } from '../../../src/core/service-error.ts';
import type { StreamPart } from '../../../src/core/stream-parts.ts';
import { decodeResponsesRequest } from '../../../src/formats/openai-responses/decode-request.ts';
import { createResponseContext, encodeResponse, type ResponseContext } from '../../../src/formats/openai-responses/encode-response.ts';
import { encodeResponseStream, type ResponseStreamOptions } from '../../../src/formats/openai-responses/encode-stream.ts';
import type { ResponseObject } from '../../../src/formats/openai-responses/wire-types.ts';
import type { SseEvent } from '../../../src/core/sse-event.ts';
import { lengthParts, parallelToolParts, reasoningParts, textParts, usage } from './stream-parts-fixtures.ts';
import { replay } from '../../support/canonical-parts.ts';

type EventData = Record<string, any> & { type: string; sequence_number: number };

function context(): ResponseContext {
  return createResponseContext(decodeResponsesRequest({ model: 'test-model', input: 'Hi', max_output_tokens: 50 }).options);
}

async function encode(
  parts: AsyncIterable<StreamPart>,
  options: ResponseStreamOptions = {},
  responseContext = context(),
): Promise<EventData[]> {
  const events: SseEvent[] = [];
  for await (const event of encodeResponseStream(sequenceBlocks(parts), responseContext, options)) events.push(event);
  return validate(events);
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

/**
 * Checks every rule of wire-contracts.md "Responses" (Stream) and of the SDK's accumulator, and that
 * items never overlap. Returns the event payloads.
 */
function validate(events: SseEvent[]): EventData[] {
  const payloads = events.map((event, index) => {
    // Hot and repeated payloads leave as finished JSON text; the others as objects the writer serialises.
    const data = (typeof event.data === 'string' ? JSON.parse(event.data) : event.data) as EventData;
    assert.equal(typeof data, 'object');
    assert.equal(event.event, data.type, 'the event: line equals the payload type');
    assert.equal(data.sequence_number, index, 'sequence_number increases by one on every event');
    return data;
  });
  assert.equal(payloads[0]?.type, 'response.created');
  assert.equal(payloads[1]?.type, 'response.in_progress');
  for (const lifecycle of payloads.slice(0, 2)) {
    assert.equal(lifecycle['response'].status, 'in_progress');
    assert.deepEqual(lifecycle['response'].output, []);
  }
  const items: Array<Record<string, any>> = [];
  const done = new Set<number>();
  const text = new Map<number, string>();
  for (const data of payloads.slice(2)) {
    if (TERMINAL.has(data.type)) assert.equal(data, payloads.at(-1), `${data.type} must be the last event`);
    if (data.type === 'response.output_item.added') {
      assert.equal(data['output_index'], items.length, 'output items are announced in order');
      for (let index = 0; index < items.length; index++) assert.ok(done.has(index), 'an item is added only after the previous one is done');
      assert.equal(data['item'].status, 'in_progress');
      if (data['item'].type === 'function_call') assert.equal(data['item'].arguments, '');
      items.push(structuredClone(data['item']));
      text.set(data['output_index'], '');
      continue;
    }
    if ('output_index' in data) {
      const index = data['output_index'] as number;
      const item = items[index];
      assert.ok(item !== undefined, `${data.type}: output_index ${index} was announced`);
      assert.ok(!done.has(index), `${data.type}: item ${index} is not done yet`);
      if ('item_id' in data) assert.equal(data['item_id'], item['id'], 'item_id equals the item id');
      switch (data.type) {
        case 'response.content_part.added':
          assert.equal(data['content_index'], item['content'].length);
          item['content'].push(structuredClone(data['part']));
          break;
        case 'response.output_text.delta':
        case 'response.reasoning_text.delta':
          assert.ok(item['content'][data['content_index']] !== undefined, 'content_part.added precedes its deltas');
          text.set(index, text.get(index)! + data['delta']);
          break;
        case 'response.function_call_arguments.delta':
          text.set(index, text.get(index)! + data['delta']);
          break;
        case 'response.output_text.done':
        case 'response.reasoning_text.done':
          assert.equal(data['text'], text.get(index));
          break;
        case 'response.function_call_arguments.done':
          assert.ok(data['arguments'] === text.get(index) || (text.get(index) === '' && data['arguments'] === '{}'));
          break;
        case 'response.content_part.done':
          assert.equal(data['part'].text, text.get(index));
          break;
        case 'response.output_item.done':
          assert.equal(data['item'].id, item['id']);
          assert.equal(data['item'].type, item['type']);
          assert.notEqual(data['item'].status, 'in_progress');
          items[index] = structuredClone(data['item']);
          done.add(index);
          break;
        default:
          assert.fail(`unexpected item event ${data.type}`);
      }
    }
  }
  const last = payloads.at(-1)!;
  assert.ok(TERMINAL.has(last.type), `the stream ends with a terminal event, not ${last.type}`);
  if (last.type === 'response.completed' || last.type === 'response.incomplete') {
    assert.equal(done.size, items.length, 'every item is done before the response completes');
    assert.deepEqual(last['response'].output, items, 'the final output is exactly the streamed items');
  }
  return payloads;
}

const types = (events: EventData[]): string[] => events.map((event) => event.type);

describe('encodeResponseStream', () => {
  test('a text answer follows the documented order and ends with the full response and usage', async () => {
    const events = await encode(replay(textParts));
    assert.deepEqual(types(events), [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const completed = events.at(-1)!['response'] as ResponseObject;
    assert.equal(completed.status, 'completed');
    assert.equal(completed.usage?.total_tokens, 21);
    assert.equal((completed.output[0] as { content: Array<{ text: string }> }).content[0]!.text, 'Hello, world!');
    assert.deepEqual(events[2]!['item'].content, []);
    assert.deepEqual(events[3]!['part'], { type: 'output_text', text: '', annotations: [] });
    assert.deepEqual(events[4]!['logprobs'], []);
  });

  test('every event of one stream carries the same response id, and the created response echoes the request', async () => {
    const responseContext = context();
    const events = await encode(replay(textParts), {}, responseContext);
    assert.equal(events[0]!['response'].id, responseContext.id);
    assert.equal(events.at(-1)!['response'].id, responseContext.id);
    assert.equal(events[0]!['response'].usage, null);
    assert.equal(events[0]!['response'].max_output_tokens, 50);
  });

  test('interleaved parallel tool calls are serialised: one item at a time, arguments intact, in start order', async () => {
    const events = await encode(replay(parallelToolParts));
    assert.deepEqual(types(events).slice(2), [
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const output = events.at(-1)!['response'].output as Array<Record<string, string>>;
    assert.deepEqual(
      output.map((item) => [item['call_id'], item['name'], item['arguments'], item['status']]),
      [
        ['call_a', 'get_weather', '{"city":"Paris"}', 'completed'],
        ['call_b', 'get_time', '{"zone":"CET"}', 'completed'],
      ],
    );
    assert.match(output[0]!['id']!, /^fc_[0-9a-f]{48}$/);
  });

  test('reasoning streams as reasoning_text events; its signature and redacted data end up in encrypted_content', async () => {
    const events = await encode(replay(reasoningParts));
    assert.deepEqual(types(events).slice(2, 9), [
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
    ]);
    const output = events.at(-1)!['response'].output as Array<Record<string, unknown>>;
    assert.equal(output[0]!['encrypted_content'], 'sig-abc');
    assert.deepEqual(output[0]!['content'], [{ type: 'reasoning_text', text: 'Let me think.' }]);
    assert.equal(output[1]!['encrypted_content'], 'redacted:opaque-data');
    assert.deepEqual(output[1]!['content'], []);
    assert.equal(output[2]!['type'], 'message');
  });

  test('streaming and non-streaming produce the same output items (ids aside)', async () => {
    for (const parts of [textParts, reasoningParts, parallelToolParts, lengthParts]) {
      const streamed = (await encode(replay(parts))).at(-1)!['response'] as ResponseObject;
      const whole = encodeResponse(await assembleResult(replay(parts)), context());
      const withoutIds = (response: ResponseObject) => response.output.map((item) => ({ ...item, id: item.id.slice(0, 3) }));
      assert.deepEqual(withoutIds(streamed), withoutIds(whole));
      assert.equal(streamed.status, whole.status);
      assert.deepEqual(streamed.usage, whole.usage);
    }
  });

  test('an answer cut by max_output_tokens ends with response.incomplete and the cut item incomplete', async () => {
    const events = await encode(replay(lengthParts));
    const last = events.at(-1)!;
    assert.equal(last.type, 'response.incomplete');
    assert.equal(last['response'].status, 'incomplete');
    assert.deepEqual(last['response'].incomplete_details, { reason: 'max_output_tokens' });
    const itemDone = events.find((event) => event.type === 'response.output_item.done')!;
    assert.equal(itemDone['item'].status, 'incomplete');
  });

  test('blocks the backend never ended are closed at the finish, in start order', async () => {
    const events = await encode(
      replay([
        { type: 'text-start', id: 'a' },
        { type: 'text-delta', id: 'a', delta: 'one' },
        { type: 'tool-input-start', id: 'call_1', toolName: 'f' },
        { type: 'finish', finishReason: 'tool-calls', usage },
      ]),
    );
    const output = events.at(-1)!['response'].output as Array<Record<string, unknown>>;
    assert.equal(output.length, 2);
    assert.equal(output[1]!['arguments'], '{}', 'a call without arguments is {} as in assembleResult');
  });

  test('a block id used again after its end starts a new item; a signature after the end still reaches the item', async () => {
    const parts: StreamPart[] = [
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'hm' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'reasoning-signature', id: 'r', signature: 'late-sig' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'one' },
      { type: 'text-end', id: 't' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'two' },
      { type: 'text-end', id: 't' },
      { type: 'finish', finishReason: 'stop', usage },
    ];
    const streamed = (await encode(replay(parts))).at(-1)!['response'] as ResponseObject;
    assert.deepEqual(
      streamed.output.map((item) =>
        item.type === 'message'
          ? item.content[0]!.type === 'output_text' && item.content[0]!.text
          : item.type === 'reasoning'
            ? item.encrypted_content
            : '',
      ),
      ['late-sig', 'one', 'two'],
    );
    const whole = encodeResponse(await assembleResult(replay(parts)), context());
    assert.equal(whole.output.length, 3);
  });

  test('a failure after the stream began ends with response.failed carrying the error and the items so far', async () => {
    const stored: ResponseObject[] = [];
    const events = await encode(
      replay([...textParts.slice(0, 4), { type: 'error', error: serverError('service_unavailable', 'The upstream went away.') }]),
      {
        onFinal: (response) => void stored.push(response),
      },
    );
    const last = events.at(-1)!;
    assert.equal(last.type, 'response.failed');
    const response = last['response'] as ResponseObject;
    assert.equal(response.status, 'failed');
    assert.deepEqual(response.error, { code: 'server_error', message: 'The upstream went away.', type: 'server_error', param: null });
    assert.equal(response.output.length, 1);
    assert.equal(response.output[0]!.status, 'incomplete');
    assert.equal((response.output[0] as { content: Array<{ text: string }> }).content[0]!.text, 'Hello, ');
    assert.deepEqual(stored, [response], 'the failed response is handed to the store too');
  });

  test('an exception from the source after the start, or a source ending without finish, also ends with response.failed', async () => {
    const thrown = await encode(replay(textParts.slice(0, 3), new Error('socket hang up at http://secret-host')));
    assert.equal(thrown.at(-1)!.type, 'response.failed');
    assert.doesNotMatch(JSON.stringify(thrown.at(-1)), /secret-host/, 'unknown errors do not leak their text');
    const cut = await encode(replay(textParts.slice(0, 5)));
    assert.equal(cut.at(-1)!['response'].error.message, 'The generation stream ended before it was complete.');
  });

  test('a failure before any output is thrown, so the route can still answer with an HTTP status', async () => {
    const upstream = serverError('timeout', 'No answer.');
    await assert.rejects(
      encode(
        replay([
          { type: 'response-metadata', upstreamId: 'x' },
          { type: 'error', error: upstream },
        ]),
      ),
      (error) => error === upstream,
    );
    await assert.rejects(encode(replay([], upstream)), (error) => error === upstream);
    await assert.rejects(encode(replay([])), { code: 'internal_error' });
  });

  test('onFinal receives the final response before the terminal event is sent', async () => {
    const order: string[] = [];
    const responseContext = context();
    for await (const event of encodeResponseStream(sequenceBlocks(replay(textParts)), responseContext, {
      onFinal: async (response) => {
        order.push(`stored ${response.status}`);
      },
    })) {
      order.push(event.event ?? '');
    }
    assert.deepEqual(order.slice(-3), ['response.output_item.done', 'stored completed', 'response.completed']);
  });

  test('when storing fails, an error event replaces response.completed', async () => {
    const events = await encode(replay(textParts), {
      onFinal: () => {
        throw new Error('database is down');
      },
    });
    const last = events.at(-1)!;
    assert.equal(last.type, 'error');
    assert.equal(last['code'], 'internal_error');
    assert.equal(last['message'], 'The response could not be stored.');
  });

  test('stopping early returns the source, which lets the provider abort its upstream call', async () => {
    let returned = false;
    async function* source(): AsyncGenerator<StreamPart> {
      try {
        yield* textParts;
      } finally {
        returned = true;
      }
    }
    for await (const event of encodeResponseStream(sequenceBlocks(source()), context())) {
      if (event.event === 'response.output_text.delta') break;
    }
    assert.equal(returned, true);
  });
});
