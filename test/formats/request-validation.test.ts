/**
 * `requestValidation: spec | compatible` across the three generation decoders, item references on
 * /v1/responses and JSON-schema output on /v1/messages: every relaxation is accepted in `compatible`
 * and refused exactly as the SPEC says in `spec`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isServiceError } from '../../src/core/service-error.ts';
import { decodeMessagesRequest } from '../../src/formats/anthropic-messages/decode-request.ts';
import { decodeChatCompletionRequest } from '../../src/formats/openai-chat/decode-request.ts';
import { decodeResponsesRequest } from '../../src/formats/openai-responses/decode-request.ts';
import { readConversation } from '../../src/formats/openai-responses/decode-messages.ts';
import { resolveItemReferences } from '../../src/services/responses/prepare-turn.ts';
import type { ResponseItem } from '../../src/formats/openai-responses/wire-types.ts';
import type { DecodeOptions } from '../../src/formats/shared/decode-options.ts';

const SPEC: DecodeOptions = { validation: 'spec' };
const COMPATIBLE: DecodeOptions = { validation: 'compatible' };

function refused(run: () => unknown, code: string, param: string): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(isServiceError(error), `expected a ServiceError, got ${String(error)}`);
    assert.deepEqual({ status: error.status, code: error.code, param: error.param }, { status: 400, code, param }, error.message);
    return true;
  });
}

describe('requestValidation on /v1/responses', () => {
  const body = (extra: Record<string, unknown>) => ({ model: 'm', input: 'Hi', ...extra });

  test('a missing max_output_tokens: 400 in spec, accepted (no cap, echoed null) in compatible', () => {
    refused(() => decodeResponsesRequest(body({}), SPEC), 'missing_parameter', 'max_output_tokens');
    refused(() => decodeResponsesRequest(body({})), 'missing_parameter', 'max_output_tokens');
    const decoded = decodeResponsesRequest(body({}), COMPATIBLE);
    assert.equal(decoded.request.maxOutputTokens, undefined);
    assert.equal(decoded.options.maxOutputTokens, undefined);
    assert.equal(decoded.options.echo.max_output_tokens, null);
    assert.equal(decoded.options.usedDeprecatedMaxTokens, false);
  });

  test('temperature up to 2 only in compatible', () => {
    refused(() => decodeResponsesRequest(body({ max_output_tokens: 5, temperature: 1.5 }), SPEC), 'invalid_parameter', 'temperature');
    assert.equal(decodeResponsesRequest(body({ max_output_tokens: 5, temperature: 1.5 }), COMPATIBLE).request.temperature, 1.5);
    refused(() => decodeResponsesRequest(body({ max_output_tokens: 5, temperature: 2.1 }), COMPATIBLE), 'invalid_parameter', 'temperature');
  });

  test('reasoning.effort minimal only in compatible, generated as low and echoed as sent', () => {
    refused(
      () => decodeResponsesRequest(body({ max_output_tokens: 5, reasoning: { effort: 'minimal' } }), SPEC),
      'invalid_parameter',
      'reasoning.effort',
    );
    const decoded = decodeResponsesRequest(body({ max_output_tokens: 5, reasoning: { effort: 'minimal' } }), COMPATIBLE);
    assert.equal(decoded.request.reasoningEffort, 'low');
    assert.equal(decoded.options.echo.reasoning.effort, 'minimal');
  });

  for (const options of [SPEC, COMPATIBLE]) {
    test(`item_reference items are placed where they stood and answered calls check out (${options.validation})`, () => {
      const call: ResponseItem = {
        id: 'fc_1',
        type: 'function_call',
        call_id: 'call_1',
        name: 'weather',
        arguments: '{}',
        status: 'completed',
      };
      const answer: ResponseItem = {
        id: 'msg_2',
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Sunny.', annotations: [] }],
      };
      const decoded = decodeResponsesRequest(
        {
          model: 'm',
          max_output_tokens: 20,
          input: [
            { role: 'user', content: 'Weather?' },
            { type: 'item_reference', id: 'fc_1' },
            { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
            { type: 'item_reference', id: 'msg_2' },
            { role: 'user', content: 'Thanks' },
          ],
        },
        options,
      );
      assert.deepEqual(
        decoded.itemReferences.map((reference) => [reference.index, reference.id, reference.param]),
        [
          [1, 'fc_1', 'input[1].id'],
          [3, 'msg_2', 'input[3].id'],
        ],
      );
      assert.deepEqual(decoded.request.messages, []);
      resolveItemReferences(
        decoded,
        new Map<string, ResponseItem>([
          ['fc_1', call],
          ['msg_2', answer],
        ]),
        readConversation,
      );
      assert.deepEqual(decoded.input.map((item) => item.id).slice(1, 4), ['fc_1', decoded.input[2]!.id, 'msg_2']);
      assert.deepEqual(
        decoded.request.messages.map((message: { role: string }) => message.role),
        ['user', 'assistant', 'tool', 'assistant', 'user'],
      );
      assert.deepEqual(decoded.itemReferences, []);
    });

    test(`an item_reference that resolves to nothing is a 400 naming input[i].id (${options.validation})`, () => {
      const decoded = decodeResponsesRequest(
        {
          model: 'm',
          max_output_tokens: 5,
          input: [
            { role: 'user', content: 'a' },
            { type: 'item_reference', id: 'msg_other' },
          ],
        },
        options,
      );
      refused(() => resolveItemReferences(decoded, new Map(), readConversation), 'invalid_parameter', 'input[1].id');
    });
  }
});

describe('requestValidation on /v1/messages', () => {
  const body = (extra: Record<string, unknown>) => ({ model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }], ...extra });

  test('consecutive user messages: 400 in spec, merged into one turn in compatible', () => {
    const messages = [
      { role: 'user', content: 'one' },
      { role: 'user', content: [{ type: 'text', text: 'two' }] },
      { role: 'assistant', content: 'three' },
      { role: 'assistant', content: 'four' },
    ];
    refused(() => decodeMessagesRequest(body({ messages }), SPEC), 'invalid_messages', 'messages[1].role');
    const { request } = decodeMessagesRequest(body({ messages }), COMPATIBLE);
    assert.deepEqual(request.messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'three' },
          { type: 'text', text: 'four' },
        ],
      },
    ]);
  });

  test('an assistant message first: 400 in spec, accepted in compatible', () => {
    const messages = [
      { role: 'assistant', content: 'Hello, how can I help?' },
      { role: 'user', content: 'Hi' },
    ];
    refused(() => decodeMessagesRequest(body({ messages }), SPEC), 'invalid_messages', 'messages[0].role');
    assert.equal(decodeMessagesRequest(body({ messages }), COMPATIBLE).request.messages[0]!.role, 'assistant');
  });

  test('a tool without description: 400 in spec, accepted in compatible', () => {
    const tools = [{ name: 'lookup', input_schema: { type: 'object', properties: {} } }];
    refused(() => decodeMessagesRequest(body({ tools }), SPEC), 'missing_parameter', 'tools[0].description');
    assert.deepEqual(decodeMessagesRequest(body({ tools }), COMPATIBLE).request.tools, [
      { name: 'lookup', inputSchema: { type: 'object', properties: {} } },
    ]);
  });

  test('temperature up to 2 only in compatible; top_p stays 0-1', () => {
    refused(() => decodeMessagesRequest(body({ temperature: 1.5 }), SPEC), 'invalid_parameter', 'temperature');
    assert.equal(decodeMessagesRequest(body({ temperature: 1.5 }), COMPATIBLE).request.temperature, 1.5);
    refused(() => decodeMessagesRequest(body({ top_p: 1.5 }), COMPATIBLE), 'invalid_parameter', 'top_p');
  });

  for (const options of [SPEC, COMPATIBLE]) {
    test(`output_config.format and output_format become the canonical json_schema format (${options.validation})`, () => {
      const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
      const expected = { type: 'json_schema', name: 'output', schema };
      assert.deepEqual(
        decodeMessagesRequest(body({ output_config: { format: { type: 'json_schema', schema } } }), options).request.responseFormat,
        expected,
      );
      assert.deepEqual(
        decodeMessagesRequest(body({ output_format: { type: 'json_schema', schema } }), options).request.responseFormat,
        expected,
      );
      assert.equal(decodeMessagesRequest(body({ output_config: {} }), options).request.responseFormat, undefined);
    });
  }
});

describe('requestValidation on /v1/chat/completions', () => {
  test('temperature up to 2 only in compatible', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'Hi' }], temperature: 2 };
    refused(() => decodeChatCompletionRequest(body, SPEC), 'invalid_parameter', 'temperature');
    assert.equal(decodeChatCompletionRequest(body, COMPATIBLE).request.temperature, 2);
  });
});
