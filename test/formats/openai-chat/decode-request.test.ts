import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeChatCompletionRequest } from '../../../src/formats/openai-chat/decode-request.ts';
import { isServiceError } from '../../../src/core/service-error.ts';

type Body = Record<string, unknown>;

const userHello = { role: 'user', content: 'Hello' };

function body(extra: Body = {}): Body {
  return { model: 'test-model', messages: [userHello], ...extra };
}

function assertRejected(input: unknown, code: string, param: string | null, messagePart?: string): void {
  assert.throws(
    () => decodeChatCompletionRequest(input),
    (error: unknown) => {
      assert.ok(isServiceError(error), `expected a ServiceError, got ${String(error)}`);
      assert.equal(error.status, 400);
      assert.equal(error.type, 'invalid_request_error');
      assert.equal(error.code, code, error.message);
      assert.equal(error.param, param, error.message);
      if (messagePart !== undefined) assert.match(error.message, new RegExp(messagePart));
      return true;
    },
  );
}

const toolCallAssistant = {
  role: 'assistant',
  content: null,
  tool_calls: [
    { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
  ],
};

const weatherTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

describe('decodeChatCompletionRequest: valid requests', () => {
  test('a minimal request decodes with defaults', () => {
    const decoded = decodeChatCompletionRequest(body());
    assert.deepEqual(decoded.request, { model: 'test-model', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }] });
    assert.deepEqual(decoded.options, { model: 'test-model', stream: false, includeUsage: false, ignoredParameters: [] });
  });

  test('system and developer messages are joined into system, wherever they stand', () => {
    const decoded = decodeChatCompletionRequest(
      body({
        messages: [
          { role: 'system', content: 'Be brief.' },
          {
            role: 'developer',
            content: [
              { type: 'text', text: 'Answer in French.' },
              { type: 'text', text: 'No emojis.' },
            ],
          },
          userHello,
          { role: 'system', content: 'Late rule.' },
        ],
      }),
    );
    assert.equal(decoded.request.system, 'Be brief.\n\nAnswer in French.\nNo emojis.\n\nLate rule.');
    assert.equal(decoded.request.messages.length, 1);
  });

  test('every sampling and control field maps to the canonical request', () => {
    const decoded = decodeChatCompletionRequest(
      body({
        temperature: 0.5,
        top_p: 1,
        max_completion_tokens: 64,
        n: 1,
        stop: ['END', '###'],
        stream: true,
        stream_options: { include_usage: true },
        seed: 42,
        user: 'user-1',
        metadata: { project: 'alpha' },
        reasoning_effort: 'minimal',
        parallel_tool_calls: false,
        logprobs: false,
        top_logprobs: 0,
        frequency_penalty: 0,
        store: true,
        service_tier: 'auto',
        prediction: { type: 'content', content: 'x' },
        some_future_field: { anything: true },
      }),
    );
    const { request, options } = decoded;
    assert.equal(request.temperature, 0.5);
    assert.equal(request.topP, 1);
    assert.equal(request.maxOutputTokens, 64);
    assert.deepEqual(request.stopSequences, ['END', '###']);
    assert.equal(request.seed, 42);
    assert.equal(request.user, 'user-1');
    assert.deepEqual(request.metadata, { project: 'alpha' });
    assert.equal(request.reasoningEffort, 'low');
    assert.equal(request.parallelToolCalls, false);
    assert.deepEqual(options, { model: 'test-model', stream: true, includeUsage: true, ignoredParameters: [] });
  });

  test('null counts as absent for optional fields', () => {
    const decoded = decodeChatCompletionRequest(
      body({
        temperature: null,
        top_p: null,
        max_tokens: null,
        n: null,
        stop: null,
        stream: null,
        stream_options: null,
        tools: null,
        tool_choice: null,
        response_format: null,
        seed: null,
        user: null,
        metadata: null,
      }),
    );
    assert.deepEqual(Object.keys(decoded.request).sort(), ['messages', 'model']);
  });

  test('max_tokens is the deprecated spelling of max_completion_tokens', () => {
    assert.equal(decodeChatCompletionRequest(body({ max_tokens: 10 })).request.maxOutputTokens, 10);
    assert.equal(decodeChatCompletionRequest(body({ max_tokens: 10, max_completion_tokens: 10 })).request.maxOutputTokens, 10);
  });

  test('a single stop string becomes one stop sequence', () => {
    assert.deepEqual(decodeChatCompletionRequest(body({ stop: '\n' })).request.stopSequences, ['\n']);
  });

  test('reasoning_effort levels map to low/medium/high, none to nothing', () => {
    const effort = (value: string) => decodeChatCompletionRequest(body({ reasoning_effort: value })).request.reasoningEffort;
    assert.equal(effort('low'), 'low');
    assert.equal(effort('medium'), 'medium');
    assert.equal(effort('high'), 'high');
    assert.equal(effort('xhigh'), 'high');
    assert.equal(effort('none'), undefined);
  });

  test('user content parts: text, image by URL with detail, image as data URL, PDF file', () => {
    const decoded = decodeChatCompletionRequest(
      body({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is in these?' },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
            ],
          },
        ],
      }),
    );
    assert.deepEqual(decoded.request.messages[0], {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in these?' },
        { type: 'image', url: 'https://example.com/cat.png', detail: 'low' },
        { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=', mediaType: 'image/png' },
        { type: 'document', url: 'data:application/pdf;base64,JVBERi0=', mediaType: 'application/pdf', title: 'a.pdf' },
      ],
    });
  });

  test('imageParam names the first image by its wire path (system messages do not shift it)', () => {
    const decoded = decodeChatCompletionRequest(
      body({
        messages: [
          { role: 'system', content: 'x' },
          { role: 'user', content: 'first' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'see' },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            ],
          },
        ],
      }),
    );
    assert.equal(decoded.options.imageParam, 'messages[2].content[1].image_url');
    assert.equal('imageParam' in decodeChatCompletionRequest(body()).options, false);
  });

  test('assistant tool calls and their tool results; consecutive tool messages form one tool turn', () => {
    const decoded = decodeChatCompletionRequest(
      body({
        messages: [
          userHello,
          { ...toolCallAssistant, content: 'Let me check.', reasoning_content: 'Two tools needed.' },
          { role: 'tool', tool_call_id: 'call_a', content: 'Sunny' },
          { role: 'tool', tool_call_id: 'call_b', content: [{ type: 'text', text: 'Noon' }] },
          { role: 'user', content: 'Thanks' },
        ],
      }),
    );
    assert.deepEqual(decoded.request.messages.slice(1), [
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Two tools needed.' },
          { type: 'text', text: 'Let me check.' },
          { type: 'tool-call', id: 'call_a', name: 'get_weather', input: '{"city":"Paris"}' },
          { type: 'tool-call', id: 'call_b', name: 'get_time', input: '{}' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'call_a', toolName: 'get_weather', content: 'Sunny' },
          { type: 'tool-result', toolCallId: 'call_b', toolName: 'get_time', content: [{ type: 'text', text: 'Noon' }] },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
    ]);
  });

  test('an assistant refusal and an empty assistant string are kept', () => {
    const decoded = decodeChatCompletionRequest(
      body({
        messages: [userHello, { role: 'assistant', content: null, refusal: 'I cannot.' }, { role: 'assistant', content: '' }, userHello],
      }),
    );
    assert.deepEqual(decoded.request.messages[1], { role: 'assistant', content: [{ type: 'text', text: 'I cannot.' }] });
    assert.deepEqual(decoded.request.messages[2], { role: 'assistant', content: [] });
  });

  test('tools, tool_choice and response_format', () => {
    const decoded = decodeChatCompletionRequest(
      body({
        tools: [weatherTool, { type: 'function', function: { name: 'no_args', strict: true } }],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        response_format: { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema: { type: 'object' } } },
      }),
    );
    assert.deepEqual(decoded.request.tools, [
      { name: 'get_weather', description: 'Weather', inputSchema: weatherTool.function.parameters },
      { name: 'no_args', inputSchema: { type: 'object', properties: {} }, strict: true },
    ]);
    assert.deepEqual(decoded.request.toolChoice, { type: 'tool', name: 'get_weather' });
    assert.deepEqual(decoded.request.responseFormat, { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true });
    assert.deepEqual(decodeChatCompletionRequest(body({ tools: [weatherTool], tool_choice: 'required' })).request.toolChoice, {
      type: 'required',
    });
    assert.deepEqual(decodeChatCompletionRequest(body({ tool_choice: 'none' })).request.toolChoice, { type: 'none' });
    assert.deepEqual(decodeChatCompletionRequest(body({ response_format: { type: 'json_object' } })).request.responseFormat, {
      type: 'json_object',
    });
  });

  test('penalties, logit_bias and verbosity are accepted and reported as ignored', () => {
    const decoded = decodeChatCompletionRequest(
      body({ frequency_penalty: 0.5, presence_penalty: -1, logit_bias: { '50256': -100 }, verbosity: 'low' }),
    );
    assert.deepEqual(decoded.options.ignoredParameters, ['frequency_penalty', 'presence_penalty', 'logit_bias', 'verbosity']);
  });
});

