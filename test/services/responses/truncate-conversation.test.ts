import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { countRequestTokens } from '../../../src/core/count-tokens.ts';
import type { GenerationRequest, Message } from '../../../src/core/generation.ts';
import { fitContextWindow } from '../../../src/services/responses/truncate-conversation.ts';

const words = (count: number, word: string): string => Array.from({ length: count }, () => word).join(' ');

/** Three turns of about 100 tokens each; turn 2 has a tool call and its result. */
function conversation(): GenerationRequest {
  const messages: Message[] = [
    { role: 'user', content: [{ type: 'text', text: words(50, 'alpha') }] },
    { role: 'assistant', content: [{ type: 'text', text: words(50, 'beta') }] },
    { role: 'user', content: [{ type: 'text', text: words(40, 'gamma') }] },
    {
      role: 'assistant',
      content: [{ type: 'tool-call', id: 'call_1', name: 'lookup', input: JSON.stringify({ query: words(10, 'delta') }) }],
    },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'lookup', content: words(40, 'epsilon') }] },
    { role: 'user', content: [{ type: 'text', text: words(50, 'zeta') }] },
  ];
  return { model: 'small-model', system: 'Follow the rules.', messages, maxOutputTokens: 100 };
}

describe('fitContextWindow', () => {
  test('a request that fits is left alone, whatever the mode', () => {
    for (const truncation of ['auto', 'disabled'] as const) {
      const request = conversation();
      const outcome = fitContextWindow(request, { truncation, contextWindow: 10_000, maxOutputTokens: 100 });
      assert.equal(outcome.droppedMessages, 0);
      assert.equal(outcome.promptTokens, countRequestTokens(request));
      assert.equal(request.messages.length, 6);
    }
  });

  test('disabled: a request that does not fit is a 400 invalid_parameter on input saying it is too long', () => {
    const request = conversation();
    const tokens = countRequestTokens(request);
    assert.throws(
      () => fitContextWindow(request, { truncation: 'disabled', contextWindow: tokens + 50, maxOutputTokens: 100 }),
      (error: any) => {
        assert.equal(error.status, 400);
        assert.equal(error.code, 'invalid_parameter');
        assert.equal(error.param, 'input');
        assert.match(error.message, /too long for model 'small-model'/);
        assert.match(error.message, /truncation/);
        return true;
      },
    );
    assert.equal(request.messages.length, 6, 'nothing is dropped');
  });

  test('auto: the oldest whole turns go first, never splitting a tool call from its result', () => {
    const request = conversation();
    const full = countRequestTokens(request);
    // Room for everything but the first turn.
    const withoutFirst = countRequestTokens({ ...request, messages: request.messages.slice(2) });
    const outcome = fitContextWindow(request, { truncation: 'auto', contextWindow: withoutFirst + 100, maxOutputTokens: 100 });
    assert.equal(outcome.droppedMessages, 2);
    assert.equal(outcome.promptTokens, withoutFirst);
    assert.ok(withoutFirst < full);
    assert.deepEqual(
      request.messages.map((message) => message.role),
      ['user', 'assistant', 'tool', 'user'],
    );
    assert.equal(request.system, 'Follow the rules.', 'instructions are kept');
  });

  test('auto: down to the last user turn, which is always kept', () => {
    const request = conversation();
    const lastOnly = countRequestTokens({ ...request, messages: request.messages.slice(5) });
    const outcome = fitContextWindow(request, { truncation: 'auto', contextWindow: lastOnly + 100, maxOutputTokens: 100 });
    assert.equal(outcome.droppedMessages, 5);
    assert.equal(request.messages.length, 1);
    assert.equal(outcome.promptTokens, lastOnly);
  });

  test('auto: when even the last user turn is too long, the 400 says so', () => {
    const request = conversation();
    const lastOnly = countRequestTokens({ ...request, messages: request.messages.slice(5) });
    assert.throws(
      () => fitContextWindow(request, { truncation: 'auto', contextWindow: lastOnly + 99, maxOutputTokens: 100 }),
      (error: any) => {
        assert.equal(error.param, 'input');
        assert.match(error.message, /last user turn alone is too long/);
        return true;
      },
    );
  });

  test('max_output_tokens that fills the whole window is blamed on max_output_tokens', () => {
    assert.throws(() => fitContextWindow(conversation(), { truncation: 'auto', contextWindow: 100, maxOutputTokens: 100 }), {
      code: 'invalid_parameter',
      param: 'max_output_tokens',
    });
  });
});
