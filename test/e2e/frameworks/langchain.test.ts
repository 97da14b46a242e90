// LangChain JS (ChatOpenAI with and without the Responses API, ChatAnthropic, OpenAIEmbeddings) driven
// unchanged against a running Switchyard, in both validation modes, against the built-in engine and
// the mock upstreams: invoke, stream, a forced tool, a two-step tool run, structured output and a
// second turn built from the first turn's messages. In `spec` mode the defaults the SPEC refuses are
// 400s: the Responses API without max_output_tokens, and ChatAnthropic's consecutive user messages or
// assistant-first conversations.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ChatAnthropic } from '@langchain/anthropic';
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { z } from 'zod';
import {
  BUILTIN,
  EMBEDDINGS,
  ENGINES,
  VALIDATION_MODES,
  VIA_ANTHROPIC,
  WEATHER_RESULT,
  WEATHER_TOOL_NAME,
  plainAnswer,
  scriptForcedTool,
  scriptJson,
  scriptToolRun,
  expectDefaultCallOutcome,
  useFrameworkServers,
  type Engine,
  type ValidationMode,
} from '../../support/framework-servers.ts';

const CLIENTS = ['ChatOpenAI', 'ChatOpenAI (useResponsesApi)', 'ChatAnthropic'] as const;
type ClientName = (typeof CLIENTS)[number];

const Weather = z.object({ city: z.string(), temperature: z.number(), sunny: z.boolean() });
const weatherTool = tool(async () => WEATHER_RESULT, {
  name: WEATHER_TOOL_NAME,
  description: 'Current weather for a city.',
  schema: z.object({ city: z.string() }),
});

/** The HTTP status a LangChain client error carries (OpenAI and Anthropic SDK errors both have `status`). */
function statusOf(error: unknown): number | undefined {
  return (
    (error as { status?: number; response?: { status?: number } }).status ?? (error as { response?: { status?: number } }).response?.status
  );
}

