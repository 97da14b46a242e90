// The Vercel AI SDK (`ai` 6 with @ai-sdk/openai (responses and chat), @ai-sdk/openai-compatible and
// @ai-sdk/anthropic) driven unchanged against a running Switchyard, in both validation modes, against
// the built-in engine and the mock upstreams: generate, stream, a forced tool, a two-step tool run,
// structured output and a second turn built from the first turn's messages. In `spec` mode the one
// default the SPEC refuses (the responses provider sends no max_output_tokens) is a 400.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateObject, generateText, stepCountIs, streamText, tool, type LanguageModel, type ModelMessage } from 'ai';
import { z } from 'zod';
import {
  BUILTIN,
  ENGINES,
  VALIDATION_MODES,
  VIA_ANTHROPIC,
  WEATHER_ARGUMENTS,
  WEATHER_RESULT,
  WEATHER_TOOL_NAME,
  plainAnswer,
  recordingFetch,
  scriptForcedTool,
  scriptJson,
  scriptToolRun,
  useFrameworkServers,
  type Engine,
  type ValidationMode,
} from '../../support/framework-servers.ts';

const PROVIDERS = ['openai-responses', 'openai-chat', 'openai-compatible', 'anthropic'] as const;
type ProviderName = (typeof PROVIDERS)[number];

const Weather = z.object({ city: z.string(), temperature: z.number(), sunny: z.boolean() });

const WEATHER_INPUT = z.object({ city: z.string() });
/** The tool with its implementation (a forced call stops after one step: it runs once, nothing follows). */
const weatherExecuted = tool({
  description: 'Current weather for a city.',
  inputSchema: WEATHER_INPUT,
  execute: async () => WEATHER_RESULT,
});

