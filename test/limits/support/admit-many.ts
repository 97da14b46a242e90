/**
 * A second Node process for the cross-process exactness tests. Protocol (one line each):
 *   stdout `ready`          connected to Redis;
 *   stdin  `go`             run `count` admits, `parallel` in flight at any moment;
 *   stdout `{"admitted":…}` an AdmitManyOutput without settlements;
 *   stdin  `settle`         (only when `settleTokens` is given) settle every admitted reservation twice
 *                           at once, both settles racing;
 *   stdout `{"settled":…}`  how many settles returned settled: true; then the process exits.
 * Admission and settlement are separate phases because a settlement releases tokens: settling while
 * the other process still admits would rightly let more requests in and blur the exactness count.
 * A bounded number in flight, rather than all at once, makes the two processes' scripts interleave
 * inside Redis instead of arriving as two back-to-back pipelines.
 *
 * Usage: node --import tsx test/limits/support/admit-many.ts '<json AdmitManyInput>'
 */
import { createInterface } from 'node:readline';
import type { AdmitResult, LimitPolicy, LimitSubject, Reservation } from '../../../src/limits/limit-store.ts';
import { RedisLimitStore } from '../../../src/limits/redis/redis-limit-store.ts';

export interface AdmitManyInput {
  redisUrl: string;
  keyPrefix: string;
  subject: LimitSubject;
  policy: LimitPolicy;
  /** The fixed instant both processes use, milliseconds since the epoch (same minute bucket). */
  nowMs: number;
  count: number;
  /** Admits in flight at once. */
  parallel: number;
  estimatedTokens: number;
  /** Actual tokens to settle each admitted reservation with; omitted: no settlement phase. */
  settleTokens?: number;
}

export interface AdmitManyOutput {
  admitted: number;
  rejected: number;
  /** Rejection codes seen, with their counts. */
  codes: Record<string, number>;
}

export interface SettleManyOutput {
  /** Settle calls that returned settled: true. */
  settled: number;
}

const input = JSON.parse(process.argv[2] ?? '{}') as AdmitManyInput;
const store = new RedisLimitStore({ redis: input.redisUrl, keyPrefix: input.keyPrefix, clock: { now: () => input.nowMs } });
// The first command opens the connection, so that "go" is not delayed by the connect.
await store.usage(input.subject, input.policy);
const commands = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function waitFor(command: string): Promise<void> {
  for (let next = await commands.next(); !next.done; next = await commands.next()) if (next.value.trim() === command) return;
  throw new Error(`stdin closed before "${command}"`);
}

process.stdout.write('ready\n');
await waitFor('go');
const results: AdmitResult[] = [];
let started = 0;
async function worker(): Promise<void> {
  while (started < input.count) {
    started += 1;
    results.push(await store.admit({ subject: input.subject, policy: input.policy, estimatedTokens: input.estimatedTokens }));
  }
}
await Promise.all(Array.from({ length: input.parallel }, () => worker()));
const output: AdmitManyOutput = { admitted: 0, rejected: 0, codes: {} };
const reservations: Reservation[] = [];
for (const result of results) {
  if (result.admitted) {
    output.admitted += 1;
    reservations.push(result.reservation);
  } else {
    output.rejected += 1;
    output.codes[result.rejection.code] = (output.codes[result.rejection.code] ?? 0) + 1;
  }
}
process.stdout.write(`${JSON.stringify(output)}\n`);

const settleTokens = input.settleTokens;
if (settleTokens !== undefined) {
  await waitFor('settle');
  const outcomes = await Promise.all(
    reservations.flatMap((reservation) => [store.settle(reservation, settleTokens), store.settle(reservation, settleTokens)]),
  );
  const settled: SettleManyOutput = { settled: outcomes.filter((outcome) => outcome.settled).length };
  process.stdout.write(`${JSON.stringify(settled)}\n`);
}
await store.close();
process.exit(0);
