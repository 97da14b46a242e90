/**
 * Adds counts to the shared (Redis) counters of the current windows: what an instance admitted on its
 * own while Redis could not be reached, written back when it returns (`FailoverLimitStore`, issue 39),
 * so that the rest of the window is decided on everything admitted, not only on what Redis saw; and the
 * money those requests cost, added to the budgets' counters.
 * Counters get the same expiry as the admit script gives them (one second after their window ends).
 */
import type { Redis } from 'ioredis';
import type { Clock } from '../clock.ts';
import { budgetKeys, counterKeys, type CounterValues } from '../limit-decision.ts';
import type { BudgetCharge, LimitSubject } from '../limit-store.ts';
import { windowsAt } from '../limit-windows.ts';
import { evalScript, luaScript } from './lua-script.ts';
import { commandBoundOf } from './redis-connection.ts';

/** What the failover store needs to write local counts back. */
export interface LimitCountWriter {
  /** Adds `counts` (each for its window at `atMs`) to the shared counters; windows already over are skipped. */
  addCounts(subject: LimitSubject, counts: CounterValues, atMs: number): Promise<void>;
  /** Adds money settled locally to a budget's shared committed and settled counters, when they exist. */
  addSpend(subject: LimitSubject, charge: BudgetCharge, costMicroUsd: number): Promise<void>;
}

/**
 * KEYS: a budget's committed and settled counters; ARGV: the cost. Counters that are gone (a fresh
 * period, a Redis that lost them) are left alone: the next admission seeds them from the ledger, which
 * holds this spend.
 */
const ADD_SPEND_SCRIPT = luaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('INCRBY', KEYS[2], ARGV[1])
return 1
`);

/** Milliseconds a counter outlives its window (as in redis-limit-store.ts). */
const EXPIRY_SLACK_MS = 1_000;

export class RedisCountWriter implements LimitCountWriter {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly clock: Clock,
  ) {}

  async addCounts(subject: LimitSubject, counts: CounterValues, atMs: number): Promise<void> {
    const nowMs = this.clock.now();
    const now = windowsAt(nowMs);
    const then = windowsAt(atMs);
    const keys = counterKeys(subject, now);
    const additions: Array<[string, number, number]> = [];
    // Only windows still current: a minute that has ended is history, whatever was admitted in it.
    if (then.minute.startMs === now.minute.startMs) {
      additions.push([keys.requests, counts.requests, now.minute.endMs], [keys.minuteTokens, counts.minuteTokens, now.minute.endMs]);
    }
    if (then.day.startMs === now.day.startMs) additions.push([keys.dayTokens, counts.dayTokens, now.day.endMs]);
    if (then.month.startMs === now.month.startMs) additions.push([keys.monthTokens, counts.monthTokens, now.month.endMs]);
    const transaction = this.redis.multi();
    let commands = 0;
    for (const [key, amount, endMs] of additions) {
      if (amount === 0) continue;
      transaction.incrby(this.keyPrefix + key, amount).pexpire(this.keyPrefix + key, endMs - nowMs + EXPIRY_SLACK_MS);
      commands++;
    }
    if (commands === 0) {
      transaction.discard();
      return;
    }
    // Bounded like every other command on this connection (a Redis that freezes again fails it).
    const replies = await commandBoundOf(this.redis).run(() => transaction.exec());
    const failed = replies?.find(([error]) => error !== null)?.[0];
    if (failed !== undefined && failed !== null) throw failed;
  }

  async addSpend(subject: LimitSubject, charge: BudgetCharge, costMicroUsd: number): Promise<void> {
    if (costMicroUsd <= 0) return;
    const names = budgetKeys(subject, charge);
    await commandBoundOf(this.redis).run(() =>
      evalScript(this.redis, ADD_SPEND_SCRIPT, [this.keyPrefix + names.committed, this.keyPrefix + names.spent], [costMicroUsd]),
    );
  }
}
