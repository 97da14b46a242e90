/**
 * The chat stream encoder writes each chunk as finished JSON text around the delta's own
 * JSON.stringify (the constant head and tail serialised once per stream). Its output must be, byte
 * for byte, the JSON.stringify of the plain chunk object the wire contract describes
 * (docs/wire-contracts.md "Chat completions"): this test builds that object for every chunk with an
 * independent, deliberately plain encoder and compares the texts, for content that is hard to write
 * by hand (unicode, lone surrogates, quotes, back slashes, control characters, line separators),
 * tool calls, reasoning, a refusal read as text, the usage chunk, and include_usage on and off.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sequenceBlocks } from '../../../src/core/sequence-blocks.ts';
import type { StreamPart } from '../../../src/core/stream-parts.ts';
import type { ChatCompletionContext } from '../../../src/formats/openai-chat/encode-response.ts';
import { encodeChatCompletionStream } from '../../../src/formats/openai-chat/encode-stream.ts';
import { mapFinishReason } from '../../../src/formats/openai-chat/map-finish-reason.ts';
import { encodeUsage } from '../../../src/formats/openai-chat/map-usage.ts';
import { replay } from '../../support/canonical-parts.ts';
import { usage } from './stream-parts-fixtures.ts';

/** Texts no hand-written JSON gets right by accident. */
const TRICKY = [
  'plain',
  'quotes " and \' and back\\slash \\" \\\\',
  'line\nbreak\r\ncarriage\ttab\u0000nul\u0001\u001f\u007f',
  'unicode: é ß 中文 日本語 한국어 العربية',
  'emoji 👋🏽 🧑‍🚀 and a lone surrogate \ud800 and \udfff',
  'separators \u2028 \u2029 and </script> <!-- -->',
  '{"json":"inside","n":[1,2,{"x":null}]}',
  ' ',
];

/** The same chunks, each built as an object and JSON.stringify'd: the plain form of the wire contract. */
function plainChunks(parts: readonly StreamPart[], context: ChatCompletionContext, includeUsage: boolean): string[] {
  const texts: string[] = [];
  const chunk = (choices: unknown[], usageValue?: unknown): string =>
    JSON.stringify({
      id: context.id,
      object: 'chat.completion.chunk',
      created: context.created,
      model: context.model,
      choices,
      ...(includeUsage ? { usage: usageValue ?? null } : {}),
    });
  const choice = (delta: unknown, finishReason: string | null = null) => ({ index: 0, delta, logprobs: null, finish_reason: finishReason });
  let started = false;
  let toolIndex = -1;
  let toolId: string | undefined;
  let toolHasArguments = false;
  for (const part of parts) {
    if (part.type === 'error') throw new Error('not in these fixtures');
    if (!started) {
      started = true;
      texts.push(chunk([choice({ role: 'assistant', content: '' })]));
    }
    if (part.type === 'text-delta' && part.delta !== '') texts.push(chunk([choice({ content: part.delta })]));
    if (part.type === 'reasoning-delta' && part.delta !== '') texts.push(chunk([choice({ reasoning_content: part.delta })]));
    if (part.type === 'tool-input-start') {
      toolIndex++;
      toolId = part.id;
      toolHasArguments = false;
      texts.push(
        chunk([
          choice({ tool_calls: [{ index: toolIndex, id: part.id, type: 'function', function: { name: part.toolName, arguments: '' } }] }),
        ]),
      );
    }
    if (part.type === 'tool-input-delta' && part.id === toolId && part.delta !== '') {
      if (part.delta.trim() !== '') toolHasArguments = true;
      texts.push(chunk([choice({ tool_calls: [{ index: toolIndex, function: { arguments: part.delta } }] })]));
    }
    if (part.type === 'tool-input-end' && part.id === toolId) {
      if (!toolHasArguments) texts.push(chunk([choice({ tool_calls: [{ index: toolIndex, function: { arguments: '{}' } }] })]));
      toolId = undefined;
    }
    if (part.type === 'finish') {
      texts.push(chunk([choice({}, mapFinishReason(part.finishReason))]));
      if (includeUsage) texts.push(chunk([], encodeUsage(part.usage)));
      texts.push('[DONE]');
      break;
    }
  }
  return texts;
}

