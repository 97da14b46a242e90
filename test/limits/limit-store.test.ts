/**
 * One suite, every backend of the LimitStore port (DESIGN.md convention 8): the in-process store
 * always, and Redis when TEST_REDIS_URL is set (e.g. redis://127.0.0.1:6379). All Redis keys of a run
 * carry a unique prefix and are deleted afterwards. Time is an injected manual clock.
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { randomHex } from '../../src/core/ids.ts';
import { ServiceError } from '../../src/core/service-error.ts';
import type { AdmitResult, LimitPolicy, LimitStore, LimitStoreOptions, LimitSubject, Reservation } from '../../src/limits/limit-store.ts';
import { limitPolicyFromTier } from '../../src/limits/limit-store.ts';
import { MemoryLimitStore } from '../../src/limits/memory/memory-limit-store.ts';
import { RedisLimitStore } from '../../src/limits/redis/redis-limit-store.ts';
import { createLimitStore } from '../../src/limits/create-limit-store.ts';
import type { AdmitManyInput, AdmitManyOutput, SettleManyOutput } from './support/admit-many.ts';
import { TYPESCRIPT_LOADER } from '../support/typescript-loader.ts';

class ManualClock {
  constructor(public ms: number) {}
  now(): number {
    return this.ms;
  }
  advance(milliseconds: number): void {
    this.ms += milliseconds;
  }
  set(iso: string): void {
    this.ms = Date.parse(iso);
  }
}

const at = (iso: string): number => Date.parse(iso);

const NO_LIMITS: LimitPolicy = { requestsPerMinute: 0, tokensPerMinute: 0, tokensPerDay: 0, tokensPerMonth: 0 };
const policy = (overrides: Partial<LimitPolicy>): LimitPolicy => ({ ...NO_LIMITS, ...overrides });

let subjectCounter = 0;
/** A fresh organization and key per test, so tests never share counters. */
function freshSubject(): LimitSubject {
  subjectCounter += 1;
  return { organizationId: `org-${subjectCounter}-${randomHex(6)}`, keyId: `key-${subjectCounter}` };
}

function admitted(result: AdmitResult): Reservation {
  assert.equal(result.admitted, true, result.admitted ? '' : `expected admission, got ${result.rejection.code}`);
  if (!result.admitted) throw new Error('unreachable');
  return result.reservation;
}

function rejected(result: AdmitResult) {
  assert.equal(result.admitted, false, 'expected a rejection');
  if (result.admitted) throw new Error('unreachable');
  return result.rejection;
}

interface Backend {
  name: string;
  create(clock: ManualClock, options?: Omit<LimitStoreOptions, 'clock'>): LimitStore;
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
}

const redisUrl = process.env.TEST_REDIS_URL;
const runPrefix = `switchyard-test:${randomHex(12)}:`;
let sharedRedis: Redis | undefined;

const backends: Backend[] = [
  {
    name: 'memory',
    create: (clock, options = {}) => new MemoryLimitStore({ ...options, clock }),
    setUp: async () => {},
    tearDown: async () => {},
  },
];

