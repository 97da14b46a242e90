import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { countTokens } from 'gpt-tokenizer';
import { assembleResult } from '../../src/core/assemble-result.ts';
import { countRequestTokens } from '../../src/core/count-tokens.ts';
import type { GenerationRequest } from '../../src/core/generation.ts';
import { createBuiltinProvider } from '../../src/providers/builtin/builtin-provider.ts';
import { EchoLanguageModel } from '../../src/providers/builtin/echo/echo-language-model.ts';
import { sampleFromJsonSchema } from '../../src/providers/builtin/echo/sample-from-json-schema.ts';
import { collect, finishOf, joinedDeltas, rejection, userRequest } from './helpers.ts';

const echo = new EchoLanguageModel();
const run = (request: GenerationRequest, signal = new AbortController().signal) => collect(echo.stream(request, { signal }));
const assemble = (request: GenerationRequest) => assembleResult(echo.stream(request, { signal: new AbortController().signal }));

const weatherTool = {
  name: 'get_weather',
  description: 'Weather for a city',
  inputSchema: {
    type: 'object',
    properties: {
      city: { type: 'string' },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      days: { type: 'integer', minimum: 1, maximum: 7 },
      detailed: { type: 'boolean' },
      optional: { type: 'string' },
    },
    required: ['city', 'unit', 'days', 'detailed'],
  },
};

describe('echo engine', () => {
  test('echoes the last user message in word-sized deltas, with exact usage', async () => {
    const request: GenerationRequest = {
      model: 'switchyard-echo',
      system: 'ignored',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'first' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Echo: first' }] },
        { role: 'user', content: [{ type: 'text', text: 'hello brave new world' }] },
      ],
    };
    const parts = await run(request);
    const deltas = parts.filter((part) => part.type === 'text-delta').map((part) => (part.type === 'text-delta' ? part.delta : ''));
    assert.deepEqual(deltas, ['Echo:', ' hello', ' brave', ' new', ' world']);
    const finish = finishOf(parts);
    assert.equal(finish.finishReason, 'stop');
    assert.deepEqual(finish.usage, {
      inputTokens: countRequestTokens(request),
      cachedInputTokens: 0,
      cacheWriteInputTokens: 0,
      cacheWrite1hInputTokens: 0,
      outputTokens: countTokens('Echo: hello brave new world'),
      reasoningTokens: 0,
      requests: 1,
      estimated: false,
    });
  });

  test('is deterministic', async () => {
    const request = userRequest('same input', { thinking: { budgetTokens: 2000 }, tools: [weatherTool], toolChoice: { type: 'required' } });
    assert.deepEqual(await run(request), await run(request));
  });

  test('mentions images and documents of the message', async () => {
    const result = await assemble({
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this' },
            { type: 'image', url: 'https://example.com/a.png' },
            { type: 'image', url: 'data:image/png;base64,AA==' },
          ],
        },
      ],
    });
    assert.deepEqual(result.content, [{ type: 'text', text: 'Echo: what is this [2 images]' }]);
  });

  test('echoes tool results when the conversation ends with them', async () => {
    const result = await assemble({
      model: 'm',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
        { role: 'assistant', content: [{ type: 'tool-call', id: 'call_1', name: 'get_weather', input: '{}' }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', content: 'sunny' }] },
      ],
      tools: [weatherTool],
    });
    assert.deepEqual(result.content, [{ type: 'text', text: 'Echo: sunny' }]);
  });

  test('stop sequences cut the answer and are reported', async () => {
    const result = await assemble(userRequest('one two STOP three', { stopSequences: ['nothing', 'STOP', 'two STOP'] }));
    assert.deepEqual(result.content, [{ type: 'text', text: 'Echo: one ' }]);
    assert.equal(result.finishReason, 'stop-sequence');
    assert.equal(result.stopSequence, 'two STOP');
  });

  test('max output tokens cut the answer (gpt-tokenizer tokens) with finish length', async () => {
    const result = await assemble(userRequest('alpha beta gamma delta epsilon zeta', { maxOutputTokens: 4 }));
    const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
    assert.equal(countTokens(text), 4);
    assert.ok('Echo: alpha beta gamma delta epsilon zeta'.startsWith(text));
    assert.equal(result.finishReason, 'length');
    assert.equal(result.usage.outputTokens, 4);
  });

  test('a required tool choice gives a well-formed call built from the schema', async () => {
    const parts = await run(userRequest('Paris', { tools: [weatherTool], toolChoice: { type: 'required' } }));
    const start = parts.find((part) => part.type === 'tool-input-start');
    assert.ok(start?.type === 'tool-input-start');
    assert.match(start.id, /^call_[0-9a-f]{24}$/);
    assert.equal(start.toolName, 'get_weather');
    assert.ok(parts.filter((part) => part.type === 'tool-input-delta').length > 1, 'arguments stream in fragments');
    assert.deepEqual(JSON.parse(joinedDeltas(parts, 'tool-input-delta')), { city: 'Paris', unit: 'celsius', days: 1, detailed: true });
    assert.equal(finishOf(parts).finishReason, 'tool-calls');
  });

  test('a named tool is called alone; required with parallel calls calls every tool', async () => {
    const timeTool = { name: 'get_time', inputSchema: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] } };
    const named = await assemble(userRequest('Tokyo', { tools: [weatherTool, timeTool], toolChoice: { type: 'tool', name: 'get_time' } }));
    assert.deepEqual(
      named.content.map((part) => (part.type === 'tool-call' ? [part.name, part.input] : null)),
      [['get_time', '{"zone":"Tokyo"}']],
    );
    const parallel = await assemble(userRequest('Tokyo', { tools: [weatherTool, timeTool], toolChoice: { type: 'required' } }));
    assert.deepEqual(
      parallel.content.map((part) => (part.type === 'tool-call' ? part.name : null)),
      ['get_weather', 'get_time'],
    );
    const single = await assemble(
      userRequest('Tokyo', { tools: [weatherTool, timeTool], toolChoice: { type: 'required' }, parallelToolCalls: false }),
    );
    assert.equal(single.content.length, 1);
    const auto = await assemble(userRequest('Tokyo', { tools: [weatherTool], toolChoice: { type: 'auto' } }));
    assert.deepEqual(auto.content, [{ type: 'text', text: 'Echo: Tokyo' }]);
  });

  test('a named tool that is not among the tools is a 400', async () => {
    const error = await rejection(run(userRequest('x', { tools: [weatherTool], toolChoice: { type: 'tool', name: 'missing' } })));
    assert.ok(error instanceof Error && (error as { status?: number }).status === 400);
  });

  test('JSON output: json_object and a json_schema document', async () => {
    const object = await assemble(userRequest('hi there', { responseFormat: { type: 'json_object' } }));
    assert.deepEqual(JSON.parse(object.content[0]?.type === 'text' ? object.content[0].text : ''), { echo: 'hi there' });
    const schema = {
      type: 'object',
      properties: {
        title: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' } },
        score: { type: 'number', minimum: 0.5 },
        nested: { $ref: '#/$defs/Nested' },
        status: { anyOf: [{ type: 'null' }, { const: 'ok' }] },
      },
      required: ['title', 'tags', 'score', 'nested', 'status'],
      additionalProperties: false,
      $defs: { Nested: { type: 'object', properties: { when: { type: 'string', format: 'date' } }, required: ['when'] } },
    };
    const document = await assemble(userRequest('my title', { responseFormat: { type: 'json_schema', name: 'doc', schema } }));
    assert.deepEqual(JSON.parse(document.content[0]?.type === 'text' ? document.content[0].text : ''), {
      title: 'my title',
      tags: ['my title'],
      score: 0.5,
      nested: { when: '2026-01-01' },
      status: 'ok',
    });
  });

  test('thinking gives a reasoning block with a deterministic signature first', async () => {
    const parts = await run(userRequest('think about this', { thinking: { budgetTokens: 1024 } }));
    assert.equal(parts[1]?.type, 'reasoning-start');
    const result = await assemble(userRequest('think about this', { reasoningEffort: 'low' }));
    const reasoning = result.content[0];
    assert.ok(reasoning?.type === 'reasoning');
    assert.match(reasoning.text, /think about this/);
    assert.match(reasoning.signature ?? '', /^[A-Za-z0-9+/]+=*$/);
    assert.equal(result.usage.reasoningTokens, countTokens(reasoning.text));
    assert.equal(result.usage.outputTokens, countTokens(reasoning.text) + countTokens('Echo: think about this'));
    assert.deepEqual(result.content[1], { type: 'text', text: 'Echo: think about this' });
  });

  test('stops with the abort reason when the signal aborts', async () => {
    const controller = new AbortController();
    const parts = echo.stream(userRequest('a b c d e f g h i j k l m n o p q r s t u v w x y z'), { signal: controller.signal });
    const iterator = parts[Symbol.asyncIterator]();
    await iterator.next();
    const reason = new Error('stop');
    controller.abort(reason);
    assert.equal(await rejection(iterator.next()), reason);
  });

  test('a long message does not hold the event loop for the whole answer', async () => {
    const words = Array.from({ length: 20_000 }, (_, index) => `word${index}`).join(' ');
    // A ticker that runs once per event-loop turn; parts produced without a tick in between ran back to back.
    let ticks = 0;
    let ticking = true;
    const tick = (): void => {
      ticks++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    let lastTick = -1;
    let run = 0;
    let longestRun = 0;
    let parts = 0;
    for await (const _part of echo.stream(userRequest(words), { signal: new AbortController().signal })) {
      parts++;
      run = ticks === lastTick ? run + 1 : 1;
      lastTick = ticks;
      longestRun = Math.max(longestRun, run);
    }
    ticking = false;
    assert.ok(parts > 100);
    assert.ok(longestRun <= 16, `${longestRun} parts were produced without letting other work run`);
  });
});

