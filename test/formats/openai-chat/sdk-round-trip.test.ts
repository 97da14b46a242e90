/**
 * Round trip through the official `openai` SDK: a real HTTP server (127.0.0.1, port 0) decodes what the
 * SDK sends with decodeChatCompletionRequest, and answers with encodeChatCompletion or, through the
 * server's one SSE writer, encodeChatCompletionStream. The SDK's own parsers and its stream accumulator
 * (`chat.completions.stream()`, `parse()`) must accept every answer. The canonical parts come from a
 * script chosen by the last user message, standing in for a provider.
 */
import { sequenceBlocks } from '../../../src/core/sequence-blocks.ts';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { assembleResult } from '../../../src/core/assemble-result.ts';
import { isServiceError, serverError, type ServiceError } from '../../../src/core/service-error.ts';
import type { StreamPart } from '../../../src/core/stream-parts.ts';
import { decodeChatCompletionRequest } from '../../../src/formats/openai-chat/decode-request.ts';
import { createChatCompletionContext, encodeChatCompletion } from '../../../src/formats/openai-chat/encode-response.ts';
import { encodeChatCompletionStream } from '../../../src/formats/openai-chat/encode-stream.ts';
import { writeSse } from '../../../src/http/sse-writer.ts';
import type { GenerationRequest } from '../../../src/core/generation.ts';
import { parallelToolParts, textParts, usage } from './stream-parts-fixtures.ts';
import { replay, readJsonBody } from '../../support/canonical-parts.ts';

const weatherJson = '{"city":"Paris","temperature":21}';

function script(request: GenerationRequest): StreamPart[] {
  const last = request.messages.at(-1);
  const said = last?.role === 'user' && last.content[0]?.type === 'text' ? last.content[0].text : '';
  switch (said) {
    case 'tools':
      return parallelToolParts;
    case 'json':
      return [
        { type: 'text-start', id: 't' },
        ...[weatherJson.slice(0, 9), weatherJson.slice(9, 20), weatherJson.slice(20)].map((delta): StreamPart => ({
          type: 'text-delta',
          id: 't',
          delta,
        })),
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: 'stop', usage },
      ];
    case 'fail':
      return [...textParts.slice(0, 3), { type: 'error', error: serverError('service_unavailable', 'The upstream went away.') }];
    default:
      return textParts;
  }
}

let server: Server;
let client: OpenAI;
/** The last request the server decoded, for assertions on what the SDK sent. */
let lastDecoded: ReturnType<typeof decodeChatCompletionRequest> | undefined;

