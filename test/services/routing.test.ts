/**
 * Routing across deployments (issue 15), against real mock upstreams over real sockets: weights,
 * least-busy, cooldown after 429 with retry-after (on an injected clock), a dead deployment, streams
 * pinned to their deployment after the first byte, several upstream keys, and per-deployment
 * requests-per-minute across two routers sharing Redis (TEST_REDIS_URL).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { loadConfig, type Config, type ConfigInput } from '../../src/config/index.ts';
import type { GenerationRequest } from '../../src/core/generation.ts';
import type { StreamPart } from '../../src/core/stream-parts.ts';
import { routesCommand } from '../../src/cli/routes.ts';
import type { Clock } from '../../src/limits/clock.ts';
import type { DeploymentStateStore } from '../../src/limits/deployment-state.ts';
import { MemoryDeploymentState } from '../../src/limits/memory/memory-deployment-state.ts';
import { RedisDeploymentState } from '../../src/limits/redis/redis-deployment-state.ts';
import { ProviderRegistry } from '../../src/providers/registry.ts';
import { GenerationService, type GenerationStream } from '../../src/services/generation/generation-service.ts';
import { streamOf } from '../support/generation-stream.ts';
import { deploymentTable } from '../../src/services/generation/routing/deployment-table.ts';
import { Router } from '../../src/services/generation/routing/router.ts';
import { MockOpenAIServer } from '../support/mock-upstreams/index.ts';

function request(model: string, text = 'Hello'): GenerationRequest {
  return { model, messages: [{ role: 'user', content: [{ type: 'text', text }] }] };
}

async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const collected: StreamPart[] = [];
  for await (const part of parts) collected.push(part);
  return collected;
}

/** A clock that only moves when the test says so. */
class SteppedClock implements Clock {
  constructor(private nowMs: number) {}
  now(): number {
    return this.nowMs;
  }
  advance(milliseconds: number): void {
    this.nowMs += milliseconds;
  }
}

