/**
 * The admission rule and the figures built from counter values, shared by both backends so that they
 * cannot drift apart. The Redis Lua script repeats `failedLimits` in Lua (it must run inside Redis to
 * be atomic); the shared test suite runs the same cases against both.
 */
import type { LimitCode, LimitPolicy, LimitRejection, LimitSnapshot, LimitSubject, WindowFigures } from './limit-store.ts';
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
}

/** Bit flags of failed limits; the Lua admit script returns the same flags. */
export const FAILED_REQUESTS_PER_MINUTE = 1;
export const FAILED_TOKENS_PER_MINUTE = 2;
export const FAILED_TOKENS_PER_DAY = 4;
export const FAILED_TOKENS_PER_MONTH = 8;

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
  return failed;
}

function figures(limit: number, used: number, resetAtMs: number): WindowFigures {
  return { limit, used, remaining: limit > 0 ? Math.max(0, limit - used) : 0, resetAtMs };
}

export function buildSnapshot(policy: LimitPolicy, values: CounterValues, windows: ChargedWindows, atMs: number): LimitSnapshot {
  return {
    requestsPerMinute: figures(policy.requestsPerMinute, values.requests, windows.minute.endMs),
    tokensPerMinute: figures(policy.tokensPerMinute, values.minuteTokens, windows.minute.endMs),
    daily: figures(policy.tokensPerDay, values.dayTokens, windows.day.endMs),
    monthly: figures(policy.tokensPerMonth, values.monthTokens, windows.month.endMs),
    atMs,
  };
}

/**
 * The rejection to report. When several limits fail, the one that resets last wins (month, day, then
 * the minute ones), so a client that waits `retry_after` is not turned away again at once.
 */
export function buildRejection(failed: number, snapshot: LimitSnapshot, estimatedTokens: number): LimitRejection {
  const order: Array<[number, LimitCode, WindowFigures]> = [
    [FAILED_TOKENS_PER_MONTH, 'user_total_monthly_limit_exceeded', snapshot.monthly],
    [FAILED_TOKENS_PER_DAY, 'user_total_daily_limit_exceeded', snapshot.daily],
    [FAILED_REQUESTS_PER_MINUTE, 'rpm_exceeded', snapshot.requestsPerMinute],
    [FAILED_TOKENS_PER_MINUTE, 'tpm_exceeded', snapshot.tokensPerMinute],
  ];
  const [, code, window] = order.find(([flag]) => (failed & flag) !== 0) ?? order[3]!;
  return {
    code,
    limit: window.limit,
    remaining: window.remaining,
    resetAtMs: window.resetAtMs,
    retryAfterSeconds: secondsUntil(window.resetAtMs, snapshot.atMs),
    requestedTokens: estimatedTokens,
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

export function reservationKey(subject: LimitSubject, reservationId: string): string {
  return `${organizationTag(subject)}:reservation:${reservationId}`;
}
