import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeMessagesResponse, parseToolInput, toolUseId } from '../../../src/formats/anthropic-messages/encode-response.ts';
import { toAnthropicStopReason, toAnthropicStopSequence } from '../../../src/formats/anthropic-messages/map-finish-reason.ts';
import { toAnthropicUsage } from '../../../src/formats/anthropic-messages/map-usage.ts';
import type { GenerationResult } from '../../../src/core/assemble-result.ts';
import { answeredUsage, type Usage } from '../../../src/core/usage.ts';

function usage(inputTokens: number, outputTokens: number, cached = 0, cacheWrite = 0): Usage {
  return { ...answeredUsage(), inputTokens, cachedInputTokens: cached, cacheWriteInputTokens: cacheWrite, outputTokens };
}

describe('encodeMessagesResponse', () => {
  test('every content kind, stop reason and usage in the Anthropic shape', () => {
    const result: GenerationResult = {
      content: [
        { type: 'reasoning', text: 'Thinking it over.', signature: 'EqQBsig==' },
        { type: 'reasoning', text: '', redactedData: 'opaque' },
        { type: 'reasoning', text: 'From an upstream without signatures.' },
        { type: 'text', text: 'Let me check.' },
        { type: 'tool-call', id: 'toolu_01A', name: 'get_weather', input: '{"city":"Paris"}' },
        { type: 'tool-call', id: 'call_B', name: 'get_time', input: '' },
      ],
      finishReason: 'tool-calls',
      stopSequence: null,
      usage: usage(1000, 120, 600, 300),
      upstreamId: 'chatcmpl-upstream',
      upstreamModel: 'gpt-x',
    };
    assert.deepEqual(encodeMessagesResponse(result, { model: 'my-model', messageId: 'msg_fixed' }), {
      id: 'msg_fixed',
      type: 'message',
      role: 'assistant',
      model: 'my-model',
      content: [
        { type: 'thinking', thinking: 'Thinking it over.', signature: 'EqQBsig==' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'thinking', thinking: 'From an upstream without signatures.', signature: '' },
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'call_B', name: 'get_time', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      // input_tokens excludes cache reads (600) and writes (300).
      usage: {
        input_tokens: 100,
        output_tokens: 120,
        cache_creation_input_tokens: 300,
        cache_read_input_tokens: 600,
        cache_creation: { ephemeral_5m_input_tokens: 300, ephemeral_1h_input_tokens: 0 },
      },
    });
  });

  test('a new msg_ id when none is given; stop sequence reported', () => {
    const message = encodeMessagesResponse(
      { content: [{ type: 'text', text: 'one two' }], finishReason: 'stop-sequence', stopSequence: 'three', usage: usage(5, 2) },
      { model: 'm' },
    );
    assert.match(message.id, /^msg_[A-Za-z0-9]{24}$/);
    assert.equal(message.stop_reason, 'stop_sequence');
    assert.equal(message.stop_sequence, 'three');
  });

  test('invalid tool JSON from a backend becomes {} and the answer still goes out', () => {
    const message = encodeMessagesResponse(
      {
        content: [
          { type: 'tool-call', id: 'call_1', name: 'f', input: '{"city": "Par' },
          { type: 'tool-call', id: 'call_2', name: 'f', input: '[1,2]' },
          { type: 'tool-call', id: '', name: 'f', input: '{"ok":true}' },
        ],
        finishReason: 'tool-calls',
        stopSequence: null,
        usage: usage(1, 1),
      },
      { model: 'm' },
    );
    assert.deepEqual(message.content[0], { type: 'tool_use', id: 'call_1', name: 'f', input: {} });
    assert.deepEqual(message.content[1], { type: 'tool_use', id: 'call_2', name: 'f', input: {} });
    const third = message.content[2];
    assert.ok(third?.type === 'tool_use');
    assert.match(third.id, /^toolu_[A-Za-z0-9]{24}$/, 'an empty backend call id is replaced');
    assert.deepEqual(third.input, { ok: true });
  });
});

describe('mapping helpers', () => {
  test('stop reasons', () => {
    assert.equal(toAnthropicStopReason('stop'), 'end_turn');
    assert.equal(toAnthropicStopReason('length'), 'max_tokens');
    assert.equal(toAnthropicStopReason('stop-sequence'), 'stop_sequence');
    assert.equal(toAnthropicStopReason('tool-calls'), 'tool_use');
    assert.equal(toAnthropicStopReason('content-filter'), 'refusal');
    assert.equal(toAnthropicStopReason('error'), 'end_turn');
    assert.equal(toAnthropicStopSequence('stop', 'x'), null);
    assert.equal(toAnthropicStopSequence('stop-sequence', undefined), null);
  });

  test('usage never goes negative and still adds up to the prompt when a backend over-reports cache tokens', () => {
    // A prompt of 10 with 8 read and 5 written: the reads are kept, the writes held to the 2 left.
    assert.deepEqual(toAnthropicUsage(usage(10, 3, 8, 5)), {
      input_tokens: 0,
      output_tokens: 3,
      cache_creation_input_tokens: 2,
      cache_read_input_tokens: 8,
      cache_creation: { ephemeral_5m_input_tokens: 2, ephemeral_1h_input_tokens: 0 },
    });
  });

  test('parseToolInput and toolUseId', () => {
    assert.deepEqual(parseToolInput('  '), {});
    assert.deepEqual(parseToolInput('{"a":{"b":[1]}}'), { a: { b: [1] } });
    assert.equal(toolUseId('call_x'), 'call_x');
  });
});
