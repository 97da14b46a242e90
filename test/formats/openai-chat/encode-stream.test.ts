import { sequenceBlocks } from '../../../src/core/sequence-blocks.ts';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { assembleResult } from '../../../src/core/assemble-result.ts';
import { invalidParameter, serverError } from '../../../src/core/service-error.ts';
import type { StreamPart } from '../../../src/core/stream-parts.ts';
import { encodeChatCompletion, type ChatCompletionContext } from '../../../src/formats/openai-chat/encode-response.ts';
import { encodeChatCompletionStream } from '../../../src/formats/openai-chat/encode-stream.ts';
import type { SseEvent } from '../../../src/core/sse-event.ts';
import { parallelToolParts, reasoningParts, textParts, usage } from './stream-parts-fixtures.ts';
import { replay } from '../../support/canonical-parts.ts';

const context: ChatCompletionContext = { id: 'chatcmpl-test', created: 1_700_000_000, model: 'test-model' };

type Chunk = Record<string, unknown> & {
  choices: Array<{ index: number; delta: Record<string, unknown>; logprobs: null; finish_reason: string | null }>;
};

async function encode(parts: AsyncIterable<StreamPart>, includeUsage = false): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of encodeChatCompletionStream(sequenceBlocks(parts), context, { includeUsage })) events.push(event);
  return events;
}

/** Every event's data is a JSON text, except the final `[DONE]`. No chat event has an `event:` name. */
function payloads(events: SseEvent[]): Array<Chunk | '[DONE]'> {
  return events.map((event) => {
    assert.equal(event.event, undefined);
    assert.equal(typeof event.data, 'string');
    return event.data === '[DONE]' ? '[DONE]' : (JSON.parse(event.data as string) as Chunk);
  });
}

function chunksOf(events: SseEvent[]): Chunk[] {
  const all = payloads(events);
  assert.equal(all.at(-1), '[DONE]');
  return all.slice(0, -1) as Chunk[];
}

/** The documented accumulation rules (wire-contracts.md) folded into one message, like an SDK does. */
function accumulate(chunks: Chunk[]) {
  const message: {
    role?: unknown;
    content: string | null;
    reasoning_content?: string;
    tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  } = { content: null };
  let finishReason: string | null = null;
  let finalUsage: unknown = null;
  for (const chunk of chunks) {
    if (chunk['usage'] !== null && chunk['usage'] !== undefined) finalUsage = chunk['usage'];
    for (const choice of chunk.choices) {
      const delta = choice.delta as Record<string, unknown>;
      if (typeof delta['role'] === 'string') message.role = delta['role'];
      if (typeof delta['content'] === 'string') message.content = (message.content ?? '') + delta['content'];
      if (typeof delta['reasoning_content'] === 'string')
        message.reasoning_content = (message.reasoning_content ?? '') + delta['reasoning_content'];
      for (const call of (delta['tool_calls'] ?? []) as Array<{
        index: number;
        id?: string;
        type?: string;
        function: { name?: string; arguments: string };
      }>) {
        message.tool_calls ??= [];
        const existing = message.tool_calls[call.index];
        if (existing === undefined) {
          assert.ok(
            call.id !== undefined && call.type === 'function' && call.function.name !== undefined,
            'the first fragment of a tool call names it',
          );
          message.tool_calls[call.index] = {
            id: call.id,
            type: call.type,
            function: { name: call.function.name, arguments: call.function.arguments },
          };
        } else {
          assert.equal(call.id, undefined, 'later fragments carry only arguments');
          existing.function.arguments += call.function.arguments;
        }
      }
      if (choice.finish_reason !== null) finishReason = choice.finish_reason;
    }
  }
  return { message, finishReason, usage: finalUsage };
}

