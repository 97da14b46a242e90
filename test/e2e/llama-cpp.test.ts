// A local GGUF model served in-process by llama.cpp, end to end through the HTTP server with the
// official SDKs. The model is the tiny GGUF the test support builds (it always writes "The quick brown
// fox..."), so the whole pipeline is real and its output exactly checkable.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { buildTinyLlamaGguf } from '../support/tiny-gguf/build-tiny-llama.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

describe('llama-cpp backend over HTTP', () => {
  let server: TestServer;
  let openai: OpenAI;

  before(async () => {
    server = await startTestServer({
      config: {
        // One thread: the test machine's cores are shared with other suites.
        providers: { local: { kind: 'llama-cpp', threads: 1, sequencesPerModel: 2, maxContextTokens: 512 } },
        models: [
          {
            id: 'tiny-llama',
            provider: 'local',
            upstreamModel: buildTinyLlamaGguf(),
            capabilities: ['chat', 'streaming', 'json_mode'],
            maxOutputTokens: 16,
          },
        ],
      },
    });
    openai = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
  });
  after(async () => server.close());

  test('chat completion, non-streaming and streaming, with usage from the model tokenizer', async () => {
    const completion = await openai.chat.completions.create({
      model: 'tiny-llama',
      max_tokens: 5,
      messages: [{ role: 'user', content: 'Tell me a story' }],
    });
    assert.equal(completion.choices[0]!.finish_reason, 'length');
    assert.match(completion.choices[0]!.message.content ?? '', /quick|brown|fox|The/);
    assert.equal(completion.usage!.completion_tokens, 5);
    let text = '';
    const stream = await openai.chat.completions.create({
      model: 'tiny-llama',
      max_tokens: 8,
      stream: true,
      stop: ['lazy'],
      messages: [{ role: 'user', content: 'Go on' }],
    });
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.ok(text.length > 0);
    assert.ok(finish === 'stop' || finish === 'length');
    assert.doesNotMatch(text, /lazy/);
  });

  test('json_schema output is constrained by a grammar and parses', async () => {
    const completion = await openai.chat.completions.create({
      model: 'tiny-llama',
      max_tokens: 16,
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'flag',
          schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false },
        },
      },
      messages: [{ role: 'user', content: 'Answer in JSON' }],
    });
    const parsed = JSON.parse(completion.choices[0]!.message.content!) as { ok: unknown };
    assert.equal(typeof parsed.ok, 'boolean');
  });

  test('the Anthropic SDK gets the same model in the Messages shape', async () => {
    const anthropic = new Anthropic({ apiKey: server.key, baseURL: server.origin, maxRetries: 0 });
    const message = await anthropic.messages.create({ model: 'tiny-llama', max_tokens: 4, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(message.stop_reason, 'max_tokens');
    assert.equal(message.usage.output_tokens, 4);
  });

  test('images are refused with a 400 naming the capability', async () => {
    await assert.rejects(
      openai.chat.completions.create({
        model: 'tiny-llama',
        max_tokens: 4,
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.test/cat.png' } }] }],
      }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && /vision/.test(error.message),
    );
  });
});
