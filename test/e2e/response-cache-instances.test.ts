// The response cache across instances: three Switchyard runtimes sharing one Postgres database and one
// Redis (this suite's own redis-server, stopped by the last test). 200 concurrent identical requests
// spread over the three cause exactly one upstream call (counted on the mock upstream); when the
// leader's upstream call fails, the followers still get answers; a purge on one instance is seen by
// all; with Redis stopped, requests are still answered. Needs TEST_DATABASE_URL and a redis-server
// binary; skipped LOUDLY otherwise.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { cacheCommand } from '../../src/cli/cache.ts';
import { PrivateRedis, canRunPrivateRedis } from '../support/chaos/private-redis.ts';
import { createPostgresTestDatabase, type TestDatabase } from '../support/databases.ts';
import { MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const runnable = Boolean(process.env['TEST_DATABASE_URL']) && canRunPrivateRedis;
if (!runnable)
  console.warn('\n*** SKIPPED: response cache across instances (needs TEST_DATABASE_URL and a redis-server binary on PATH) ***\n');

const MODEL = 'cached-model';
const CONCURRENT = 200;

describe('response cache across three instances', { skip: !runnable }, () => {
  let database: TestDatabase;
  let redis: PrivateRedis;
  let upstream: MockOpenAIServer;
  let instances: TestServer[] = [];
  let key = '';
  let prompt = 0;

  async function post(instance: TestServer, body: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${instance.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  /** `count` identical requests at once, spread over the instances in turn. */
  function burst(body: unknown, count = CONCURRENT) {
    return Promise.all(Array.from({ length: count }, (_, index) => post(instances[index % instances.length]!, body)));
  }

  before(async () => {
    database = (await createPostgresTestDatabase())!;
    redis = await PrivateRedis.create();
    upstream = await new MockOpenAIServer().start();
    const config = {
      databaseUrl: database.url,
      redisUrl: redis.url,
      providers: {
        up: { kind: 'openai-compatible' as const, baseUrl: upstream.baseUrl, apiKey: 'sk-up', maxRetries: 0, timeoutMs: 2_000 },
      },
      models: [{ id: MODEL, provider: 'up', capabilities: ['chat' as const, 'streaming' as const] }],
      responseCache: { organizations: { 'org-switchyard-ai': { enabled: true } } },
    };
    // One at a time: the first applies the migrations.
    for (let index = 0; index < 3; index++) instances.push(await startTestServer({ config }));
    key = instances[0]!.key;
  });

  after(async () => {
    await Promise.all(instances.map((instance) => instance.close()));
    instances = [];
    await upstream?.close();
    await redis?.close();
    await database?.drop();
  });

  beforeEach(() => upstream.reset());

  const body = (stream = false) => ({
    model: MODEL,
    temperature: 0,
    stream,
    messages: [{ role: 'user', content: `Same question #${++prompt}` }],
  });

  test(`${CONCURRENT} concurrent identical requests over three instances make exactly one upstream call`, async () => {
    const request = body();
    // A slow answer: every request arrives while the leader's call is still running.
    upstream.enqueue({ type: 'reply', reply: { text: 'The one answer.' }, delayMs: 300 });
    const answers = await burst(request);
    assert.deepEqual(
      answers.map((answer) => answer.status),
      answers.map(() => 200),
    );
    for (const answer of answers)
      assert.equal(
        (JSON.parse(answer.text) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content,
        'The one answer.',
      );
    assert.equal(upstream.requests.length, 1, 'exactly one upstream call');
    const statuses = answers.map((answer) => (JSON.parse(answer.text) as { _metadata: { cache: string } })._metadata.cache);
    assert.equal(statuses.filter((status) => status === 'miss').length, 1, 'one leader');
    assert.equal(statuses.filter((status) => status === 'hit').length, CONCURRENT - 1);
  });

  test('streamed requests too: one upstream call, every client gets the whole stream', async () => {
    const request = body(true);
    upstream.enqueue({ type: 'reply', reply: { text: 'one two three four' }, delayMs: 50 });
    const answers = await burst(request, 60);
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.match(answer.text, /data: \[DONE\]/);
    }
    assert.equal(upstream.requests.length, 1);
  });

  test("when the leader's upstream call fails, the followers still get answers", async () => {
    const request = body();
    // The leader's call hangs until the provider's timeout; everyone else is answered at once.
    upstream.enqueue({ type: 'hang' });
    const answers = await burst(request, 30);
    const failed = answers.filter((answer) => answer.status !== 200);
    assert.equal(failed.length, 1, 'only the leader failed');
    assert.equal(failed[0]!.status, 500);
    assert.equal(answers.filter((answer) => answer.status === 200).length, 29);
    assert.ok(upstream.requests.length >= 2, 'the followers asked the upstream themselves');
  });

  test('a purge (the CLI) removes the entry on every instance', async () => {
    const request = body();
    await post(instances[0]!, request);
    for (const instance of instances) assert.match((await post(instance, request)).headers.get('cache-status') ?? '', /hit/);
    // `switchyard cache purge --org`, as an operator runs it beside the fleet.
    const printed: string[] = [];
    await cacheCommand(instances[1]!.config, { positionals: ['purge'], flags: { org: 'org-switchyard-ai' } }, (text) => printed.push(text));
    assert.match(printed.join('\n'), /^Purged [1-9]\d* cached answers? of org-switchyard-ai/);
    // The other instances drop their in-process copies when the purge message arrives.
    for (const instance of instances) {
      for (let attempt = 0; ; attempt++) {
        const status = (await post(instance, { ...request, switchyard_cache: { no_store: true } })).status;
        assert.equal(status, 200);
        if (instance.runtime.responseCache.memoryEntries('org-switchyard-ai') === 0) break;
        assert.ok(attempt < 200, 'purge message never arrived');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
    assert.match((await post(instances[2]!, request)).headers.get('cache-status') ?? '', /fwd=miss/);
  });

  test('Redis stopped during the run: requests are still answered, no error surfaced', async () => {
    const before = body();
    await post(instances[0]!, before);
    await redis.kill();
    const answers = await Promise.all([
      ...instances.map((instance) => post(instance, before)),
      ...instances.map((instance) => post(instance, body())),
      ...instances.map((instance) => post(instance, body(true))),
    ]);
    for (const answer of answers) assert.equal(answer.status, 200, answer.text);
    // Instance 0 still has its in-process copy; the others answer as misses.
    assert.match(answers[0]!.headers.get('cache-status') ?? '', /hit/);
  });
});
