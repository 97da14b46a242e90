/**
 * `limits.onStoreFailure` against a Redis that cannot be reached (a real connection to a closed port):
 * local counts, open admits uncounted, closed refuses metered requests; request-only admissions are
 * never refused; once the breaker is open every decision takes microseconds.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CircuitBreaker, DependencyUnavailableError } from '../../src/core/circuit-breaker.ts';
import { FailoverLimitStore, type StoreFailurePolicy } from '../../src/limits/failover-limit-store.ts';
import type { LimitPolicy } from '../../src/limits/limit-store.ts';
import { RedisLimitStore } from '../../src/limits/redis/redis-limit-store.ts';

const POLICY: LimitPolicy = { requestsPerMinute: 3, tokensPerMinute: 0, tokensPerDay: 0, tokensPerMonth: 0 };
const SUBJECT = { organizationId: 'org-failover', keyId: 'key-failover' };

/** Calls that reached the Redis store (its admit, settle and usage), counted: while the breaker is open there must be none. */
function countCalls(primary: RedisLimitStore): { count: number } {
  const calls = { count: 0 };
  for (const method of ['admit', 'settle', 'usage'] as const) {
    const original = primary[method].bind(primary) as (...args: unknown[]) => unknown;
    (primary as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      calls.count += 1;
      return original(...args);
    };
  }
  return calls;
}

function unreachableStore(policy: StoreFailurePolicy): {
  store: FailoverLimitStore;
  breaker: CircuitBreaker;
  redisCalls: { count: number };
} {
  const breaker = new CircuitBreaker({
    name: 'redis',
    failureThreshold: 1,
    probeIntervalMs: 60_000,
    probe: async () => Promise.reject(new Error('connect ECONNREFUSED')),
  });
  const primary = new RedisLimitStore({ redis: 'redis://127.0.0.1:1', connection: { commandTimeoutMs: 200, connectTimeoutMs: 200 } });
  const redisCalls = countCalls(primary);
  return { store: new FailoverLimitStore({ primary, breaker, policy }), breaker, redisCalls };
}

describe('FailoverLimitStore with Redis unreachable', () => {
  test('local: counted in this instance, limits enforced, settles locally', async () => {
    const { store, breaker, redisCalls } = unreachableStore('local');
    try {
      const results = [];
      for (let index = 0; index < 4; index++) results.push(await store.admit({ subject: SUBJECT, policy: POLICY, estimatedTokens: 5 }));
      assert.deepEqual(
        results.map((result) => result.admitted),
        [true, true, true, false],
        'the per-minute limit holds in memory',
      );
      assert.equal(breaker.state, 'open');
      const first = results[0]!;
      assert.ok(first.admitted);
      const settled = await store.settle(first.reservation, 2);
      assert.equal(settled.settled, true, 'a local reservation settles on the local store');
      const before = redisCalls.count;
      for (let index = 0; index < 1_000; index++) await store.usage(SUBJECT, POLICY);
      assert.equal(redisCalls.count, before, 'while open, nothing waits on Redis');
    } finally {
      breaker.stop();
      await store.close();
    }
  });

  test('open: admitted uncounted', async () => {
    const { store, breaker } = unreachableStore('open');
    try {
      for (let index = 0; index < 5; index++) {
        assert.equal((await store.admit({ subject: SUBJECT, policy: POLICY, estimatedTokens: 5 })).admitted, true);
      }
    } finally {
      breaker.stop();
      await store.close();
    }
  });

  test('closed: metered requests refused at once with 500 service_unavailable; request-only routes still admitted', async () => {
    const { store, breaker, redisCalls } = unreachableStore('closed');
    try {
      await assert.rejects(store.admit({ subject: SUBJECT, policy: POLICY, estimatedTokens: 5 }), DependencyUnavailableError);
      const before = redisCalls.count;
      await assert.rejects(store.admit({ subject: SUBJECT, policy: POLICY, estimatedTokens: 5 }), (error: unknown) => {
        assert.ok(error instanceof DependencyUnavailableError);
        assert.equal(error.status, 500);
        assert.equal(error.headers['retry-after'], '1');
        return true;
      });
      assert.equal(redisCalls.count, before, 'refused without touching Redis');
      assert.equal((await store.admit({ subject: SUBJECT, policy: POLICY, estimatedTokens: 0 })).admitted, true);
    } finally {
      breaker.stop();
      await store.close();
    }
  });
});
