/**
 * The response-style endpoint's own steps (services/responses/prepare-turn.ts) on decoded requests. Item
 * references and the stored chain are tested with the decoder (test/formats/request-validation.test.ts,
 * test/formats/openai-responses/decode-request.test.ts) and end to end (test/e2e/responses.test.ts).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeResponsesRequest, type DecodedResponsesRequest } from '../../../src/formats/openai-responses/decode-request.ts';
import { applyReasoningBudget } from '../../../src/services/responses/prepare-turn.ts';

const base = { model: 'test-model', input: 'Hello', max_output_tokens: 100 };

function decode(overrides: Record<string, unknown>): DecodedResponsesRequest {
  return decodeResponsesRequest({ ...base, ...overrides });
}

describe('applyReasoningBudget', () => {
  test('applyReasoningBudget maps the effort to a budget below max_output_tokens, for thinking models only', () => {
    const budgetFor = (effort: 'low' | 'medium' | 'high', maxOutputTokens: number, thinking: boolean) => {
      const { request } = decode({ reasoning: { effort }, max_output_tokens: maxOutputTokens });
      applyReasoningBudget(request, thinking);
      assert.equal(request.reasoningEffort, effort);
      return request.thinking?.budgetTokens;
    };
    assert.equal(budgetFor('low', 32_000, true), 1024);
    assert.equal(budgetFor('medium', 32_000, true), 4096);
    assert.equal(budgetFor('high', 32_000, true), 16_384);
    assert.equal(budgetFor('high', 8000, true), 7999);
    assert.equal(budgetFor('medium', 1024, true), undefined, 'no room for the minimum budget of 1024');
    assert.equal(budgetFor('high', 32_000, false), undefined);
    const { request } = decode({});
    applyReasoningBudget(request, true);
    assert.equal(request.thinking, undefined);
  });
});
