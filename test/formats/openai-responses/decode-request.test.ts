import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isServiceError } from '../../../src/core/service-error.ts';
import {
  decodeInputItemsQuery,
  decodeResponsesRequest,
  type DecodedResponsesRequest,
} from '../../../src/formats/openai-responses/decode-request.ts';
import { readConversation } from '../../../src/formats/openai-responses/decode-messages.ts';
import type { ResponseItem } from '../../../src/formats/openai-responses/wire-types.ts';

const base = { model: 'test-model', input: 'Hello', max_output_tokens: 100 };

function decode(overrides: Record<string, unknown>): DecodedResponsesRequest {
  return decodeResponsesRequest({ ...base, ...overrides });
}

/** Asserts a 400 with the given code and param. */
function rejects(body: unknown, code: string, param: string | null, message?: RegExp): void {
  assert.throws(
    () => decodeResponsesRequest(body),
    (error: unknown) => {
      assert.ok(isServiceError(error), `expected a ServiceError, got ${String(error)}`);
      assert.equal(error.status, 400);
      assert.equal(error.type, 'invalid_request_error');
      assert.equal(error.code, code, error.message);
      assert.equal(error.param, param, error.message);
      if (message !== undefined) assert.match(error.message, message);
      return true;
    },
  );
}

const rejectsWith = (overrides: Record<string, unknown>, code: string, param: string | null, message?: RegExp): void =>
  rejects({ ...base, ...overrides }, code, param, message);

describe('decodeResponsesRequest: the minimal request and the SPEC defaults', () => {
  test('a string input becomes one user message and one stored input item with a msg_ id', () => {
    const decoded = decode({});
    assert.deepEqual(decoded.request, {
      model: 'test-model',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      temperature: 0.7,
      maxOutputTokens: 100,
      parallelToolCalls: true,
    });
    assert.equal(decoded.input.length, 1);
    const item = decoded.input[0]!;
    assert.match(item.id, /^msg_[0-9a-f]{48}$/);
    assert.deepEqual(
      { ...item, id: 'x' },
      { id: 'x', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'Hello' }] },
    );
  });

  test('options and echo carry every SPEC default', () => {
    const { options } = decode({});
    assert.equal(options.stream, false);
    assert.equal(options.store, true);
    assert.equal(options.previousResponseId, null);
    assert.equal(options.truncation, 'disabled');
    assert.equal(options.usedDeprecatedMaxTokens, false);
    assert.deepEqual(options.ignoredParameters, []);
    assert.deepEqual(options.echo, {
      instructions: null,
      max_output_tokens: 100,
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      store: true,
      temperature: 0.7,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [],
      top_p: 1,
      truncation: 'disabled',
      user: null,
      metadata: {},
    });
  });

  test('every optional field is decoded and echoed', () => {
    const decoded = decode({
      instructions: 'Be brief.',
      temperature: 0.2,
      top_p: 0.9,
      stream: true,
      parallel_tool_calls: false,
      truncation: 'auto',
      user: 'user-1',
      metadata: { project: 'alpha' },
      store: false,
      previous_response_id: 'resp_abc',
      reasoning: { effort: 'medium' },
    });
    assert.equal(decoded.request.system, 'Be brief.');
    assert.equal(decoded.request.temperature, 0.2);
    assert.equal(decoded.request.topP, 0.9);
    assert.equal(decoded.request.parallelToolCalls, false);
    assert.equal(decoded.request.user, 'user-1');
    assert.deepEqual(decoded.request.metadata, { project: 'alpha' });
    assert.equal(decoded.request.reasoningEffort, 'medium');
    assert.equal(decoded.options.stream, true);
    assert.equal(decoded.options.store, false);
    assert.equal(decoded.options.truncation, 'auto');
    assert.equal(decoded.options.previousResponseId, 'resp_abc');
    assert.equal(decoded.options.instructionsText, 'Be brief.');
    assert.equal(decoded.options.echo.instructions, 'Be brief.');
    assert.equal(decoded.options.echo.top_p, 0.9);
    assert.deepEqual(decoded.options.echo.reasoning, { effort: 'medium', summary: null });
  });

  test('unknown top-level fields are ignored, as SDKs add new ones', () => {
    assert.equal(decode({ some_new_field: 1, service_tier: 'auto', include: ['reasoning.encrypted_content'] }).request.model, 'test-model');
  });
});

