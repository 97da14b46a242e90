/**
 * The pure conversions of the llama-cpp provider: canonical request -> node-llama-cpp chat history,
 * client JSON Schema -> node-llama-cpp's grammar subset, stop reasons -> finish reasons, response
 * chunks -> canonical parts. No native code runs here.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Token } from 'node-llama-cpp';
import type { GenerationRequest } from '../../../src/core/generation.ts';
import { isServiceError } from '../../../src/core/service-error.ts';
import { convertToLlamaCppChatHistory } from '../../../src/providers/llama-cpp/convert-to-llama-cpp-chat-history.ts';
import { convertToLlamaCppFunctions } from '../../../src/providers/llama-cpp/convert-to-llama-cpp-functions.ts';
import {
  convertToLlamaCppSamplingOptions,
  resolveMaxOutputTokens,
} from '../../../src/providers/llama-cpp/convert-to-llama-cpp-generation-options.ts';
import { convertToLlamaCppJsonSchema, SchemaConversionError } from '../../../src/providers/llama-cpp/convert-to-llama-cpp-json-schema.ts';
import { mapLlamaCppFinishReason, matchedStopSequence } from '../../../src/providers/llama-cpp/map-llama-cpp-finish-reason.ts';
import { LlamaCppChunkMapper } from '../../../src/providers/llama-cpp/map-llama-cpp-response-chunk.ts';

const base: GenerationRequest = { model: 'local', messages: [] };

function expectBadRequest(run: () => unknown, param: string, pattern: RegExp): void {
  assert.throws(run, (error) => {
    assert.ok(isServiceError(error));
    assert.equal(error.status, 400);
    assert.equal(error.param, param);
    assert.match(error.message, pattern);
    return true;
  });
}

describe('convertToLlamaCppChatHistory', () => {
  test('system, merged turns, reasoning, documents and an empty model turn to write', () => {
    const history = convertToLlamaCppChatHistory({
      ...base,
      system: 'Be kind.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'one' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'two' },
            { type: 'document', text: 'body', title: 'Doc' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'hmm' },
            { type: 'text', text: 'three' },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'four' }] },
      ],
    });
    assert.deepEqual(history, [
      { type: 'system', text: 'Be kind.' },
      { type: 'user', text: 'one\n\ntwo\n\nDoc\n\nbody' },
      { type: 'model', response: [{ type: 'segment', segmentType: 'thought', text: 'hmm', ended: true }, 'three'] },
      { type: 'user', text: 'four' },
      { type: 'model', response: [] },
    ]);
  });

  test('a trailing assistant turn is continued (prefill)', () => {
    const history = convertToLlamaCppChatHistory({
      ...base,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Hello' }] },
      ],
    });
    assert.deepEqual(history.at(-1), { type: 'model', response: ['Hello'] });
    assert.equal(history.length, 2);
  });

  test('tool calls carry the results the tool turns gave for their ids', () => {
    const history = convertToLlamaCppChatHistory({
      ...base,
      tools: [{ name: 'weather', description: 'Weather of a city', inputSchema: { type: 'object' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool-call', id: 'call_1', name: 'weather', input: '{"city":"Paris"}' },
            { type: 'tool-call', id: 'call_2', name: 'weather', input: '' },
          ],
        },
        {
          role: 'tool',
          content: [
            { type: 'tool-result', toolCallId: 'call_2', content: 'sunny' },
            { type: 'tool-result', toolCallId: 'call_1', content: [{ type: 'text', text: '{"celsius":21}' }] },
          ],
        },
      ],
    });
    assert.deepEqual(history, [
      { type: 'user', text: 'Weather in Paris and Rome?' },
      {
        type: 'model',
        response: [
          'Checking.',
          { type: 'functionCall', name: 'weather', description: 'Weather of a city', params: { city: 'Paris' }, result: { celsius: 21 } },
          { type: 'functionCall', name: 'weather', description: 'Weather of a city', params: {}, result: 'sunny' },
        ],
      },
    ]);
  });

  test('images, URL documents and unpaired tool turns are 400s naming the place', () => {
    expectBadRequest(
      () =>
        convertToLlamaCppChatHistory({
          ...base,
          messages: [{ role: 'user', content: [{ type: 'image', url: 'https://example.com/a.png' }] }],
        }),
      'messages[0].content[0]',
      /image input/,
    );
    expectBadRequest(
      () =>
        convertToLlamaCppChatHistory({
          ...base,
          messages: [{ role: 'user', content: [{ type: 'document', url: 'https://example.com/a.pdf' }] }],
        }),
      'messages[0].content[0]',
      /documents/,
    );
    expectBadRequest(
      () =>
        convertToLlamaCppChatHistory({
          ...base,
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'x' }] },
            { role: 'assistant', content: [{ type: 'tool-call', id: 'call_1', name: 'f', input: '{}' }] },
          ],
        }),
      'messages[1].content[0]',
      /no tool result/,
    );
    expectBadRequest(
      () =>
        convertToLlamaCppChatHistory({
          ...base,
          messages: [{ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_9', content: 'r' }] }],
        }),
      'messages[0].content[0].tool_call_id',
      /call_9/,
    );
  });
});

describe('convertToLlamaCppFunctions', () => {
  const tools = [
    {
      name: 'weather',
      description: 'Weather',
      inputSchema: { type: 'object', properties: { city: { type: 'string', pattern: '^[A-Z]' } } },
    },
  ];

  test('tools become functions with grammar-ready parameter schemas; none offers nothing', () => {
    assert.equal(convertToLlamaCppFunctions(base), undefined);
    assert.equal(convertToLlamaCppFunctions({ ...base, tools, toolChoice: { type: 'none' } }), undefined);
    assert.deepEqual(convertToLlamaCppFunctions({ ...base, tools }), {
      functions: { weather: { description: 'Weather', params: { type: 'object', properties: { city: { type: 'string' } } } } },
      unenforcedKeywords: { weather: ['pattern'] },
    });
  });

  test('forced tool choice, tools with a JSON response format and bad schemas are 400s', () => {
    expectBadRequest(
      () => convertToLlamaCppFunctions({ ...base, tools, toolChoice: { type: 'required' } }),
      'tool_choice',
      /forcing a tool call/,
    );
    expectBadRequest(
      () => convertToLlamaCppFunctions({ ...base, tools, toolChoice: { type: 'tool', name: 'weather' } }),
      'tool_choice',
      /forcing a tool call/,
    );
    expectBadRequest(
      () => convertToLlamaCppFunctions({ ...base, tools, responseFormat: { type: 'json_object' } }),
      'response_format',
      /tools/,
    );
    expectBadRequest(
      () => convertToLlamaCppFunctions({ ...base, tools: [...tools, { name: 'odd', inputSchema: { type: 'object', if: {} } }] }),
      'tools[1]',
      /'if'/,
    );
  });
});

describe('convertToLlamaCppJsonSchema', () => {
  test('maps anyOf, definitions, type lists and missing types into the grammar subset', () => {
    const { schema, unenforcedKeywords } = convertToLlamaCppJsonSchema({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: 'Thing',
      properties: {
        name: { type: 'string', pattern: '^[a-z]+$', maxLength: 5 },
        when: { type: 'string', format: 'date' },
        age: { type: ['integer', 'null'], minimum: 0 },
        pet: { $ref: '#/definitions/Pet' },
        either: { anyOf: [{ type: 'string' }, { type: 'number' }] },
        only: { allOf: [{ type: 'boolean' }] },
        anything: {},
        list: { type: 'array', items: { type: 'string' }, minItems: 1 },
        nested: { type: ['object', 'null'], properties: { x: { const: 1 } } },
      },
      required: ['name'],
      additionalProperties: false,
      definitions: { Pet: { type: 'object', properties: { kind: { enum: ['cat', 'dog'] } } } },
    });
    assert.deepEqual(unenforcedKeywords, ['minimum', 'pattern']);
    assert.deepEqual(schema, {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 5 },
        when: { type: 'string', format: 'date' },
        age: { type: ['integer', 'null'] },
        pet: { $ref: '#/$defs/Pet' },
        either: { oneOf: [{ type: 'string' }, { type: 'number' }] },
        only: { type: 'boolean' },
        anything: {
          oneOf: [{ type: ['string', 'number', 'boolean', 'null'] }, { type: 'object', additionalProperties: true }, { type: 'array' }],
        },
        list: { type: 'array', items: { type: 'string' }, minItems: 1 },
        nested: { oneOf: [{ type: ['null'] }, { type: 'object', properties: { x: { const: 1 } } }] },
      },
      $defs: { Pet: { type: 'object', properties: { kind: { enum: ['cat', 'dog'] } } } },
    });
  });

  test('an object without declared properties allows any properties, as JSON Schema does', () => {
    assert.deepEqual(convertToLlamaCppJsonSchema({ type: 'object' }).schema, {
      type: 'object',
      properties: {},
      additionalProperties: true,
    });
  });

  test('structural keywords it cannot honour are errors that say what and where', () => {
    for (const [schema, pattern] of [
      [{ type: 'object', properties: { a: { not: { type: 'string' } } } }, /'not' \(at schema\.properties\.a\)/],
      [{ type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } }, /\$ref must point/],
      [{ allOf: [{ type: 'string' }, { maxLength: 2 }] }, /allOf/],
      [{ type: 'text' }, /not a JSON Schema type/],
    ] as const) {
      assert.throws(
        () => convertToLlamaCppJsonSchema(schema as Record<string, unknown>),
        (error) => error instanceof SchemaConversionError && pattern.test(error.message),
      );
    }
  });
});

describe('generation options and finish reasons', () => {
  test('sampling fields pass through; temperature defaults to 1; empty stop sequences are dropped', () => {
    assert.deepEqual(convertToLlamaCppSamplingOptions(base), { temperature: 1, repeatPenalty: false });
    assert.deepEqual(
      convertToLlamaCppSamplingOptions({
        ...base,
        temperature: 0,
        topP: 0.5,
        topK: 3,
        seed: 9,
        stopSequences: ['', 'END'],
        thinking: { budgetTokens: 1024 },
      }),
      { temperature: 0, topP: 0.5, topK: 3, seed: 9, repeatPenalty: false, customStopTriggers: ['END'], budgets: { thoughtTokens: 1024 } },
    );
  });

  test('max output tokens: request, then model config, capped by the context left', () => {
    assert.equal(resolveMaxOutputTokens({ ...base, maxOutputTokens: 10 }, { defaultMaxOutputTokens: 50 }, 100, 512), 10);
    assert.equal(resolveMaxOutputTokens(base, { defaultMaxOutputTokens: 50 }, 100, 512), 50);
    assert.equal(resolveMaxOutputTokens(base, {}, 100, 512), 412);
    assert.equal(resolveMaxOutputTokens({ ...base, maxOutputTokens: 1000 }, {}, 500, 512), 12);
  });

  test('stop reasons map to canonical finish reasons', () => {
    assert.equal(mapLlamaCppFinishReason('eogToken'), 'stop');
    assert.equal(mapLlamaCppFinishReason('stopGenerationTrigger'), 'stop');
    assert.equal(mapLlamaCppFinishReason('customStopTrigger'), 'stop-sequence');
    assert.equal(mapLlamaCppFinishReason('maxTokens'), 'length');
    assert.equal(mapLlamaCppFinishReason('functionCalls'), 'tool-calls');
    assert.equal(matchedStopSequence(['E', 'ND'], ['STOP', 'END']), 'END');
  });
});

describe('LlamaCppChunkMapper', () => {
  test('segments become a reasoning block, the answer a text block, each opened on its first text', () => {
    const mapper = new LlamaCppChunkMapper();
    const parts = [
      ...mapper.map({ type: 'segment', segmentType: 'thought', text: '', tokens: [], segmentStartTime: new Date() }),
      ...mapper.map({ type: 'segment', segmentType: 'thought', text: 'hmm', tokens: [1 as Token] }),
      ...mapper.map({ type: 'segment', segmentType: 'thought', text: '', tokens: [], segmentEndTime: new Date() }),
      ...mapper.map({ type: undefined, segmentType: undefined, text: 'Hi', tokens: [2 as Token] }),
      ...mapper.map({ type: undefined, segmentType: undefined, text: '!', tokens: [3 as Token] }),
      ...mapper.finish(),
    ];
    assert.deepEqual(parts, [
      { type: 'reasoning-start', id: '0' },
      { type: 'reasoning-delta', id: '0', delta: 'hmm' },
      { type: 'reasoning-end', id: '0' },
      { type: 'text-start', id: '1' },
      { type: 'text-delta', id: '1', delta: 'Hi' },
      { type: 'text-delta', id: '1', delta: '!' },
      { type: 'text-end', id: '1' },
    ]);
  });

  test('function call params stream as a tool-input block without the trailing newlines of the grammar', () => {
    const ids = ['call_a', 'call_b'];
    const mapper = new LlamaCppChunkMapper(() => ids.shift()!);
    const chunk = (callIndex: number, paramsChunk: string, done = false) => ({
      callIndex,
      functionName: callIndex === 0 ? 'weather' : 'time',
      paramsChunk,
      done,
    });
    const parts = [
      ...mapper.map({ type: undefined, segmentType: undefined, text: 'Let me check.', tokens: [1 as Token] }),
      ...mapper.mapFunctionCallChunk(chunk(0, '{"city": ')),
      ...mapper.mapFunctionCallChunk(chunk(0, '"a b"')),
      ...mapper.mapFunctionCallChunk(chunk(0, '}\n')),
      ...mapper.mapFunctionCallChunk(chunk(0, '\n\n', true)),
      ...mapper.finishFunctionCalls([
        { functionName: 'weather', params: { city: 'a b' } },
        { functionName: 'time', params: undefined },
      ]),
      ...mapper.finish(),
    ];
    assert.deepEqual(parts, [
      { type: 'text-start', id: '0' },
      { type: 'text-delta', id: '0', delta: 'Let me check.' },
      { type: 'text-end', id: '0' },
      { type: 'tool-input-start', id: 'call_a', toolName: 'weather' },
      { type: 'tool-input-delta', id: 'call_a', delta: '{"city":' },
      { type: 'tool-input-delta', id: 'call_a', delta: ' "a b"' },
      { type: 'tool-input-delta', id: 'call_a', delta: '}' },
      { type: 'tool-input-end', id: 'call_a' },
      { type: 'tool-input-start', id: 'call_b', toolName: 'time' },
      { type: 'tool-input-delta', id: 'call_b', delta: '{}' },
      { type: 'tool-input-end', id: 'call_b' },
    ]);
  });
});