/** A seeded pseudo-random source in [0, 1) (mulberry32): the statistical tests cannot flake. */
function seededRandom(seed: number): () => number {
  let value = seed >>> 0;
  return () => {
    value = (value + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(value ^ (value >>> 15), 1 | value);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

/** A local port nothing listens on: connecting is refused. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address.port;
}

interface Harness {
  config: Config;
  registry: ProviderRegistry;
  state: DeploymentStateStore;
  router: Router;
  service: GenerationService;
}

function harness(
  overrides: ConfigInput,
  options: { state?: DeploymentStateStore; clock?: Clock; random?: () => number; env?: NodeJS.ProcessEnv } = {},
): Harness {
  const config = loadConfig({ env: options.env ?? {}, overrides: { builtinModels: false, ...overrides } });
  const registry = ProviderRegistry.fromConfig(config);
  const clock = options.clock ?? { now: () => Date.UTC(2026, 0, 1, 12, 0, 10) };
  const state = options.state ?? new MemoryDeploymentState({ clock });
  const router = new Router({
    models: deploymentTable(config),
    state,
    clock,
    ...(options.random === undefined ? {} : { random: options.random }),
  });
  const service = new GenerationService({ config, registry, router, sleep: async () => undefined, random: () => 0.5 });
  return { config, registry, state, router, service };
}

const provider = (baseUrl: string, extra: Record<string, unknown> = {}) => ({
  kind: 'openai-compatible' as const,
  baseUrl,
  maxRetries: 0,
  timeoutMs: 5000,
  ...extra,
});

describe('routing across deployments', () => {
  const upstreamA = new MockOpenAIServer();
  const upstreamB = new MockOpenAIServer();
  const upstreamC = new MockOpenAIServer();
  const open: Harness[] = [];

  before(async () => {
    await Promise.all([upstreamA.start(), upstreamB.start(), upstreamC.start()]);
  });
  after(async () => {
    for (const opened of open) {
      await opened.registry.close();
      await opened.state.close();
    }
    await Promise.all([upstreamA.close(), upstreamB.close(), upstreamC.close()]);
  });
  beforeEach(() => {
    upstreamA.reset();
    upstreamB.reset();
    upstreamC.reset();
  });

  function build(
    models: ConfigInput['models'],
    options: Parameters<typeof harness>[1] = {},
    providers?: ConfigInput['providers'],
  ): Harness {
    const built = harness(
      {
        providers: providers ?? { a: provider(upstreamA.baseUrl), b: provider(upstreamB.baseUrl), c: provider(upstreamC.baseUrl) },
        models,
      },
      options,
    );
    open.push(built);
    return built;
  }

  test('provider alone is one deployment, answers directly and names it in the stream', async () => {
    const { service } = build([{ id: 'single', provider: 'a', capabilities: ['chat'] }]);
    const stream = await streamOf(service, request('single'), { signal: new AbortController().signal });
    await collect(stream);
    assert.equal(stream.deployment, 'a');
    assert.equal(upstreamA.requests.length, 1);
  });

  test('weighted: 2,000 routing decisions split 3:1 within five standard deviations', async () => {
    const { router, service } = build(
      [
        {
          id: 'split',
          capabilities: ['chat'],
          deployments: [
            { provider: 'a', weight: 3 },
            { provider: 'b', weight: 1 },
          ],
        },
      ],
      { random: seededRandom(15) },
    );
    // The decisions themselves, on the router (real HTTP for 2,000 requests would only add time)...
    const total = 2000;
    const model = { id: 'split' } as Parameters<Router['route']>[0];
    let toA = 0;
    for (let index = 0; index < total; index++) {
      const step = await router.route(model).next(() => 0);
      assert.ok(step.lease);
      if (step.lease.deployment.id === 'a') toA++;
      step.lease.end();
    }
    const expected = total * 0.75;
    const standardDeviation = Math.sqrt(total * 0.75 * 0.25);
    assert.ok(
      Math.abs(toA - expected) < 5 * standardDeviation,
      `a was chosen ${toA} of ${total} times; expected ${expected} ± ${Math.round(5 * standardDeviation)}`,
    );
    // ...and the same router in front of the real upstreams: every answer comes from the deployment it names.
    for (let index = 0; index < 40; index++) {
      const stream = await streamOf(service, request('split'), { signal: new AbortController().signal });
      await collect(stream);
    }
    assert.equal(upstreamA.requests.length + upstreamB.requests.length, 40);
    assert.ok(upstreamA.requests.length > upstreamB.requests.length, 'the heavier deployment answered more');
  });

  test('least-busy sends new requests to the idle deployment', async () => {
    const { service } = build(
      [{ id: 'busy', capabilities: ['chat'], routing: 'least-busy', deployments: [{ provider: 'a' }, { provider: 'b' }] }],
      { random: () => 0 },
    );
    // A tie goes to the first by weight (random 0): the first request lands on A, which never answers.
    upstreamA.enqueue({ type: 'hang' });
    const caller = new AbortController();
    const pending = streamOf(service, request('busy'), { signal: caller.signal }).catch((error: unknown) => error);
    await upstreamA.waitForRequests(1);
    for (let index = 0; index < 5; index++) {
      const stream = await streamOf(service, request('busy'), { signal: new AbortController().signal });
      await collect(stream);
      assert.equal(stream.deployment, 'b');
    }
    assert.equal(upstreamA.requests.length, 1);
    assert.equal(upstreamB.requests.length, 5);
    caller.abort(new Error('test done'));
    await pending;
  });

  test('429 with retry-after: 2 keeps the deployment out for 2 s, then it is back', async () => {
    const clock = new SteppedClock(Date.UTC(2026, 0, 1, 12, 0, 10));
    // random 0: A is always chosen when it is healthy.
    const { service, state } = build([{ id: 'cooling', capabilities: ['chat'], deployments: [{ provider: 'a' }, { provider: 'b' }] }], {
      clock,
      random: () => 0,
    });
    upstreamA.enqueue({ type: 'error', status: 429, headers: { 'retry-after': '2' } });
    const ask = async (): Promise<string> => {
      const stream = await streamOf(service, request('cooling'), { signal: new AbortController().signal });
      await collect(stream);
      return stream.deployment;
    };
    // The client sees no error: the retry before the first byte goes to B at once.
    assert.equal(await ask(), 'b');
    const [stateOfA] = await state.read([{ model: 'cooling', deployment: 'a' }]);
    assert.equal(stateOfA!.coolingUntilMs, clock.now() + 2000);
    clock.advance(1000);
    assert.equal(await ask(), 'b');
    clock.advance(999);
    assert.equal(await ask(), 'b');
    assert.equal(upstreamA.requests.length, 1, 'no traffic to A while it cools');
    clock.advance(1);
    assert.equal(await ask(), 'a');
    assert.equal(upstreamA.requests.length, 2);
  });

  test('a dead deployment (refused connection) costs the client no error while another is healthy', async () => {
    const port = await deadPort();
    const { service } = build(
      [{ id: 'half-dead', capabilities: ['chat', 'streaming'], deployments: [{ provider: 'dead' }, { provider: 'b' }] }],
      { random: () => 0 },
      { dead: provider(`http://127.0.0.1:${port}/v1`), b: provider(upstreamB.baseUrl) },
    );
    for (let index = 0; index < 10; index++) {
      const stream = await streamOf(service, request('half-dead', `q${index}`), {
        signal: new AbortController().signal,
        capabilities: ['streaming'],
      });
      const parts = await collect(stream);
      assert.equal(stream.deployment, 'b');
      assert.ok(parts.some((part) => part.type === 'finish'));
    }
    // The first request found the dead one and cooled it down: the other nine went straight to B.
    assert.equal(upstreamB.requests.length, 10);
  });

  test('when every deployment cools, the fallback model answers', async () => {
    const { service } = build([
      { id: 'flaky', capabilities: ['chat'], deployments: [{ provider: 'a' }, { provider: 'b' }], fallbacks: ['steady'] },
      { id: 'steady', provider: 'c', capabilities: ['chat'] },
    ]);
    upstreamA.enqueue({ type: 'error', status: 503 });
    upstreamB.enqueue({ type: 'error', status: 500 });
    const stream = await streamOf(service, request('flaky'), { signal: new AbortController().signal });
    await collect(stream);
    assert.equal(stream.model.id, 'steady');
    assert.equal(stream.deployment, 'c');
    assert.equal(stream.attempts, 3);
    // Both are cooling now: the next request goes to the fallback without trying them.
    const next = await streamOf(service, request('flaky'), { signal: new AbortController().signal });
    await collect(next);
    assert.equal(next.deployment, 'c');
    assert.equal(upstreamA.requests.length + upstreamB.requests.length, 2);
  });

  test('once every deployment failed, a retry waits its backoff and may probe a cooling one', async () => {
    const { service } = build(
      [{ id: 'retried', capabilities: ['chat'], deployments: [{ provider: 'a' }, { provider: 'b' }] }],
      { random: () => 0 },
      { a: provider(upstreamA.baseUrl, { maxRetries: 1 }), b: provider(upstreamB.baseUrl, { maxRetries: 1 }) },
    );
    upstreamA.enqueue({ type: 'error', status: 503 });
    upstreamB.enqueue({ type: 'error', status: 502 });
    const stream = await streamOf(service, request('retried'), { signal: new AbortController().signal });
    await collect(stream);
    assert.equal(stream.attempts, 3);
    assert.equal(stream.deployment, 'a');
    assert.equal(upstreamA.requests.length, 2);
    assert.equal(upstreamB.requests.length, 1);
  });

  test('a stream never switches deployment after its first byte', async () => {
    const { service } = build(
      [{ id: 'pinned', capabilities: ['chat', 'streaming'], deployments: [{ provider: 'a' }, { provider: 'b' }] }],
      { random: () => 0 },
    );
    upstreamA.enqueue({ type: 'reply', reply: { text: 'partial answer that is cut' }, interrupt: { afterEvents: 2, how: 'reset' } });
    const stream: GenerationStream = await streamOf(service, request('pinned'), {
      signal: new AbortController().signal,
      capabilities: ['streaming'],
    });
    const parts = await collect(stream);
    assert.equal(stream.deployment, 'a');
    assert.equal(parts.at(-1)?.type, 'error');
    assert.ok(parts.some((part) => part.type === 'text-delta'));
    assert.equal(upstreamB.requests.length, 0, 'nothing was retried on B after the first byte');
  });

  test('latency routing tries unmeasured deployments first, then the fastest', async () => {
    const { router, state } = build(
      [{ id: 'fast', capabilities: ['chat'], routing: 'latency', deployments: [{ provider: 'a' }, { provider: 'b' }, { provider: 'c' }] }],
      {
        random: () => 0.5,
      },
    );
    state.observeLatency({ model: 'fast', deployment: 'a' }, 300);
    state.observeLatency({ model: 'fast', deployment: 'b' }, 40);
    const model = { id: 'fast' } as Parameters<Router['route']>[0];
    const first = await router.route(model).next(() => 0);
    assert.equal(first.lease?.deployment.id, 'c', 'the unmeasured one is tried first');
    first.lease?.end();
    state.observeLatency({ model: 'fast', deployment: 'c' }, 500);
    const second = await router.route(model).next(() => 0);
    assert.equal(second.lease?.deployment.id, 'b');
    second.lease?.end();
  });

  test('usage routing picks the deployment with the most headroom; limits are never exceeded', async () => {
    const { router } = build([
      {
        id: 'budget',
        capabilities: ['chat'],
        routing: 'usage',
        deployments: [
          { provider: 'a', requestsPerMinute: 4 },
          { provider: 'b', requestsPerMinute: 2 },
        ],
      },
    ]);
    const model = { id: 'budget' } as Parameters<Router['route']>[0];
    const picks: string[] = [];
    for (let index = 0; index < 6; index++) {
      const step = await router.route(model).next(() => 0);
      assert.ok(step.lease, `request ${index} found room`);
      picks.push(step.lease.deployment.id);
      step.lease.end();
    }
    assert.deepEqual(picks.filter((id) => id === 'a').length, 4);
    assert.deepEqual(picks.filter((id) => id === 'b').length, 2);
    const refused = await router.route(model).next(() => 0);
    assert.equal(refused.error?.status, 429);
    assert.equal(refused.error?.code, 'deployments_at_capacity');
    assert.ok(Number(refused.error?.headers['retry-after']) >= 1);
  });

  test('a provider with several apiKeys is one deployment per key', async () => {
    const { service: keyed } = build(
      [{ id: 'keyed', provider: 'multi', capabilities: ['chat'] }],
      { random: () => 0, env: { SECOND_KEY: 'sk-second-0123456789' } },
      { multi: provider(upstreamA.baseUrl, { apiKey: 'sk-first-0123456789', apiKeys: [{ env: 'SECOND_KEY' }] }) },
    );
    upstreamA.enqueue({ type: 'error', status: 429, headers: { 'retry-after': '30' } });
    const stream = await streamOf(keyed, request('keyed'), { signal: new AbortController().signal });
    await collect(stream);
    assert.equal(stream.deployment, 'multi#2');
    assert.deepEqual(
      upstreamA.requests.map((recorded) => recorded.headers.authorization),
      ['Bearer sk-first-0123456789', 'Bearer sk-second-0123456789'],
    );
  });
});

const redisUrl = process.env.TEST_REDIS_URL;
if (redisUrl === undefined || redisUrl === '') {
  console.warn('\n*** SKIPPED: routing state shared through Redis (set TEST_REDIS_URL=redis://127.0.0.1:6379 to run it) ***\n');
} else {
  describe('routing state shared by two instances through Redis', () => {
    const upstreamA = new MockOpenAIServer();
    const upstreamB = new MockOpenAIServer();
    const instances: Harness[] = [];
    // Both instances stand in the same minute, however long the test takes.
    const clock = new SteppedClock(Date.UTC(2026, 0, 1, 12, 0, 5));

    before(async () => {
      await Promise.all([upstreamA.start(), upstreamB.start()]);
      const keyPrefix = `switchyard:routing-test:${randomUUID()}:`;
      for (let index = 0; index < 2; index++) {
        const state = new RedisDeploymentState({ redis: redisUrl, keyPrefix, clock });
        const built = harness(
          {
            providers: { a: provider(upstreamA.baseUrl), b: provider(upstreamB.baseUrl) },
            models: [
              {
                id: 'limited',
                capabilities: ['chat'],
                deployments: [
                  { provider: 'a', weight: 100, requestsPerMinute: 20 },
                  { provider: 'b', weight: 1 },
                ],
              },
              { id: 'shared-cooldown', capabilities: ['chat'], deployments: [{ provider: 'a' }, { provider: 'b' }] },
            ],
          },
          { state, clock, random: () => 0 },
        );
        instances.push(built);
      }
    });
    after(async () => {
      for (const instance of instances) {
        await instance.registry.close();
        await instance.state.close();
      }
      await Promise.all([upstreamA.close(), upstreamB.close()]);
    });

    test('per-deployment requests per minute is never exceeded across both instances', async () => {
      const results = await Promise.all(
        Array.from({ length: 60 }, async (_, index) => {
          const stream = await streamOf(instances[index % 2]!.service, request('limited', `q${index}`), {
            signal: new AbortController().signal,
          });
          await collect(stream);
          return stream.deployment;
        }),
      );
      assert.equal(results.length, 60, 'every request was answered');
      // A is preferred by weight 100:1, so it fills its budget exactly; the rest spill over to B.
      assert.equal(upstreamA.requests.length, 20);
      assert.equal(results.filter((deployment) => deployment === 'a').length, 20);
      assert.equal(upstreamB.requests.length, 40);
      // `switchyard routes` reads the same shared figures (ends are reported without waiting: poll until both arrived).
      type Printed = { deployments: Array<{ deployment: string; live: { requests_this_minute: number; in_flight: number } }> };
      let printed: Printed | undefined;
      for (let poll = 0; poll < 40; poll++) {
        const lines: string[] = [];
        await routesCommand(
          instances[1]!.config,
          { positionals: [], flags: { model: 'limited', json: true } },
          (line) => lines.push(line),
          { state: instances[1]!.state, clock },
        );
        printed = JSON.parse(lines[0]!) as Printed;
        if (printed.deployments.every((row) => row.live.in_flight === 0)) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      assert.deepEqual(
        printed!.deployments.map((row) => [row.deployment, row.live.requests_this_minute, row.live.in_flight]),
        [
          ['a', 20, 0],
          ['b', 40, 0],
        ],
      );
    });

    test('a cooldown set by one instance is honoured by the other', async () => {
      upstreamA.reset();
      upstreamB.reset();
      upstreamA.enqueue({ type: 'error', status: 503, headers: { 'retry-after': '30' } });
      const first = await streamOf(instances[0]!.service, request('shared-cooldown'), { signal: new AbortController().signal });
      await collect(first);
      assert.equal(first.deployment, 'b');
      const second = await streamOf(instances[1]!.service, request('shared-cooldown'), { signal: new AbortController().signal });
      await collect(second);
      assert.equal(second.deployment, 'b', 'the other instance skips the cooling deployment');
      assert.equal(upstreamA.requests.length, 1);
    });
  });
}