describe('decodeResponsesRequest: model, body and max_output_tokens', () => {
  test('the body must be an object', () => {
    rejects('text', 'invalid_format', null);
    rejects([], 'invalid_format', null);
  });

  test('model is required, a string, not empty', () => {
    rejects({ input: 'x', max_output_tokens: 5 }, 'missing_parameter', 'model');
    rejectsWith({ model: 5 }, 'invalid_format', 'model');
    rejectsWith({ model: '' }, 'invalid_parameter', 'model');
  });

  test('max_output_tokens is required and >= 1 (SPEC)', () => {
    rejects({ model: 'm', input: 'x' }, 'missing_parameter', 'max_output_tokens');
    // Its details name the setting that accepts the SDK's call without it (issue 40 item 10).
    assert.throws(
      () => decodeResponsesRequest({ model: 'm', input: 'x' }),
      (error: unknown) =>
        isServiceError(error) &&
        error.details?.['setting'] === 'REQUEST_VALIDATION=compatible' &&
        /REQUEST_VALIDATION=compatible to accept requests without it/.test(String(error.details['hint'])),
    );
    rejectsWith({ max_output_tokens: 0 }, 'invalid_parameter', 'max_output_tokens', /minimum of 1/);
    rejectsWith({ max_output_tokens: 2.5 }, 'invalid_parameter', 'max_output_tokens');
    rejectsWith({ max_output_tokens: '10' }, 'invalid_format', 'max_output_tokens');
  });

  test('max_tokens is the deprecated alias: accepted, flagged, and must agree with max_output_tokens', () => {
    const decoded = decodeResponsesRequest({ model: 'm', input: 'x', max_tokens: 42 });
    assert.equal(decoded.request.maxOutputTokens, 42);
    assert.equal(decoded.options.maxOutputTokens, 42);
    assert.equal(decoded.options.usedDeprecatedMaxTokens, true);
    assert.equal(decoded.options.echo.max_output_tokens, 42);
    assert.equal(decode({ max_tokens: 100 }).options.usedDeprecatedMaxTokens, false);
    rejectsWith({ max_tokens: 7 }, 'invalid_parameter', 'max_tokens', /differs/);
    rejects({ model: 'm', input: 'x', max_tokens: 0 }, 'invalid_parameter', 'max_tokens');
  });
});

describe('decodeResponsesRequest: sampling and simple fields', () => {
  test('temperature and top_p are 0.0-1.0 numbers', () => {
    rejectsWith({ temperature: 1.5 }, 'invalid_parameter', 'temperature', /maximum of 1.0/);
    rejectsWith({ temperature: -0.1 }, 'invalid_parameter', 'temperature');
    rejectsWith({ temperature: 'hot' }, 'invalid_format', 'temperature');
    rejectsWith({ top_p: 2 }, 'invalid_parameter', 'top_p');
    rejectsWith({ top_p: true }, 'invalid_format', 'top_p');
    assert.equal(decode({ temperature: null }).request.temperature, 0.7);
  });

  test('booleans, enums and strings have their types checked', () => {
    rejectsWith({ stream: 'yes' }, 'invalid_format', 'stream');
    rejectsWith({ store: 1 }, 'invalid_format', 'store');
    rejectsWith({ parallel_tool_calls: 'no' }, 'invalid_format', 'parallel_tool_calls');
    rejectsWith({ truncation: 'middle' }, 'invalid_parameter', 'truncation', /'auto', 'disabled'/);
    rejectsWith({ user: 5 }, 'invalid_format', 'user');
    rejectsWith({ previous_response_id: 5 }, 'invalid_format', 'previous_response_id');
    rejectsWith({ previous_response_id: '' }, 'invalid_parameter', 'previous_response_id');
  });

  test('metadata: at most 16 string pairs, keys up to 64 and values up to 512 characters', () => {
    const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, index) => [`k${index}`, 'v']));
    assert.equal(Object.keys(decode({ metadata: sixteen }).options.echo.metadata).length, 16);
    rejectsWith({ metadata: { ...sixteen, k16: 'v' } }, 'invalid_parameter', 'metadata', /at most 16/);
    rejectsWith({ metadata: { ['k'.repeat(65)]: 'v' } }, 'invalid_parameter', `metadata.${'k'.repeat(65)}`);
    rejectsWith({ metadata: { key: 'v'.repeat(513) } }, 'invalid_parameter', 'metadata.key');
    rejectsWith({ metadata: { key: 5 } }, 'invalid_format', 'metadata.key');
    rejectsWith({ metadata: ['a'] }, 'invalid_format', 'metadata');
  });

  test('features this service cannot provide are refused by name', () => {
    rejectsWith({ background: true }, 'invalid_parameter', 'background');
    rejectsWith({ conversation: 'conv_1' }, 'invalid_parameter', 'conversation');
    rejectsWith({ prompt: { id: 'pmpt_1' } }, 'invalid_parameter', 'prompt');
    rejectsWith({ top_logprobs: 3 }, 'invalid_parameter', 'top_logprobs');
    rejectsWith({ include: 'x' }, 'invalid_format', 'include');
    assert.deepEqual(decode({ background: false, max_tool_calls: 3 }).options.ignoredParameters, ['max_tool_calls']);
  });
});

