/**
 * Redis limit store: several Switchyard instances share one budget. One round trip per operation:
 * `admit` and `settle` are single Lua scripts (EVALSHA, falling back to EVAL when Redis answers
 * NOSCRIPT, e.g. after a restart or failover flushed its script cache), `usage` is one MGET.
 *
 * Time: the window a request falls in is chosen by the injected clock of the calling instance and is
 * part of the key name, so instances agree as long as their clocks agree (run NTP; a skew of s seconds
 * moves that instance's minute boundary by s seconds, nothing more). Counter keys expire (PEXPIRE, in
 * Redis' own time) shortly after their window ends; reservation records after `reservationTtlMs`.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { serverError } from '../../core/service-error.ts';
import { systemClock, type Clock } from '../clock.ts';
import {
  budgetKeys,
  buildRejection,
  buildSnapshot,
  counterKeys,
  countsOrganizationMinute,
  organizationMinuteKeys,
  reservationKey,
  type CounterValues,
} from '../limit-decision.ts';
import {
  assertTokenCount,
  DEFAULT_RESERVATION_TTL_MS,
  type AdmitCheck,
  type AdmitResult,
  type BudgetCharge,
  type LimitPolicy,
  type LimitSnapshot,
  type LimitStore,
  type LimitStoreOptions,
  type LimitSubject,
  type Reservation,
  type SettleResult,
} from '../limit-store.ts';
import { windowsAt, type ChargedWindows } from '../limit-windows.ts';
import { ADMIT_SCRIPT, SETTLE_SCRIPT } from './limit-scripts.ts';
import { evalScript, luaScript, type LuaScript } from './lua-script.ts';
import { commandBoundOf, openRedisConnection, type RedisCommandBound, type RedisConnectionOptions } from './redis-connection.ts';

export interface RedisLimitStoreOptions extends LimitStoreOptions {
  /** A `redis://` URL (the store then owns and closes the connection) or an ioredis client to share. */
  redis: string | Redis;
  /** Prefix of every key this store writes (default `switchyard:limits:`), so one Redis can serve several deployments. */
  keyPrefix?: string;
  /** Bounds and error hook of a connection the store opens from a URL; commands fail with 500 service_unavailable. */
  connection?: RedisConnectionOptions;
}

/** Extra life of a counter after its window ends, ms: lets a settle that races the boundary still find it. */
const EXPIRY_SLACK_MS = 1_000;
/** A budget's counters outlive their period by a day: late settlements still find them, then they go. */
const BUDGET_EXPIRY_SLACK_MS = 86_400_000;

const admitScript = luaScript(ADMIT_SCRIPT);
const settleScript = luaScript(SETTLE_SCRIPT);

function integerReply(reply: unknown, length: number): number[] {
  if (!Array.isArray(reply) || reply.length !== length || !reply.every((item) => typeof item === 'number')) {
    throw new Error(`Unexpected reply from a rate-limit script: ${JSON.stringify(reply)}`);
  }
  return reply as number[];
}

export class RedisLimitStore implements LimitStore {
  private readonly redis: Redis;
  /** Every command waits at most while Redis stays silent for the connection's bound (redis-connection.ts). */
  private readonly bound: RedisCommandBound;
  private readonly ownsConnection: boolean;
  private readonly keyPrefix: string;
  private readonly clock: Clock;
  private readonly reservationTtlMs: number;

  constructor(options: RedisLimitStoreOptions) {
    if (typeof options.redis === 'string') {
      // Every command is bounded: past that, a request is answered 500 service_unavailable instead of hanging.
      this.redis = openRedisConnection(options.redis, options.connection);
      this.ownsConnection = true;
    } else {
      this.redis = options.redis;
      this.ownsConnection = false;
    }
    this.bound = commandBoundOf(this.redis);
    this.keyPrefix = options.keyPrefix ?? 'switchyard:limits:';
    this.clock = options.clock ?? systemClock;
    this.reservationTtlMs = options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
  }

