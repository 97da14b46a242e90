/**
 * Limit store throughput: admit + settle pairs per second, on a no-op store (the baseline: what the
 * loop itself costs), the in-process store and, when REDIS_URL or TEST_REDIS_URL is set, Redis. Each
 * run keeps `CONCURRENCY` request lifecycles in flight for `DURATION_MS`, spread over 100 keys of 10
 * organizations with limits high enough never to refuse. Figures are printed, never asserted.
 *
 * Run: node --import tsx bench/limits.ts        (REDIS_URL=redis://127.0.0.1:6379 to include Redis)
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type {
  AdmitCheck,
  AdmitResult,
  LimitPolicy,
  LimitSnapshot,
  LimitStore,
  LimitSubject,
  Reservation,
  SettleResult,
} from '../src/limits/limit-store.ts';
import { MemoryLimitStore } from '../src/limits/memory/memory-limit-store.ts';
import { RedisLimitStore } from '../src/limits/redis/redis-limit-store.ts';

const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 1500);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const POLICY: LimitPolicy = { requestsPerMinute: 1_000_000_000, tokensPerMinute: 1_000_000_000_000, tokensPerDay: 0, tokensPerMonth: 0 };
const SUBJECTS: LimitSubject[] = Array.from({ length: 100 }, (_, index) => ({
  organizationId: `bench-org-${index % 10}`,
  keyId: `bench-key-${index}`,
}));

/** Does nothing and admits everything: the cost of the benchmark loop itself. */
class NoopLimitStore implements LimitStore {
  private readonly window = { limit: 0, used: 0, remaining: 0, resetAtMs: 0 };
  private snapshot(): LimitSnapshot {
    return { requestsPerMinute: this.window, tokensPerMinute: this.window, daily: this.window, monthly: this.window, atMs: 0 };
  }
  async admit(check: AdmitCheck): Promise<AdmitResult> {
    const reservation: Reservation = {
      id: randomUUID(),
      subject: check.subject,
      policy: check.policy,
      estimatedTokens: check.estimatedTokens,
      admittedAtMs: 0,
    };
    return { admitted: true, reservation, figures: this.snapshot() };
  }
  async settle(): Promise<SettleResult> {
    return { settled: true, figures: this.snapshot() };
  }
  async usage(): Promise<LimitSnapshot> {
    return this.snapshot();
  }
  async close(): Promise<void> {}
}

async function measure(name: string, store: LimitStore): Promise<number> {
  let completed = 0;
  let next = 0;
  const deadline = performance.now() + DURATION_MS;
  const started = performance.now();
  async function worker(): Promise<void> {
    while (performance.now() < deadline) {
      const subject = SUBJECTS[next++ % SUBJECTS.length]!;
      const result = await store.admit({ subject, policy: POLICY, estimatedTokens: 1200 });
      if (!result.admitted) throw new Error(`bench was refused: ${result.rejection.code}`);
      await store.settle(result.reservation, 300);
      completed += 1;
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, () => worker()));
  const perSecond = completed / ((performance.now() - started) / 1000);
  console.log(
    `${name.padEnd(34)} ${Math.round(perSecond).toLocaleString('en-US').padStart(10)} admit+settle/s  (${completed} in ${DURATION_MS} ms)`,
  );
  return perSecond;
}

console.log(`limit store benchmark: ${CONCURRENCY} in flight, ${DURATION_MS} ms per run, node ${process.version}`);
const baseline = await measure('no-op store (baseline)', new NoopLimitStore());
const memoryStore = new MemoryLimitStore();
const memory = await measure('memory store', memoryStore);
await memoryStore.close();

const redisUrl = process.env.REDIS_URL ?? process.env.TEST_REDIS_URL;
let redis: number | undefined;
if (redisUrl !== undefined && redisUrl !== '') {
  const keyPrefix = `switchyard-bench:${randomUUID()}:`;
  const redisStore = new RedisLimitStore({ redis: redisUrl, keyPrefix });
  redis = await measure('redis store (1 connection)', redisStore);
  await redisStore.close();
  const cleaner = new Redis(redisUrl);
  let cursor = '0';
  do {
    const [nextCursor, keys] = await cleaner.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000);
    cursor = nextCursor;
    if (keys.length > 0) await cleaner.del(...keys);
  } while (cursor !== '0');
  await cleaner.quit();
} else {
  console.log('redis store                        skipped (set REDIS_URL or TEST_REDIS_URL)');
}

const microseconds = (perSecond: number): string => `${(1_000_000 / perSecond).toFixed(1)} µs`;
console.log(
  `per admit+settle: baseline ${microseconds(baseline)}, memory ${microseconds(memory)}${redis === undefined ? '' : `, redis ${microseconds(redis)}`}`,
);