if (redisUrl === undefined || redisUrl === '') {
  console.warn('SKIPPED: Redis suite (set TEST_REDIS_URL)');
} else {
  backends.push({
    name: 'redis',
    create: (clock, options = {}) => new RedisLimitStore({ ...options, clock, redis: sharedRedis!, keyPrefix: runPrefix }),
    setUp: async () => {
      sharedRedis = new Redis(redisUrl);
    },
    tearDown: async () => {
      if (sharedRedis === undefined) return;
      let cursor = '0';
      do {
        const [next, keys] = await sharedRedis.scan(cursor, 'MATCH', `${runPrefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await sharedRedis.del(...keys);
      } while (cursor !== '0');
      await sharedRedis.quit();
    },
  });
}

for (const backend of backends) {
  describe(`LimitStore on ${backend.name}`, () => {
    before(() => backend.setUp());
    after(() => backend.tearDown());

    test('admits and reports the figures after consumption, with the reset of each window', async () => {
      const clock = new ManualClock(at('2025-03-10T12:34:45.500Z'));
      const store = backend.create(clock);
      const subject = freshSubject();
      const limits = policy({ requestsPerMinute: 5, tokensPerMinute: 1000, tokensPerDay: 5000, tokensPerMonth: 10_000 });
      const result = await store.admit({ subject, policy: limits, estimatedTokens: 100 });
      const reservation = admitted(result);
      assert.equal(reservation.estimatedTokens, 100);
      assert.deepEqual(reservation.subject, subject);
      assert.equal(reservation.admittedAtMs, clock.now());
      assert.deepEqual(result.figures, {
        requestsPerMinute: { limit: 5, used: 1, remaining: 4, resetAtMs: at('2025-03-10T12:35:00Z') },
        tokensPerMinute: { limit: 1000, used: 100, remaining: 900, resetAtMs: at('2025-03-10T12:35:00Z') },
        daily: { limit: 5000, used: 100, remaining: 4900, resetAtMs: at('2025-03-11T00:00:00Z') },
        monthly: { limit: 10_000, used: 100, remaining: 9900, resetAtMs: at('2025-04-01T00:00:00Z') },
        atMs: clock.now(),
      });
      assert.deepEqual(await store.usage(subject, limits), result.figures);
      await store.close();
    });

    test('rpm_exceeded: limit, remaining, reset at the next minute and retry_after; a rejection consumes nothing', async () => {
      const clock = new ManualClock(at('2025-03-10T12:34:45Z'));
      const store = backend.create(clock);
      const subject = freshSubject();
      const limits = policy({ requestsPerMinute: 3 });
      for (let index = 0; index < 3; index++) admitted(await store.admit({ subject, policy: limits, estimatedTokens: 10 }));
      const rejection = rejected(await store.admit({ subject, policy: limits, estimatedTokens: 10 }));
      assert.deepEqual(rejection, {
        code: 'rpm_exceeded',
        limit: 3,
        remaining: 0,
        resetAtMs: at('2025-03-10T12:35:00Z'),
        retryAfterSeconds: 15,
        requestedTokens: 10,
      });
      const usage = await store.usage(subject, limits);
      assert.equal(usage.requestsPerMinute.used, 3);
      assert.equal(usage.daily.used, 30, 'the rejected request reserved no tokens');
      clock.set('2025-03-10T12:35:00Z');
      admitted(await store.admit({ subject, policy: limits, estimatedTokens: 10 }));
      await store.close();
    });

    test('tpm_exceeded: the reservation that does not fit is refused, one that fits exactly passes', async () => {
      const clock = new ManualClock(at('2025-03-10T08:00:59.200Z'));
      const store = backend.create(clock);
      const subject = freshSubject();
      const limits = policy({ tokensPerMinute: 1000 });
      admitted(await store.admit({ subject, policy: limits, estimatedTokens: 400 }));
      admitted(await store.admit({ subject, policy: limits, estimatedTokens: 400 }));
      const rejection = rejected(await store.admit({ subject, policy: limits, estimatedTokens: 400 }));
      assert.deepEqual(rejection, {
        code: 'tpm_exceeded',
        limit: 1000,
        remaining: 200,
        resetAtMs: at('2025-03-10T08:01:00Z'),
        retryAfterSeconds: 1,
        requestedTokens: 400,
      });
      const fits = await store.admit({ subject, policy: limits, estimatedTokens: 200 });
      admitted(fits);
      assert.equal(fits.figures.tokensPerMinute.remaining, 0);
      assert.equal(fits.figures.requestsPerMinute.used, 3, 'the refused request was not counted');
      await store.close();
    });

    test('user_total_daily_limit_exceeded resets at 00:00 UTC', async () => {
      const clock = new ManualClock(at('2025-03-10T22:00:00Z'));
      const store = backend.create(clock);
      const subject = freshSubject();
      const limits = policy({ tokensPerDay: 1000 });
      admitted(await store.admit({ subject, policy: limits, estimatedTokens: 600 }));
      const rejection = rejected(await store.admit({ subject, policy: limits, estimatedTokens: 500 }));
      assert.deepEqual(rejection, {
        code: 'user_total_daily_limit_exceeded',
        limit: 1000,
        remaining: 400,
        resetAtMs: at('2025-03-11T00:00:00Z'),
        retryAfterSeconds: 7200,
        requestedTokens: 500,
      });
      clock.set('2025-03-10T23:59:59.999Z');
      rejected(await store.admit({ subject, policy: limits, estimatedTokens: 500 }));
      clock.set('2025-03-11T00:00:00Z');
      const next = await store.admit({ subject, policy: limits, estimatedTokens: 500 });
      admitted(next);
      assert.deepEqual(next.figures.daily, { limit: 1000, used: 500, remaining: 500, resetAtMs: at('2025-03-12T00:00:00Z') });
      assert.equal(next.figures.monthly.used, 1100, 'the month keeps counting across days');
      await store.close();
    });

    test('user_total_monthly_limit_exceeded resets on the 1st at 00:00 UTC, across a month boundary', async () => {
      const clock = new ManualClock(at('2025-01-31T23:59:30Z'));
      const store = backend.create(clock);
      const subject = freshSubject();
      const limits = policy({ tokensPerMonth: 1000 });
      admitted(await store.admit({ subject, policy: limits, estimatedTokens: 1000 }));
      const rejection = rejected(await store.admit({ subject, policy: limits, estimatedTokens: 1 }));
      assert.deepEqual(rejection, {
        code: 'user_total_monthly_limit_exceeded',
        limit: 1000,
        remaining: 0,
        resetAtMs: at('2025-02-01T00:00:00Z'),
        retryAfterSeconds: 30,
        requestedTokens: 1,
      });
      clock.advance(30_000);
      const february = await store.admit({ subject, policy: limits, estimatedTokens: 1 });
      admitted(february);
      assert.deepEqual(february.figures.monthly, { limit: 1000, used: 1, remaining: 999, resetAtMs: at('2025-03-01T00:00:00Z') });
      await store.close();
    });

    test('monthly reset times: leap February and December into January', async () => {
      const clock = new ManualClock(at('2024-02-29T12:00:00Z'));
      const store = backend.create(clock);
      const subject = freshSubject();
      const limits = policy({ tokensPerDay: 10, tokensPerMonth: 100 });
      let usage = await store.usage(subject, limits);
      assert.equal(usage.monthly.resetAtMs, at('2024-03-01T00:00:00Z'));
      assert.equal(usage.daily.resetAtMs, at('2024-03-01T00:00:00Z'));
      clock.set('2025-12-31T23:00:00Z');
      usage = await store.usage(subject, limits);
      assert.equal(usage.monthly.resetAtMs, at('2026-01-01T00:00:00Z'));
      assert.deepEqual(usage.monthly, { limit: 100, used: 0, remaining: 100, resetAtMs: at('2026-01-01T00:00:00Z') });
      await store.close();
    });

    test('when several limits fail, the one that resets last is reported', async () => {
      const clock = new ManualClock(at('2025-06-15T10:00:00Z'));
      const store = backend.create(clock);
      const subject = freshSubject();
      const limits = policy({ requestsPerMinute: 1, tokensPerMinute: 100, tokensPerDay: 100, tokensPerMonth: 100 });
      admitted(await store.admit({ subject, policy: limits, estimatedTokens: 100 }));
      const rejection = rejected(await store.admit({ subject, policy: limits, estimatedTokens: 1 }));
      assert.equal(rejection.code, 'user_total_monthly_limit_exceeded');
      assert.equal(rejection.resetAtMs, at('2025-07-01T00:00:00Z'));
      const dailyOnly = policy({ requestsPerMinute: 1, tokensPerDay: 100 });
      const dailyRejection = rejected(await store.admit({ subject, policy: dailyOnly, estimatedTokens: 1 }));
      assert.equal(dailyRejection.code, 'user_total_daily_limit_exceeded');
      const minuteOnly = policy({ requestsPerMinute: 1, tokensPerMinute: 100 });
      assert.equal(rejected(await store.admit({ subject, policy: minuteOnly, estimatedTokens: 1 })).code, 'rpm_exceeded');
      await store.close();
    });

    test('a limit of 0 is unlimited, and usage is still counted', async () => {
      const clock = new ManualClock(at('2025-06-15T10:00:00Z'));
      const store = backend.create(clock);
      const subject = freshSubject();
      for (let index = 0; index < 50; index++) admitted(await store.admit({ subject, policy: NO_LIMITS, estimatedTokens: 1000 }));
      const usage = await store.usage(subject, NO_LIMITS);
      assert.deepEqual(usage.daily, { limit: 0, used: 50_000, remaining: 0, resetAtMs: at('2025-06-16T00:00:00Z') });
      assert.equal(usage.requestsPerMinute.used, 50);
      await store.close();
    });

    test('per-minute limits are per key, daily and monthly totals per organization', async () => {
      const clock = new ManualClock(at('2025-06-15T10:00:00Z'));
      const store = backend.create(clock);
      const first = freshSubject();
      const second: LimitSubject = { organizationId: first.organizationId, keyId: `${first.keyId}-second` };
      const other = freshSubject();
      const limits = policy({ requestsPerMinute: 1, tokensPerDay: 100 });
      admitted(await store.admit({ subject: first, policy: limits, estimatedTokens: 60 }));
      assert.equal(rejected(await store.admit({ subject: first, policy: limits, estimatedTokens: 1 })).code, 'rpm_exceeded');
      const fromSecondKey = rejected(await store.admit({ subject: second, policy: limits, estimatedTokens: 50 }));
      assert.equal(fromSecondKey.code, 'user_total_daily_limit_exceeded');
      assert.equal(fromSecondKey.remaining, 40);
      admitted(await store.admit({ subject: second, policy: limits, estimatedTokens: 40 }));
      admitted(await store.admit({ subject: other, policy: limits, estimatedTokens: 100 }));
      await store.close();
    });

    test('ids with braces, colons and spaces cannot collide or break keys', async () => {
      const clock = new ManualClock(at('2025-06-15T10:00:00Z'));
      const store = backend.create(clock);
      const limits = policy({ tokensPerDay: 10 });
      const tricky: LimitSubject = { organizationId: 'org:{a}:day', keyId: 'k }{ 1' };
      const plain: LimitSubject = { organizationId: 'org', keyId: '{a}:day' };
      admitted(await store.admit({ subject: tricky, policy: limits, estimatedTokens: 10 }));
      admitted(await store.admit({ subject: plain, policy: limits, estimatedTokens: 10 }));
      assert.equal((await store.usage(tricky, limits)).daily.used, 10);
      await store.close();
    });

    test('settlement below the estimate releases the rest in the minute, day and month', async () => {
      const clock = new ManualClock(at('2025-06-15T10:00:00Z'));
      const store = backend.create(clock);
      const subject = freshSubject();
      const limits = policy({ tokensPerMinute: 1000, tokensPerDay: 1000, tokensPerMonth: 1000 });
      const reservation = admitted(await store.admit({ subject, policy: limits, estimatedTokens: 800 }));
      clock.advance(5_000);
      const settlement = await store.settle(reservation, 300);
      assert.equal(settlement.settled, true);
      assert.equal(settlement.figures.tokensPerMinute.used, 300);
      assert.equal(settlement.figures.daily.used, 300);
      assert.deepEqual(settlement.figures.monthly, { limit: 1000, used: 300, remaining: 700, resetAtMs: at('2025-07-01T00:00:00Z') });
      assert.equal(settlement.figures.requestsPerMinute.used, 1, 'the request itself stays counted');
      admitted(await store.admit({ subject, policy: limits, estimatedTokens: 700 }));
      await store.close();
    });

    test('settlement above the estimate charges the difference, even past the limit', async () => {
      const clock = new ManualClock(at('2025-06-15T10:00:00Z'));
      const store = backend.create(clock);
      const subject = freshSubject();
      const limits = policy({ tokensPerMinute: 1000, tokensPerDay: 1000 });
      const reservation = admitted(await store.admit({ subject, policy: limits, estimatedTokens: 900 }));
      const settlement = await store.settle(reservation, 1200);
      assert.equal(settlement.settled, true);
      assert.deepEqual(settlement.figures.daily, { limit: 1000, used: 1200, remaining: 0, resetAtMs: at('2025-06-16T00:00:00Z') });
      assert.equal(settlement.figures.tokensPerMinute.used, 1200);
      const rejection = rejected(await store.admit({ subject, policy: limits, estimatedTokens: 1 }));
      assert.equal(rejection.code, 'user_total_daily_limit_exceeded');
      assert.equal(rejection.remaining, 0);
      await store.close();
    });

    test('a repeated settle is a no-op, also when the repeats race each other', async () => {
      const clock = new ManualClock(at('2025-06-15T10:00:00Z'));
      const store = backend.create(clock);
      const subject = freshSubject();
      const limits = policy({ tokensPerDay: 10_000 });
      const reservation = admitted(await store.admit({ subject, policy: limits, estimatedTokens: 500 }));
      assert.equal((await store.settle(reservation, 100)).settled, true);
      const again = await store.settle(reservation, 5000);
      assert.equal(again.settled, false);
      assert.equal(again.figures.daily.used, 100);

      const raced = admitted(await store.admit({ subject, policy: limits, estimatedTokens: 500 }));
      const outcomes = await Promise.all(Array.from({ length: 10 }, (_, index) => store.settle(raced, index)));
      assert.equal(outcomes.filter((outcome) => outcome.settled).length, 1);
      const winner = outcomes.findIndex((outcome) => outcome.settled);
      assert.equal((await store.usage(subject, limits)).daily.used, 100 + winner);
      await store.close();
    });

    test('a reservation never settled (abandoned stream) costs at most its estimate', async () => {
      const clock = new ManualClock(at('2025-06-15T10:00:10Z'));
      const store = backend.create(clock);
      const subject = freshSubject();
      const limits = policy({ tokensPerMinute: 1000, tokensPerDay: 1000 });
      admitted(await store.admit({ subject, policy: limits, estimatedTokens: 700 }));
      let usage = await store.usage(subject, limits);
      assert.equal(usage.tokensPerMinute.used, 700);
      assert.equal(usage.daily.used, 700);
      clock.set('2025-06-15T10:01:00Z');
      usage = await store.usage(subject, limits);
      assert.equal(usage.tokensPerMinute.used, 0, 'the minute budget frees itself when the window ends');
      assert.equal(usage.daily.used, 700, 'the day keeps the estimate, and no more');
      await store.close();
    });

    test('a settle after the reservation expired changes nothing and the estimate stays charged', async () => {
      const clock = new ManualClock(at('2025-06-15T10:00:10Z'));
      const store = backend.create(clock, { reservationTtlMs: 1 });
      const subject = freshSubject();
      const limits = policy({ tokensPerDay: 1000 });
      const reservation = admitted(await store.admit({ subject, policy: limits, estimatedTokens: 300 }));
      // Memory expires reservations by the injected clock, Redis by its own time: move both.
      clock.advance(10);
      await sleep(30);
      const settlement = await store.settle(reservation, 0);
      assert.equal(settlement.settled, false);
      assert.equal(settlement.figures.daily.used, 300);
      await store.close();
    });

    test('a settle after the window rolled over does not touch the new window', async () => {
      const clock = new ManualClock(at('2025-01-31T23:59:50Z'));
      const store = backend.create(clock);
      const subject = freshSubject();
      const limits = policy({ tokensPerMinute: 1000, tokensPerDay: 1000, tokensPerMonth: 1000 });
      const reservation = admitted(await store.admit({ subject, policy: limits, estimatedTokens: 100 }));
      clock.set('2025-02-01T00:00:10Z');
      const settlement = await store.settle(reservation, 900);
      assert.equal(settlement.settled, true);
      assert.equal(settlement.figures.tokensPerMinute.used, 0);
      assert.equal(settlement.figures.daily.used, 0);
      assert.equal(settlement.figures.monthly.used, 0);
      assert.equal(settlement.figures.monthly.resetAtMs, at('2025-03-01T00:00:00Z'));
      await store.close();
    });

    test('token counts must be non-negative integers', async () => {
      const store = backend.create(new ManualClock(at('2025-06-15T10:00:00Z')));
      const subject = freshSubject();
      await assert.rejects(store.admit({ subject, policy: NO_LIMITS, estimatedTokens: -1 }), RangeError);
      await assert.rejects(store.admit({ subject, policy: NO_LIMITS, estimatedTokens: Number.NaN }), RangeError);
      const reservation = admitted(await store.admit({ subject, policy: NO_LIMITS, estimatedTokens: 1 }));
      await assert.rejects(store.settle(reservation, 1.5), RangeError);
      assert.equal((await store.settle(reservation, 1)).settled, true, 'a refused settle leaves the reservation open');
      await store.close();
    });

    test('exactness: 1,000 concurrent admits against 100 requests per minute admit exactly 100', async () => {
      const store = backend.create(new ManualClock(at('2025-06-15T10:00:00Z')));
      const subject = freshSubject();
      const limits = policy({ requestsPerMinute: 100 });
      const results = await Promise.all(Array.from({ length: 1000 }, () => store.admit({ subject, policy: limits, estimatedTokens: 5 })));
      assert.equal(results.filter((result) => result.admitted).length, 100);
      assert.ok(results.every((result) => result.admitted || result.rejection.code === 'rpm_exceeded'));
      assert.equal((await store.usage(subject, limits)).requestsPerMinute.used, 100);
      await store.close();
    });

    test('exactness: 1,000 concurrent admits against 1,000 tokens per minute at 10 each admit exactly 100, and every settlement lands once', async () => {
      const store = backend.create(new ManualClock(at('2025-06-15T10:00:00Z')));
      const subject = freshSubject();
      const limits = policy({ tokensPerMinute: 1000, tokensPerDay: 1_000_000 });
      const results = await Promise.all(Array.from({ length: 1000 }, () => store.admit({ subject, policy: limits, estimatedTokens: 10 })));
      const reservations = results.flatMap((result) => (result.admitted ? [result.reservation] : []));
      assert.equal(reservations.length, 100);
      assert.ok(results.every((result) => result.admitted || result.rejection.code === 'tpm_exceeded'));
      // Each reservation settled twice at once: exactly one of the two counts.
      const settlements = await Promise.all(
        reservations.flatMap((reservation) => [store.settle(reservation, 7), store.settle(reservation, 7)]),
      );
      assert.equal(settlements.filter((settlement) => settlement.settled).length, 100);
      const usage = await store.usage(subject, limits);
      assert.equal(usage.tokensPerMinute.used, 700);
      assert.equal(usage.daily.used, 700);
      assert.equal(usage.monthly.used, 700);
      await store.close();
    });

    if (backend.name === 'memory') {
      test('sweeping finished entries keeps live figures and late settlements right', async () => {
        const clock = new ManualClock(at('2025-06-15T10:00:00Z'));
        const store = backend.create(clock, { reservationTtlMs: 10 * 60_000 });
        const subject = freshSubject();
        const limits = policy({ tokensPerMinute: 1000, tokensPerDay: 1000, tokensPerMonth: 1000 });
        const reservation = admitted(await store.admit({ subject, policy: limits, estimatedTokens: 500 }));
        clock.advance(120_000);
        // Enough operations from another key to trigger a sweep, which drops the first key's finished minute.
        const busy = freshSubject();
        for (let index = 0; index < 10_001; index++) await store.admit({ subject: busy, policy: NO_LIMITS, estimatedTokens: 0 });
        const settlement = await store.settle(reservation, 200);
        assert.equal(settlement.settled, true);
        assert.equal(settlement.figures.daily.used, 200);
        assert.equal(settlement.figures.monthly.used, 200);
        assert.equal(settlement.figures.tokensPerMinute.used, 0);
        await store.close();
      });
    }

    if (backend.name === 'redis') {
      const childScript = fileURLToPath(new URL('./support/admit-many.ts', import.meta.url));

      /** Runs `count` admits in a second Node process and `count` here, at the same moment. */
      async function admitFromTwoProcesses(
        input: AdmitManyInput,
        context: TestContext,
      ): Promise<{ child: AdmitManyOutput; here: AdmitResult[]; childSettled: number; hereSettled: number }> {
        const child = spawn(process.execPath, [...TYPESCRIPT_LOADER, childScript, JSON.stringify(input)], {
          stdio: ['pipe', 'pipe', 'inherit'],
        });
        const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
        const lines = createInterface({ input: child.stdout });
        const childLines = lines[Symbol.asyncIterator]();
        const nextChildLine = async (): Promise<string> => {
          const next = await childLines.next();
          assert.equal(next.done, false, 'the child process ended early');
          return String(next.value);
        };
        assert.equal(await nextChildLine(), 'ready');
        const store = new RedisLimitStore({ redis: sharedRedis!, keyPrefix: input.keyPrefix, clock: { now: () => input.nowMs } });
        child.stdin.write('go\n');
        const here: AdmitResult[] = [];
        let started = 0;
        const worker = async (): Promise<void> => {
          while (started < input.count) {
            started += 1;
            here.push(await store.admit({ subject: input.subject, policy: input.policy, estimatedTokens: input.estimatedTokens }));
          }
        };
        await Promise.all(Array.from({ length: input.parallel }, () => worker()));
        const childOutput = JSON.parse(await nextChildLine()) as AdmitManyOutput;
        // Which process won how many varies from run to run; only the total is a promise.
        context.diagnostic(`admitted here ${here.filter((result) => result.admitted).length}, in the child ${childOutput.admitted}`);

        let childSettled = 0;
        let hereSettled = 0;
        const settleTokens = input.settleTokens;
        if (settleTokens !== undefined) {
          // Settlement starts only once both processes finished admitting (it releases tokens).
          child.stdin.write('settle\n');
          const admittedHere = here.flatMap((result) => (result.admitted ? [result.reservation] : []));
          const outcomes = await Promise.all(
            admittedHere.flatMap((reservation) => [store.settle(reservation, settleTokens), store.settle(reservation, settleTokens)]),
          );
          hereSettled = outcomes.filter((outcome) => outcome.settled).length;
          childSettled = (JSON.parse(await nextChildLine()) as SettleManyOutput).settled;
        }
        child.stdin.end();
        lines.close();
        assert.equal(await exited, 0);
        return { child: childOutput, here, childSettled, hereSettled };
      }

      test(
        'exactness across two Node processes: 500 + 500 concurrent admits against 100 requests per minute admit exactly 100',
        { timeout: 60_000 },
        async (context) => {
          const subject = freshSubject();
          const limits = policy({ requestsPerMinute: 100 });
          const nowMs = at('2025-06-15T10:00:00Z');
          const { child, here } = await admitFromTwoProcesses(
            { redisUrl: redisUrl!, keyPrefix: runPrefix, subject, policy: limits, nowMs, count: 500, parallel: 50, estimatedTokens: 5 },
            context,
          );
          const admittedHere = here.filter((result) => result.admitted).length;
          assert.equal(child.admitted + admittedHere, 100);
          assert.equal(child.rejected + (500 - admittedHere), 900);
          assert.deepEqual(
            Object.keys(child.codes).filter((code) => code !== 'rpm_exceeded'),
            [],
          );
          const store = backend.create(new ManualClock(nowMs));
          assert.equal((await store.usage(subject, limits)).requestsPerMinute.used, 100);
        },
      );

      test(
        'exactness across two Node processes: a token limit admits exactly 100 of 1,000, and every settlement lands once',
        { timeout: 60_000 },
        async (context) => {
          const subject = freshSubject();
          const limits = policy({ tokensPerMinute: 1000, tokensPerDay: 1_000_000 });
          const nowMs = at('2025-06-15T10:00:00Z');
          const { child, here, childSettled, hereSettled } = await admitFromTwoProcesses(
            {
              redisUrl: redisUrl!,
              keyPrefix: runPrefix,
              subject,
              policy: limits,
              nowMs,
              count: 500,
              parallel: 50,
              estimatedTokens: 10,
              settleTokens: 3,
            },
            context,
          );
          const admittedHere = here.filter((result) => result.admitted).length;
          assert.equal(child.admitted + admittedHere, 100);
          assert.equal(childSettled + hereSettled, 100);
          const usage = await backend.create(new ManualClock(nowMs)).usage(subject, limits);
          assert.equal(usage.tokensPerMinute.used, 300);
          assert.equal(usage.daily.used, 300);
        },
      );

      test('scripts are reloaded after Redis forgets them (NOSCRIPT falls back to EVAL)', async () => {
        const store = backend.create(new ManualClock(at('2025-06-15T10:00:00Z')));
        const subject = freshSubject();
        await sharedRedis!.script('FLUSH');
        const reservation = admitted(await store.admit({ subject, policy: NO_LIMITS, estimatedTokens: 5 }));
        await sharedRedis!.script('FLUSH');
        assert.equal((await store.settle(reservation, 2)).settled, true);
      });

      test('counter keys expire after their window', async () => {
        const store = backend.create(new ManualClock(at('2025-06-15T10:00:30Z')));
        const subject = freshSubject();
        admitted(await store.admit({ subject, policy: NO_LIMITS, estimatedTokens: 5 }));
        const keys = await sharedRedis!.keys(`${runPrefix}{${subject.organizationId}}:*`);
        assert.equal(keys.length, 5, 'rpm, tpm, day, month and the reservation');
        for (const key of keys) {
          const ttl = await sharedRedis!.pttl(key);
          assert.ok(ttl > 0, `${key} has a time to live`);
          if (key.includes(':rpm:') || key.includes(':tpm:')) assert.ok(ttl <= 31_000, `${key} lives until the minute ends (${ttl} ms)`);
          if (key.includes(':day:')) assert.ok(ttl > 50_000_000 && ttl <= 50_371_000, `${key} lives until 00:00 UTC (${ttl} ms)`);
        }
      });

      test('an unreachable Redis answers 500 service_unavailable', async () => {
        const store = new RedisLimitStore({ redis: 'redis://127.0.0.1:1', clock: new ManualClock(at('2025-06-15T10:00:00Z')) });
        const error = await store
          .admit({ subject: freshSubject(), policy: NO_LIMITS, estimatedTokens: 1 })
          .catch((caught: unknown) => caught);
        assert.ok(error instanceof ServiceError);
        assert.equal(error.status, 500);
        assert.equal(error.code, 'service_unavailable');
        await store.close().catch(() => {});
      });
    }
  });
}

describe('limit store selection and tier policy', () => {
  test('createLimitStore picks memory without a Redis URL', async () => {
    const store = await createLimitStore({ redisUrl: '' });
    assert.ok(store instanceof MemoryLimitStore);
    await store.close();
  });

  test('limitPolicyFromTier copies the four limits and the organization-wide minute limits', () => {
    assert.deepEqual(
      limitPolicyFromTier({
        requestsPerMinute: 20,
        tokensPerMinute: 10_000,
        tokensPerDay: 10_000,
        tokensPerMonth: 10_000,
        organizationRequestsPerMinute: 20,
      }),
      {
        requestsPerMinute: 20,
        tokensPerMinute: 10_000,
        tokensPerDay: 10_000,
        tokensPerMonth: 10_000,
        organizationRequestsPerMinute: 20,
        organizationTokensPerMinute: 0,
      },
    );
  });
});