before(async () => {
  server = createServer((request, response) => {
    void (async () => {
      try {
        const decoded = decodeChatCompletionRequest(await readJsonBody(request));
        lastDecoded = decoded;
        const context = createChatCompletionContext(decoded.options.model);
        const parts = replay(script(decoded.request));
        if (decoded.options.stream) {
          await writeSse(
            response,
            encodeChatCompletionStream(sequenceBlocks(parts), context, { includeUsage: decoded.options.includeUsage }),
            { headers: {}, keepAliveMs: 10_000 },
          );
        } else {
          const body = JSON.stringify(encodeChatCompletion(await assembleResult(parts), context));
          response.writeHead(200, { 'content-type': 'application/json' }).end(body);
        }
      } catch (error) {
        const serviceError: ServiceError = isServiceError(error) ? error : serverError('internal_error', String(error));
        response.writeHead(serviceError.status, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            error: { message: serviceError.message, type: serviceError.type, code: serviceError.code, param: serviceError.param },
          }),
        );
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  client = new OpenAI({ apiKey: 'test-key', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
});

after(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('openai SDK round trip', () => {
  test('create(): non-streaming text', async () => {
    const completion = await client.chat.completions.create({ model: 'test-model', messages: [{ role: 'user', content: 'hello' }] });
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.model, 'test-model');
    assert.equal(completion.choices[0]?.message.content, 'Hello, "world"\n');
    assert.equal(completion.usage?.total_tokens, 25);
  });

  test('create({stream: true}) with include_usage: chunks, then usage, then the end', async () => {
    const stream = await client.chat.completions.create({
      model: 'test-model',
      messages: [{ role: 'user', content: 'hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finishReason: string | null = null;
    let totalTokens: number | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finishReason = chunk.choices[0]?.finish_reason ?? finishReason;
      totalTokens = chunk.usage?.total_tokens ?? totalTokens;
    }
    assert.equal(text, 'Hello, "world"\n');
    assert.equal(finishReason, 'stop');
    assert.equal(totalTokens, 25);
    assert.equal(lastDecoded?.options.includeUsage, true);
  });

  test('chat.completions.stream(): the helper accumulates parallel tool calls', async () => {
    const runner = client.chat.completions.stream({
      model: 'test-model',
      messages: [{ role: 'user', content: 'tools' }],
      tools: [
        { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
      ],
    });
    const doneCalls: string[] = [];
    runner.on('tool_calls.function.arguments.done', (event) => doneCalls.push(`${event.name}:${event.arguments}`));
    const completion = await runner.finalChatCompletion();
    const message = completion.choices[0]!.message;
    assert.equal(completion.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(message.content, 'Checking.');
    assert.deepEqual(
      message.tool_calls?.map((call) => (call.type === 'function' ? [call.id, call.function.name, call.function.arguments] : [])),
      [
        ['call_weather', 'get_weather', '{"city":"Paris"}'],
        ['call_time', 'get_time', '{}'],
      ],
    );
    assert.deepEqual(doneCalls.sort(), ['get_time:{}', 'get_weather:{"city":"Paris"}']);
  });

  const Weather = z.object({ city: z.string(), temperature: z.number() });

  test('parse() with a zod json_schema: non-streaming', async () => {
    const completion = await client.chat.completions.parse({
      model: 'test-model',
      messages: [{ role: 'user', content: 'json' }],
      response_format: zodResponseFormat(Weather, 'weather'),
    });
    assert.deepEqual(completion.choices[0]?.message.parsed, { city: 'Paris', temperature: 21 });
    assert.equal(lastDecoded?.request.responseFormat?.type, 'json_schema');
  });

  test('stream() with a zod json_schema: parsed at the end', async () => {
    const runner = client.chat.completions.stream({
      model: 'test-model',
      messages: [{ role: 'user', content: 'json' }],
      response_format: zodResponseFormat(Weather, 'weather'),
    });
    const completion = await runner.finalChatCompletion();
    assert.deepEqual(completion.choices[0]?.message.parsed, { city: 'Paris', temperature: 21 });
  });

  test('an error after the stream began makes the SDK throw an APIError with the SPEC fields', async () => {
    const stream = await client.chat.completions.create({
      model: 'test-model',
      messages: [{ role: 'user', content: 'fail' }],
      stream: true,
    });
    let text = '';
    await assert.rejects(
      async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      },
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.APIError);
        assert.equal(error.message, 'The upstream went away.');
        assert.equal(error.code, 'service_unavailable');
        assert.equal(error.type, 'server_error');
        return true;
      },
    );
    assert.equal(text, 'Hello');
  });

  test('the stream() helper rejects on a failed stream too', async () => {
    const runner = client.chat.completions.stream({ model: 'test-model', messages: [{ role: 'user', content: 'fail' }] });
    await assert.rejects(
      runner.finalChatCompletion(),
      (error: unknown) => error instanceof OpenAI.APIError && error.code === 'service_unavailable',
    );
  });

  test('a decode error reaches the SDK as BadRequestError with its param', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'test-model', messages: [{ role: 'user', content: 'hello' }], temperature: 1.5 }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError);
        assert.equal(error.code, 'invalid_parameter');
        assert.equal(error.param, 'temperature');
        return true;
      },
    );
  });
});
