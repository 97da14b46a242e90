import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeCountTokensRequest, decodeMessagesRequest } from '../../../src/formats/anthropic-messages/decode-request.ts';
import { ServiceError } from '../../../src/core/service-error.ts';

const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

function base(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'builtin-echo', max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }], ...overrides };
}

/** A conversation where the assistant called get_weather with id toolu_1. */
function withToolTurn(userFollowUp: unknown): Record<string, unknown> {
  return base({
    tools: [WEATHER_TOOL],
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: userFollowUp },
    ],
  });
}

function expectError(body: unknown, code: string, param: string | null, decode: (body: unknown) => unknown = decodeMessagesRequest): void {
  assert.throws(
    () => decode(body),
    (error: unknown) => {
      assert.ok(error instanceof ServiceError, `expected a ServiceError, got ${String(error)}`);
      assert.equal(error.status, 400);
      assert.equal(error.type, 'invalid_request_error');
      assert.deepEqual({ code: error.code, param: error.param }, { code, param }, error.message);
      assert.ok(error.message.length > 0);
      return true;
    },
  );
}

describe('decodeMessagesRequest: valid requests', () => {
  test('minimal request: string content becomes a text block, defaults applied', () => {
    const decoded = decodeMessagesRequest(base());
    assert.deepEqual(decoded, {
      request: { model: 'builtin-echo', maxOutputTokens: 256, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }] },
      stream: false,
      serviceTier: 'auto',
    });
  });

  test('every optional field maps onto the canonical request', () => {
    const decoded = decodeMessagesRequest(
      base({
        max_tokens: 4096,
        system: [
          { type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: 'Answer in French.' },
        ],
        temperature: 0.2,
        top_p: 0.9,
        top_k: 40,
        stop_sequences: ['END', '###'],
        stream: true,
        tools: [WEATHER_TOOL],
        tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
        thinking: { type: 'enabled', budget_tokens: 2048 },
        metadata: { user_id: 'user-42' },
        service_tier: 'standard_only',
      }),
    );
    assert.equal(decoded.stream, true);
    assert.equal(decoded.serviceTier, 'standard_only');
    assert.deepEqual(decoded.request, {
      model: 'builtin-echo',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      maxOutputTokens: 4096,
      system: 'You are terse.\nAnswer in French.',
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      stopSequences: ['END', '###'],
      tools: [{ name: 'get_weather', description: 'Current weather for a city.', inputSchema: WEATHER_TOOL.input_schema }],
      toolChoice: { type: 'tool', name: 'get_weather' },
      parallelToolCalls: false,
      thinking: { budgetTokens: 2048 },
      user: 'user-42',
    });
  });

  test('tool_choice spellings', () => {
    const tools = [WEATHER_TOOL];
    assert.deepEqual(decodeMessagesRequest(base({ tools, tool_choice: { type: 'auto' } })).request.toolChoice, { type: 'auto' });
    assert.deepEqual(decodeMessagesRequest(base({ tools, tool_choice: { type: 'any' } })).request.toolChoice, { type: 'required' });
    assert.deepEqual(decodeMessagesRequest(base({ tools, tool_choice: { type: 'none' } })).request.toolChoice, { type: 'none' });
    assert.deepEqual(decodeMessagesRequest(base({ tools, tool_choice: 'any' })).request.toolChoice, { type: 'required' });
    assert.deepEqual(decodeMessagesRequest(base({ tool_choice: 'auto' })).request.toolChoice, { type: 'auto' });
  });

  test("thinking 'disabled' means no thinking; null optional fields count as absent", () => {
    const decoded = decodeMessagesRequest(
      base({ thinking: { type: 'disabled' }, system: null, temperature: null, metadata: { user_id: null } }),
    );
    assert.equal(decoded.request.thinking, undefined);
    assert.equal(decoded.request.system, undefined);
    assert.equal(decoded.request.temperature, undefined);
    assert.equal(decoded.request.user, undefined);
  });

  test('user content blocks: text, Anthropic image (base64 and url), image_url (http and data URL), documents', () => {
    const decoded = decodeMessagesRequest(
      base({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Look:' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
              { type: 'image_url', image_url: { url: 'https://example.com/dog.png', detail: 'low' } },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
              { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' }, title: 'Spec' },
              { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
              { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Plain body' } },
            ],
          },
        ],
      }),
    );
    assert.equal(decoded.imageParam, 'messages[0].content[1]');
    assert.deepEqual(decoded.request.messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look:' },
          { type: 'image', url: `data:image/png;base64,${PNG_BASE64}`, mediaType: 'image/png' },
          { type: 'image', url: 'https://example.com/cat.jpg' },
          { type: 'image', url: 'https://example.com/dog.png', detail: 'low' },
          { type: 'image', url: `data:image/png;base64,${PNG_BASE64}`, mediaType: 'image/png' },
          { type: 'document', url: 'data:application/pdf;base64,JVBERi0xLjQK', mediaType: 'application/pdf', title: 'Spec' },
          { type: 'document', url: 'https://example.com/a.pdf' },
          { type: 'document', text: 'Plain body', mediaType: 'text/plain' },
        ],
      },
    ]);
  });

  test('assistant blocks: text, tool_use, thinking with signature, redacted thinking; tool results become a tool turn', () => {
    const decoded = decodeMessagesRequest(
      base({
        tools: [WEATHER_TOOL],
        messages: [
          { role: 'user', content: 'Weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Two cities, two calls.', signature: 'sig-abc' },
              { type: 'redacted_thinking', data: 'opaque-data' },
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
              { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Rome' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C, sunny' },
              {
                type: 'tool_result',
                tool_use_id: 'call_2',
                is_error: true,
                content: [
                  { type: 'text', text: 'Service down' },
                  { type: 'image', source: { type: 'url', url: 'https://example.com/error.png' } },
                ],
              },
              { type: 'text', text: 'Summarise please.' },
            ],
          },
          { role: 'assistant', content: 'Paris is' },
        ],
      }),
    );
    assert.equal(decoded.imageParam, 'messages[2].content[1].content[1]', 'wire path of the first image, inside a tool_result');
    assert.deepEqual(decoded.request.messages, [
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Two cities, two calls.', signature: 'sig-abc' },
          { type: 'reasoning', text: '', redactedData: 'opaque-data' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool-call', id: 'toolu_1', name: 'get_weather', input: '{"city":"Paris"}' },
          { type: 'tool-call', id: 'call_2', name: 'get_weather', input: '{"city":"Rome"}' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'toolu_1', toolName: 'get_weather', content: '18C, sunny' },
          {
            type: 'tool-result',
            toolCallId: 'call_2',
            toolName: 'get_weather',
            isError: true,
            content: [
              { type: 'text', text: 'Service down' },
              { type: 'image', url: 'https://example.com/error.png' },
            ],
          },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Summarise please.' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Paris is' }] },
    ]);
  });

  test('a thinking block without signature (from a backend that gives none) is accepted', () => {
    const decoded = decodeMessagesRequest(
      base({
        messages: [
          { role: 'user', content: 'Hi' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'hmm', signature: '' },
              { type: 'text', text: 'Hello' },
            ],
          },
          { role: 'user', content: 'Again' },
        ],
      }),
    );
    assert.deepEqual(decoded.request.messages[1], {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'hmm' },
        { type: 'text', text: 'Hello' },
      ],
    });
  });

  test('an empty final assistant message (empty prefill) is left out', () => {
    const decoded = decodeMessagesRequest(
      base({
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: '' },
        ],
      }),
    );
    assert.equal(decoded.request.messages.length, 1);
  });
});