describe('sampleFromJsonSchema', () => {
  test('fills required properties with type-appropriate values', () => {
    assert.deepEqual(sampleFromJsonSchema(weatherTool.inputSchema, 'Oslo'), { city: 'Oslo', unit: 'celsius', days: 1, detailed: true });
    assert.equal(sampleFromJsonSchema({ type: 'string', maxLength: 3 }, 'abcdef'), 'abc');
    assert.equal(sampleFromJsonSchema({ type: 'integer', exclusiveMinimum: 5 }, ''), 6);
    assert.deepEqual(sampleFromJsonSchema({ type: 'array', items: { type: 'boolean' }, minItems: 2 }, ''), [true, true]);
    assert.equal(sampleFromJsonSchema({ type: ['null', 'number'] }, ''), 1);
  });
});

describe('builtin provider', () => {
  test('serves the echo engine and rejects unknown engines with a 400', async () => {
    const provider = createBuiltinProvider({ kind: 'builtin', id: 'builtin', timeoutMs: 1000, maxRetries: 0, headers: {} }, {});
    try {
      const model = provider.languageModel!('echo');
      assert.equal(provider.languageModel!('echo'), model, 'engines are created once');
      const result = await assembleResult(model.stream(userRequest('ping'), { signal: new AbortController().signal }));
      assert.deepEqual(result.content, [{ type: 'text', text: 'Echo: ping' }]);
      assert.throws(() => provider.languageModel!('nope'), { status: 400, param: 'model' });
    } finally {
      await provider.close?.();
    }
  });
});
