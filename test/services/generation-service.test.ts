import { assembleResult } from '../../src/core/assemble-result.ts';
import type { BatchStage } from '../../src/core/batched.ts';
import { CancellationSource } from '../../src/core/cancellation.ts';
import { emptyUsage } from '../../src/core/usage.ts';
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { loadConfig, type Config } from '../../src/config/index.ts';
import { countRequestTokens, countTextTokens } from '../../src/core/count-tokens.ts';
import type { GenerationRequest } from '../../src/core/generation.ts';
import { ServiceError } from '../../src/core/service-error.ts';
import type { StreamPart } from '../../src/core/stream-parts.ts';
import { ProviderRegistry } from '../../src/providers/registry.ts';
import { GenerationService } from '../../src/services/generation/generation-service.ts';
import { streamOf } from '../support/generation-stream.ts';
import { MockAnthropicServer, MockOpenAIServer } from '../support/mock-upstreams/index.ts';

const API_KEY = 'sk-primary-secret-0123456789';

function request(model: string, text = 'Hello', extra: Partial<GenerationRequest> = {}): GenerationRequest {
  return { model, messages: [{ role: 'user', content: [{ type: 'text', text }] }], ...extra };
}

async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const collected: StreamPart[] = [];
  for await (const part of parts) collected.push(part);
  return collected;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('Expected a rejection.');
}

function text(parts: StreamPart[]): string {
  return parts.map((part) => (part.type === 'text-delta' ? part.delta : '')).join('');
}

const signal = (): AbortSignal => new AbortController().signal;