describe('decodeMessagesRequest: every bad input class gives the SPEC code and param', () => {
  const cases: Array<[string, unknown, string, string | null]> = [
    // body
    ['body not an object', [1, 2], 'invalid_format', null],
    ['body a string', 'hello', 'invalid_format', null],
    ['unknown top-level field', base({ frequency_penalty: 1 }), 'invalid_parameter', 'frequency_penalty'],
    ['unsupported Anthropic field container', base({ container: 'c' }), 'invalid_parameter', 'container'],
    ['output_config.effort (not honoured)', base({ output_config: { effort: 'high' } }), 'invalid_parameter', 'output_config.effort'],
    [
      'output_config.format not json_schema',
      base({ output_config: { format: { type: 'text' } } }),
      'invalid_parameter',
      'output_config.format.type',
    ],
    [
      'output_config.format without schema',
      base({ output_config: { format: { type: 'json_schema' } } }),
      'missing_parameter',
      'output_config.format.schema',
    ],
    [
      'output_format and output_config together',
      base({ output_format: { type: 'json_schema', schema: {} }, output_config: {} }),
      'invalid_parameter',
      'output_format',
    ],
    // model
    ['model missing', { max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }, 'missing_parameter', 'model'],
    ['model null', base({ model: null }), 'missing_parameter', 'model'],
    ['model not a string', base({ model: 42 }), 'invalid_format', 'model'],
    ['model empty', base({ model: '  ' }), 'invalid_parameter', 'model'],
    // messages
    ['messages missing', { model: 'm', max_tokens: 10 }, 'missing_parameter', 'messages'],
    ['messages not an array', base({ messages: 'hi' }), 'invalid_format', 'messages'],
    ['messages empty', base({ messages: [] }), 'invalid_messages', 'messages'],
    ['message not an object', base({ messages: ['hi'] }), 'invalid_format', 'messages[0]'],
    ['role missing', base({ messages: [{ content: 'hi' }] }), 'missing_parameter', 'messages[0].role'],
    ['role not a string', base({ messages: [{ role: 1, content: 'hi' }] }), 'invalid_format', 'messages[0].role'],
    ['role system', base({ messages: [{ role: 'system', content: 'hi' }] }), 'invalid_messages', 'messages[0].role'],
    ['first message from assistant', base({ messages: [{ role: 'assistant', content: 'hi' }] }), 'invalid_messages', 'messages[0].role'],
    [
      'two user messages in a row',
      base({
        messages: [
          { role: 'user', content: 'a' },
          { role: 'user', content: 'b' },
        ],
      }),
      'invalid_messages',
      'messages[1].role',
    ],
    [
      'two assistant messages in a row',
      base({
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
          { role: 'assistant', content: 'c' },
        ],
      }),
      'invalid_messages',
      'messages[2].role',
    ],
    ['content missing', base({ messages: [{ role: 'user' }] }), 'missing_parameter', 'messages[0].content'],
    ['content a number', base({ messages: [{ role: 'user', content: 5 }] }), 'invalid_format', 'messages[0].content'],
    ['content empty string', base({ messages: [{ role: 'user', content: '' }] }), 'invalid_messages', 'messages[0].content'],
    ['content empty array', base({ messages: [{ role: 'user', content: [] }] }), 'invalid_messages', 'messages[0].content'],
    ['block not an object', base({ messages: [{ role: 'user', content: ['hi'] }] }), 'invalid_format', 'messages[0].content[0]'],
    [
      'block type missing',
      base({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] }),
      'missing_parameter',
      'messages[0].content[0].type',
    ],
    [
      'block type unknown',
      base({ messages: [{ role: 'user', content: [{ type: 'audio' }] }] }),
      'invalid_messages',
      'messages[0].content[0].type',
    ],
    [
      'text block without text',
      base({ messages: [{ role: 'user', content: [{ type: 'text' }] }] }),
      'missing_parameter',
      'messages[0].content[0].text',
    ],
    [
      'text block with a number',
      base({ messages: [{ role: 'user', content: [{ type: 'text', text: 3 }] }] }),
      'invalid_format',
      'messages[0].content[0].text',
    ],
    // image blocks
    [
      'image without source',
      base({ messages: [{ role: 'user', content: [{ type: 'image' }] }] }),
      'missing_parameter',
      'messages[0].content[0].source',
    ],
    [
      'image source type unknown',
      base({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] }),
      'invalid_parameter',
      'messages[0].content[0].source.type',
    ],
    [
      'image media type not allowed',
      base({
        messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/tiff', data: PNG_BASE64 } }] }],
      }),
      'invalid_parameter',
      'messages[0].content[0].source.media_type',
    ],
    [
      'image data not base64',
      base({
        messages: [
          {
            role: 'user',
            content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'data:image/png;base64,xx' } }],
          },
        ],
      }),
      'invalid_format',
      'messages[0].content[0].source.data',
    ],
    [
      'image url not http',
      base({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'ftp://example.com/a.png' } }] }] }),
      'invalid_format',
      'messages[0].content[0].source.url',
    ],
    [
      'image_url without image_url',
      base({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image_url' }] }] }),
      'missing_parameter',
      'messages[0].content[1].image_url',
    ],
    [
      'image_url without url',
      base({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] }),
      'missing_parameter',
      'messages[0].content[0].image_url.url',
    ],
    [
      'image_url url malformed',
      base({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: 'y' },
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'not a url' } }] },
        ],
      }),
      'invalid_format',
      'messages[2].content[0].image_url.url',
    ],
    [
      'image_url data URL that is not an image',
      base({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:text/plain;base64,aGk=' } }] }] }),
      'invalid_format',
      'messages[0].content[0].image_url.url',
    ],
    [
      'image_url detail unknown',
      base({
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'max' } }] }],
      }),
      'invalid_parameter',
      'messages[0].content[0].image_url.detail',
    ],
    // documents
    [
      'document base64 that is not a PDF',
      base({
        messages: [
          { role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } }] },
        ],
      }),
      'invalid_parameter',
      'messages[0].content[0].source.media_type',
    ],
    [
      'document text without data',
      base({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain' } }] }] }),
      'missing_parameter',
      'messages[0].content[0].source.data',
    ],
    [
      'document source type unknown',
      base({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'f' } }] }] }),
      'invalid_parameter',
      'messages[0].content[0].source.type',
    ],
    // role-bound blocks
    [
      'tool_use in a user message',
      base({ messages: [{ role: 'user', content: [{ type: 'tool_use', id: 't', name: 'n', input: {} }] }] }),
      'invalid_messages',
      'messages[0].content[0].type',
    ],
    [
      'image in an assistant message',
      base({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: [{ type: 'image', source: {} }] },
        ],
      }),
      'invalid_messages',
      'messages[1].content[0].type',
    ],
    // tool_use / tool_result
    [
      'tool_use without id',
      base({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: [{ type: 'tool_use', name: 'n', input: {} }] },
        ],
      }),
      'missing_parameter',
      'messages[1].content[0].id',
    ],
    [
      'tool_use input not an object',
      base({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'n', input: '{"a":1}' }] },
        ],
      }),
      'invalid_format',
      'messages[1].content[0].input',
    ],
    [
      'tool_use id used twice',
      base({
        messages: [
          { role: 'user', content: 'x' },
          {
            role: 'assistant',
            content: [
              { type: 'tool_use', id: 't', name: 'n', input: {} },
              { type: 'tool_use', id: 't', name: 'n', input: {} },
            ],
          },
        ],
      }),
      'invalid_messages',
      'messages[1].content[1].id',
    ],
    [
      'tool_result for an unknown id',
      withToolTurn([{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'x' }]),
      'invalid_messages',
      'messages[2].content[0].tool_use_id',
    ],
    [
      'tool_result without tool_use_id',
      withToolTurn([{ type: 'tool_result', content: 'x' }]),
      'missing_parameter',
      'messages[2].content[0].tool_use_id',
    ],
    [
      'tool_result content a number',
      withToolTurn([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 7 }]),
      'invalid_format',
      'messages[2].content[0].content',
    ],
    [
      'tool_result with a document inside',
      withToolTurn([{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'document', source: { type: 'text', data: 'x' } }] }]),
      'invalid_messages',
      'messages[2].content[0].content[0].type',
    ],
    [
      'tool_result is_error not boolean',
      withToolTurn([{ type: 'tool_result', tool_use_id: 'toolu_1', is_error: 'yes' }]),
      'invalid_format',
      'messages[2].content[0].is_error',
    ],
    [
      'thinking block without thinking',
      base({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: [{ type: 'thinking', signature: 's' }] },
        ],
      }),
      'missing_parameter',
      'messages[1].content[0].thinking',
    ],
    [
      'redacted_thinking without data',
      base({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: [{ type: 'redacted_thinking' }] },
        ],
      }),
      'missing_parameter',
      'messages[1].content[0].data',
    ],
    // max_tokens
    ['max_tokens missing', { model: 'm', messages: [{ role: 'user', content: 'x' }] }, 'missing_parameter', 'max_tokens'],
    ['max_tokens a string', base({ max_tokens: '100' }), 'invalid_format', 'max_tokens'],
    ['max_tokens zero', base({ max_tokens: 0 }), 'invalid_parameter', 'max_tokens'],
    ['max_tokens fractional', base({ max_tokens: 10.5 }), 'invalid_parameter', 'max_tokens'],
    // system
    ['system a number', base({ system: 1 }), 'invalid_format', 'system'],
    ['system block not text', base({ system: [{ type: 'image', source: {} }] }), 'invalid_parameter', 'system[0].type'],
    ['system block without text', base({ system: [{ type: 'text' }] }), 'missing_parameter', 'system[0].text'],
    // sampling
    ['temperature above 1', base({ temperature: 1.5 }), 'invalid_parameter', 'temperature'],
    ['temperature negative', base({ temperature: -0.1 }), 'invalid_parameter', 'temperature'],
    ['temperature a string', base({ temperature: 'hot' }), 'invalid_format', 'temperature'],
    ['top_p above 1', base({ top_p: 2 }), 'invalid_parameter', 'top_p'],
    ['top_k zero', base({ top_k: 0 }), 'invalid_parameter', 'top_k'],
    ['top_k a string', base({ top_k: '5' }), 'invalid_format', 'top_k'],
    ['stream not boolean', base({ stream: 'yes' }), 'invalid_format', 'stream'],
    // stop_sequences
    ['stop_sequences a string', base({ stop_sequences: 'END' }), 'invalid_format', 'stop_sequences'],
    ['stop_sequences more than 5', base({ stop_sequences: ['a', 'b', 'c', 'd', 'e', 'f'] }), 'invalid_parameter', 'stop_sequences'],
    ['stop_sequences entry not a string', base({ stop_sequences: ['a', 3] }), 'invalid_format', 'stop_sequences[1]'],
    ['stop_sequences entry empty', base({ stop_sequences: [''] }), 'invalid_parameter', 'stop_sequences[0]'],
    // tools
    ['tools not an array', base({ tools: {} }), 'invalid_format', 'tools'],
    ['tool not an object', base({ tools: ['x'] }), 'invalid_format', 'tools[0]'],
    ['tool without name', base({ tools: [{ description: 'd', input_schema: { type: 'object' } }] }), 'missing_parameter', 'tools[0].name'],
    ['tool name with spaces', base({ tools: [{ ...WEATHER_TOOL, name: 'get weather' }] }), 'invalid_parameter', 'tools[0].name'],
    [
      'tool without description',
      base({ tools: [{ name: 'a', input_schema: { type: 'object' } }] }),
      'missing_parameter',
      'tools[0].description',
    ],
    ['tool without input_schema', base({ tools: [{ name: 'a', description: 'd' }] }), 'missing_parameter', 'tools[0].input_schema'],
    [
      'tool input_schema not an object',
      base({ tools: [{ name: 'a', description: 'd', input_schema: 'object' }] }),
      'invalid_format',
      'tools[0].input_schema',
    ],
    [
      'tool input_schema not type object',
      base({ tools: [{ name: 'a', description: 'd', input_schema: { type: 'string' } }] }),
      'invalid_parameter',
      'tools[0].input_schema.type',
    ],
    ['duplicate tool names', base({ tools: [WEATHER_TOOL, WEATHER_TOOL] }), 'invalid_parameter', 'tools[1].name'],
    ['server tool type', base({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }), 'invalid_parameter', 'tools[0].type'],
    // tool_choice
    ['tool_choice a number', base({ tool_choice: 1 }), 'invalid_format', 'tool_choice'],
    ['tool_choice type missing', base({ tool_choice: {} }), 'missing_parameter', 'tool_choice.type'],
    [
      'tool_choice type unknown',
      base({ tools: [WEATHER_TOOL], tool_choice: { type: 'required' } }),
      'invalid_parameter',
      'tool_choice.type',
    ],
    ['tool_choice string unknown', base({ tool_choice: 'sometimes' }), 'invalid_parameter', 'tool_choice'],
    [
      'tool_choice tool without name',
      base({ tools: [WEATHER_TOOL], tool_choice: { type: 'tool' } }),
      'missing_parameter',
      'tool_choice.name',
    ],
    [
      'tool_choice tool not declared',
      base({ tools: [WEATHER_TOOL], tool_choice: { type: 'tool', name: 'get_time' } }),
      'invalid_parameter',
      'tool_choice.name',
    ],
    ['tool_choice any without tools', base({ tool_choice: { type: 'any' } }), 'invalid_parameter', 'tool_choice.type'],
    [
      'tool_choice disable_parallel_tool_use not boolean',
      base({ tools: [WEATHER_TOOL], tool_choice: { type: 'auto', disable_parallel_tool_use: 'yes' } }),
      'invalid_format',
      'tool_choice.disable_parallel_tool_use',
    ],
    // thinking
    ['thinking not an object', base({ thinking: true }), 'invalid_format', 'thinking'],
    ['thinking type missing', base({ thinking: { budget_tokens: 2048 } }), 'missing_parameter', 'thinking.type'],
    ['thinking type adaptive', base({ max_tokens: 4096, thinking: { type: 'adaptive' } }), 'invalid_parameter', 'thinking.type'],
    ['thinking budget missing', base({ max_tokens: 4096, thinking: { type: 'enabled' } }), 'missing_parameter', 'thinking.budget_tokens'],
    [
      'thinking budget below 1024',
      base({ max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1023 } }),
      'invalid_parameter',
      'thinking.budget_tokens',
    ],
    [
      'thinking budget equal to max_tokens',
      base({ max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 2048 } }),
      'invalid_parameter',
      'thinking.budget_tokens',
    ],
    [
      'thinking budget a string',
      base({ max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: '2048' } }),
      'invalid_format',
      'thinking.budget_tokens',
    ],
    // metadata and service tier
    ['metadata not an object', base({ metadata: 'x' }), 'invalid_format', 'metadata'],
    ['metadata user_id not a string', base({ metadata: { user_id: 42 } }), 'invalid_format', 'metadata.user_id'],
    ['service_tier unknown', base({ service_tier: 'priority' }), 'invalid_parameter', 'service_tier'],
    ['service_tier not a string', base({ service_tier: 1 }), 'invalid_format', 'service_tier'],
  ];

  for (const [name, body, code, param] of cases) {
    test(`${name} -> ${code} ${param ?? '(no param)'}`, () => expectError(body, code, param));
  }
});

