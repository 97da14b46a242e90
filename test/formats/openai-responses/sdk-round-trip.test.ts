/**
 * Round trip through the official `openai` SDK: a real HTTP server (127.0.0.1, port 0) decodes what the
 * SDK sends with decodeResponsesRequest and answers with encodeResponse or, through the server's one
 * SSE writer, encodeResponseStream. The SDK's parsers, its `responses.stream()` accumulator (which
 * validates item ids, output indexes and event order) and `responses.parse()` must accept every answer.
 * The canonical parts come from a script chosen by the last user text, standing in for a provider.
 */
import { sequenceBlocks } from '../../../src/core/sequence-blocks.ts';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { assembleResult } from '../../../src/core/assemble-result.ts';
import { isServiceError, serverError } from '../../../src/core/service-error.ts';
import type { StreamPart } from '../../../src/core/stream-parts.ts';
import type { GenerationRequest } from '../../../src/core/generation.ts';
import { decodeResponsesRequest } from '../../../src/formats/openai-responses/decode-request.ts';
import { createResponseContext, encodeResponse } from '../../../src/formats/openai-responses/encode-response.ts';
import { encodeResponseStream } from '../../../src/formats/openai-responses/encode-stream.ts';
import { writeSse } from '../../../src/http/sse-writer.ts';
import { lengthParts, parallelToolParts, reasoningParts, textParts, usage } from './stream-parts-fixtures.ts';
import { replay, readJsonBody } from '../../support/canonical-parts.ts';

const answerJson = '{"city":"Paris","temperature":21}';

function script(request: GenerationRequest): StreamPart[] {
  const last = request.messages.at(-1);
  const said = last?.role === 'user' && last.content[0]?.type === 'text' ? last.content[0].text : (last?.role ?? '');
  switch (said) {
    case 'tools':
      return parallelToolParts;
    case 'think':
      return reasoningParts;
    case 'long':
      return lengthParts;
    case 'json':
      return [
        { type: 'text-start', id: 't' },
        ...[answerJson.slice(0, 9), answerJson.slice(9, 20), answerJson.slice(20)].map((delta): StreamPart => ({
          type: 'text-delta',
          id: 't',
          delta,
        })),
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: 'stop', usage },
      ];
    case 'fail':
      return [...textParts.slice(0, 3), { type: 'error', error: serverError('service_unavailable', 'The upstream went away.') }];
    case 'tool':
      // The tool result came back: answer with text.
      return [
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'It is 21 degrees.' },
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: 'stop', usage },
      ];
    default:
      return textParts;
  }
}

let server: Server;
let client: OpenAI;
let lastDecoded: ReturnType<typeof decodeResponsesRequest> | undefined;

