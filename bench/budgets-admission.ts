/**
 * Admission with money budgets on vs off: CPU per request (admit + settle, one organization budget and
 * one key budget) on the in-process store, median of several rounds; and, with REDIS_URL or
 * TEST_REDIS_URL set, the Redis commands one admission and one settlement send (budgets ride in the
 * same Lua script: one round trip each, on or off) and the wall time per pair. Printed, never asserted.
 *
 * Run: node --import tsx bench/budgets-admission.ts
 */
import { Redis } from 'ioredis';
import type { AdmitCheck, BudgetCharge, LimitPolicy, LimitStore } from '../src/limits/limit-store.ts';
import { MemoryLimitStore } from '../src/limits/memory/memory-limit-store.ts';
import { RedisLimitStore } from '../src/limits/redis/redis-limit-store.ts';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 50_000);
const ROUNDS = 7;
const POLICY: LimitPolicy = { requestsPerMinute: 0, tokensPerMinute: 0, tokensPerDay: 0, tokensPerMonth: 0 };
const BUDGETS: BudgetCharge[] = [
  { counter: 'org:month:2026-11', amountMicroUsd: 1e15, periodEndMs: Date.now() + 86_400_000, seedMicroUsd: 0 },
  { counter: 'key:k:week:w2026-11-23', amountMicroUsd: 1e15, periodEndMs: Date.now() + 86_400_000, seedMicroUsd: 0 },
];

function check(index: number, budgets: boolean): AdmitCheck {
  return {
    subject: { organizationId: `org-${index % 10}`, keyId: `key-${index % 100}` },
    policy: POLICY,
    estimatedTokens: 500,
    ...(budgets ? { budgets: BUDGETS, estimatedCostMicroUsd: 1_250 } : {}),
  };
}

async function cpuPerRequest(store: LimitStore, budgets: boolean, requests: number): Promise<number> {
  const start = process.cpuUsage();
  for (let index = 0; index < requests; index++) {
    const result = await store.admit(check(index, budgets));
    if (result.admitted) await store.settle(result.reservation, 400, budgets ? 1_000 : undefined);
  }
  const used = process.cpuUsage(start);
  return ((used.user + used.system) / requests) * 1; // µs
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const memory = new MemoryLimitStore();
await cpuPerRequest(memory, true, 5_000); // warm-up
const off: number[] = [];
const on: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  off.push(await cpuPerRequest(memory, false, REQUESTS));
  on.push(await cpuPerRequest(memory, true, REQUESTS));
}
console.log(
  `memory store, admit+settle CPU per request (median of ${ROUNDS} x ${REQUESTS}): budgets off ${median(off).toFixed(2)} µs, ` +
    `on ${median(on).toFixed(2)} µs, added ${(median(on) - median(off)).toFixed(2)} µs`,
);

const redisUrl = process.env.REDIS_URL ?? process.env.TEST_REDIS_URL;
if (redisUrl !== undefined && redisUrl !== '') {
  const redis = new Redis(redisUrl);
  const prefix = `bench-budgets-${process.pid}:`;
  const store = new RedisLimitStore({ redis, keyPrefix: prefix });
  let commands = 0;
  const sendCommand = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command: unknown) => {
    commands++;
    return sendCommand(command as never);
  }) as typeof redis.sendCommand;
  for (const budgets of [false, true]) {
    commands = 0;
    const started = process.hrtime.bigint();
    const pairs = 2_000;
    for (let index = 0; index < pairs; index++) {
      const result = await store.admit(check(index, budgets));
      if (result.admitted) await store.settle(result.reservation, 400, budgets ? 1_000 : undefined);
    }
    const elapsedUs = Number(process.hrtime.bigint() - started) / 1e3 / pairs;
    console.log(
      `redis store, budgets ${budgets ? 'on ' : 'off'}: ${(commands / pairs).toFixed(2)} commands (round trips) per admit+settle, ${elapsedUs.toFixed(0)} µs wall per pair`,
    );
  }
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.sendCommand = sendCommand;
  await store.close();
  redis.disconnect();
}