describe('decodeCountTokensRequest', () => {
  test('max_tokens is not required and the rest decodes as for /v1/messages', () => {
    const request = decodeCountTokensRequest({
      model: 'builtin-echo',
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hello' }],
      tools: [WEATHER_TOOL],
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    assert.equal(request.maxOutputTokens, undefined);
    assert.equal(request.system, 'Be brief.');
    assert.deepEqual(request.thinking, { budgetTokens: 1024 });
    assert.equal(request.tools?.length, 1);
  });

  test('bad inputs are rejected with the same codes', () => {
    expectError(
      { model: 'm', messages: [{ role: 'assistant', content: 'x' }] },
      'invalid_messages',
      'messages[0].role',
      decodeCountTokensRequest,
    );
    expectError({ messages: [{ role: 'user', content: 'x' }] }, 'missing_parameter', 'model', decodeCountTokensRequest);
    expectError(
      { model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 0 },
      'invalid_parameter',
      'max_tokens',
      decodeCountTokensRequest,
    );
    expectError(
      { model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true },
      'invalid_parameter',
      'stream',
      decodeCountTokensRequest,
    );
    expectError(
      { model: 'm', messages: [{ role: 'user', content: 'x' }], thinking: { type: 'enabled', budget_tokens: 100 } },
      'invalid_parameter',
      'thinking.budget_tokens',
      decodeCountTokensRequest,
    );
  });
});
