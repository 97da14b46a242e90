// REDIS_PREFIX: every Redis key the service writes (limits and routing state) starts with the
// deployment's prefix, so two deployments sharing one Redis never share counters. Real Redis
// (TEST_REDIS_URL; skipped LOUDLY without it).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/index.ts';
import { randomHex } from '../../src/core/ids.ts';
import { createDeploymentState } from '../../src/limits/create-deployment-state.ts';
import { startRuntime } from '../../src/runtime.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const redisUrl = process.env['TEST_REDIS_URL'];
if (!redisUrl) console.warn('\n*** SKIPPED: REDIS_PREFIX against Redis (set TEST_REDIS_URL=redis://127.0.0.1:6379 to run it) ***\n');

async function keysMatching(redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

describe('REDIS_PREFIX', { skip: !redisUrl && 'TEST_REDIS_URL is not set' }, () => {
  test('defaults to switchyard:, is read from REDIS_PREFIX, and a malformed one is a config error', () => {
    assert.equal(loadConfig({ env: {} }).redisPrefix, 'switchyard:');
    assert.equal(loadConfig({ env: { REDIS_PREFIX: 'staging:' } }).redisPrefix, 'staging:');
    assert.throws(() => loadConfig({ env: { REDIS_PREFIX: 'has space' } }), /redisPrefix: use letters, digits/);
  });

  test('the limit counters of requests and the routing state are written under the prefix only', async () => {
    const prefix = `sy-test-${randomHex(6)}:`;
    const organization = `org-prefix-${randomHex(6)}`;
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-redis-prefix-'));
    const redis = new Redis(redisUrl!);
    try {
      const runtime = await startRuntime(
        loadConfig({
          env: { REDIS_URL: redisUrl!, REDIS_PREFIX: prefix },
          overrides: { dataDir, logLevel: 'silent', bootstrapKey: false },
        }),
        { logger: pino({ level: 'silent' }), batchWorker: false },
      );
      try {
        const { key } = await runtime.keys.create({ organization, tier: 'Developer' });
        const response = await runtime.app.inject({
          method: 'POST',
          url: '/v1/chat/completions',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          payload: { model: 'switchyard-echo', messages: [{ role: 'user', content: 'count me' }] },
        });
        assert.equal(response.statusCode, 200, response.body);
      } finally {
        await runtime.close();
      }
      const written = await keysMatching(redis, `*${organization}*`);
      assert.ok(written.length > 0, 'the request was counted in Redis');
      assert.deepEqual(
        written.filter((name) => !name.startsWith(prefix)),
        [],
      );

      const state = await createDeploymentState({ redisUrl: redisUrl!, redisPrefix: prefix });
      try {
        const model = `model-${randomHex(6)}`;
        assert.ok(await state.acquire({ model, deployment: 'd0' }, { requestsPerMinute: 10, tokensPerMinute: 0 }, 5));
      } finally {
        await state.close();
      }
      const routing = await keysMatching(redis, `${prefix}routing:*`);
      assert.ok(routing.length > 0, `routing state under ${prefix}routing:`);
    } finally {
      for (const name of await keysMatching(redis, `${prefix}*`)) await redis.del(name);
      redis.disconnect();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
