import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assembleResult } from '../../../src/core/assemble-result.ts';
import { serverError, ServiceError } from '../../../src/core/service-error.ts';
import { decodeResponsesRequest } from '../../../src/formats/openai-responses/decode-request.ts';
import {
  createResponseContext,
  encodeResponse,
  encodeResponseError,
  type ResponseContext,
} from '../../../src/formats/openai-responses/encode-response.ts';
import { mapFinishReason } from '../../../src/formats/openai-responses/map-finish-reason.ts';
import { encodeUsage } from '../../../src/formats/openai-responses/map-usage.ts';
import { lengthParts, parallelToolParts, reasoningParts, textParts, usage } from './stream-parts-fixtures.ts';
import { RESPONSE_SPEC_FIELDS } from './spec-fields.ts';
import { replay } from '../../support/canonical-parts.ts';

function contextFor(body: Record<string, unknown> = {}): ResponseContext {
  return createResponseContext(decodeResponsesRequest({ model: 'test-model', input: 'Hi', max_output_tokens: 50, ...body }).options);
}

describe('encodeResponse', () => {
  test('a text answer: every SPEC field in the SPEC order, a resp_ id of 48 hex, a msg_ message item', async () => {
    const context = contextFor({ instructions: 'Be kind.', metadata: { a: 'b' }, user: 'u1' });
    const response = encodeResponse(await assembleResult(replay(textParts)), context);
    assert.deepEqual(Object.keys(response), RESPONSE_SPEC_FIELDS);
    assert.match(response.id, /^resp_[0-9a-f]{48}$/);
    assert.equal(response.object, 'response');
    assert.ok(Number.isInteger(response.created_at) && Math.abs(response.created_at - Date.now() / 1000) < 60);
    assert.equal(response.status, 'completed');
    assert.equal(response.error, null);
    assert.equal(response.incomplete_details, null);
    assert.equal(response.instructions, 'Be kind.');
    assert.equal(response.max_output_tokens, 50);
    assert.equal(response.model, 'test-model');
    assert.equal(response.output.length, 1);
    const item = response.output[0]!;
    assert.match(item.id, /^msg_[0-9a-f]{48}$/);
    assert.deepEqual(
      { ...item, id: 'x' },
      {
        id: 'x',
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Hello, world!', annotations: [] }],
      },
    );
    assert.equal(response.parallel_tool_calls, true);
    assert.equal(response.previous_response_id, null);
    assert.deepEqual(response.reasoning, { effort: null, summary: null });
    assert.equal(response.store, true);
    assert.equal(response.temperature, 0.7);
    assert.deepEqual(response.text, { format: { type: 'text' } });
    assert.equal(response.tool_choice, 'auto');
    assert.deepEqual(response.tools, []);
    assert.equal(response.top_p, 1);
    assert.equal(response.truncation, 'disabled');
    assert.equal(response.user, 'u1');
    assert.deepEqual(response.metadata, { a: 'b' });
    assert.deepEqual(response.usage, {
      input_tokens: 12,
      input_tokens_details: { cached_tokens: 2, cache_write_tokens: 0, text_tokens: 12, audio_tokens: 0 },
      output_tokens: 9,
      output_tokens_details: { reasoning_tokens: 3, text_tokens: 6, audio_tokens: 0 },
      total_tokens: 21,
    });
  });

  test('function calls become fc_ items with the canonical call id as call_id, in start order', async () => {
    const response = encodeResponse(await assembleResult(replay(parallelToolParts)), contextFor());
    assert.equal(response.status, 'completed');
    assert.deepEqual(
      response.output.map((item) => ({ ...item, id: item.id.slice(0, 3) })),
      [
        { id: 'fc_', type: 'function_call', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
        { id: 'fc_', type: 'function_call', call_id: 'call_b', name: 'get_time', arguments: '{"zone":"CET"}', status: 'completed' },
      ],
    );
  });

  test('reasoning becomes rs_ items: text in content, the signature or redacted data in encrypted_content', async () => {
    const response = encodeResponse(await assembleResult(replay(reasoningParts)), contextFor());
    assert.deepEqual(
      response.output.map((item) => ({ ...item, id: item.id.slice(0, 3) })),
      [
        {
          id: 'rs_',
          type: 'reasoning',
          summary: [],
          content: [{ type: 'reasoning_text', text: 'Let me think.' }],
          encrypted_content: 'sig-abc',
          status: 'completed',
        },
        { id: 'rs_', type: 'reasoning', summary: [], content: [], encrypted_content: 'redacted:opaque-data', status: 'completed' },
        {
          id: 'msg',
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Answer.', annotations: [] }],
        },
      ],
    );
  });

  test('an answer cut by max_output_tokens is incomplete, with the reason and the cut item incomplete', async () => {
    const response = encodeResponse(await assembleResult(replay(lengthParts)), contextFor());
    assert.equal(response.status, 'incomplete');
    assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(response.output[0]!.status, 'incomplete');
  });

  test('finish reasons map to statuses', () => {
    assert.equal(mapFinishReason('stop').status, 'completed');
    assert.equal(mapFinishReason('stop-sequence').status, 'completed');
    assert.equal(mapFinishReason('tool-calls').status, 'completed');
    assert.deepEqual(mapFinishReason('content-filter'), {
      status: 'incomplete',
      incompleteDetails: { reason: 'content_filter' },
      error: null,
    });
    assert.equal(mapFinishReason('error').status, 'failed');
  });

  test('the echo reflects tools, tool_choice, text format and reasoning as the request gave them', async () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const context = contextFor({
      tools: [{ type: 'function', name: 'f', parameters: schema, strict: false }],
      tool_choice: 'required',
      text: { format: { type: 'json_schema', name: 'out', schema } },
      reasoning: { effort: 'low' },
      temperature: 0,
      top_p: 0.5,
      truncation: 'auto',
      store: false,
      previous_response_id: 'resp_prev',
      max_tokens: 50,
      max_output_tokens: null,
    });
    const response = encodeResponse(await assembleResult(replay(textParts)), context);
    assert.deepEqual(response.tools, [{ type: 'function', name: 'f', description: null, parameters: schema, strict: false }]);
    assert.equal(response.tool_choice, 'required');
    assert.deepEqual(response.text, { format: { type: 'json_schema', name: 'out', schema, strict: null } });
    assert.deepEqual(response.reasoning, { effort: 'low', summary: null });
    assert.equal(response.temperature, 0);
    assert.equal(response.top_p, 0.5);
    assert.equal(response.truncation, 'auto');
    assert.equal(response.store, false);
    assert.equal(response.previous_response_id, 'resp_prev');
    assert.equal(response.max_output_tokens, 50);
  });

  test('encodeUsage never reports negative text tokens; encodeResponseError maps statuses to response error codes', () => {
    assert.equal(encodeUsage({ ...usage, outputTokens: 1, reasoningTokens: 5 }).output_tokens_details.text_tokens, 0);
    assert.deepEqual(encodeResponseError(serverError('timeout', 'Too slow.')), {
      code: 'server_error',
      message: 'Too slow.',
      type: 'server_error',
      param: null,
    });
    const limited = new ServiceError({ status: 429, type: 'rate_limit_exceeded', code: 'upstream_rate_limited', message: 'Slow down.' });
    assert.equal(encodeResponseError(limited).code, 'rate_limit_exceeded');
  });
});
