import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { assembleResult } from '../../../src/core/assemble-result.ts';
import type { FinishReason } from '../../../src/core/generation.ts';
import {
  createChatCompletionContext,
  encodeChatCompletion,
  type ChatCompletionContext,
} from '../../../src/formats/openai-chat/encode-response.ts';
import { mapFinishReason } from '../../../src/formats/openai-chat/map-finish-reason.ts';
import { encodeUsage } from '../../../src/formats/openai-chat/map-usage.ts';
import { parallelToolParts, reasoningParts, textParts, usage } from './stream-parts-fixtures.ts';
import { replay } from '../../support/canonical-parts.ts';

const context: ChatCompletionContext = { id: 'chatcmpl-test', created: 1_700_000_000, model: 'test-model' };

const recorded = JSON.parse(readFileSync(new URL('./fixtures/openai-recorded-completion.json', import.meta.url), 'utf8')) as Record<
  string,
  unknown
>;

describe('encodeChatCompletion', () => {
  test('text answer: the full chat.completion object', async () => {
    const completion = encodeChatCompletion(await assembleResult(replay(textParts)), context);
    assert.deepEqual(completion, {
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'test-model',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'Hello, "world"\n', refusal: null }, logprobs: null, finish_reason: 'stop' },
      ],
      usage: {
        prompt_tokens: 16,
        completion_tokens: 9,
        total_tokens: 25,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 3 },
      },
    });
  });

  test('has the fields of a real OpenAI body, in the same order (OpenAI-only extras aside)', async () => {
    const completion = encodeChatCompletion(await assembleResult(replay(textParts)), context);
    // system_fingerprint: OpenAI's is a string naming its backend; we have none, so it is omitted (never null).
    const openAiOnly = new Set(['service_tier', 'system_fingerprint']);
    assert.deepEqual(
      Object.keys(completion),
      Object.keys(recorded).filter((key) => !openAiOnly.has(key)),
    );
    const recordedChoice = (recorded['choices'] as Array<Record<string, unknown>>)[0]!;
    assert.deepEqual(Object.keys(completion.choices[0]!), Object.keys(recordedChoice));
    const recordedMessage = recordedChoice['message'] as Record<string, unknown>;
    assert.deepEqual(
      Object.keys(completion.choices[0]!.message),
      Object.keys(recordedMessage).filter((key) => key !== 'annotations'),
    );
    const recordedUsage = recorded['usage'] as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(completion.usage), Object.keys(recordedUsage));
    assert.ok('cached_tokens' in recordedUsage['prompt_tokens_details']!);
    assert.ok('reasoning_tokens' in recordedUsage['completion_tokens_details']!);
  });

  test('tool calls only: content null, tool_calls in call order, empty arguments become {}', async () => {
    const parts = parallelToolParts.filter((part) => !part.type.startsWith('text-'));
    const completion = encodeChatCompletion(await assembleResult(replay(parts)), context);
    const choice = completion.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.deepEqual(choice.message, {
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [
        { id: 'call_weather', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_time', type: 'function', function: { name: 'get_time', arguments: '{}' } },
      ],
    });
  });

  test('text and tool calls together keep both', async () => {
    const completion = encodeChatCompletion(await assembleResult(replay(parallelToolParts)), context);
    assert.equal(completion.choices[0]!.message.content, 'Checking.');
    assert.equal(completion.choices[0]!.message.tool_calls?.length, 2);
  });

  test('reasoning goes to message.reasoning_content; stop-sequence finishes as stop', async () => {
    const completion = encodeChatCompletion(await assembleResult(replay(reasoningParts)), context);
    assert.deepEqual(completion.choices[0]!.message, {
      role: 'assistant',
      content: 'Answer.',
      refusal: null,
      reasoning_content: 'Thinking.',
    });
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
  });

  test('finish reasons map to the chat spellings', () => {
    const expected: Record<FinishReason, string> = {
      stop: 'stop',
      'stop-sequence': 'stop',
      length: 'length',
      'tool-calls': 'tool_calls',
      'content-filter': 'content_filter',
      error: 'stop',
    };
    for (const [canonical, chat] of Object.entries(expected)) assert.equal(mapFinishReason(canonical as FinishReason), chat);
  });

  test('usage: prompt counts cached tokens, completion counts reasoning tokens', () => {
    assert.deepEqual(
      encodeUsage({ ...usage, inputTokens: 100, cachedInputTokens: 60, cacheWriteInputTokens: 10, outputTokens: 50, reasoningTokens: 20 }),
      {
        prompt_tokens: 100,
        completion_tokens: 50,
        total_tokens: 150,
        prompt_tokens_details: { cached_tokens: 60 },
        completion_tokens_details: { reasoning_tokens: 20 },
      },
    );
  });

  test('createChatCompletionContext: chatcmpl- id, Unix seconds, the model given', () => {
    const created = createChatCompletionContext('m1');
    assert.match(created.id, /^chatcmpl-[A-Za-z0-9]{29}$/);
    assert.ok(Number.isInteger(created.created) && created.created > 1_600_000_000 && created.created < 10_000_000_000);
    assert.equal(created.model, 'm1');
    assert.notEqual(createChatCompletionContext('m1').id, created.id);
  });
});