describe('decodeChatCompletionRequest: every bad input class is a 400 with a precise param', () => {
  const cases: Array<[string, unknown, string, string | null]> = [
    ['body not an object', [], 'invalid_format', null],
    ['model missing', { messages: [userHello] }, 'missing_parameter', 'model'],
    ['model not a string', body({ model: 42 }), 'invalid_format', 'model'],
    ['model empty', body({ model: '' }), 'invalid_parameter', 'model'],
    ['messages missing', { model: 'm' }, 'missing_parameter', 'messages'],
    ['messages not an array', body({ messages: 'hi' }), 'invalid_format', 'messages'],
    ['messages empty', body({ messages: [] }), 'invalid_messages', 'messages'],
    ['only system messages', body({ messages: [{ role: 'system', content: 'x' }] }), 'invalid_messages', 'messages'],
    ['message not an object', body({ messages: ['hi'] }), 'invalid_format', 'messages[0]'],
    ['role missing', body({ messages: [{ content: 'hi' }] }), 'missing_parameter', 'messages[0].role'],
    ['role unknown', body({ messages: [{ role: 'robot', content: 'hi' }] }), 'invalid_messages', 'messages[0].role'],
    [
      'role function (deprecated)',
      body({ messages: [{ role: 'function', name: 'f', content: 'x' }] }),
      'invalid_messages',
      'messages[0].role',
    ],
    ['user content missing', body({ messages: [{ role: 'user' }] }), 'missing_parameter', 'messages[0].content'],
    ['user content a number', body({ messages: [{ role: 'user', content: 7 }] }), 'invalid_format', 'messages[0].content'],
    ['user content empty array', body({ messages: [{ role: 'user', content: [] }] }), 'invalid_messages', 'messages[0].content'],
    [
      'content part unknown type',
      body({ messages: [{ role: 'user', content: [{ type: 'video', video: {} }] }] }),
      'invalid_messages',
      'messages[0].content[0].type',
    ],
    [
      'text part without text',
      body({ messages: [{ role: 'user', content: [{ type: 'text' }] }] }),
      'missing_parameter',
      'messages[0].content[0].text',
    ],
    [
      'input_audio refused',
      body({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] }] }),
      'invalid_parameter',
      'messages[0].content[0].type',
    ],
    [
      'image_url missing',
      body({ messages: [{ role: 'user', content: [{ type: 'image_url' }] }] }),
      'missing_parameter',
      'messages[0].content[0].image_url',
    ],
    [
      'image_url as a string',
      body({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: 'https://x.test/a.png' }] }] }),
      'invalid_format',
      'messages[0].content[0].image_url',
    ],
    [
      'image url not http or data',
      body({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x.test/a.png' } }] }] }),
      'invalid_parameter',
      'messages[0].content[0].image_url.url',
    ],
    [
      'image data URL not an image',
      body({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:text/plain;base64,aGk=' } }] }] }),
      'invalid_parameter',
      'messages[0].content[0].image_url.url',
    ],
    [
      'image data URL not base64',
      body({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png,raw' } }] }] }),
      'invalid_parameter',
      'messages[0].content[0].image_url.url',
    ],
    [
      'image detail unknown',
      body({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png', detail: 'ultra' } }] }] }),
      'invalid_parameter',
      'messages[0].content[0].image_url.detail',
    ],
    [
      'file by id refused',
      body({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }] }),
      'invalid_parameter',
      'messages[0].content[0].file.file_id',
    ],
    [
      'file data not a data URL',
      body({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: 'JVBERi0=' } }] }] }),
      'invalid_parameter',
      'messages[0].content[0].file.file_data',
    ],
    [
      'system content an image part',
      body({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] }, userHello] }),
      'invalid_messages',
      'messages[0].content[0].type',
    ],
    [
      'assistant without content or tool_calls',
      body({ messages: [userHello, { role: 'assistant' }] }),
      'missing_parameter',
      'messages[1].content',
    ],
    [
      'assistant content a number',
      body({ messages: [userHello, { role: 'assistant', content: 1 }] }),
      'invalid_format',
      'messages[1].content',
    ],
    [
      'assistant content an image part',
      body({ messages: [userHello, { role: 'assistant', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] }] }),
      'invalid_messages',
      'messages[1].content[0].type',
    ],
    [
      'tool_calls not an array',
      body({ messages: [userHello, { role: 'assistant', tool_calls: {} }] }),
      'invalid_format',
      'messages[1].tool_calls',
    ],
    [
      'tool call without id',
      body({ messages: [userHello, { role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }] }),
      'missing_parameter',
      'messages[1].tool_calls[0].id',
    ],
    [
      'tool call of another type',
      body({ messages: [userHello, { role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', custom: {} }] }] }),
      'invalid_messages',
      'messages[1].tool_calls[0].type',
    ],
    [
      'tool call arguments an object',
      body({
        messages: [userHello, { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: {} } }] }],
      }),
      'invalid_format',
      'messages[1].tool_calls[0].function.arguments',
    ],
    [
      'tool message without tool_call_id',
      body({ messages: [userHello, toolCallAssistant, { role: 'tool', content: 'x' }] }),
      'missing_parameter',
      'messages[2].tool_call_id',
    ],
    [
      'tool message answering an unknown call',
      body({ messages: [userHello, { role: 'tool', tool_call_id: 'call_x', content: 'x' }] }),
      'invalid_messages',
      'messages[1].tool_call_id',
    ],
    [
      'tool message answering a call twice',
      body({
        messages: [
          userHello,
          toolCallAssistant,
          { role: 'tool', tool_call_id: 'call_a', content: 'x' },
          { role: 'tool', tool_call_id: 'call_a', content: 'x' },
        ],
      }),
      'invalid_messages',
      'messages[3].tool_call_id',
    ],
    [
      'tool calls left unanswered',
      body({ messages: [userHello, toolCallAssistant, { role: 'tool', tool_call_id: 'call_a', content: 'x' }, userHello] }),
      'invalid_messages',
      'messages[3]',
    ],
    ['trailing unanswered tool calls', body({ messages: [userHello, toolCallAssistant] }), 'invalid_messages', 'messages[1]'],
    [
      'tool message content missing',
      body({ messages: [userHello, toolCallAssistant, { role: 'tool', tool_call_id: 'call_a' }] }),
      'missing_parameter',
      'messages[2].content',
    ],
    ['temperature a string', body({ temperature: '0.5' }), 'invalid_format', 'temperature'],
    ['temperature above the SPEC range', body({ temperature: 1.5 }), 'invalid_parameter', 'temperature'],
    ['temperature negative', body({ temperature: -0.1 }), 'invalid_parameter', 'temperature'],
    ['top_p above range', body({ top_p: 1.01 }), 'invalid_parameter', 'top_p'],
    ['max_tokens zero', body({ max_tokens: 0 }), 'invalid_parameter', 'max_tokens'],
    ['max_tokens fractional', body({ max_tokens: 1.5 }), 'invalid_parameter', 'max_tokens'],
    ['max_tokens a string', body({ max_tokens: '10' }), 'invalid_format', 'max_tokens'],
    ['max_completion_tokens zero', body({ max_completion_tokens: 0 }), 'invalid_parameter', 'max_completion_tokens'],
    [
      'max_tokens differing from max_completion_tokens',
      body({ max_tokens: 5, max_completion_tokens: 6 }),
      'invalid_parameter',
      'max_tokens',
    ],
    ['n above one', body({ n: 2 }), 'invalid_parameter', 'n'],
    ['n zero', body({ n: 0 }), 'invalid_parameter', 'n'],
    ['stop a number', body({ stop: 5 }), 'invalid_format', 'stop'],
    ['stop too many', body({ stop: ['a', 'b', 'c', 'd', 'e'] }), 'invalid_parameter', 'stop'],
    ['stop item not a string', body({ stop: ['a', 1] }), 'invalid_format', 'stop[1]'],
    ['stop item empty', body({ stop: [''] }), 'invalid_parameter', 'stop[0]'],
    ['stream not a boolean', body({ stream: 'yes' }), 'invalid_format', 'stream'],
    ['stream_options without stream', body({ stream_options: { include_usage: true } }), 'invalid_parameter', 'stream_options'],
    ['stream_options not an object', body({ stream: true, stream_options: true }), 'invalid_format', 'stream_options'],
    [
      'include_usage not a boolean',
      body({ stream: true, stream_options: { include_usage: 'yes' } }),
      'invalid_format',
      'stream_options.include_usage',
    ],
    ['tools not an array', body({ tools: {} }), 'invalid_format', 'tools'],
    ['tool of another type', body({ tools: [{ type: 'custom', custom: { name: 'x' } }] }), 'invalid_parameter', 'tools[0].type'],
    ['tool without function', body({ tools: [{ type: 'function' }] }), 'missing_parameter', 'tools[0].function'],
    [
      'tool name with spaces',
      body({ tools: [{ type: 'function', function: { name: 'get weather' } }] }),
      'invalid_parameter',
      'tools[0].function.name',
    ],
    [
      'tool name too long',
      body({ tools: [{ type: 'function', function: { name: 'x'.repeat(65) } }] }),
      'invalid_parameter',
      'tools[0].function.name',
    ],
    ['tool name twice', body({ tools: [weatherTool, weatherTool] }), 'invalid_parameter', 'tools[1].function.name'],
    [
      'tool parameters not an object',
      body({ tools: [{ type: 'function', function: { name: 'f', parameters: 'x' } }] }),
      'invalid_format',
      'tools[0].function.parameters',
    ],
    ['tool_choice unknown string', body({ tool_choice: 'any' }), 'invalid_parameter', 'tool_choice'],
    ['tool_choice required without tools', body({ tool_choice: 'required' }), 'invalid_parameter', 'tool_choice'],
    ['tool_choice a number', body({ tool_choice: 1 }), 'invalid_format', 'tool_choice'],
    [
      'tool_choice names a missing tool',
      body({ tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'other' } } }),
      'invalid_parameter',
      'tool_choice.function.name',
    ],
    [
      'tool_choice of another type',
      body({ tools: [weatherTool], tool_choice: { type: 'allowed_tools' } }),
      'invalid_parameter',
      'tool_choice.type',
    ],
    ['parallel_tool_calls not a boolean', body({ parallel_tool_calls: 1 }), 'invalid_format', 'parallel_tool_calls'],
    ['response_format unknown type', body({ response_format: { type: 'xml' } }), 'invalid_parameter', 'response_format.type'],
    ['json_schema missing', body({ response_format: { type: 'json_schema' } }), 'missing_parameter', 'response_format.json_schema'],
    [
      'json_schema name missing',
      body({ response_format: { type: 'json_schema', json_schema: { schema: {} } } }),
      'missing_parameter',
      'response_format.json_schema.name',
    ],
    [
      'json_schema name invalid',
      body({ response_format: { type: 'json_schema', json_schema: { name: 'my schema', schema: {} } } }),
      'invalid_parameter',
      'response_format.json_schema.name',
    ],
    [
      'json_schema schema missing',
      body({ response_format: { type: 'json_schema', json_schema: { name: 'a' } } }),
      'missing_parameter',
      'response_format.json_schema.schema',
    ],
    [
      'json_schema schema not an object',
      body({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema: [] } } }),
      'invalid_format',
      'response_format.json_schema.schema',
    ],
    ['seed fractional', body({ seed: 1.5 }), 'invalid_parameter', 'seed'],
    ['seed a string', body({ seed: '1' }), 'invalid_format', 'seed'],
    ['user not a string', body({ user: 1 }), 'invalid_format', 'user'],
    ['metadata value not a string', body({ metadata: { a: 1 } }), 'invalid_format', 'metadata.a'],
    [
      'metadata too many pairs',
      body({ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v'])) }),
      'invalid_parameter',
      'metadata',
    ],
    ['reasoning_effort unknown', body({ reasoning_effort: 'extreme' }), 'invalid_parameter', 'reasoning_effort'],
    ['logprobs true', body({ logprobs: true }), 'invalid_parameter', 'logprobs'],
    ['top_logprobs above zero', body({ top_logprobs: 3 }), 'invalid_parameter', 'top_logprobs'],
    [
      'audio output',
      body({ modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } }),
      'invalid_parameter',
      'modalities[1]',
    ],
    ['web search', body({ web_search_options: {} }), 'invalid_parameter', 'web_search_options'],
    ['legacy functions', body({ functions: [{ name: 'f' }] }), 'invalid_parameter', 'functions'],
    ['frequency_penalty out of range', body({ frequency_penalty: 3 }), 'invalid_parameter', 'frequency_penalty'],
  ];
  for (const [name, input, code, param] of cases) {
    test(`${name} -> ${code} ${param ?? '(no param)'}`, () => assertRejected(input, code, param));
  }

  test('n > 1 says clearly that one choice is generated', () => {
    assertRejected(body({ n: 3 }), 'invalid_parameter', 'n', "'n' must be 1");
  });

  test('an unanswered tool call is named in the message', () => {
    assertRejected(
      body({ messages: [userHello, toolCallAssistant, { role: 'tool', tool_call_id: 'call_a', content: 'x' }, userHello] }),
      'invalid_messages',
      'messages[3]',
      "'call_b'",
    );
  });
});
