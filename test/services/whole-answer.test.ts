// The whole-answer path (services/generation/whole-answer.ts): a non-streamed request whose backend
// answered with one JSON body is settled by the attempt at once, with no stream machinery. Against a
// real HTTP mock upstream, the in-process limit store and the usage ledger: the answer keeps the output
// cap, the meter settles once (one ledger row, naming the deployment), the cache recorder stores it,
// and a whole body that is an error is the attempt's error (nothing committed, the failure recorded).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AuthContext } from '../../src/services/caller-identity.ts';
import { loadConfig } from '../../src/config/index.ts';
import { assembleResult, assembleWholeResult } from '../../src/core/assemble-result.ts';
import { CancellationSource } from '../../src/core/cancellation.ts';
import { SPEC_DECODE_OPTIONS } from '../../src/core/generation-format.ts';
import type { GenerationRequest } from '../../src/core/generation.ts';
import { isServiceError } from '../../src/core/service-error.ts';
import { MemoryLimitStore } from '../../src/limits/memory/memory-limit-store.ts';
import { ProviderRegistry } from '../../src/providers/registry.ts';
import { CacheRecorder } from '../../src/services/cache/cache-recorder.ts';
import type { CachedAnswer } from '../../src/services/cache/cached-answer.ts';
import type { Caller } from '../../src/services/caller.ts';
import { GenerationService } from '../../src/services/generation/generation-service.ts';
import { MeteredGenerations } from '../../src/services/generation/metered-generations.ts';
import { InputModeration } from '../../src/services/generation/input-moderation.ts';
import { MeteringService } from '../../src/services/metering/metering-service.ts';
import { UsageLedger, type LedgerRecord } from '../../src/services/metering/usage-ledger.ts';
import { MockOpenAIServer } from '../support/mock-upstreams/index.ts';

const OPEN = {
  requestsPerMinute: 1000,
  tokensPerMinute: 1_000_000,
  tokensPerDay: 0,
  tokensPerMonth: 0,
  concurrentBatches: 1,
  permissions: ['chat.completions'],
};