describe('decodeResponsesRequest: input items', () => {
  test('input is required and not empty', () => {
    rejects({ model: 'm', max_output_tokens: 5 }, 'missing_parameter', 'input');
    rejectsWith({ input: '' }, 'invalid_parameter', 'input');
    rejectsWith({ input: [] }, 'invalid_parameter', 'input');
    rejectsWith({ input: 5 }, 'invalid_format', 'input');
    rejectsWith({ input: ['hi'] }, 'invalid_format', 'input[0]');
  });

  test('messages of every role; system and developer messages join the instructions in the system text', () => {
    const decoded = decode({
      instructions: 'Rule one.',
      input: [
        { role: 'developer', content: 'Rule two.' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'Hi' },
            { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low' },
          ],
        },
        {
          type: 'message',
          role: 'assistant',
          id: 'msg_prev',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Hello!', annotations: [] }],
        },
        { role: 'system', content: [{ type: 'input_text', text: 'Rule three.' }] },
        { role: 'user', content: 'And now?' },
      ],
    });
    assert.equal(decoded.request.system, 'Rule one.\n\nRule two.\n\nRule three.');
    assert.deepEqual(decoded.request.messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hi' },
          { type: 'image', url: 'https://example.com/a.png', detail: 'low' },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello!' }] },
      { role: 'user', content: [{ type: 'text', text: 'And now?' }] },
    ]);
    assert.equal(decoded.input.length, 5);
    assert.equal(decoded.input[2]!.id, 'msg_prev');
    assert.equal(decoded.options.imageParam, 'input[1].content[1]');
    assert.equal(decode({}).options.imageParam, null);
    assert.deepEqual(decoded.input[1], {
      id: decoded.input[1]!.id,
      type: 'message',
      role: 'user',
      status: 'completed',
      content: [
        { type: 'input_text', text: 'Hi' },
        { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low' },
      ],
    });
    for (const item of decoded.input) assert.match(item.id, /^msg_/);
  });

  test('images as data URLs carry their media type; files by data or URL become documents', () => {
    const decoded = decode({
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
            { type: 'input_file', file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' },
            { type: 'input_file', file_url: 'https://example.com/b.pdf' },
          ],
        },
      ],
    });
    assert.deepEqual(decoded.request.messages[0]!.content, [
      { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=', mediaType: 'image/png', detail: 'auto' },
      { type: 'document', url: 'data:application/pdf;base64,JVBERi0=', mediaType: 'application/pdf', title: 'a.pdf' },
      { type: 'document', url: 'https://example.com/b.pdf' },
    ]);
  });

  test('bad items and parts are refused with the path of the offending field', () => {
    const user = (content: unknown) => ({ input: [{ role: 'user', content }] });
    rejectsWith({ input: [{ content: 'x' }] }, 'missing_parameter', 'input[0].type');
    rejectsWith(
      { input: [{ type: 'web_search_call', id: 'ws_1' }] },
      'invalid_messages',
      'input[0].type',
      /'web_search_call' items are not supported/,
    );
    rejectsWith({ input: [{ type: 'item_reference' }] }, 'missing_parameter', 'input[0].id');
    rejectsWith({ input: [{ role: 'tool', content: 'x' }] }, 'invalid_messages', 'input[0].role');
    rejectsWith({ input: [{ role: 5, content: 'x' }] }, 'invalid_format', 'input[0].role');
    rejectsWith({ input: [{ role: 'user' }] }, 'missing_parameter', 'input[0].content');
    rejectsWith(user(5), 'invalid_format', 'input[0].content');
    rejectsWith(user([]), 'invalid_messages', 'input[0].content');
    rejectsWith(user([{ type: 'output_text', text: 'x' }]), 'invalid_messages', 'input[0].content[0].type');
    rejectsWith(user([{ type: 'input_text' }]), 'missing_parameter', 'input[0].content[0].text');
    rejectsWith(
      user([{ type: 'input_image', file_id: 'file-1', detail: 'auto' }]),
      'invalid_parameter',
      'input[0].content[0].file_id',
      /file id are not supported/,
    );
    rejectsWith(user([{ type: 'input_image', detail: 'auto' }]), 'missing_parameter', 'input[0].content[0].image_url');
    rejectsWith(user([{ type: 'input_image', image_url: 'ftp://x/y.png' }]), 'invalid_parameter', 'input[0].content[0].image_url');
    rejectsWith(
      user([{ type: 'input_image', image_url: 'data:text/plain;base64,eA==' }]),
      'invalid_parameter',
      'input[0].content[0].image_url',
    );
    rejectsWith(
      user([{ type: 'input_image', image_url: 'https://x/y.png', detail: 'huge' }]),
      'invalid_parameter',
      'input[0].content[0].detail',
    );
    rejectsWith(user([{ type: 'input_file', file_id: 'file-1' }]), 'invalid_parameter', 'input[0].content[0].file_id');
    rejectsWith(user([{ type: 'input_file', file_data: 'JVBERi0=' }]), 'invalid_parameter', 'input[0].content[0].file_data');
    rejectsWith(
      { input: [{ role: 'system', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }] },
      'invalid_messages',
      'input[0].content[0].type',
    );
    rejectsWith(
      {
        input: [
          { role: 'assistant', content: [{ type: 'input_text', text: 'x' }] },
          { role: 'user', content: 'y' },
        ],
      },
      'invalid_messages',
      'input[0].content[0].type',
    );
    rejectsWith({ input: [{ role: 'system', content: 'only rules' }] }, 'invalid_messages', 'input', /at least one user/);
  });
});

