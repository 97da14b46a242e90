/**
 * The admission rule and the figures built from counter values, shared by both backends so that they
 * cannot drift apart. The Redis Lua script repeats `failedLimits` in Lua (it must run inside Redis to
 * be atomic); the shared test suite runs the same cases against both.
 */
import type {
  BudgetCharge,
  LimitCode,
  LimitPolicy,
  LimitRejection,
  LimitScope,
  LimitSnapshot,
  LimitSubject,
  WindowFigures,
} from './limit-store.ts';
import { secondsUntil, type ChargedWindows } from './limit-windows.ts';

/** Counter values of one subject in the current windows. */
export interface CounterValues {
  /** Requests in the minute, per key. */
  requests: number;
  /** Tokens in the minute, per key. */
  minuteTokens: number;
  /** Tokens in the day, per organization. */
  dayTokens: number;
  /** Tokens in the month, per organization. */
  monthTokens: number;
  /** Requests and tokens in the minute over all the organization's keys (0 when not counted). */
  organizationRequests?: number;
  organizationMinuteTokens?: number;
  /** Committed (settled + reserved) and settled micro-USD of each budget, in the check's order. */
  budgetsCommitted?: readonly number[];
  budgetsSpent?: readonly number[];
}

/** Bit flags of failed limits; the Lua admit script returns the same flags. */
export const FAILED_REQUESTS_PER_MINUTE = 1;
export const FAILED_TOKENS_PER_MINUTE = 2;
export const FAILED_TOKENS_PER_DAY = 4;
export const FAILED_TOKENS_PER_MONTH = 8;
export const FAILED_ORGANIZATION_REQUESTS_PER_MINUTE = 16;
export const FAILED_ORGANIZATION_TOKENS_PER_MINUTE = 32;
export const FAILED_BUDGET = 64;

/** Whether the check limits the organization's minute (the counters are only kept then). */
export function countsOrganizationMinute(policy: LimitPolicy): boolean {
  return (policy.organizationRequestsPerMinute ?? 0) > 0 || (policy.organizationTokensPerMinute ?? 0) > 0;
}

/** Index of the first budget `estimatedCostMicroUsd` more would exceed, or -1. */
export function failedBudget(
  budgets: readonly BudgetCharge[] | undefined,
  committed: readonly number[] | undefined,
  estimatedCostMicroUsd: number,
): number {
  if (budgets === undefined) return -1;
  for (let index = 0; index < budgets.length; index++)
    if ((committed?.[index] ?? 0) + estimatedCostMicroUsd > budgets[index]!.amountMicroUsd) return index;
  return -1;
}

function exceeds(limit: number, used: number, adding: number): boolean {
  return limit > 0 && used + adding > limit;
}

/** Which limits one more request reserving `estimatedTokens` would break, as bit flags (0 = admit). */
export function failedLimits(policy: LimitPolicy, values: CounterValues, estimatedTokens: number): number {
  let failed = 0;
  if (exceeds(policy.requestsPerMinute, values.requests, 1)) failed |= FAILED_REQUESTS_PER_MINUTE;
  if (exceeds(policy.tokensPerMinute, values.minuteTokens, estimatedTokens)) failed |= FAILED_TOKENS_PER_MINUTE;
  if (exceeds(policy.tokensPerDay, values.dayTokens, estimatedTokens)) failed |= FAILED_TOKENS_PER_DAY;
  if (exceeds(policy.tokensPerMonth, values.monthTokens, estimatedTokens)) failed |= FAILED_TOKENS_PER_MONTH;
  if (exceeds(policy.organizationRequestsPerMinute ?? 0, values.organizationRequests ?? 0, 1))
    failed |= FAILED_ORGANIZATION_REQUESTS_PER_MINUTE;
  if (exceeds(policy.organizationTokensPerMinute ?? 0, values.organizationMinuteTokens ?? 0, estimatedTokens))
    failed |= FAILED_ORGANIZATION_TOKENS_PER_MINUTE;
  return failed;
}

function figures(limit: number, used: number, resetAtMs: number): WindowFigures {
  return { limit, used, remaining: limit > 0 ? Math.max(0, limit - used) : 0, resetAtMs };
}

export function buildSnapshot(policy: LimitPolicy, values: CounterValues, windows: ChargedWindows, atMs: number): LimitSnapshot {
  const snapshot: LimitSnapshot = {
    requestsPerMinute: figures(policy.requestsPerMinute, values.requests, windows.minute.endMs),
    tokensPerMinute: figures(policy.tokensPerMinute, values.minuteTokens, windows.minute.endMs),
    daily: figures(policy.tokensPerDay, values.dayTokens, windows.day.endMs),
    monthly: figures(policy.tokensPerMonth, values.monthTokens, windows.month.endMs),
    atMs,
  };
  if (countsOrganizationMinute(policy)) {
    snapshot.organizationRequestsPerMinute = figures(
      policy.organizationRequestsPerMinute ?? 0,
      values.organizationRequests ?? 0,
      windows.minute.endMs,
    );
    snapshot.organizationTokensPerMinute = figures(
      policy.organizationTokensPerMinute ?? 0,
      values.organizationMinuteTokens ?? 0,
      windows.minute.endMs,
    );
  }
  if (values.budgetsCommitted !== undefined && values.budgetsCommitted.length > 0)
    snapshot.budgets = values.budgetsCommitted.map((committed, index) => ({
      committedMicroUsd: committed,
      spentMicroUsd: values.budgetsSpent?.[index] ?? 0,
    }));
  return snapshot;
}