describe('Vercel AI SDK against Switchyard', () => {
  const harness = useFrameworkServers();

  function modelFor(mode: ValidationMode, provider: ProviderName, engine: Engine, recorder = recordingFetch()): LanguageModel {
    const server = harness().servers[mode];
    const settings = { apiKey: server.key, baseURL: server.baseUrl, fetch: recorder.fetch };
    switch (provider) {
      case 'openai-responses':
        return createOpenAI(settings).responses(engine);
      case 'openai-chat':
        return createOpenAI(settings).chat(engine);
      case 'openai-compatible':
        // Switchyard takes json_schema response formats: tell the provider so (it sends json_object otherwise).
        return createOpenAICompatible({ ...settings, name: 'switchyard', supportsStructuredOutputs: true })(engine);
      case 'anthropic':
        // The Anthropic provider's base URL includes /v1 (it posts to `${baseURL}/messages`).
        return createAnthropic(settings)(engine);
    }
  }

  for (const mode of VALIDATION_MODES) {
    for (const provider of PROVIDERS) {
      describe(`${mode} mode, ${provider} provider`, () => {
        test('a default generateText call (no maxOutputTokens)', async () => {
          const call = generateText({ model: modelFor(mode, provider, BUILTIN), prompt: 'Hello', maxRetries: 0 });
          if (mode === 'spec' && provider === 'openai-responses') {
            // SPEC: max_output_tokens is required on /v1/responses; the AI SDK sends none by default.
            await assert.rejects(call, (error: unknown) => {
              assert.ok(APICallError.isInstance(error), String(error));
              assert.equal(error.statusCode, 400);
              assert.match(error.responseBody ?? '', /"param":"max_output_tokens"/);
              return true;
            });
          } else {
            assert.equal((await call).text, 'Echo: Hello');
          }
        });

        for (const engine of ENGINES) {
          describe(`engine ${engine}`, () => {
            test('generate and stream', async () => {
              const generated = await generateText({
                model: modelFor(mode, provider, engine),
                prompt: 'Hello there',
                maxOutputTokens: 200,
                maxRetries: 0,
              });
              assert.equal(generated.text, plainAnswer(engine, 'Hello there'));
              assert.ok(generated.usage.outputTokens !== undefined && generated.usage.outputTokens > 0);
              const streamed = streamText({
                model: modelFor(mode, provider, engine),
                prompt: 'Stream this',
                maxOutputTokens: 200,
                maxRetries: 0,
              });
              let text = '';
              for await (const delta of streamed.textStream) text += delta;
              assert.equal(text, plainAnswer(engine, 'Stream this'));
              assert.equal(await streamed.finishReason, 'stop');
            });

            test('a forced tool call', async () => {
              scriptForcedTool(harness(), engine);
              const result = await generateText({
                model: modelFor(mode, provider, engine),
                prompt: 'Weather in Paris?',
                tools: { [WEATHER_TOOL_NAME]: weatherExecuted },
                toolChoice: { type: 'tool', toolName: WEATHER_TOOL_NAME },
                maxOutputTokens: 200,
                maxRetries: 0,
              });
              assert.equal(result.toolCalls.length, 1);
              assert.equal(result.toolCalls[0]!.toolName, WEATHER_TOOL_NAME);
              assert.equal(typeof (result.toolCalls[0]!.input as { city?: unknown }).city, 'string');
              assert.equal(result.finishReason, 'tool-calls');
            });

            test('a two-step tool run (call, execute, answer)', async () => {
              scriptToolRun(harness(), engine);
              const result = await generateText({
                model: modelFor(mode, provider, engine),
                prompt: 'Weather in Paris?',
                tools: { [WEATHER_TOOL_NAME]: weatherExecuted },
                // The built-in engine calls tools only when forced: force the first step, free the second.
                toolChoice: engine === BUILTIN ? 'required' : 'auto',
                prepareStep: ({ stepNumber }) => (stepNumber > 0 ? { toolChoice: 'auto' } : undefined),
                stopWhen: stepCountIs(3),
                maxOutputTokens: 200,
                maxRetries: 0,
              });
              assert.equal(result.steps.length, 2);
              assert.equal(result.steps[0]!.toolResults[0]!.output, WEATHER_RESULT);
              assert.equal(result.text, engine === BUILTIN ? `Echo: ${WEATHER_RESULT}` : 'It is sunny in Paris.');
            });

            test('structured output', async () => {
              scriptJson(harness(), engine, { city: 'Paris', temperature: 21, sunny: true });
              const result = await generateObject({
                model: modelFor(mode, provider, engine),
                schema: Weather,
                prompt: 'Weather in Paris as JSON.',
                maxOutputTokens: 400,
                maxRetries: 0,
                providerOptions: { anthropic: { structuredOutputMode: 'outputFormat' } },
              });
              assert.deepEqual(Object.keys(result.object).sort(), ['city', 'sunny', 'temperature']);
              if (engine !== BUILTIN) assert.deepEqual(result.object, { city: 'Paris', temperature: 21, sunny: true });
              if (engine === VIA_ANTHROPIC) {
                const upstream = harness().anthropic.requests.at(-1)!.body as { output_config?: { format?: { type?: string } } };
                assert.equal(upstream.output_config?.format?.type, 'json_schema');
              }
            });

            test("a second turn built from the first turn's messages", async () => {
              const recorder = recordingFetch();
              const model = modelFor(mode, provider, engine, recorder);
              const messages: ModelMessage[] = [{ role: 'user', content: 'First question' }];
              const first = await generateText({ model, messages, maxOutputTokens: 200, maxRetries: 0 });
              messages.push(...first.response.messages, { role: 'user', content: 'Second question' });
              const second = await generateText({ model, messages, maxOutputTokens: 200, maxRetries: 0 });
              assert.equal(second.text, plainAnswer(engine, 'Second question'));
              if (provider === 'openai-responses') {
                // With store on (the default) the SDK refers to the stored assistant turn by id.
                const input = recorder.bodies.at(-1)!.body['input'] as Array<{ type?: string }>;
                assert.ok(
                  input.some((item) => item.type === 'item_reference'),
                  JSON.stringify(input),
                );
              }
            });
          });
        }
      });
    }

    test(`${mode} mode: an item_reference to another organization's item is a 400 naming input[i].id`, async () => {
      const server = harness().servers[mode];
      const first = await generateText({
        model: modelFor(mode, 'openai-responses', BUILTIN),
        prompt: 'Mine',
        maxOutputTokens: 50,
        maxRetries: 0,
      });
      const itemId = (first.response.messages[0]!.content as Array<{ providerOptions?: { openai?: { itemId?: string } } }>)[0]!
        .providerOptions?.openai?.itemId;
      assert.match(itemId ?? '', /^msg_/);
      const other = await server.createKey({ organization: `org-other-${mode}` });
      for (const key of [other.key, server.key]) {
        const response = await fetch(`${server.baseUrl}/responses`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: BUILTIN,
            max_output_tokens: 50,
            input: [
              { role: 'user', content: 'a' },
              { type: 'item_reference', id: key === server.key ? 'msg_unknown' : itemId },
            ],
          }),
        });
        const body = (await response.json()) as { error: { code: string; param: string } };
        assert.equal(response.status, 400);
        assert.deepEqual([body.error.code, body.error.param], ['invalid_parameter', 'input[1].id']);
      }
      assert.deepEqual(WEATHER_ARGUMENTS, { city: 'Paris' });
    });
  }
});