before(async () => {
  server = createServer((request, response) => {
    void (async () => {
      try {
        const decoded = decodeResponsesRequest(await readJsonBody(request));
        lastDecoded = decoded;
        const context = createResponseContext(decoded.options);
        const parts = script(decoded.request);
        if (decoded.options.stream) {
          await writeSse(response, encodeResponseStream(sequenceBlocks(replay(parts)), context), { headers: {}, keepAliveMs: 10_000 });
          return;
        }
        const body = encodeResponse(await assembleResult(replay(parts)), context);
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      } catch (error) {
        const status = isServiceError(error) ? error.status : 500;
        const message = error instanceof Error ? error.message : String(error);
        response
          .writeHead(status, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message, type: 'invalid_request_error', code: null, param: null } }));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = new OpenAI({ apiKey: 'test', baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, maxRetries: 0 });
});

after(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('the openai SDK reads what the response-style encoders write', () => {
  test('responses.create: output_text, usage and the echo', async () => {
    const response = await client.responses.create({
      model: 'test-model',
      input: 'hello',
      max_output_tokens: 64,
      instructions: 'Be brief.',
    });
    assert.equal(response.output_text, 'Hello, world!');
    assert.equal(response.status, 'completed');
    assert.equal(response.instructions, 'Be brief.');
    assert.equal(response.usage?.input_tokens, 12);
    assert.equal(response.usage?.output_tokens_details.reasoning_tokens, 3);
    assert.equal(lastDecoded?.request.system, 'Be brief.');
  });

  test('responses.stream(): events, the accumulated snapshot and finalResponse()', async () => {
    const stream = client.responses.stream({ model: 'test-model', input: 'hello', max_output_tokens: 64 });
    const deltas: string[] = [];
    const snapshots: string[] = [];
    stream.on('response.output_text.delta', (event) => {
      deltas.push(event.delta);
      snapshots.push(event.snapshot);
    });
    const final = await stream.finalResponse();
    assert.deepEqual(deltas, ['Hello', ', ', 'world!']);
    assert.deepEqual(snapshots, ['Hello', 'Hello, ', 'Hello, world!']);
    assert.equal(final.output_text, 'Hello, world!');
    assert.equal(final.status, 'completed');
    assert.equal(final.usage?.total_tokens, 21);
  });

  test('streamed parallel function calls arrive complete, then a second turn sends their outputs back', async () => {
    const tools = [
      {
        type: 'function' as const,
        name: 'get_weather',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
        strict: false,
      },
      {
        type: 'function' as const,
        name: 'get_time',
        parameters: { type: 'object', properties: { zone: { type: 'string' } } },
        strict: false,
      },
    ];
    const stream = client.responses.stream({ model: 'test-model', input: 'tools', max_output_tokens: 64, tools });
    const argumentDeltas: string[] = [];
    stream.on('response.function_call_arguments.delta', (event) => argumentDeltas.push(event.delta));
    const first = await stream.finalResponse();
    assert.equal(argumentDeltas.join(''), '{"city":"Paris"}{"zone":"CET"}');
    const calls = first.output.filter((item) => item.type === 'function_call');
    assert.deepEqual(
      calls.map((call) => [call.call_id, call.name, call.arguments]),
      [
        ['call_a', 'get_weather', '{"city":"Paris"}'],
        ['call_b', 'get_time', '{"zone":"CET"}'],
      ],
    );
    // The SDK's output item types are wider than its input item types (computer calls can fail), hence the casts.
    const second = await client.responses.create({
      model: 'test-model',
      max_output_tokens: 64,
      tools,
      input: [
        { role: 'user', content: 'tools' },
        ...(first.output as unknown as OpenAI.Responses.ResponseInputItem[]),
        ...calls.map((call) => ({ type: 'function_call_output' as const, call_id: call.call_id, output: '21' })),
      ],
    });
    assert.deepEqual(
      lastDecoded?.request.messages.map((message) => message.role),
      ['user', 'assistant', 'tool'],
    );
    assert.equal(second.output_text, 'It is 21 degrees.');
  });

  test('reasoning items stream and survive a round trip back as input', async () => {
    const final = await client.responses.stream({ model: 'test-model', input: 'think', max_output_tokens: 64 }).finalResponse();
    const reasoning = final.output.filter((item) => item.type === 'reasoning');
    assert.equal(reasoning.length, 2);
    assert.equal(reasoning[0]?.content?.[0]?.text, 'Let me think.');
    assert.equal(final.output_text, 'Answer.');
    await client.responses.create({
      model: 'test-model',
      max_output_tokens: 64,
      input: [
        { role: 'user', content: 'think' },
        ...(final.output as unknown as OpenAI.Responses.ResponseInputItem[]),
        { role: 'user', content: 'again' },
      ],
    });
    assert.deepEqual(lastDecoded?.request.messages[1]?.content.slice(0, 2), [
      { type: 'reasoning', text: 'Let me think.', signature: 'sig-abc' },
      { type: 'reasoning', text: '', redactedData: 'opaque-data' },
    ]);
  });

  test('responses.parse() and stream() with a json_schema text format give the parsed object', async () => {
    const format = zodTextFormat(z.object({ city: z.string(), temperature: z.number() }), 'weather');
    const parsed = await client.responses.parse({ model: 'test-model', input: 'json', max_output_tokens: 64, text: { format } });
    assert.deepEqual(parsed.output_parsed, { city: 'Paris', temperature: 21 });
    assert.equal(lastDecoded?.request.responseFormat?.type, 'json_schema');
    const streamed = await client.responses
      .stream({ model: 'test-model', input: 'json', max_output_tokens: 64, text: { format } })
      .finalResponse();
    assert.deepEqual(streamed.output_parsed, { city: 'Paris', temperature: 21 });
  });

  test('a cut answer ends the stream as incomplete; a failure mid-stream as failed', async () => {
    const incomplete = await client.responses.stream({ model: 'test-model', input: 'long', max_output_tokens: 64 }).finalResponse();
    assert.equal(incomplete.status, 'incomplete');
    assert.equal(incomplete.incomplete_details?.reason, 'max_output_tokens');
    const events: string[] = [];
    const stream = client.responses.stream({ model: 'test-model', input: 'fail', max_output_tokens: 64 });
    stream.on('event', (event) => events.push(event.type));
    const failed = await stream.finalResponse();
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error?.message, 'The upstream went away.');
    assert.equal(events.at(-1), 'response.failed');
  });

  test('a bad request is a BadRequestError', async () => {
    await assert.rejects(
      client.responses.create({ model: 'test-model', input: 'hello', max_output_tokens: 64, temperature: 2 }),
      OpenAI.BadRequestError,
    );
  });
});
