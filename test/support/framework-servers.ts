/**
 * What the client-framework end-to-end tests share: one Switchyard per validation mode, both behind the
 * same mock upstreams, with the built-in echo engine and one model per upstream kind; a recording fetch
 * (to see what a framework actually sent) and the scripted upstream replies of a two-step tool run.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach } from 'node:test';
import { MockAnthropicServer, MockOpenAIServer } from './mock-upstreams/index.ts';
import { startTestServer, type TestServer } from './test-server.ts';

export const VALIDATION_MODES = ['spec', 'compatible'] as const;
export type ValidationMode = (typeof VALIDATION_MODES)[number];

/** The built-in deterministic engine (`Echo: <last user text>`, forced tools, schema-true JSON). */
export const BUILTIN = 'switchyard-echo';
/** A model served by the mock OpenAI-compatible upstream. */
export const VIA_OPENAI = 'mock-gpt';
/** A model served by the mock Anthropic upstream. */
export const VIA_ANTHROPIC = 'mock-claude';
export const ENGINES = [BUILTIN, VIA_OPENAI, VIA_ANTHROPIC] as const;
export type Engine = (typeof ENGINES)[number];
export const EMBEDDINGS = 'switchyard-embeddings';

const ALL_CAPABILITIES = ['chat', 'vision', 'function_calling', 'json_mode', 'streaming', 'thinking'] as const;

export interface FrameworkServers {
  openai: MockOpenAIServer;
  anthropic: MockAnthropicServer;
  servers: Record<ValidationMode, TestServer>;
  close(): Promise<void>;
}

export async function startFrameworkServers(): Promise<FrameworkServers> {
  const openai = await new MockOpenAIServer().start();
  const anthropic = await new MockAnthropicServer().start();
  const start = (requestValidation: ValidationMode) =>
    startTestServer({
      config: {
        requestValidation,
        providers: {
          'mock-openai': { kind: 'openai-compatible', baseUrl: openai.baseUrl, apiKey: 'sk-upstream', maxRetries: 0 },
          'mock-anthropic': { kind: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant-upstream', maxRetries: 0 },
        },
        models: [
          {
            id: VIA_OPENAI,
            provider: 'mock-openai',
            upstreamModel: 'gpt-mock',
            capabilities: [...ALL_CAPABILITIES],
            contextWindow: 128_000,
          },
          {
            id: VIA_ANTHROPIC,
            provider: 'mock-anthropic',
            upstreamModel: 'claude-mock',
            capabilities: [...ALL_CAPABILITIES],
            contextWindow: 200_000,
          },
        ],
      },
    });
  const servers = { spec: await start('spec'), compatible: await start('compatible') };
  return {
    openai,
    anthropic,
    servers,
    async close() {
      await servers.spec.close();
      await servers.compatible.close();
      await openai.close();
      await anthropic.close();
    },
  };
}

/**
 * Registers the suite hooks (start both servers before, close after, reset the mocks before each
 * test) and returns the running harness's getter.
 */
export function useFrameworkServers(): () => FrameworkServers {
  let harness: FrameworkServers | undefined;
  before(async () => {
    harness = await startFrameworkServers();
  });
  after(async () => {
    await harness?.close();
  });
  beforeEach(() => {
    harness?.openai.reset();
    harness?.anthropic.reset();
  });
  return () => {
    if (harness === undefined) throw new Error('framework servers are not started yet');
    return harness;
  };
}

/**
 * A client's default call without a token cap: in `spec` mode when `refusedInSpec`, the 400 naming
 * max_output_tokens (as the client reports it); otherwise the echo of `Hello`.
 */
export async function expectDefaultCallOutcome(answer: Promise<string | undefined>, refused: boolean): Promise<void> {
  if (refused) {
    await assert.rejects(answer, (error: unknown) => {
      assert.match(String(error), /400|max_output_tokens/);
      assert.match(String(error), /max_output_tokens/);
      return true;
    });
  } else {
    assert.equal(await answer, 'Echo: Hello');
  }
}

/** The forecast tool every test offers: one required string argument. */
export const WEATHER_TOOL_NAME = 'get_weather';
export const WEATHER_ARGUMENTS = { city: 'Paris' };
export const WEATHER_RESULT = 'Sunny, 21 degrees';

/**
 * Scripts the upstream of `engine` for one tool round: first a call of get_weather, then a final text.
 * The built-in engine needs no script (it calls the tool when forced and echoes the tool result).
 */
export function scriptToolRun(harness: FrameworkServers, engine: Engine, finalText = 'It is sunny in Paris.'): void {
  if (engine === VIA_OPENAI) {
    harness.openai.enqueue(
      { type: 'reply', reply: { toolCalls: [{ name: WEATHER_TOOL_NAME, arguments: WEATHER_ARGUMENTS }], finishReason: 'tool_calls' } },
      { type: 'reply', reply: { text: finalText } },
    );
  } else if (engine === VIA_ANTHROPIC) {
    harness.anthropic.enqueue(
      { type: 'reply', reply: { toolUses: [{ name: WEATHER_TOOL_NAME, input: WEATHER_ARGUMENTS }], stopReason: 'tool_use' } },
      { type: 'reply', reply: { text: finalText } },
    );
  }
}

/** Scripts one forced tool call (upstreams); the built-in engine calls a forced tool by itself. */
export function scriptForcedTool(harness: FrameworkServers, engine: Engine): void {
  if (engine === VIA_OPENAI)
    harness.openai.enqueue({
      type: 'reply',
      reply: { toolCalls: [{ name: WEATHER_TOOL_NAME, arguments: WEATHER_ARGUMENTS }], finishReason: 'tool_calls' },
    });
  else if (engine === VIA_ANTHROPIC)
    harness.anthropic.enqueue({
      type: 'reply',
      reply: { toolUses: [{ name: WEATHER_TOOL_NAME, input: WEATHER_ARGUMENTS }], stopReason: 'tool_use' },
    });
}

/** Scripts one JSON answer (upstreams); the built-in engine samples one from the schema. */
export function scriptJson(harness: FrameworkServers, engine: Engine, document: Record<string, unknown>): void {
  if (engine === VIA_OPENAI) harness.openai.enqueue({ type: 'reply', reply: { text: JSON.stringify(document) } });
  else if (engine === VIA_ANTHROPIC) harness.anthropic.enqueue({ type: 'reply', reply: { text: JSON.stringify(document) } });
}

/** The text the engine answers to `userText` without a script (the mocks say `Mock: <text>`). */
export function plainAnswer(engine: Engine, userText: string): string {
  return engine === BUILTIN ? `Echo: ${userText}` : `Mock: ${userText}`;
}

/** A `fetch` that records every JSON request body it sends (to assert what a framework put on the wire). */
export function recordingFetch(): { fetch: typeof fetch; bodies: Array<{ url: string; body: Record<string, unknown> }> } {
  const bodies: Array<{ url: string; body: Record<string, unknown> }> = [];
  const recording: typeof fetch = async (input, init) => {
    if (typeof init?.body === 'string') {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      try {
        bodies.push({ url, body: JSON.parse(init.body) as Record<string, unknown> });
      } catch {
        // Not JSON: nothing to record.
      }
    }
    return fetch(input, init);
  };
  return { fetch: recording, bodies };
}