async function encodedChunks(parts: StreamPart[], context: ChatCompletionContext, includeUsage: boolean): Promise<string[]> {
  const texts: string[] = [];
  for await (const event of encodeChatCompletionStream(sequenceBlocks(replay(parts)), context, { includeUsage })) {
    assert.equal(event.event, undefined);
    assert.equal(typeof event.data, 'string');
    texts.push(event.data as string);
  }
  return texts;
}

function textAnswer(deltas: readonly string[]): StreamPart[] {
  return [
    { type: 'response-metadata', upstreamId: 'up', upstreamModel: 'up-model' },
    { type: 'text-start', id: 't' },
    ...deltas.map((delta): StreamPart => ({ type: 'text-delta', id: 't', delta })),
    { type: 'text-delta', id: 't', delta: '' },
    { type: 'text-end', id: 't' },
    { type: 'finish', finishReason: 'stop', usage },
  ];
}

const CASES: Array<{ name: string; parts: StreamPart[] }> = [
  { name: 'text deltas with tricky content', parts: textAnswer(TRICKY) },
  {
    name: 'reasoning, then text',
    parts: [
      { type: 'reasoning-start', id: 'r' },
      ...TRICKY.map((delta): StreamPart => ({ type: 'reasoning-delta', id: 'r', delta })),
      { type: 'reasoning-signature', id: 'r', signature: 'sig' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Answer "quoted" 👋' },
      { type: 'text-end', id: 't' },
      { type: 'finish', finishReason: 'length', usage },
    ],
  },
  {
    // A refusal (OpenAI's delta.refusal) reaches the encoder as text (providers/openai-compatible).
    name: 'a refusal read as text, content filter',
    parts: [
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'I can\'t help with "that"\n— sorry.' },
      { type: 'text-end', id: 't' },
      { type: 'finish', finishReason: 'content-filter', usage },
    ],
  },
  {
    name: 'tool calls with tricky names, ids and arguments, one without arguments',
    parts: [
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Calling "tools"…' },
      { type: 'text-end', id: 't' },
      { type: 'tool-input-start', id: 'call_"1"\\', toolName: 'get_wéather' },
      { type: 'tool-input-delta', id: 'call_"1"\\', delta: '{"city":"Zürich \\"old town\\"",' },
      { type: 'tool-input-delta', id: 'call_"1"\\', delta: '"note":"\\u2028 👋"}' },
      { type: 'tool-input-end', id: 'call_"1"\\' },
      { type: 'tool-input-start', id: 'call_2', toolName: 'now' },
      { type: 'tool-input-delta', id: 'call_2', delta: '  ' },
      { type: 'tool-input-end', id: 'call_2' },
      { type: 'tool-input-start', id: 'call_3', toolName: 'empty' },
      { type: 'tool-input-end', id: 'call_3' },
      { type: 'finish', finishReason: 'tool-calls', usage },
    ],
  },
];

const CONTEXTS: ChatCompletionContext[] = [
  { id: 'chatcmpl-test', created: 1_700_000_000, model: 'test-model' },
  { id: 'chatcmpl-"odd"\\id', created: 0, model: 'módel/with "quotes" 👋' },
];

describe('chat stream encoding: the finished-text chunks equal JSON.stringify of the plain chunk objects', () => {
  for (const { name, parts } of CASES)
    for (const includeUsage of [false, true])
      test(`${name}, include_usage ${includeUsage ? 'on' : 'off'}`, async () => {
        for (const context of CONTEXTS) {
          const encoded = await encodedChunks(parts, context, includeUsage);
          assert.deepEqual(encoded, plainChunks(parts, context, includeUsage));
          // Every chunk is valid JSON whose logprobs are null (OpenAI sends null unless logprobs were asked for).
          for (const text of encoded.slice(0, -1)) {
            const chunk = JSON.parse(text) as { choices: Array<{ logprobs: unknown }> };
            for (const choice of chunk.choices) assert.equal(choice.logprobs, null);
          }
        }
      });
});