describe('whole answers: a non-streamed request answered in one JSON body', () => {
  const upstream = new MockOpenAIServer();
  let registry: ProviderRegistry;
  let generation: GenerationService;
  let generations: MeteredGenerations;
  let ledger: UsageLedger;
  const written: LedgerRecord[] = [];
  const auth: AuthContext = { keyId: 'key_whole', organizationId: 'org-whole', tier: 'Open', permissions: new Set(), expiresAt: null };
  let requestNumber = 0;
  const caller = (): Caller => ({
    auth,
    requestId: `req_whole_${++requestNumber}`,
    batch: false,
    startedAt: process.hrtime.bigint(),
    signal: new CancellationSource(),
  });
  const ask = (text: string, maxOutputTokens?: number): GenerationRequest => {
    const request: GenerationRequest = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text }] }] };
    if (maxOutputTokens !== undefined) request.maxOutputTokens = maxOutputTokens;
    return request;
  };
  const rows = async (): Promise<LedgerRecord[]> => {
    await ledger.flush();
    return written.splice(0);
  };

  before(async () => {
    await upstream.start();
    const config = loadConfig({
      env: {},
      overrides: {
        tiers: { Open: OPEN } as never,
        providers: { up: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, maxRetries: 0 } },
        models: [{ id: 'm', provider: 'up', capabilities: ['chat', 'streaming'], maxOutputTokens: 4096 }],
      },
    });
    registry = ProviderRegistry.fromConfig(config);
    ledger = new UsageLedger({ sink: { insertMany: async (records) => void written.push(...records) }, flushIntervalMs: 3_600_000 });
    const metering = new MeteringService(config, new MemoryLimitStore(), ledger);
    generation = new GenerationService({ config, registry });
    generations = new MeteredGenerations({
      generation,
      metering,
      inputModeration: new InputModeration(config, registry),
      decodeOptions: SPEC_DECODE_OPTIONS,
    });
  });
  after(async () => {
    await registry.close();
    await upstream.close();
  });

  test('is settled by the attempt: taken in one array, the meter settled once with the upstream usage and the deployment', async () => {
    upstream.enqueue({ type: 'reply', reply: { text: 'Hello there', usage: { prompt_tokens: 7, completion_tokens: 2 } } });
    const started = await generations.start(caller(), ask('hi'), { endpoint: '/v1/chat/completions', preferWholeResponse: true });
    assert.notEqual((upstream.requests.at(-1)!.body as { stream?: boolean }).stream, true, 'the whole answer was asked for');
    assert.ok(started.whole !== undefined, 'a whole answer');
    assert.equal(started.admission.isSettled, false, 'the meter settles when the answer is taken');
    const result = assembleWholeResult(await started.whole.take());
    assert.deepEqual(result.content, [{ type: 'text', text: 'Hello there' }]);
    assert.equal(result.finishReason, 'stop');
    assert.equal(result.usage.outputTokens, 2);
    assert.equal(started.admission.isSettled, true);
    await assert.rejects(started.whole.take(), /read only once/);
    const recorded = await rows();
    assert.equal(recorded.length, 1, 'one ledger row');
    assert.equal(recorded[0]!.statusCode, 200);
    assert.equal(recorded[0]!.inputTokens, 7);
    assert.equal(recorded[0]!.outputTokens, 2);
    assert.equal(recorded[0]!.deployment, 'up');
  });

  test('read as a stream instead, it gives the same parts and settles once', async () => {
    upstream.enqueue({ type: 'reply', reply: { text: 'Hello there', usage: { prompt_tokens: 7, completion_tokens: 2 } } });
    const started = await generations.start(caller(), ask('hi'), { endpoint: '/v1/chat/completions', preferWholeResponse: true });
    const result = await assembleResult(started.parts);
    assert.deepEqual(result.content, [{ type: 'text', text: 'Hello there' }]);
    assert.equal(started.admission.isSettled, true);
    assert.equal((await rows()).length, 1);
  });

  test('the output cap cuts a whole answer that runs past it, and the ledger is charged no more than the cap', async () => {
    const long = 'one two three four five six seven eight nine ten eleven twelve';
    upstream.enqueue({ type: 'reply', reply: { text: long, usage: { prompt_tokens: 7, completion_tokens: 12 } } });
    const started = await generations.start(caller(), ask('count', 3), { endpoint: '/v1/chat/completions', preferWholeResponse: true });
    const result = assembleWholeResult(await started.whole!.take());
    assert.equal(result.finishReason, 'length');
    const text = result.content[0]!.type === 'text' ? result.content[0]!.text : '';
    assert.ok(text.length > 0 && text.length < long.length, `cut: ${JSON.stringify(text)}`);
    assert.ok(result.usage.outputTokens <= 3);
    const recorded = await rows();
    assert.equal(recorded.length, 1);
    assert.ok(recorded[0]!.outputTokens <= 3, `charged ${recorded[0]!.outputTokens}`);
  });

  test('the cache recorder, a stage of the attempt, stores the whole answer once it is taken', async () => {
    const stored: CachedAnswer[] = [];
    let done = 0;
    const recorder = new CacheRecorder(
      {
        store: async (answer) => void stored.push(answer),
        done: async () => void done++,
      },
      60_000,
      1_000_000,
    );
    upstream.enqueue({ type: 'reply', reply: { text: 'Cached words', usage: { prompt_tokens: 5, completion_tokens: 2 } } });
    const request = ask('cache me');
    const resolved = generation.checkRequest(generation.resolve('m'), request, {});
    const stream = await generation.streamResolved(resolved, request, {
      signal: new CancellationSource(),
      preferWholeResponse: true,
      stages: [recorder],
    });
    assert.ok(stream.whole !== undefined);
    assert.equal(stored.length, 0, 'nothing stored before the answer is taken');
    const result = assembleWholeResult(await stream.whole.take());
    assert.deepEqual(result.content, [{ type: 'text', text: 'Cached words' }]);
    assert.equal(stored.length, 1);
    assert.equal(done, 1);
    assert.deepEqual(
      stored[0]!.parts.filter((part) => part.type === 'text-delta').map((part) => (part.type === 'text-delta' ? part.delta : '')),
      ['Cached words'],
    );
    assert.equal(stored[0]!.parts.at(-1)!.type, 'finish');
  });

  test('a streamed request is not a whole answer', async () => {
    upstream.enqueue({ type: 'reply', reply: { text: 'Streamed words here' } });
    const started = await generations.start(caller(), ask('hi'), { endpoint: '/v1/chat/completions', capabilities: ['streaming'] });
    assert.equal(started.whole, undefined);
    const result = await assembleResult(started.parts);
    assert.equal(result.finishReason, 'stop');
    assert.equal((await rows()).length, 1);
  });

  test('a whole body that is an error is the attempt error: start rejects, nothing is committed, the failure is recorded once', async () => {
    upstream.enqueue({ type: 'json', status: 200, body: { error: { message: 'the model is overloaded', type: 'server_error' } } });
    const started = generations.start(caller(), ask('hi'), { endpoint: '/v1/chat/completions', preferWholeResponse: true });
    const error: unknown = await started.then(
      () => assert.fail('expected a rejection'),
      (failure: unknown) => failure,
    );
    assert.ok(isServiceError(error), String(error));
    const recorded = await rows();
    assert.equal(recorded.length, 1);
    assert.equal(recorded[0]!.statusCode, error.status);
    assert.equal(recorded[0]!.outputTokens, 0);
  });
});