describe('decodeResponsesRequest: function calls and their outputs', () => {
  const call = { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' };
  const answer = { type: 'function_call_output', call_id: 'call_1', output: '{"temperature":21}' };

  test('a call and its output become an assistant turn and a tool turn named after the call', () => {
    const decoded = decode({ input: [{ role: 'user', content: 'Weather?' }, call, answer] });
    assert.deepEqual(decoded.request.messages.slice(1), [
      { role: 'assistant', content: [{ type: 'tool-call', id: 'call_1', name: 'get_weather', input: '{"city":"Paris"}' }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'get_weather', content: '{"temperature":21}' }] },
    ]);
    assert.match(decoded.input[1]!.id, /^fc_[0-9a-f]{48}$/);
    assert.match(decoded.input[2]!.id, /^fco_[0-9a-f]{48}$/);
    assert.equal((decoded.input[1] as { status: string }).status, 'completed');
  });

  test('parallel calls share one assistant turn; their outputs one tool turn; outputs may be content parts', () => {
    const decoded = decode({
      input: [
        { role: 'user', content: 'Two cities' },
        call,
        { ...call, call_id: 'call_2', arguments: '{"city":"Rome"}' },
        answer,
        { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'sunny' }] },
      ],
    });
    assert.equal(decoded.request.messages.length, 3);
    assert.equal(decoded.options.imageParam, null);
    assert.equal(decoded.request.messages[1]!.content.length, 2);
    assert.deepEqual(decoded.request.messages[2]!.content[1], {
      type: 'tool-result',
      toolCallId: 'call_2',
      toolName: 'get_weather',
      content: [{ type: 'text', text: 'sunny' }],
    });
  });

  test('an output that answers no call, a second answer, and an unanswered call are invalid_messages', () => {
    rejectsWith({ input: [{ role: 'user', content: 'x' }, answer] }, 'invalid_messages', 'input[1].call_id', /does not match/);
    rejectsWith(
      { input: [{ role: 'user', content: 'x' }, call, answer, answer] },
      'invalid_messages',
      'input[3].call_id',
      /already answered/,
    );
    rejectsWith(
      { input: [{ role: 'user', content: 'x' }, call, { role: 'user', content: 'y' }] },
      'invalid_messages',
      'input[2]',
      /No function_call_output found for the function call 'call_1'/,
    );
    rejectsWith({ input: [{ role: 'user', content: 'x' }, call] }, 'invalid_messages', 'input');
    rejectsWith(
      { input: [{ role: 'user', content: 'x' }, call, call, answer] },
      'invalid_messages',
      'input[2].call_id',
      /two function calls/,
    );
  });

  test('an image in a function_call_output is found for the vision check', () => {
    const decoded = decode({
      input: [
        { role: 'user', content: 'Look' },
        call,
        { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_image', image_url: 'https://example.com/chart.png' }] },
      ],
    });
    assert.equal(decoded.options.imageParam, 'input[2].output[0]');
    assert.deepEqual(decoded.request.messages[2]!.content[0], {
      type: 'tool-result',
      toolCallId: 'call_1',
      toolName: 'get_weather',
      content: [{ type: 'image', url: 'https://example.com/chart.png', detail: 'auto' }],
    });
  });

  test('bad call and output items', () => {
    rejectsWith({ input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'missing_parameter', 'input[0].call_id');
    rejectsWith({ input: [{ type: 'function_call', call_id: 'c', arguments: '{}' }] }, 'missing_parameter', 'input[0].name');
    rejectsWith({ input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }] }, 'invalid_format', 'input[0].arguments');
    rejectsWith({ input: [{ type: 'function_call_output', call_id: 'c' }] }, 'missing_parameter', 'input[0].output');
    rejectsWith({ input: [{ type: 'function_call_output', call_id: 'c', output: 5 }] }, 'invalid_format', 'input[0].output');
    rejectsWith(
      { input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_file', file_data: 'x' }] }] },
      'invalid_messages',
      'input[0].output[0].type',
    );
    rejectsWith(
      { input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: '{}', status: 'done' }] },
      'invalid_parameter',
      'input[0].status',
    );
  });

  test('with previous_response_id the call check waits for the stored chain (readConversation)', () => {
    const decoded = decode({ previous_response_id: 'resp_x', input: [answer] });
    assert.equal(decoded.request.messages[0]!.role, 'tool');
    const history: ResponseItem[] = [
      { id: 'msg_1', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'Weather?' }] },
      { id: 'msg_sys', type: 'message', role: 'developer', status: 'completed', content: [{ type: 'input_text', text: 'Earlier rule.' }] },
      { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
    ];
    readConversation(decoded, history);
    assert.equal(decoded.request.system, 'Earlier rule.');
    assert.deepEqual(
      decoded.request.messages.map((message) => message.role),
      ['user', 'assistant', 'tool'],
    );
    assert.equal((decoded.request.messages[2]!.content[0] as { toolName?: string }).toolName, 'get_weather');
  });

  test('readConversation with a history refuses an output that answers nothing in the chain, and a chain call left unanswered', () => {
    const orphan = decode({ previous_response_id: 'resp_x', input: [{ ...answer, call_id: 'call_9' }] });
    assert.throws(
      () =>
        readConversation(orphan, [
          { id: 'msg_1', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'x' }] },
        ]),
      {
        code: 'invalid_messages',
        param: 'input[0].call_id',
      },
    );
    const unanswered = decode({ previous_response_id: 'resp_x', input: 'next question' });
    assert.throws(
      () =>
        readConversation(unanswered, [
          { id: 'msg_1', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'x' }] },
          { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}', status: 'completed' },
        ]),
      { code: 'invalid_messages', param: 'input[0]' },
    );
  });

  test('reasoning items keep their text and pass the signature (or redacted data) back through encrypted_content', () => {
    const decoded = decode({
      input: [
        { role: 'user', content: 'Think' },
        { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'Hmm.' }], encrypted_content: 'sig-123' },
        { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: 'redacted:opaque' },
        { type: 'reasoning', id: 'rs_3', summary: [{ type: 'summary_text', text: 'only a summary' }] },
        { role: 'assistant', content: 'Done.' },
        { role: 'user', content: 'Again' },
      ],
    });
    assert.deepEqual(decoded.request.messages[1], {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Hmm.', signature: 'sig-123' },
        { type: 'reasoning', text: '', redactedData: 'opaque' },
        { type: 'text', text: 'Done.' },
      ],
    });
    rejectsWith(
      { input: [{ type: 'reasoning', content: [{ type: 'summary_text', text: 'x' }] }] },
      'invalid_messages',
      'input[0].content[0].type',
    );
  });
});