  async admit(check: AdmitCheck): Promise<AdmitResult> {
    assertTokenCount(check.estimatedTokens, 'estimatedTokens');
    const cost = check.estimatedCostMicroUsd ?? 0;
    assertTokenCount(cost, 'estimatedCostMicroUsd');
    const nowMs = this.clock.now();
    const windows = windowsAt(nowMs);
    const keys = this.keysOf(check.subject, windows);
    const reservationId = randomUUID();
    const policy = check.policy;
    const budgets = check.budgets ?? [];
    const budgetKeyList: string[] = [];
    const budgetArgs: number[] = [];
    for (const budget of budgets) {
      const names = budgetKeys(check.subject, budget);
      budgetKeyList.push(this.keyPrefix + names.committed, this.keyPrefix + names.spent);
      budgetArgs.push(
        budget.amountMicroUsd,
        budget.periodEndMs === null ? 0 : budget.periodEndMs - nowMs + BUDGET_EXPIRY_SLACK_MS,
        budget.seedMicroUsd,
      );
    }
    const reply = integerReply(
      await this.runScript(
        admitScript,
        [
          keys.requests,
          keys.minuteTokens,
          keys.dayTokens,
          keys.monthTokens,
          this.keyPrefix + reservationKey(check.subject, reservationId),
          keys.organizationRequests,
          keys.organizationMinuteTokens,
          ...budgetKeyList,
        ],
        [
          policy.requestsPerMinute,
          policy.tokensPerMinute,
          policy.tokensPerDay,
          policy.tokensPerMonth,
          check.estimatedTokens,
          windows.minute.endMs - nowMs + EXPIRY_SLACK_MS,
          windows.day.endMs - nowMs + EXPIRY_SLACK_MS,
          windows.month.endMs - nowMs + EXPIRY_SLACK_MS,
          this.reservationTtlMs,
          policy.organizationRequestsPerMinute ?? 0,
          policy.organizationTokensPerMinute ?? 0,
          countsOrganizationMinute(policy) ? 1 : 0,
          cost,
          budgets.length,
          ...budgetArgs,
        ],
      ),
      9 + budgets.length * 2,
    );
    const [admitted, failed, failedBudget] = reply as [number, number, number];
    const snapshot = buildSnapshot(policy, countersOf(reply, 3), windows, nowMs);
    if (admitted !== 1) {
      const budget = failedBudget >= 0 ? { index: failedBudget, charge: budgets[failedBudget]!, estimatedCostMicroUsd: cost } : undefined;
      return { admitted: false, rejection: buildRejection(failed, snapshot, check.estimatedTokens, budget), figures: snapshot };
    }
    const reservation: Reservation = {
      id: reservationId,
      subject: { ...check.subject },
      policy: { ...policy },
      estimatedTokens: check.estimatedTokens,
      admittedAtMs: nowMs,
      ...(budgets.length === 0 ? {} : { budgets, estimatedCostMicroUsd: cost }),
    };
    return { admitted: true, reservation, figures: snapshot };
  }

  async settle(reservation: Reservation, actualTokens: number, actualCostMicroUsd = 0): Promise<SettleResult> {
    assertTokenCount(actualTokens, 'actualTokens');
    assertTokenCount(actualCostMicroUsd, 'actualCostMicroUsd');
    const nowMs = this.clock.now();
    const charged = this.keysOf(reservation.subject, windowsAt(reservation.admittedAtMs));
    const currentWindows = windowsAt(nowMs);
    const current = this.keysOf(reservation.subject, currentWindows);
    const budgets = reservation.budgets ?? [];
    const reply = integerReply(
      await this.runScript(
        settleScript,
        [
          charged.minuteTokens,
          charged.dayTokens,
          charged.monthTokens,
          this.keyPrefix + reservationKey(reservation.subject, reservation.id),
          current.requests,
          current.minuteTokens,
          current.dayTokens,
          current.monthTokens,
          charged.organizationMinuteTokens,
          current.organizationRequests,
          current.organizationMinuteTokens,
          ...this.budgetKeyList(reservation.subject, budgets),
        ],
        [actualTokens, actualCostMicroUsd, budgets.length],
      ),
      7 + budgets.length * 2,
    );
    return {
      settled: reply[0] === 1,
      figures: buildSnapshot(reservation.policy, countersOf(reply, 1), currentWindows, nowMs),
    };
  }