describe('encodeChatCompletionStream', () => {
  test('text: role chunk, content deltas, finish chunk, [DONE]', async () => {
    const chunks = chunksOf(await encode(replay(textParts)));
    assert.deepEqual(
      chunks.map((chunk) => chunk.choices[0]),
      [
        { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
        { index: 0, delta: { content: 'Hello' }, logprobs: null, finish_reason: null },
        { index: 0, delta: { content: ', "world"\n' }, logprobs: null, finish_reason: null },
        { index: 0, delta: {}, logprobs: null, finish_reason: 'stop' },
      ],
    );
    for (const chunk of chunks) {
      assert.equal(chunk['id'], 'chatcmpl-test');
      assert.equal(chunk['object'], 'chat.completion.chunk');
      assert.equal(chunk['created'], 1_700_000_000);
      assert.equal(chunk['model'], 'test-model');
      assert.equal('system_fingerprint' in chunk, false, 'no system_fingerprint (OpenAI types it string; none is known here)');
      assert.equal('usage' in chunk, false, 'no usage key without include_usage');
    }
  });

  test('include_usage: usage null on every chunk, then one chunk with choices [] and usage', async () => {
    const chunks = chunksOf(await encode(replay(textParts), true));
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.deepEqual(last['usage'], {
      prompt_tokens: 16,
      completion_tokens: 9,
      total_tokens: 25,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 3 },
    });
    for (const chunk of chunks.slice(0, -1)) assert.equal(chunk['usage'], null);
    assert.equal(chunks.at(-2)!.choices[0]!.finish_reason, 'stop');
  });

  test('chunks have the fields of a real OpenAI stream, in the same order (OpenAI-only extras aside)', async () => {
    const recorded = JSON.parse(readFileSync(new URL('./fixtures/openai-recorded-chunks.json', import.meta.url), 'utf8')) as Record<
      string,
      Chunk
    >;
    // system_fingerprint: OpenAI's is a string naming its backend; we have none, so it is omitted (never null).
    const openAiOnly = new Set(['service_tier', 'obfuscation', 'system_fingerprint']);
    const keys = (chunk: Chunk) => Object.keys(chunk).filter((key) => !openAiOnly.has(key));
    const chunks = chunksOf(await encode(replay(textParts), true));
    const ours = { role: chunks[0]!, content: chunks[1]!, finish: chunks.at(-2)!, usage: chunks.at(-1)! };
    for (const name of ['role', 'content', 'finish', 'usage'] as const) {
      assert.deepEqual(keys(ours[name]), keys(recorded[name]!), name);
      assert.deepEqual(
        ours[name].choices.map((choice) => Object.keys(choice)),
        recorded[name]!.choices.map((choice) => Object.keys(choice)),
        name,
      );
    }
    // The recorded role delta also has `refusal: null`; the SDK treats it as absent.
    assert.deepEqual(Object.keys(ours.role.choices[0]!.delta), ['role', 'content']);
  });

  test('parallel tool calls: sent one after the other; first fragment names the call, later ones carry arguments only', async () => {
    const chunks = chunksOf(await encode(replay(parallelToolParts)));
    const toolDeltas = chunks
      .flatMap((chunk) => chunk.choices.map((choice) => choice.delta['tool_calls']))
      .filter((calls) => calls !== undefined);
    assert.deepEqual(toolDeltas, [
      [{ index: 0, id: 'call_weather', type: 'function', function: { name: 'get_weather', arguments: '' } }],
      [{ index: 0, function: { arguments: '{"city":' } }],
      [{ index: 0, function: { arguments: '"Paris"}' } }],
      [{ index: 1, id: 'call_time', type: 'function', function: { name: 'get_time', arguments: '' } }],
      [{ index: 1, function: { arguments: '{}' } }],
    ]);
    assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'tool_calls');
  });

  test('a call that starts while another is sent is held back, then replayed with its fragments in order', async () => {
    const parts: StreamPart[] = [
      { type: 'tool-input-start', id: 'call_1', toolName: 'first' },
      { type: 'tool-input-start', id: 'call_2', toolName: 'second' },
      { type: 'tool-input-delta', id: 'call_2', delta: '{"b":' },
      { type: 'tool-input-start', id: 'call_3', toolName: 'third' },
      { type: 'tool-input-delta', id: 'call_3', delta: '{"c":3}' },
      { type: 'tool-input-delta', id: 'call_2', delta: '2}' },
      { type: 'tool-input-delta', id: 'call_1', delta: '{"a":1}' },
      { type: 'tool-input-end', id: 'call_1' },
      { type: 'tool-input-delta', id: 'call_2', delta: ' ' },
      { type: 'tool-input-end', id: 'call_3' },
      { type: 'tool-input-end', id: 'call_2' },
      { type: 'finish', finishReason: 'tool-calls', usage },
    ];
    const chunks = chunksOf(await encode(replay(parts)));
    const toolDeltas = chunks
      .flatMap((chunk) => chunk.choices.map((choice) => choice.delta['tool_calls']))
      .filter((calls) => calls !== undefined);
    assert.deepEqual(toolDeltas, [
      [{ index: 0, id: 'call_1', type: 'function', function: { name: 'first', arguments: '' } }],
      [{ index: 0, function: { arguments: '{"a":1}' } }],
      [{ index: 1, id: 'call_2', type: 'function', function: { name: 'second', arguments: '' } }],
      [{ index: 1, function: { arguments: '{"b":' } }],
      [{ index: 1, function: { arguments: '2}' } }],
      [{ index: 1, function: { arguments: ' ' } }],
      [{ index: 2, id: 'call_3', type: 'function', function: { name: 'third', arguments: '' } }],
      [{ index: 2, function: { arguments: '{"c":3}' } }],
    ]);
    const completion = encodeChatCompletion(await assembleResult(replay(parts)), context);
    assert.deepEqual(accumulate(chunks).message.tool_calls, completion.choices[0]!.message.tool_calls);
  });

  test('reasoning streams as reasoning_content deltas; signatures and redacted blocks are not sent', async () => {
    const chunks = chunksOf(await encode(replay(reasoningParts)));
    assert.deepEqual(
      chunks.map((chunk) => chunk.choices[0]!.delta),
      [{ role: 'assistant', content: '' }, { reasoning_content: 'Think' }, { reasoning_content: 'ing.' }, { content: 'Answer.' }, {}],
    );
  });

  for (const [name, parts] of [
    ['text', textParts],
    ['reasoning', reasoningParts],
    ['parallel tool calls', parallelToolParts],
  ] as const) {
    test(`stream and non-stream answers agree: ${name}`, async () => {
      const streamed = accumulate(chunksOf(await encode(replay([...parts]), true)));
      const completion = encodeChatCompletion(await assembleResult(replay([...parts])), context);
      const choice = completion.choices[0]!;
      assert.deepEqual({ ...streamed.message, refusal: null }, choice.message);
      assert.equal(streamed.finishReason, choice.finish_reason);
      assert.deepEqual(streamed.usage, completion.usage);
    });
  }

  test('an error part after output: a final chunk with the SPEC error object, no [DONE]', async () => {
    const failure = serverError('service_unavailable', 'The upstream is unavailable.');
    const all = payloads(await encode(replay([...textParts.slice(0, 3), { type: 'error', error: failure }]), true));
    assert.notEqual(all.at(-1), '[DONE]');
    assert.deepEqual(all.at(-1), {
      error: { message: 'The upstream is unavailable.', type: 'server_error', code: 'service_unavailable', param: null, details: null },
    });
    assert.equal(all.length, 3, 'role chunk, one content chunk, the error chunk');
  });

  test('an error part before any output: only the error chunk', async () => {
    const failure = invalidParameter('messages[0].content[0].image_url.url', 'Image could not be fetched.');
    const all = payloads(await encode(replay([{ type: 'error', error: failure }])));
    assert.deepEqual(all, [
      {
        error: {
          message: 'Image could not be fetched.',
          type: 'invalid_request_error',
          code: 'invalid_parameter',
          param: 'messages[0].content[0].image_url.url',
          details: null,
        },
      },
    ]);
  });

  test('an exception from the parts becomes an internal_error chunk that does not leak its text', async () => {
    const all = payloads(
      await encode(replay(textParts.slice(0, 3), new Error('connect ECONNRESET https://secret-upstream.example/v1 key=sk-123'))),
    );
    const last = all.at(-1) as unknown as { error: { code: string; type: string; message: string } };
    assert.equal(last.error.code, 'internal_error');
    assert.equal(last.error.type, 'server_error');
    assert.doesNotMatch(last.error.message, /secret|sk-123/);
  });

  test('parts ending without finish: an internal_error chunk, never a [DONE]', async () => {
    const all = payloads(await encode(replay(textParts.slice(0, 4))));
    assert.notEqual(all.at(-1), '[DONE]');
    assert.equal((all.at(-1) as unknown as { error: { code: string } }).error.code, 'internal_error');
  });

  test('a consumer that stops early closes the source (so the upstream call is aborted)', async () => {
    let closed = false;
    async function* source(): AsyncGenerator<StreamPart> {
      try {
        yield { type: 'text-start', id: '0' };
        for (let index = 0; ; index++) yield { type: 'text-delta', id: '0', delta: `token ${index} ` };
      } finally {
        closed = true;
      }
    }
    let received = 0;
    for await (const _event of encodeChatCompletionStream(sequenceBlocks(source()), context, { includeUsage: false })) {
      if (++received === 5) break;
    }
    assert.equal(closed, true);
  });

  test('usage figures come from the finish part', async () => {
    const parts: StreamPart[] = [
      { type: 'finish', finishReason: 'length', usage: { ...usage, inputTokens: 1, outputTokens: 2, estimated: true } },
    ];
    const chunks = chunksOf(await encode(replay(parts), true));
    assert.equal(chunks.length, 3, 'role, finish, usage');
    assert.equal(chunks[1]!.choices[0]!.finish_reason, 'length');
    assert.equal((chunks[2]!['usage'] as { total_tokens: number }).total_tokens, 3);
  });
});