describe('decodeResponsesRequest: instructions', () => {
  test('an array of system/developer messages is joined and echoed', () => {
    const decoded = decode({
      instructions: [
        { role: 'system', content: 'One.' },
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Two.' }] },
      ],
    });
    assert.equal(decoded.request.system, 'One.\n\nTwo.');
    assert.deepEqual(decoded.options.echo.instructions, [
      { type: 'message', role: 'system', content: 'One.' },
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Two.' }] },
    ]);
  });

  test('bad instructions', () => {
    rejectsWith({ instructions: 5 }, 'invalid_format', 'instructions');
    rejectsWith({ instructions: [{ role: 'user', content: 'x' }] }, 'invalid_parameter', 'instructions[0].role');
    rejectsWith({ instructions: [{ role: 'system' }] }, 'missing_parameter', 'instructions[0].content');
    rejectsWith(
      { instructions: [{ role: 'system', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }] },
      'invalid_messages',
      'instructions[0].content[0].type',
    );
  });
});

describe('decodeResponsesRequest: tools and tool_choice', () => {
  const weather = {
    type: 'function',
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
    strict: true,
  };

  test('function tools are decoded and echoed; tool_choice variants map to the canonical choice', () => {
    const decoded = decode({
      tools: [weather, { type: 'function', name: 'noop' }],
      tool_choice: { type: 'function', name: 'get_weather' },
    });
    assert.deepEqual(decoded.request.tools, [
      { name: 'get_weather', description: 'Weather of a city', inputSchema: weather.parameters, strict: true },
      { name: 'noop', inputSchema: { type: 'object', properties: {} } },
    ]);
    assert.deepEqual(decoded.request.toolChoice, { type: 'tool', name: 'get_weather' });
    assert.deepEqual(decoded.options.echo.tools[1], {
      type: 'function',
      name: 'noop',
      description: null,
      parameters: { type: 'object', properties: {} },
      strict: null,
    });
    assert.deepEqual(decoded.options.echo.tool_choice, { type: 'function', name: 'get_weather' });
    assert.deepEqual(decode({ tools: [weather], tool_choice: 'required' }).request.toolChoice, { type: 'required' });
    assert.deepEqual(decode({ tool_choice: 'none' }).request.toolChoice, { type: 'none' });
    assert.equal(decode({ tool_choice: 'none' }).options.echo.tool_choice, 'none');
  });

  test('other tool types are refused by name, as are bad names and schemas', () => {
    rejectsWith({ tools: [{ type: 'web_search' }] }, 'invalid_parameter', 'tools[0].type', /'web_search' tools are not supported/);
    rejectsWith({ tools: [weather, { type: 'file_search', vector_store_ids: [] }] }, 'invalid_parameter', 'tools[1].type', /'file_search'/);
    rejectsWith({ tools: [{ ...weather, name: 'bad name' }] }, 'invalid_parameter', 'tools[0].name');
    rejectsWith({ tools: [weather, weather] }, 'invalid_parameter', 'tools[1].name', /twice/);
    rejectsWith({ tools: [{ ...weather, parameters: 'x' }] }, 'invalid_format', 'tools[0].parameters');
    rejectsWith({ tools: [{ type: 'function' }] }, 'missing_parameter', 'tools[0].name');
    rejectsWith({ tools: {} }, 'invalid_format', 'tools');
  });

  test('bad tool_choice values', () => {
    rejectsWith({ tool_choice: 'required' }, 'invalid_parameter', 'tool_choice', /at least one tool/);
    rejectsWith({ tool_choice: 'any' }, 'invalid_parameter', 'tool_choice');
    rejectsWith({ tools: [weather], tool_choice: { type: 'function', name: 'other' } }, 'invalid_parameter', 'tool_choice.name');
    rejectsWith({ tools: [weather], tool_choice: { type: 'web_search_preview' } }, 'invalid_parameter', 'tool_choice.type');
    rejectsWith({ tools: [weather], tool_choice: 5 }, 'invalid_format', 'tool_choice');
  });
});

