/**
 * Issue 16 fault-injection suite: every upstream fault has one defined outcome, the same for the three
 * client formats (chat completions, messages, responses), streamed and not. A real HTTP upstream
 * (the OpenAI-compatible mock) misbehaves on demand; each case asserts the status or the format's
 * final event, the attempts the upstream saw (retries), that no upstream URL or key reaches the
 * client, and the caller's quota before and after (GET /v1/auth/key).
 *
 * Outcomes: before any output, a retryable fault is retried (maxRetries: 1 here, so 2 attempts) and
 * a final one is the SPEC envelope (500 `service_unavailable` / `timeout`; an upstream 429 stays 429);
 * after output, the stream ends with the format's error event (chat: an `error` chunk, messages:
 * `event: error`, responses: `response.failed`) and a non-streamed answer is a 500.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { MockOpenAIServer, type MockSseEvent, type RecordedRequest } from '../support/mock-upstreams/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const UPSTREAM_KEY = 'sk-upstream-faults-4e8b1c7d9a2f6053';
/** The upstream timeout of the faults that are timeouts (`timed`), short to keep them quick. */
const TIMEOUT_MS = 400;
/**
 * Every other fault's: long enough that a loaded machine never turns a slow answer into a timeout and
 * a retry (with 400 ms a busy run retried "stream with an error event" and the retry got a normal answer).
 */
const PATIENT_TIMEOUT_MS = 15_000;

type Format = 'chat' | 'messages' | 'responses';
const FORMATS: Format[] = ['chat', 'messages', 'responses'];

function requestFor(format: Format, model: string, stream: boolean, maxTokens?: number): { path: string; body: Record<string, unknown> } {
  switch (format) {
    case 'chat':
      return {
        path: '/v1/chat/completions',
        body: {
          model,
          stream,
          messages: [{ role: 'user', content: 'Hello' }],
          ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
          // The usage chunk shows what a streamed answer is charged.
          ...(stream && maxTokens !== undefined ? { stream_options: { include_usage: true } } : {}),
        },
      };
    case 'messages':
      return {
        path: '/v1/messages',
        body: { model, stream, max_tokens: maxTokens ?? 256, messages: [{ role: 'user', content: 'Hello' }] },
      };
    case 'responses':
      return { path: '/v1/responses', body: { model, stream, store: false, input: 'Hello', max_output_tokens: maxTokens ?? 256 } };
  }
}

/** What one fault must end in. */
interface Expectation {
  /** The answer is an HTTP error (before output, or any non-streamed failure). */
  status?: number;
  code: string;
  /** Upstream requests made (1 + retries). */
  attempts: number;
  /** Streamed clients get a 200 stream ending in the format's error event. */
  midStream?: boolean;
}

interface Fault {
  name: string;
  /** Queued once per expected attempt (faults before output are retried). */
  behaviour: (streamed: boolean) => Parameters<MockOpenAIServer['enqueue']>[0];
  /** Uses the provider that points at a closed port. */
  refused?: boolean;
  /** A timeout is the fault: uses the provider with the short timeout. */
  timed?: boolean;
  expect: (streamed: boolean) => Expectation;
}

const chunk = (content: string): MockSseEvent => ({
  data: { id: 'chatcmpl-1', model: 'gpt-mock', choices: [{ index: 0, delta: { content } }] },
});
const jsonHeaders = { 'content-type': 'application/json' };