describe('LangChain JS against Switchyard', () => {
  const harness = useFrameworkServers();

  /** `maxTokens` null leaves the client's default (none for ChatOpenAI, 2048 for ChatAnthropic). */
  function chatModel(mode: ValidationMode, client: ClientName, engine: Engine, maxTokens: number | null = 200): ChatOpenAI | ChatAnthropic {
    const server = harness().servers[mode];
    if (client === 'ChatAnthropic') {
      // ChatAnthropic takes the origin: the Anthropic SDK adds /v1 itself.
      return new ChatAnthropic({
        model: engine,
        apiKey: server.key,
        anthropicApiUrl: server.origin,
        maxRetries: 0,
        ...(maxTokens === null ? {} : { maxTokens }),
      });
    }
    return new ChatOpenAI({
      model: engine,
      apiKey: server.key,
      configuration: { baseURL: server.baseUrl },
      maxRetries: 0,
      useResponsesApi: client === 'ChatOpenAI (useResponsesApi)',
      ...(maxTokens === null ? {} : { maxTokens }),
    });
  }

  for (const mode of VALIDATION_MODES) {
    for (const client of CLIENTS) {
      describe(`${mode} mode, ${client}`, () => {
        test('a default invoke (no maxTokens)', async () => {
          const answer = chatModel(mode, client, BUILTIN, null)
            .invoke('Hello')
            .then((message) => message.text);
          await expectDefaultCallOutcome(answer, mode === 'spec' && client === 'ChatOpenAI (useResponsesApi)');
        });

        for (const engine of ENGINES) {
          describe(`engine ${engine}`, () => {
            test('invoke and stream', async () => {
              const model = chatModel(mode, client, engine);
              const answer = await model.invoke([new SystemMessage('Be brief.'), new HumanMessage('Hello there')]);
              assert.equal(answer.text, plainAnswer(engine, 'Hello there'));
              let streamed = '';
              for await (const chunk of await model.stream('Stream this')) streamed += chunk.text;
              assert.equal(streamed, plainAnswer(engine, 'Stream this'));
            });

            test('a forced tool call', async () => {
              scriptForcedTool(harness(), engine);
              const bound = chatModel(mode, client, engine).bindTools([weatherTool], { tool_choice: WEATHER_TOOL_NAME });
              const answer = await bound.invoke('Weather in Paris?');
              assert.equal(answer.tool_calls?.length, 1);
              assert.equal(answer.tool_calls?.[0]?.name, WEATHER_TOOL_NAME);
              assert.equal(typeof answer.tool_calls?.[0]?.args['city'], 'string');
            });

            test('a two-step tool run (call, execute, answer)', async () => {
              scriptToolRun(harness(), engine);
              const model = chatModel(mode, client, engine);
              // The built-in engine calls tools only when forced: force the first step.
              const first = model.bindTools([weatherTool], engine === BUILTIN ? { tool_choice: WEATHER_TOOL_NAME } : {});
              const messages: BaseMessage[] = [new HumanMessage('Weather in Paris?')];
              const call = await first.invoke(messages);
              assert.equal(call.tool_calls?.length, 1);
              messages.push(call);
              for (const toolCall of call.tool_calls ?? []) messages.push(await weatherTool.invoke(toolCall));
              const final = await model.bindTools([weatherTool]).invoke(messages);
              assert.equal(final.text, engine === BUILTIN ? `Echo: ${WEATHER_RESULT}` : 'It is sunny in Paris.');
            });

            test('structured output (withStructuredOutput, jsonSchema)', async () => {
              scriptJson(harness(), engine, { city: 'Paris', temperature: 21, sunny: true });
              const structured = chatModel(mode, client, engine, 400).withStructuredOutput(Weather, { method: 'jsonSchema' });
              const result = await structured.invoke('Weather in Paris as JSON.');
              assert.deepEqual(Object.keys(result).sort(), ['city', 'sunny', 'temperature']);
              if (engine !== BUILTIN) assert.deepEqual(result, { city: 'Paris', temperature: 21, sunny: true });
              if (engine === VIA_ANTHROPIC) {
                const upstream = harness().anthropic.requests.at(-1)!.body as { output_config?: { format?: { type?: string } } };
                assert.equal(upstream.output_config?.format?.type, 'json_schema');
              }
            });

            test("a second turn built from the first turn's messages", async () => {
              const model = chatModel(mode, client, engine);
              const messages: BaseMessage[] = [new HumanMessage('First question')];
              messages.push(await model.invoke(messages), new HumanMessage('Second question'));
              const second = await model.invoke(messages);
              assert.equal(second.text, plainAnswer(engine, 'Second question'));
            });
          });
        }
      });
    }

    describe(`${mode} mode, ChatAnthropic conversations the SPEC refuses`, () => {
      const shapes: Array<[string, BaseMessage[], string]> = [
        ['two user messages in a row', [new HumanMessage('Context first.'), new HumanMessage('Then the question')], 'messages[1].role'],
        ['an assistant message first', [new AIMessage('Hello, how can I help?'), new HumanMessage('The question')], 'messages[0].role'],
      ];
      for (const [name, messages, param] of shapes) {
        test(name, async () => {
          const call = chatModel(mode, 'ChatAnthropic', BUILTIN).invoke(messages);
          if (mode === 'spec') {
            await assert.rejects(call, (error: unknown) => {
              assert.equal(statusOf(error), 400, String(error));
              assert.match(String(error), new RegExp(param.replace(/[[\].]/g, '\\$&')));
              return true;
            });
          } else {
            const answer = await call;
            assert.match(answer.text, /^Echo: /);
          }
        });
      }

      test('temperature above 1 (compatible only)', async () => {
        const model = new ChatAnthropic({
          model: BUILTIN,
          apiKey: harness().servers[mode].key,
          anthropicApiUrl: harness().servers[mode].origin,
          maxRetries: 0,
          temperature: 1.5,
        });
        if (mode === 'spec') await assert.rejects(model.invoke('Hi'), (error: unknown) => statusOf(error) === 400);
        else assert.equal((await model.invoke('Hi')).text, 'Echo: Hi');
      });
    });

    describe(`${mode} mode, OpenAIEmbeddings`, () => {
      test('embedQuery and embedDocuments', async () => {
        const server = harness().servers[mode];
        const embeddings = new OpenAIEmbeddings({
          model: EMBEDDINGS,
          apiKey: server.key,
          configuration: { baseURL: server.baseUrl },
          maxRetries: 0,
        });
        const query = await embeddings.embedQuery('The cat sat on the mat.');
        assert.equal(query.length, 512);
        const documents = await embeddings.embedDocuments(['first text', 'second text']);
        assert.deepEqual(
          documents.map((vector) => vector.length),
          [512, 512],
        );
      });

      test('an unknown model: 400 in spec, 404 in compatible', async () => {
        const server = harness().servers[mode];
        const embeddings = new OpenAIEmbeddings({
          model: 'no-such-embedder',
          apiKey: server.key,
          configuration: { baseURL: server.baseUrl },
          maxRetries: 0,
        });
        await assert.rejects(embeddings.embedQuery('x'), (error: unknown) => {
          assert.equal(statusOf(error), mode === 'spec' ? 400 : 404, String(error));
          return true;
        });
      });
    });
  }
});
