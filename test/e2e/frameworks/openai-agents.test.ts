// The OpenAI Agents SDK (@openai/agents) in both API modes (Responses and Chat Completions) driven
// unchanged against a running Switchyard, in both validation modes, against the built-in engine and
// the mock upstreams: a run, a streamed run, a forced tool, a two-step tool run, structured output and
// a second turn built from the first run's history. In `spec` mode the Responses mode without
// `maxTokens` (the SDK sends no max_output_tokens by default) is the expected 400.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool, type AgentInputItem } from '@openai/agents';
import { z } from 'zod';
import {
  BUILTIN,
  ENGINES,
  VALIDATION_MODES,
  WEATHER_RESULT,
  WEATHER_TOOL_NAME,
  plainAnswer,
  scriptForcedTool,
  scriptJson,
  scriptToolRun,
  expectDefaultCallOutcome,
  useFrameworkServers,
  type ValidationMode,
} from '../../support/framework-servers.ts';

const API_MODES = ['responses', 'chat_completions'] as const;
type ApiMode = (typeof API_MODES)[number];

const Weather = z.object({ city: z.string(), temperature: z.number(), sunny: z.boolean() });
const weatherTool = tool({
  name: WEATHER_TOOL_NAME,
  description: 'Current weather for a city.',
  parameters: z.object({ city: z.string() }),
  execute: async () => WEATHER_RESULT,
});

describe('OpenAI Agents SDK against Switchyard', () => {
  // Traces would be exported to OpenAI: off, as any self-hosted deployment sets it.
  before(() => setTracingDisabled(true));
  const harness = useFrameworkServers();

  function runnerFor(mode: ValidationMode, api: ApiMode): Runner {
    const server = harness().servers[mode];
    return new Runner({
      modelProvider: new OpenAIProvider({ apiKey: server.key, baseURL: server.baseUrl, useResponses: api === 'responses' }),
      tracingDisabled: true,
    });
  }

  for (const mode of VALIDATION_MODES) {
    for (const api of API_MODES) {
      describe(`${mode} mode, ${api} API`, () => {
        test('an agent with default model settings (no maxTokens)', async () => {
          const agent = new Agent({ name: 'plain', instructions: 'Be brief.', model: BUILTIN });
          const answer = runnerFor(mode, api)
            .run(agent, 'Hello')
            .then((result) => result.finalOutput);
          await expectDefaultCallOutcome(answer, mode === 'spec' && api === 'responses');
        });

        for (const engine of ENGINES) {
          describe(`engine ${engine}`, () => {
            const settings = { maxTokens: 200 };

            test('run and streamed run', async () => {
              const agent = new Agent({ name: 'echo', instructions: 'Be brief.', model: engine, modelSettings: settings });
              const result = await runnerFor(mode, api).run(agent, 'Hello there');
              assert.equal(result.finalOutput, plainAnswer(engine, 'Hello there'));
              const streamed = await runnerFor(mode, api).run(agent, 'Stream this', { stream: true });
              let text = '';
              for await (const chunk of streamed.toTextStream()) text += chunk;
              await streamed.completed;
              assert.equal(text, plainAnswer(engine, 'Stream this'));
              assert.equal(streamed.finalOutput, plainAnswer(engine, 'Stream this'));
            });

            test('a forced tool call (stop on the first tool)', async () => {
              scriptForcedTool(harness(), engine);
              const agent = new Agent({
                name: 'forced',
                model: engine,
                tools: [weatherTool],
                modelSettings: { ...settings, toolChoice: WEATHER_TOOL_NAME },
                toolUseBehavior: 'stop_on_first_tool',
              });
              const result = await runnerFor(mode, api).run(agent, 'Weather in Paris?');
              assert.equal(result.finalOutput, WEATHER_RESULT);
              assert.ok(result.newItems.some((item) => item.type === 'tool_call_item'));
            });

            test('a two-step tool run (call, execute, answer)', async () => {
              scriptToolRun(harness(), engine);
              // The built-in engine calls tools only when forced; the SDK resets the choice after the call.
              const agent = new Agent({
                name: 'tools',
                model: engine,
                tools: [weatherTool],
                modelSettings: { ...settings, ...(engine === BUILTIN ? { toolChoice: 'required' as const } : {}) },
              });
              const result = await runnerFor(mode, api).run(agent, 'Weather in Paris?');
              assert.equal(result.finalOutput, engine === BUILTIN ? `Echo: ${WEATHER_RESULT}` : 'It is sunny in Paris.');
              assert.ok(result.newItems.some((item) => item.type === 'tool_call_output_item'));
            });

            test('structured output (outputType)', async () => {
              scriptJson(harness(), engine, { city: 'Paris', temperature: 21, sunny: true });
              const agent = new Agent({ name: 'structured', model: engine, outputType: Weather, modelSettings: { maxTokens: 400 } });
              const result = await runnerFor(mode, api).run(agent, 'Weather in Paris as JSON.');
              const output = result.finalOutput;
              assert.ok(output !== undefined);
              assert.deepEqual(Object.keys(output).sort(), ['city', 'sunny', 'temperature']);
              if (engine !== BUILTIN) assert.deepEqual(output, { city: 'Paris', temperature: 21, sunny: true });
            });

            test("a second turn built from the first run's history", async () => {
              const agent = new Agent({ name: 'chat', model: engine, modelSettings: settings });
              const runner = runnerFor(mode, api);
              const first = await runner.run(agent, 'First question');
              const input: AgentInputItem[] = [...first.history, { role: 'user', content: 'Second question' }];
              const second = await runner.run(agent, input);
              assert.equal(second.finalOutput, plainAnswer(engine, 'Second question'));
            });
          });
        }
      });
    }
  }
});