describe('GenerationService', () => {
  const primary = new MockOpenAIServer();
  const backup = new MockAnthropicServer();
  let config: Config;
  let registry: ProviderRegistry;
  let service: GenerationService;
  const delays: number[] = [];

  before(async () => {
    await Promise.all([primary.start(), backup.start()]);
    config = loadConfig({
      env: { PRIMARY_KEY: API_KEY },
      overrides: {
        providers: {
          primary: { kind: 'openai-compatible', baseUrl: primary.baseUrl, apiKey: { env: 'PRIMARY_KEY' }, maxRetries: 2, timeoutMs: 5000 },
          backup: { kind: 'anthropic', baseUrl: backup.baseUrl, apiKey: 'sk-ant-backup-0123456789', maxRetries: 0, timeoutMs: 5000 },
          slow: { kind: 'openai-compatible', baseUrl: primary.baseUrl, maxRetries: 0, timeoutMs: 300 },
        },
        models: [
          {
            id: 'main',
            aliases: ['main-alias'],
            provider: 'primary',
            upstreamModel: 'upstream-main',
            capabilities: ['chat', 'streaming', 'function_calling'],
            fallbacks: ['text-only', 'backup-model'],
          },
          {
            id: 'backup-model',
            provider: 'backup',
            upstreamModel: 'claude-backup',
            capabilities: ['chat', 'streaming', 'function_calling'],
          },
          { id: 'text-only', provider: 'primary', capabilities: ['chat'] },
          { id: 'slow-model', provider: 'slow', capabilities: ['chat'] },
        ],
      },
    });
    registry = ProviderRegistry.fromConfig(config);
    service = new GenerationService({
      config,
      registry,
      sleep: async (milliseconds) => {
        delays.push(milliseconds);
      },
      random: () => 0.5,
    });
  });
  after(async () => {
    await registry.close();
    await Promise.all([primary.close(), backup.close()]);
  });
  beforeEach(() => {
    primary.reset();
    backup.reset();
    delays.length = 0;
  });

  describe('resolve', () => {
    test('finds models by id and alias with their provider', () => {
      const resolved = service.resolve('main-alias', ['chat']);
      assert.equal(resolved.model.id, 'main');
      assert.equal(resolved.provider.id, 'primary');
    });

    test('an unknown model is a 404 model_not_found on param model', () => {
      assert.throws(() => service.resolve('nope', ['chat']), {
        status: 404,
        code: 'model_not_found',
        param: 'model',
        type: 'invalid_request_error',
      });
    });

    test('a missing capability is a 400 naming the capability and the param', () => {
      assert.throws(
        () => service.resolve('text-only', ['vision'], 'messages[0].content[1]'),
        (error: unknown) => {
          assert.ok(error instanceof ServiceError);
          assert.equal(error.status, 400);
          assert.equal(error.code, 'invalid_parameter');
          assert.equal(error.param, 'messages[0].content[1]');
          assert.match(error.message, /'vision'/);
          return true;
        },
      );
    });
  });

  describe('capabilities needed by a request', () => {
    test('images need vision, tools need function_calling, JSON needs json_mode, thinking needs thinking', async () => {
      const image: GenerationRequest = {
        model: 'text-only',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'x' },
              { type: 'image', url: 'https://example.com/a.png' },
            ],
          },
        ],
      };
      await assert.rejects(streamOf(service, image, { signal: signal() }), {
        status: 400,
        param: 'messages[0].content[1]',
        message: /'vision'/,
      });
      await assert.rejects(
        streamOf(service, image, { signal: signal(), capabilityParams: { vision: 'messages[0].content[1].image_url.url' } }),
        {
          param: 'messages[0].content[1].image_url.url',
        },
      );
      await assert.rejects(
        streamOf(service, request('text-only', 'x', { tools: [{ name: 't', inputSchema: {} }] }), { signal: signal() }),
        {
          status: 400,
          param: 'tools',
          message: /'function_calling'/,
        },
      );
      await assert.rejects(
        streamOf(service, request('text-only', 'x', { responseFormat: { type: 'json_object' } }), { signal: signal() }),
        {
          param: 'response_format',
          message: /'json_mode'/,
        },
      );
      await assert.rejects(streamOf(service, request('text-only', 'x', { thinking: { budgetTokens: 1024 } }), { signal: signal() }), {
        param: 'thinking',
      });
      await assert.rejects(streamOf(service, request('text-only'), { signal: signal(), capabilities: ['streaming'] }), { param: 'stream' });
      await assert.rejects(streamOf(service, request('missing'), { signal: signal() }), { status: 404, code: 'model_not_found' });
      assert.equal(primary.requests.length, 0, 'nothing was sent upstream');
    });
  });

  describe('streaming', () => {
    test('streams the built-in echo engine', async () => {
      const stream = await streamOf(service, request('switchyard-echo', 'hi there'), { signal: signal(), capabilities: ['streaming'] });
      assert.equal(stream.model.id, 'switchyard-echo');
      assert.equal(stream.attempts, 1);
      const parts = await collect(stream);
      assert.equal(text(parts), 'Echo: hi there');
      assert.equal(parts.at(-1)?.type, 'finish');
    });

    test('non-streaming results are assembled from the same parts', async () => {
      const stream = await streamOf(service, request('main', 'question'), { signal: signal(), preferWholeResponse: true });
      const result = await assembleResult(stream);
      assert.deepEqual(result.content, [{ type: 'text', text: 'Mock: question' }]);
      assert.equal(stream.model.id, 'main');
      assert.equal(result.finishReason, 'stop');
      assert.equal((primary.requests[0]!.body as { model: string }).model, 'upstream-main');
      // The whole answer is wanted, so it is fetched as one JSON body rather than an upstream stream.
      assert.equal((primary.requests[0]!.body as { stream: boolean }).stream, false);
      assert.equal(result.usage.estimated, false);
    });

    test('usage missing upstream is counted locally and marked estimated', async () => {
      primary.enqueue({ type: 'reply', reply: { text: 'counted locally', usage: null } });
      const generation = request('main', 'count me');
      const parts = await collect(await streamOf(service, generation, { signal: signal() }));
      const finish = parts.at(-1);
      assert.ok(finish?.type === 'finish');
      assert.equal(finish.usage.estimated, true);
      assert.equal(finish.usage.inputTokens, countRequestTokens(generation));
      assert.equal(finish.usage.outputTokens, countTextTokens('counted locally'));
    });
  });

  describe('retries', () => {
    test('429 then success: retried after the upstream retry-after', async () => {
      primary.enqueue({ type: 'error', status: 429, message: 'slow down', headers: { 'retry-after': '1' } });
      const stream = await streamOf(service, request('main', 'again'), { signal: signal() });
      assert.equal(text(await collect(stream)), 'Mock: again');
      assert.equal(stream.attempts, 2);
      assert.deepEqual(delays, [1000]);
      assert.equal(primary.requests.length, 2);
    });

    test('retry-after is capped', async () => {
      primary.enqueue({ type: 'error', status: 429, headers: { 'retry-after': '3600' } });
      await collect(await streamOf(service, request('main'), { signal: signal() }));
      assert.deepEqual(delays, [10_000]);
    });

    test('5xx and a reset connection are retried with jittered exponential backoff', async () => {
      primary.enqueue({ type: 'error', status: 500 }, { type: 'reset' });
      const stream = await streamOf(service, request('main', 'third time'), { signal: signal() });
      assert.equal(text(await collect(stream)), 'Mock: third time');
      assert.equal(stream.attempts, 3);
      // 250 ms then 500 ms, each scaled by the jitter factor 0.5 + random / 2 = 0.75.
      assert.deepEqual(delays, [188, 375]);
    });

    test('an error before the first content part is retried too', async () => {
      primary.enqueue(
        { type: 'reply', reply: { text: 'never seen' }, interrupt: { afterEvents: 1, how: 'reset' } },
        { type: 'events', events: [{ data: { error: { message: 'engine crashed', type: 'server_error' } } }] },
      );
      const stream = await streamOf(service, request('main', 'fine'), { signal: signal() });
      assert.equal(text(await collect(stream)), 'Mock: fine');
      assert.equal(primary.requests.length, 3);
    });

    test('an upstream 4xx is not retried and keeps its status and message', async () => {
      primary.enqueue({ type: 'error', status: 400, message: "Invalid value for 'temperature'." });
      const error = await rejection(streamOf(service, request('main'), { signal: signal() }));
      assert.ok(error instanceof ServiceError);
      assert.equal(error.status, 400);
      assert.equal(error.type, 'invalid_request_error');
      assert.equal(error.message, "Invalid value for 'temperature'.");
      assert.equal(primary.requests.length, 1);
      assert.equal(backup.requests.length, 0, 'a request every model would reject does not fall back');
    });

    test('errors never carry the upstream URL or API key', async () => {
      primary.enqueue({ type: 'error', status: 422, message: `Bad request to ${primary.baseUrl} using ${API_KEY}` });
      const error = await rejection(streamOf(service, request('main'), { signal: signal() }));
      assert.ok(error instanceof ServiceError);
      assert.equal(error.status, 422);
      assert.ok(!error.message.includes(API_KEY) && !error.message.includes(String(new URL(primary.url).port)), error.message);
    });
  });

  describe('fallbacks', () => {
    test('after the retries of the first model, the next fallback with the needed capabilities answers', async () => {
      primary.enqueue({ type: 'error', status: 503 }, { type: 'error', status: 503 }, { type: 'error', status: 503 });
      const stream = await streamOf(
        service,
        request('main', 'rescue me', { tools: [{ name: 'lookup', inputSchema: { type: 'object' } }] }),
        {
          signal: signal(),
        },
      );
      // text-only lacks function_calling, so the Anthropic-backed model is next.
      assert.equal(stream.model.id, 'backup-model');
      assert.equal(stream.requestedModel.id, 'main');
      assert.equal(stream.attempts, 4);
      assert.equal(text(await collect(stream)), 'Mock: rescue me');
      assert.equal((backup.requests[0]!.body as { model: string }).model, 'claude-backup');
    });

    test('when every model fails the last error is thrown as a 500 service_unavailable', async () => {
      primary.enqueue(...Array.from({ length: 6 }, () => ({ type: 'error' as const, status: 502 })));
      backup.enqueue({ type: 'error', status: 529, message: 'Overloaded' });
      const error = await rejection(streamOf(service, request('main'), { signal: signal() }));
      assert.ok(error instanceof ServiceError);
      assert.equal(error.status, 500);
      assert.equal(error.type, 'server_error');
      assert.equal(error.code, 'service_unavailable');
      assert.equal(primary.requests.length, 6, 'main and text-only, three attempts each');
      assert.equal(backup.requests.length, 1);
    });
  });

  describe('timeouts, cuts and aborts', () => {
    test('an upstream that never answers times out with 500 timeout and the request is aborted', async () => {
      primary.enqueue({ type: 'hang' });
      const error = await rejection(streamOf(service, request('slow-model'), { signal: signal() }));
      assert.ok(error instanceof ServiceError);
      assert.equal(error.status, 500);
      assert.equal(error.code, 'timeout');
      assert.equal(await primary.requests[0]!.outcome, 'closed-by-client');
    });

    test('an upstream that goes silent mid-stream ends the stream with a timeout error part', async () => {
      primary.enqueue({ type: 'reply', reply: { text: 'one two three four' }, interrupt: { afterEvents: 3, how: 'hang' } });
      const parts = await collect(await streamOf(service, request('slow-model'), { signal: signal() }));
      assert.equal(text(parts), 'one two');
      const last = parts.at(-1);
      assert.ok(last?.type === 'error');
      assert.equal(last.error.code, 'timeout');
      assert.equal(await primary.requests[0]!.outcome, 'closed-by-client');
    });

    test('a stream cut after the first part ends with an error part and is not retried', async () => {
      primary.enqueue({ type: 'reply', reply: { text: 'alpha beta gamma delta' }, interrupt: { afterEvents: 3, how: 'reset' } });
      const parts = await collect(await streamOf(service, request('main'), { signal: signal() }));
      assert.equal(text(parts), 'alpha beta');
      const last = parts.at(-1);
      assert.ok(last?.type === 'error');
      assert.equal(last.error.status, 500);
      assert.equal(last.error.code, 'service_unavailable');
      assert.equal(primary.requests.length, 1);
    });

    test('aborting mid-stream aborts the upstream request', async () => {
      primary.enqueue({ type: 'reply', reply: { text: 'one two three' }, interrupt: { afterEvents: 3, how: 'hang' } });
      const controller = new AbortController();
      const stream = await streamOf(service, request('main'), { signal: controller.signal });
      const iterator = stream[Symbol.asyncIterator]();
      await iterator.next();
      const reason = new Error('client disconnected');
      controller.abort(reason);
      assert.equal(await rejection(collectRest(iterator)), reason);
      assert.equal(await primary.requests[0]!.outcome, 'closed-by-client');
    });

    test('a consumer that stops reading releases the upstream request', async () => {
      primary.enqueue({ type: 'reply', reply: { text: 'one two three' }, interrupt: { afterEvents: 3, how: 'hang' } });
      const stream = await streamOf(service, request('main'), { signal: signal() });
      for await (const part of stream) if (part.type === 'text-delta') break;
      assert.equal(await primary.requests[0]!.outcome, 'closed-by-client');
    });

    test('stages run after sequencing, in order, and are closed once when the stream ends', async () => {
      primary.enqueue({ type: 'reply', reply: { text: 'one two three' } });
      const seen: string[][] = [];
      const closed: string[] = [];
      const recorder = (name: string): BatchStage<StreamPart> => ({
        ended: false,
        push(batch) {
          seen.push(batch.map((part) => `${name}:${part.type}`));
          return batch;
        },
        close() {
          closed.push(name);
        },
      });
      const parts = await collect(await streamOf(service, request('main'), { signal: signal(), stages: [recorder('a'), recorder('b')] }));
      assert.equal(text(parts), 'one two three');
      const a = seen.filter((batch) => batch[0]?.startsWith('a:')).flat();
      const b = seen.filter((batch) => batch[0]?.startsWith('b:')).flat();
      assert.deepEqual(
        a.map((entry) => entry.slice(2)),
        parts.map((part) => part.type),
        'the first stage sees every part the consumer gets',
      );
      assert.deepEqual(
        b.map((entry) => entry.slice(2)),
        a.map((entry) => entry.slice(2)),
      );
      assert.ok(a.includes('a:text-end'), 'the parts are sequenced before the stages see them');
      assert.deepEqual(closed, ['a', 'b']);
    });

    test('a stage that ends the stream early (the output cap cutting) releases the upstream request', async () => {
      primary.enqueue({ type: 'reply', reply: { text: 'one two three four' }, interrupt: { afterEvents: 3, how: 'hang' } });
      let closes = 0;
      let cut = false;
      const cutAfterFirstText: BatchStage<StreamPart> = {
        get ended() {
          return cut;
        },
        push(batch) {
          const delta = batch.find((part) => part.type === 'text-delta');
          if (delta === undefined) return batch;
          cut = true;
          return [
            ...batch.slice(0, batch.indexOf(delta) + 1),
            { type: 'finish', finishReason: 'length', stopSequence: null, usage: emptyUsage() },
          ];
        },
        close() {
          closes++;
        },
      };
      const parts = await collect(await streamOf(service, request('main'), { signal: signal(), stages: [cutAfterFirstText] }));
      assert.equal(parts.at(-1)?.type, 'finish');
      assert.equal(await primary.requests[0]!.outcome, 'closed-by-client');
      assert.equal(closes, 1);
    });

    test('a CancellationSource aborts the upstream request as an AbortSignal does, and stages still close', async () => {
      primary.enqueue({ type: 'reply', reply: { text: 'one two three' }, interrupt: { afterEvents: 3, how: 'hang' } });
      const source = new CancellationSource();
      let closes = 0;
      const stage: BatchStage<StreamPart> = { ended: false, push: (batch) => batch, close: () => void closes++ };
      const stream = await streamOf(service, request('main'), { signal: source, stages: [stage] });
      const iterator = stream[Symbol.asyncIterator]();
      await iterator.next();
      const reason = new Error('client disconnected');
      source.abort(reason);
      assert.equal(await rejection(collectRest(iterator)), reason);
      assert.equal(await primary.requests[0]!.outcome, 'closed-by-client');
      assert.equal(closes, 1);
    });

    test('aborting before the first part rejects stream() with the abort reason', async () => {
      primary.enqueue({ type: 'hang' });
      const controller = new AbortController();
      const pending = streamOf(service, request('main'), { signal: controller.signal });
      await primary.waitForRequests(1);
      const reason = new Error('gone before the first byte');
      controller.abort(reason);
      assert.equal(await rejection(pending), reason);
      assert.equal(await primary.requests[0]!.outcome, 'closed-by-client');
      assert.equal(primary.requests.length, 1, 'no retry after the caller left');
    });
  });
});

async function collectRest(iterator: AsyncIterator<StreamPart>): Promise<void> {
  for (;;) {
    const next = await iterator.next();
    if (next.done === true) return;
  }
}