describe('decodeResponsesRequest: text.format and reasoning', () => {
  const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };

  test('json_schema and json_object formats', () => {
    const decoded = decode({ text: { format: { type: 'json_schema', name: 'answer', schema, strict: true } } });
    assert.deepEqual(decoded.request.responseFormat, { type: 'json_schema', name: 'answer', schema, strict: true });
    assert.deepEqual(decoded.options.echo.text, { format: { type: 'json_schema', name: 'answer', schema, strict: true } });
    assert.deepEqual(decode({ text: { format: { type: 'json_object' } } }).request.responseFormat, { type: 'json_object' });
    assert.deepEqual(decode({ text: { format: { type: 'text' } } }).request.responseFormat, { type: 'text' });
    const verbose = decode({ text: { verbosity: 'low' } });
    assert.deepEqual(verbose.options.echo.text, { format: { type: 'text' }, verbosity: 'low' });
    assert.deepEqual(verbose.options.ignoredParameters, ['text.verbosity']);
  });

  test('bad text formats', () => {
    rejectsWith({ text: 'json' }, 'invalid_format', 'text');
    rejectsWith({ text: { format: { type: 'xml' } } }, 'invalid_parameter', 'text.format.type');
    rejectsWith({ text: { format: { type: 'json_schema', schema } } }, 'missing_parameter', 'text.format.name');
    rejectsWith({ text: { format: { type: 'json_schema', name: 'a b', schema } } }, 'invalid_parameter', 'text.format.name');
    rejectsWith({ text: { format: { type: 'json_schema', name: 'a' } } }, 'missing_parameter', 'text.format.schema');
    rejectsWith({ text: { format: { type: 'json_schema', name: 'a', schema: [] } } }, 'invalid_format', 'text.format.schema');
  });

  test('reasoning.effort is low, medium or high (SPEC); a summary is echoed but not produced', () => {
    rejectsWith({ reasoning: { effort: 'minimal' } }, 'invalid_parameter', 'reasoning.effort', /'low', 'medium', 'high'/);
    rejectsWith({ reasoning: 'high' }, 'invalid_format', 'reasoning');
    const decoded = decode({ reasoning: { effort: 'high', summary: 'auto' } });
    assert.deepEqual(decoded.options.echo.reasoning, { effort: 'high', summary: 'auto' });
    assert.deepEqual(decoded.options.ignoredParameters, ['reasoning.summary']);
  });
});

describe('decodeInputItemsQuery', () => {
  test('defaults and valid values', () => {
    assert.deepEqual(decodeInputItemsQuery(undefined), { after: null, limit: 20, order: 'desc' });
    assert.deepEqual(decodeInputItemsQuery({ after: 'msg_1', limit: '100', order: 'asc', include: ['x'] }), {
      after: 'msg_1',
      limit: 100,
      order: 'asc',
    });
  });

  test('limit is 1-100 and order asc|desc', () => {
    assert.throws(() => decodeInputItemsQuery({ limit: '0' }), { code: 'invalid_parameter', param: 'limit' });
    assert.throws(() => decodeInputItemsQuery({ limit: '101' }), { code: 'invalid_parameter', param: 'limit' });
    assert.throws(() => decodeInputItemsQuery({ limit: 'ten' }), { code: 'invalid_format', param: 'limit' });
    assert.throws(() => decodeInputItemsQuery({ order: 'newest' }), { code: 'invalid_parameter', param: 'order' });
    assert.throws(() => decodeInputItemsQuery({ after: ['a', 'b'] }), { code: 'invalid_format', param: 'after' });
  });
});