/**
 * The rejection to report. When several limits fail, the one that resets last wins (month, day, then
 * the minute ones), so a client that waits `retry_after` is not turned away again at once.
 */
export function buildRejection(
  failed: number,
  snapshot: LimitSnapshot,
  estimatedTokens: number,
  budget?: { index: number; charge: BudgetCharge; estimatedCostMicroUsd: number },
): LimitRejection {
  if ((failed & FAILED_BUDGET) !== 0 && budget !== undefined) {
    // A budget refuses for its whole period: it resets last of all (a total budget never does).
    const committed = snapshot.budgets?.[budget.index]?.committedMicroUsd ?? 0;
    const resetAtMs = budget.charge.periodEndMs ?? snapshot.atMs;
    return {
      code: 'budget_exceeded',
      limit: budget.charge.amountMicroUsd,
      remaining: Math.max(0, budget.charge.amountMicroUsd - committed),
      resetAtMs,
      retryAfterSeconds: secondsUntil(resetAtMs, snapshot.atMs),
      requestedTokens: estimatedTokens,
      scope: 'organization',
      budgetIndex: budget.index,
      requestedMicroUsd: budget.estimatedCostMicroUsd,
    };
  }
  const unlimited = figures(0, 0, snapshot.requestsPerMinute.resetAtMs);
  // The scope is named where the code alone does not say it (the SPEC's codes keep their shape).
  const order: Array<[number, LimitCode, WindowFigures, LimitScope | undefined]> = [
    [FAILED_TOKENS_PER_MONTH, 'user_total_monthly_limit_exceeded', snapshot.monthly, undefined],
    [FAILED_TOKENS_PER_DAY, 'user_total_daily_limit_exceeded', snapshot.daily, undefined],
    [FAILED_ORGANIZATION_REQUESTS_PER_MINUTE, 'rpm_exceeded', snapshot.organizationRequestsPerMinute ?? unlimited, 'organization'],
    [FAILED_ORGANIZATION_TOKENS_PER_MINUTE, 'tpm_exceeded', snapshot.organizationTokensPerMinute ?? unlimited, 'organization'],
    [FAILED_REQUESTS_PER_MINUTE, 'rpm_exceeded', snapshot.requestsPerMinute, undefined],
    [FAILED_TOKENS_PER_MINUTE, 'tpm_exceeded', snapshot.tokensPerMinute, undefined],
  ];
  const [, code, window, scope] = order.find(([flag]) => (failed & flag) !== 0) ?? order[5]!;
  return {
    code,
    limit: window.limit,
    remaining: window.remaining,
    resetAtMs: window.resetAtMs,
    retryAfterSeconds: secondsUntil(window.resetAtMs, snapshot.atMs),
    requestedTokens: estimatedTokens,
    ...(scope === undefined ? {} : { scope }),
  };
}

/** Storage key names of a subject's counters (shared so that both backends name buckets alike). */
export interface CounterKeys {
  requests: string;
  minuteTokens: string;
  dayTokens: string;
  monthTokens: string;
}

/**
 * Every key of one organization shares the Redis Cluster hash tag `{organization}` so that a script
 * touching the key's and the organization's counters stays in one slot. Ids are URI-encoded so that a
 * brace or colon inside an id cannot break the tag or collide with another key.
 */
export function organizationTag(subject: LimitSubject): string {
  return `{${encodeURIComponent(subject.organizationId)}}`;
}

export function counterKeys(subject: LimitSubject, windows: ChargedWindows): CounterKeys {
  const organization = organizationTag(subject);
  const key = encodeURIComponent(subject.keyId);
  return {
    requests: `${organization}:rpm:${key}:${windows.minute.label}`,
    minuteTokens: `${organization}:tpm:${key}:${windows.minute.label}`,
    dayTokens: `${organization}:day:${windows.day.label}`,
    monthTokens: `${organization}:month:${windows.month.label}`,
  };
}

/** The organization-wide minute counters (all keys of the organization). */
export function organizationMinuteKeys(subject: LimitSubject, windows: ChargedWindows): { requests: string; minuteTokens: string } {
  const organization = organizationTag(subject);
  return { requests: `${organization}:orgrpm:${windows.minute.label}`, minuteTokens: `${organization}:orgtpm:${windows.minute.label}` };
}

/** A budget's counters in its period: committed (settled + reserved) and settled spend. */
export function budgetKeys(subject: LimitSubject, charge: BudgetCharge): { committed: string; spent: string } {
  const base = `${organizationTag(subject)}:budget:${encodeURIComponent(charge.counter)}`;
  return { committed: base, spent: `${base}:spent` };
}

export function reservationKey(subject: LimitSubject, reservationId: string): string {
  return `${organizationTag(subject)}:reservation:${reservationId}`;
}