const FAULTS: Fault[] = [
  {
    name: 'refused connection',
    refused: true,
    behaviour: () => ({ type: 'hang' }),
    expect: () => ({ status: 500, code: 'service_unavailable', attempts: 0 }),
  },
  {
    name: 'reset before headers',
    behaviour: () => ({ type: 'reset' }),
    expect: () => ({ status: 500, code: 'service_unavailable', attempts: 2 }),
  },
  {
    name: '5xx',
    behaviour: () => ({ type: 'error', status: 503, message: `overloaded at ${'http://10.1.2.3:8000/v1'} key ${UPSTREAM_KEY}` }),
    expect: () => ({ status: 500, code: 'service_unavailable', attempts: 2 }),
  },
  {
    name: '429 with retry-after',
    behaviour: () => ({ type: 'error', status: 429, headers: { 'retry-after': '0' } }),
    expect: () => ({ status: 429, code: 'upstream_rate_limited', attempts: 2 }),
  },
  { name: 'timeout', timed: true, behaviour: () => ({ type: 'hang' }), expect: () => ({ status: 500, code: 'timeout', attempts: 2 }) },
  {
    name: '200 with malformed JSON',
    behaviour: (streamed) =>
      streamed
        ? { type: 'events', events: [{ data: '{"id":"chatcmpl-1","choices":[' }] }
        : { type: 'raw', status: 200, body: '{"id":"chatcmpl-1","choices":[', headers: jsonHeaders },
    expect: () => ({ status: 500, code: 'service_unavailable', attempts: 2 }),
  },
  {
    name: '200 with an empty body',
    behaviour: (streamed) => ({
      type: 'raw',
      status: 200,
      body: '',
      headers: streamed ? { 'content-type': 'text/event-stream' } : jsonHeaders,
    }),
    expect: () => ({ status: 500, code: 'service_unavailable', attempts: 2 }),
  },
  {
    name: 'stream that stops mid-way',
    behaviour: () => ({
      type: 'events',
      events: [chunk('Hel'), chunk('lo'), chunk(' there')],
      interrupt: { afterEvents: 2, how: 'reset' },
    }),
    expect: (streamed) =>
      streamed ? { midStream: true, code: 'service_unavailable', attempts: 1 } : { status: 500, code: 'service_unavailable', attempts: 1 },
  },
  {
    name: 'stream with an error event',
    behaviour: () => ({
      type: 'events',
      events: [chunk('Hel'), { data: { error: { message: `overloaded, see ${'https://internal.example/v1'}`, type: 'server_error' } } }],
    }),
    expect: (streamed) =>
      streamed ? { midStream: true, code: 'service_unavailable', attempts: 1 } : { status: 500, code: 'service_unavailable', attempts: 1 },
  },
  {
    name: 'stream that never ends',
    timed: true,
    behaviour: () => ({ type: 'events', events: [chunk('Hel'), chunk('lo'), chunk(' there')], interrupt: { afterEvents: 2, how: 'hang' } }),
    expect: (streamed) => (streamed ? { midStream: true, code: 'timeout', attempts: 1 } : { status: 500, code: 'timeout', attempts: 1 }),
  },
];

/** A TCP port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** The SSE events of a body: `event:` name (or undefined) and `data:` text. */
function sseEvents(text: string): Array<{ event: string | undefined; data: string }> {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '' && !block.startsWith(':'))
    .map((block) => {
      const lines = block.split(/\r?\n/);
      const event = lines
        .find((line) => line.startsWith('event:'))
        ?.slice(6)
        .trim();
      const data = lines
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      return { event, data };
    })
    .filter((event) => event.data !== '' || event.event !== undefined);
}

