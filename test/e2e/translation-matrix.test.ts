// The translation matrix (issue 4): the same conversation through every client format (chat
// completions, messages, responses) x every backend kind reachable offline (built-in engine,
// OpenAI-compatible upstream, Anthropic upstream) x streaming or not x text or tool call gives
// equivalent results: the same text, the same tool name and the same arguments.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { MockAnthropicServer, MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const QUESTION = 'What is the weather in Paris?';
const TOOL = {
  name: 'get_weather',
  description: 'Current weather of a city.',
  schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
};

interface Outcome {
  text: string;
  toolCalls: Array<{ name: string; arguments: unknown }>;
}

type Format = 'chat' | 'messages' | 'responses';
type Kind = 'text' | 'tool';

describe('translation matrix: format x backend x streaming x text/tool', () => {
  const openaiUpstream = new MockOpenAIServer();
  const anthropicUpstream = new MockAnthropicServer();
  let server: TestServer;
  let openai: OpenAI;
  let anthropic: Anthropic;

  before(async () => {
    await Promise.all([openaiUpstream.start(), anthropicUpstream.start()]);
    const capabilities = ['chat', 'streaming', 'function_calling'] as const;
    server = await startTestServer({
      config: {
        providers: {
          compatible: { kind: 'openai-compatible', baseUrl: openaiUpstream.baseUrl, maxRetries: 0 },
          claude: { kind: 'anthropic', baseUrl: anthropicUpstream.url, apiKey: 'sk-ant-test', maxRetries: 0 },
        },
        models: [
          { id: 'via-openai', provider: 'compatible', capabilities: [...capabilities] },
          { id: 'via-anthropic', provider: 'claude', capabilities: [...capabilities] },
        ],
      },
    });
    openai = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: server.key, baseURL: server.origin, maxRetries: 0 });
  });
  after(async () => {
    await server.close();
    await Promise.all([openaiUpstream.close(), anthropicUpstream.close()]);
  });

  /** Scripts the mock upstream behind `model` for the next request. */
  function script(model: string, kind: Kind): void {
    if (model === 'via-openai' && kind === 'tool')
      openaiUpstream.enqueue({ type: 'reply', reply: { toolCalls: [{ name: TOOL.name, arguments: { city: 'Paris' } }] } });
    if (model === 'via-anthropic' && kind === 'tool')
      anthropicUpstream.enqueue({ type: 'reply', reply: { toolUses: [{ name: TOOL.name, input: { city: 'Paris' } }] } });
  }

  async function run(format: Format, model: string, stream: boolean, kind: Kind): Promise<Outcome> {
    script(model, kind);
    const withTool = kind === 'tool';
    if (format === 'chat') {
      const body = {
        model,
        messages: [{ role: 'user' as const, content: QUESTION }],
        ...(withTool
          ? {
              tools: [{ type: 'function' as const, function: { name: TOOL.name, description: TOOL.description, parameters: TOOL.schema } }],
              tool_choice: { type: 'function' as const, function: { name: TOOL.name } },
            }
          : {}),
      };
      const completion = stream
        ? await openai.chat.completions.stream(body).finalChatCompletion()
        : await openai.chat.completions.create(body);
      const message = completion.choices[0]!.message;
      return {
        text: message.content ?? '',
        toolCalls: (message.tool_calls ?? []).map((call) => {
          assert.equal(call.type, 'function');
          return { name: call.function.name, arguments: JSON.parse(call.function.arguments) as unknown };
        }),
      };
    }
    if (format === 'messages') {
      const body = {
        model,
        max_tokens: 256,
        messages: [{ role: 'user' as const, content: QUESTION }],
        ...(withTool
          ? {
              tools: [{ name: TOOL.name, description: TOOL.description, input_schema: TOOL.schema }],
              tool_choice: { type: 'tool' as const, name: TOOL.name },
            }
          : {}),
      };
      const message = stream ? await anthropic.messages.stream(body).finalMessage() : await anthropic.messages.create(body);
      return {
        text: message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join(''),
        toolCalls: message.content.flatMap((block) => (block.type === 'tool_use' ? [{ name: block.name, arguments: block.input }] : [])),
      };
    }
    const body = {
      model,
      max_output_tokens: 256,
      input: QUESTION,
      ...(withTool
        ? {
            tools: [{ type: 'function' as const, name: TOOL.name, description: TOOL.description, parameters: TOOL.schema, strict: true }],
            tool_choice: { type: 'function' as const, name: TOOL.name },
          }
        : {}),
    };
    const response = stream ? await openai.responses.stream(body).finalResponse() : await openai.responses.create(body);
    return {
      text: response.output_text,
      toolCalls: response.output.flatMap((item) =>
        item.type === 'function_call' ? [{ name: item.name, arguments: JSON.parse(item.arguments) as unknown }] : [],
      ),
    };
  }

  const expectedText: Record<string, string> = {
    'switchyard-echo': `Echo: ${QUESTION}`,
    'via-openai': `Mock: ${QUESTION}`,
    'via-anthropic': `Mock: ${QUESTION}`,
  };

  for (const model of ['switchyard-echo', 'via-openai', 'via-anthropic']) {
    for (const kind of ['text', 'tool'] as const) {
      test(`${model}, ${kind}: every format, streamed or not, gives the same result`, async () => {
        const outcomes: Array<[string, Outcome]> = [];
        for (const format of ['chat', 'messages', 'responses'] as const) {
          for (const stream of [false, true])
            outcomes.push([`${format}${stream ? ' streamed' : ''}`, await run(format, model, stream, kind)]);
        }
        const [, reference] = outcomes[0]!;
        if (kind === 'text') {
          assert.equal(reference.text, expectedText[model]);
          assert.deepEqual(reference.toolCalls, []);
        } else {
          assert.equal(reference.toolCalls.length, 1);
          assert.equal(reference.toolCalls[0]!.name, TOOL.name);
          const argumentsGiven = reference.toolCalls[0]!.arguments as { city?: unknown };
          assert.equal(typeof argumentsGiven.city, 'string');
          if (model !== 'switchyard-echo') assert.deepEqual(argumentsGiven, { city: 'Paris' });
        }
        for (const [path, outcome] of outcomes) assert.deepEqual(outcome, reference, path);
      });
    }
  }

  test('non-streaming answers are fetched whole from both upstream kinds; streamed ones as streams', async () => {
    openaiUpstream.reset();
    anthropicUpstream.reset();
    for (const model of ['via-openai', 'via-anthropic']) {
      await run('chat', model, false, 'text');
      await run('chat', model, true, 'text');
    }
    const streamFlags = (requests: ReadonlyArray<{ body: unknown }>) =>
      requests.map((request) => (request.body as { stream?: boolean }).stream === true);
    assert.deepEqual(streamFlags(openaiUpstream.requests), [false, true]);
    assert.deepEqual(streamFlags(anthropicUpstream.requests), [false, true]);
  });
});
