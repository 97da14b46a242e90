/**
 * Settlements that do not reach Redis are not lost (issue 41: a shared budget read 300,000 micro-USD
 * spent while the ledger held 366,000). A private `redis-server` (never the shared one) is frozen while
 * a settle is sent, with the breaker closed (the settle times out) and with it open (the settle is
 * never sent); when Redis answers again the kept settlement lands, exactly once. And the money of
 * requests admitted and settled locally during an outage reaches the budget's shared counters.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { CircuitBreaker } from '../../src/core/circuit-breaker.ts';
import { randomHex } from '../../src/core/ids.ts';
import { createLimitStore } from '../../src/limits/create-limit-store.ts';
import { FailoverLimitStore } from '../../src/limits/failover-limit-store.ts';
import type { BudgetCharge, LimitPolicy, LimitStore } from '../../src/limits/limit-store.ts';
import { commandBoundOf, openRedisConnection } from '../../src/limits/redis/redis-connection.ts';
import { PrivateRedis } from '../support/chaos/private-redis.ts';
import { until } from '../support/until.ts';

const POLICY: LimitPolicy = { requestsPerMinute: 0, tokensPerMinute: 0, tokensPerDay: 0, tokensPerMonth: 0 };
const ESTIMATED_COST = 10_000;
const ACTUAL_COST = 3_000;

function budget(): BudgetCharge {
  return { counter: `org:month:${randomHex(4)}`, amountMicroUsd: 1_000_000, periodEndMs: Date.now() + 3_600_000, seedMicroUsd: 0 };
}

describe('settlements the shared store did not take', () => {
  let redis: PrivateRedis;
  const opened: Array<{ store: LimitStore; breaker: CircuitBreaker; connections: Redis[] }> = [];

  before(async () => {
    redis = await PrivateRedis.create();
  });

  after(async () => {
    redis.thaw();
    for (const { store, breaker, connections } of opened) {
      breaker.stop();
      await store.close();
      for (const connection of connections) connection.disconnect();
    }
    await redis.close();
  });

  /** A failover store on the private Redis as the runtime builds it: one bounded connection, a probe, a breaker. */
  async function openStore(failureThreshold: number): Promise<{ store: FailoverLimitStore; breaker: CircuitBreaker }> {
    const connection = { commandTimeoutMs: 200, connectTimeoutMs: 200 };
    const probe = openRedisConnection(redis.url, { ...connection, enableOfflineQueue: false });
    const breaker = new CircuitBreaker({
      name: 'redis',
      failureThreshold,
      probeIntervalMs: 100,
      probe: () => commandBoundOf(probe).run(() => probe.ping()),
    });
    const shared = openRedisConnection(redis.url, { ...connection, onError: (error) => breaker.recordFailure(error) });
    const store = await createLimitStore({
      backend: 'redis',
      redisUrl: redis.url,
      redis: shared,
      breaker,
      keyPrefix: `test-unsettled-${randomHex(4)}:`,
    });
    assert.ok(store instanceof FailoverLimitStore);
    opened.push({ store, breaker, connections: [shared, probe] });
    return { store, breaker };
  }

  /** One request reserving 50 tokens and ESTIMATED_COST against `charge`. */
  function admitPaid(store: LimitStore, subject: { organizationId: string; keyId: string }, charge: BudgetCharge) {
    return store.admit({ subject, policy: POLICY, estimatedTokens: 50, budgets: [charge], estimatedCostMicroUsd: ESTIMATED_COST });
  }

  async function spent(store: LimitStore, subject: { organizationId: string; keyId: string }, charge: BudgetCharge) {
    const figures = (await store.usage(subject, POLICY, [charge])).budgets![0]!;
    return { committed: figures.committedMicroUsd, spent: figures.spentMicroUsd };
  }

  for (const [name, failureThreshold] of [
    ['the settle times out (breaker still closed)', 100],
    ['the breaker is open (the settle is never sent)', 1],
  ] as const) {
    test(`${name}: kept, then settled once when Redis answers`, async () => {
      const { store, breaker } = await openStore(failureThreshold);
      const subject = { organizationId: `org-${randomHex(4)}`, keyId: 'key' };
      const charge = budget();
      const admitted = await admitPaid(store, subject, charge);
      assert.ok(admitted.admitted);
      redis.freeze();
      try {
        if (failureThreshold === 1) {
          // Opened by a call that finds Redis silent; the settle below then never reaches it.
          await store.usage(subject, POLICY, [charge]);
          assert.equal(breaker.state, 'open');
        }
        const result = await store.settle(admitted.reservation, 20, ACTUAL_COST);
        assert.equal(result.settled, false, 'not taken by Redis now');
        assert.equal(store.unsettled.size, 1, 'kept');
      } finally {
        redis.thaw();
      }
      await until(async () => (store.unsettled.size === 0 ? true : undefined), 'the kept settlement to land');
      assert.equal(store.unsettled.landed, 1);
      assert.equal(breaker.state, 'closed');
      assert.deepEqual(await spent(store, subject, charge), { committed: ACTUAL_COST, spent: ACTUAL_COST });
      // Exactly once: the reservation record is gone, a repeat changes nothing.
      assert.equal((await store.settle(admitted.reservation, 20, ACTUAL_COST)).settled, false);
      assert.deepEqual(await spent(store, subject, charge), { committed: ACTUAL_COST, spent: ACTUAL_COST });
    });
  }

  test('a settle whose answer was lost after Redis ran it: the retry changes nothing', async () => {
    const { store } = await openStore(100);
    const subject = { organizationId: `org-${randomHex(4)}`, keyId: 'key' };
    const charge = budget();
    const admitted = await admitPaid(store, subject, charge);
    assert.ok(admitted.admitted);
    // Settled for real, then kept as if its answer had been lost: the retry finds no record.
    await store.settle(admitted.reservation, 20, ACTUAL_COST);
    store.unsettled.keep({ reservation: admitted.reservation, actualTokens: 20, actualCostMicroUsd: ACTUAL_COST });
    await store.unsettled.retry();
    assert.equal(store.unsettled.size, 0);
    assert.deepEqual(await spent(store, subject, charge), { committed: ACTUAL_COST, spent: ACTUAL_COST });
  });

  test('money settled locally during an outage reaches the shared budget when Redis returns', async () => {
    const { store, breaker } = await openStore(1);
    const subject = { organizationId: `org-${randomHex(4)}`, keyId: 'key' };
    const charge = budget();
    // The budget's shared counters exist (one request settled before the outage).
    const first = await admitPaid(store, subject, charge);
    assert.ok(first.admitted);
    await store.settle(first.reservation, 20, ACTUAL_COST);
    redis.freeze();
    try {
      await store.usage(subject, POLICY, [charge]);
      assert.equal(breaker.state, 'open');
      for (let index = 0; index < 3; index++) {
        const local = await admitPaid(store, subject, charge);
        assert.ok(local.admitted, 'admitted locally (limits.onStoreFailure: local)');
        assert.equal((await store.settle(local.reservation, 20, ACTUAL_COST)).settled, true);
      }
      assert.equal(store.unsettled.size, 0, 'local reservations settle locally');
    } finally {
      redis.thaw();
    }
    await until(async () => (breaker.state === 'closed' ? true : undefined), 'the breaker to close');
    // The first shared call writes what is owed back before it reads.
    assert.deepEqual(await spent(store, subject, charge), { committed: 4 * ACTUAL_COST, spent: 4 * ACTUAL_COST });
    assert.equal(store.owedSubjects, 0);
    assert.deepEqual(await spent(store, subject, charge), { committed: 4 * ACTUAL_COST, spent: 4 * ACTUAL_COST }, 'written once');
  });
});