describe('upstream faults, every format, streamed and not', () => {
  let upstream: MockOpenAIServer;
  let server: TestServer;
  let refusedOrigin: string;

  before(async () => {
    upstream = await new MockOpenAIServer().start();
    refusedOrigin = `http://127.0.0.1:${await closedPort()}/v1`;
    server = await startTestServer({
      config: {
        providers: {
          flaky: {
            kind: 'openai-compatible',
            baseUrl: upstream.baseUrl,
            apiKey: UPSTREAM_KEY,
            maxRetries: 1,
            timeoutMs: PATIENT_TIMEOUT_MS,
          },
          hanging: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, apiKey: UPSTREAM_KEY, maxRetries: 1, timeoutMs: TIMEOUT_MS },
          gone: { kind: 'openai-compatible', baseUrl: refusedOrigin, apiKey: UPSTREAM_KEY, maxRetries: 1, timeoutMs: TIMEOUT_MS },
        },
        models: [
          { id: 'flaky-model', provider: 'flaky', upstreamModel: 'gpt-mock', capabilities: ['chat', 'streaming'] },
          { id: 'hanging-model', provider: 'hanging', upstreamModel: 'gpt-mock', capabilities: ['chat', 'streaming'] },
          { id: 'gone-model', provider: 'gone', upstreamModel: 'gpt-mock', capabilities: ['chat', 'streaming'] },
        ],
      },
    });
  });
  after(async () => {
    await server.close();
    await upstream.close();
  });

  async function usedTokens(): Promise<number> {
    const response = await fetch(`${server.origin}/v1/auth/key`, { headers: { authorization: `Bearer ${server.key}` } });
    const body = (await response.json()) as { usage_info: { daily: { used: number } } };
    return body.usage_info.daily.used;
  }

  function assertNoUpstreamSecrets(text: string): void {
    for (const secret of [
      UPSTREAM_KEY,
      upstream.baseUrl,
      new URL(upstream.baseUrl).host,
      new URL(refusedOrigin).host,
      '10.1.2.3',
      'internal.example',
    ]) {
      assert.ok(!text.includes(secret), `the client saw ${secret}: ${text.slice(0, 500)}`);
    }
  }

  for (const fault of FAULTS) {
    for (const format of FORMATS) {
      for (const streamed of [false, true]) {
        test(`${fault.name}: ${format}${streamed ? ', streamed' : ''}`, async () => {
          upstream.reset();
          const expected = fault.expect(streamed);
          for (let attempt = 0; attempt < Math.max(1, expected.attempts); attempt++) upstream.enqueue(fault.behaviour(streamed));
          const before = await usedTokens();
          const model = fault.refused === true ? 'gone-model' : fault.timed === true ? 'hanging-model' : 'flaky-model';
          const { path, body } = requestFor(format, model, streamed);
          const response = await fetch(`${server.origin}${path}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
            body: JSON.stringify(body),
          });
          const text = await response.text();
          assertNoUpstreamSecrets(`${JSON.stringify([...response.headers])}${text}`);

          if (expected.midStream === true) {
            assert.equal(response.status, 200, text);
            const events = sseEvents(text);
            const last = events.at(-1)!;
            switch (format) {
              case 'chat': {
                const withoutDone = events.filter((event) => event.data !== '[DONE]');
                const error = (JSON.parse(withoutDone.at(-1)!.data) as { error?: { code: string } }).error;
                assert.equal(error?.code, expected.code, text);
                assert.ok(!events.some((event) => event.data.includes('"finish_reason":"stop"')), 'no normal finish');
                break;
              }
              case 'messages':
                assert.equal(last.event, 'error', text);
                assert.match(
                  (JSON.parse(last.data) as { error: { type: string } }).error.type,
                  /^(api_error|overloaded_error|timeout_error)$/,
                );
                assert.ok(!events.some((event) => event.event === 'message_stop'), 'no message_stop');
                break;
              case 'responses':
                assert.equal(last.event, 'response.failed', text);
                assert.equal((JSON.parse(last.data) as { response: { status: string } }).response.status, 'failed');
                break;
            }
          } else {
            assert.equal(response.status, expected.status, text);
            const envelope = JSON.parse(text) as { error: { code: string; type: string } };
            assert.equal(envelope.error.code, expected.code, text);
          }
          assert.equal(upstream.requests.length, expected.attempts, `attempts for ${fault.name}`);
          const afterwards = await usedTokens();
          // Nothing was delivered before the fault: nothing is charged. A cut stream is charged at most what it delivered.
          if (expected.midStream !== true && expected.attempts !== 1)
            assert.equal(afterwards, before, 'no charge for an answer that never came');
          else assert.ok(afterwards >= before);
        });
      }
    }
  }

  // Switchyard enforces max_tokens itself (core/cap-output-tokens.ts): an upstream that ignores it is cut
  // at the cap, the answer ends with the length reason, and the charge never exceeds the cap.
  for (const format of FORMATS) {
    for (const streamed of [false, true]) {
      test(`upstream that ignores max_tokens: ${format}${streamed ? ', streamed' : ''}`, async () => {
        upstream.reset();
        const long = Array.from({ length: 300 }, (_, index) => chunk(`word${index} `));
        upstream.enqueue((request: RecordedRequest) =>
          (request.body as { stream?: boolean }).stream === true
            ? {
                type: 'events',
                events: [
                  ...long,
                  {
                    data: {
                      id: 'chatcmpl-1',
                      choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
                      usage: { prompt_tokens: 5, completion_tokens: 900, total_tokens: 905 },
                    },
                  },
                  { data: '[DONE]' },
                ],
              }
            : {
                type: 'reply',
                reply: {
                  text: long
                    .map((event) => (event.data as { choices: Array<{ delta: { content: string } }> }).choices[0]!.delta.content)
                    .join(''),
                  usage: { prompt_tokens: 5, completion_tokens: 900 },
                },
              },
        );
        const { path, body } = requestFor(format, 'flaky-model', streamed, 10);
        const response = await fetch(`${server.origin}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
          body: JSON.stringify(body),
        });
        const text = await response.text();
        assert.equal(response.status, 200, text);
        const outputTokens = Number(/"(?:completion_tokens|output_tokens)":\s*(\d+)/.exec(text)?.[1] ?? Number.NaN);
        assert.ok(outputTokens <= 10, `charged ${outputTokens} output tokens for max 10`);
        assert.match(text, /"length"|"max_tokens"|"incomplete"/);
      });
    }
  }
});
