/**
 * When to try again: the one reader of the delay another side asks for (`retry-after-ms`, then
 * `retry-after` in seconds or as an HTTP date, RFC 9110 section 10.2.3; docs/wire-contracts.md "Both
 * SDKs") and the one backoff (capped exponential, optional jitter), shared by the generation service's
 * upstream retries and the batch worker's lines, steps and claims. Each caller's floors and caps are
 * values of its policy, not code of its own (after taskforcesh/bullmq `src/classes/backoffs.ts`: one
 * calculation, many policies).
 */

/** Response headers as Node and the batch line executor hold them. */
export type RetryHeaders = Readonly<Record<string, string | readonly string[] | number | undefined>>;

/** A capped exponential backoff: `initialMs * 2^attempt`, at most `maxMs`, then jittered. */
export interface BackoffPolicy {
  /** Delay of the first retry (attempt 0), milliseconds; doubled for each attempt after it. */
  initialMs: number;
  /** Largest delay, milliseconds, before jitter. */
  maxMs: number;
  /**
   * Share of the delay drawn at random, 0 to 1 (default 0, no jitter): the delay is scaled by a factor
   * in [1 - jitter, 1), so that many clients do not retry in step. A jittered delay is rounded to whole
   * milliseconds.
   */
  jitter?: number;
}

/** A backoff, and the bounds put on a delay the other side asked for (`retry-after`). */
export interface RetryPolicy extends BackoffPolicy {
  /** Shortest delay taken from a retry-after, milliseconds (default 0). */
  minRetryAfterMs?: number;
  /** Longest delay taken from a retry-after, milliseconds (default: no bound). */
  maxRetryAfterMs?: number;
}

/**
 * Doublings past which every delay of the house is at its cap; it also keeps a runaway attempt count
 * from overflowing `2^attempt` to Infinity.
 */
const MAX_DOUBLINGS = 20;

function headerText(headers: RetryHeaders, name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return String(typeof value === 'object' ? value[0] : value);
}

/**
 * The delay the headers ask for, milliseconds (never negative; `now` dates an HTTP-date value), or
 * null when they name none: `retry-after-ms` first, then `retry-after` as seconds or an HTTP date.
 * A value that is neither is no delay.
 */
export function parseRetryAfter(headers: RetryHeaders, now: number = Date.now()): number | null {
  const milliseconds = headerText(headers, 'retry-after-ms');
  if (milliseconds !== undefined) {
    const parsed = Number(milliseconds);
    if (Number.isFinite(parsed)) return Math.max(0, parsed);
  }
  const retryAfter = headerText(headers, 'retry-after')?.trim();
  if (retryAfter === undefined || retryAfter === '') return null;
  const seconds = Number(retryAfter);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** Delay before retry number `attempt` (0 for the first retry), milliseconds. */
export function backoff(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const capped = Math.min(policy.initialMs * 2 ** Math.min(Math.max(0, attempt), MAX_DOUBLINGS), policy.maxMs);
  const jitter = policy.jitter ?? 0;
  return jitter > 0 ? Math.round(capped * (1 - jitter + jitter * random())) : capped;
}

/**
 * Delay before retry number `attempt`: the delay the other side asked for (`retryAfterMs`, from
 * `parseRetryAfter`) held within the policy's retry-after bounds, else the policy's backoff.
 */
export function retryDelay(policy: RetryPolicy, attempt: number, retryAfterMs: number | null, random: () => number = Math.random): number {
  if (retryAfterMs === null) return backoff(policy, attempt, random);
  return Math.min(Math.max(policy.minRetryAfterMs ?? 0, retryAfterMs), policy.maxRetryAfterMs ?? Number.POSITIVE_INFINITY);
}