  async usage(subject: LimitSubject, policy: LimitPolicy, budgets: readonly BudgetCharge[] = []): Promise<LimitSnapshot> {
    const nowMs = this.clock.now();
    const windows = windowsAt(nowMs);
    const keys = this.keysOf(subject, windows);
    let values: Array<string | null>;
    try {
      values = await this.bound.run(() =>
        this.redis.mget(
          keys.requests,
          keys.minuteTokens,
          keys.dayTokens,
          keys.monthTokens,
          keys.organizationRequests,
          keys.organizationMinuteTokens,
          ...this.budgetKeyList(subject, budgets),
        ),
      );
    } catch (error) {
      throw unavailable(error);
    }
    const numbers = values.map((value) => (value === null ? Number.NaN : Number(value)));
    // A budget Redis holds nothing for (a fresh period) reads as the ledger's seed.
    for (let index = 0; index < budgets.length; index++) {
      const seed = budgets[index]!.seedMicroUsd;
      if (Number.isNaN(numbers[6 + index * 2]!)) numbers[6 + index * 2] = seed;
      if (Number.isNaN(numbers[7 + index * 2]!)) numbers[7 + index * 2] = seed;
    }
    return buildSnapshot(
      policy,
      countersOf(
        numbers.map((value) => (Number.isNaN(value) ? 0 : value)),
        0,
      ),
      windows,
      nowMs,
    );
  }

  async close(): Promise<void> {
    if (!this.ownsConnection) return;
    // QUIT needs a live connection; one that never came up (or is retrying) is simply dropped.
    if (this.redis.status === 'ready') await this.redis.quit();
    else this.redis.disconnect();
  }

  private keysOf(subject: LimitSubject, windows: ChargedWindows) {
    const keys = counterKeys(subject, windows);
    const organization = organizationMinuteKeys(subject, windows);
    return {
      requests: this.keyPrefix + keys.requests,
      minuteTokens: this.keyPrefix + keys.minuteTokens,
      dayTokens: this.keyPrefix + keys.dayTokens,
      monthTokens: this.keyPrefix + keys.monthTokens,
      organizationRequests: this.keyPrefix + organization.requests,
      organizationMinuteTokens: this.keyPrefix + organization.minuteTokens,
    };
  }

  private budgetKeyList(subject: LimitSubject, budgets: readonly BudgetCharge[]): string[] {
    const list: string[] = [];
    for (const budget of budgets) {
      const names = budgetKeys(subject, budget);
      list.push(this.keyPrefix + names.committed, this.keyPrefix + names.spent);
    }
    return list;
  }

  private async runScript(script: LuaScript, keys: string[], args: number[]): Promise<unknown> {
    try {
      return await this.bound.run(() => evalScript(this.redis, script, keys, args));
    } catch (error) {
      throw unavailable(error);
    }
  }
}

/** Counter values from a script reply (or MGET) starting at `offset`: the six limit counters, then committed and settled per budget. */
function countersOf(reply: readonly number[], offset: number): CounterValues {
  const budgetsCommitted: number[] = [];
  const budgetsSpent: number[] = [];
  for (let index = offset + 6; index + 1 < reply.length; index += 2) {
    budgetsCommitted.push(reply[index]!);
    budgetsSpent.push(reply[index + 1]!);
  }
  return {
    requests: reply[offset]!,
    minuteTokens: reply[offset + 1]!,
    dayTokens: reply[offset + 2]!,
    monthTokens: reply[offset + 3]!,
    organizationRequests: reply[offset + 4]!,
    organizationMinuteTokens: reply[offset + 5]!,
    budgetsCommitted,
    budgetsSpent,
  };
}

function unavailable(cause: unknown) {
  return serverError('service_unavailable', 'The rate-limit store is unavailable; try again shortly.', cause);
}
