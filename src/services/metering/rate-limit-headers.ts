/**
 * Rate-limit response headers and the 429 error, from a LimitStore admission.
 *
 * Headers follow the OpenAI API's rate-limit headers (x-ratelimit-limit-requests,
 * x-ratelimit-remaining-requests, x-ratelimit-reset-requests and the same for tokens; resets are
 * durations such as `1s`, `59.5s`, `6m0s`, `20ms`), sent on every response, and
 * `retry-after` in whole seconds on 429, which both official SDKs honour before retrying
 * (docs/wire-contracts.md "Both SDKs"). The error follows SPEC "Errors": type `rate_limit_exceeded`, one of
 * the four codes, and `details` {limit, remaining, reset (date-time), retry_after (integer)}.
 *
 * A window whose limit is 0 (unlimited) gets no headers: there is no number to announce.
 */
import { ServiceError } from '../../core/service-error.ts';
import type { AdmitResult, LimitCode, LimitRejection, LimitSnapshot, RejectedResult } from '../../limits/limit-store.ts';

/**
 * A duration in the OpenAI header style (Go's duration format): `20ms` below one second, else hours,
 * minutes and seconds with up to three decimals, e.g. `1s`, `59.5s`, `6m0s`, `1h0m0s`.
 */
export function formatResetDuration(milliseconds: number): string {
  const total = Math.max(0, Math.ceil(milliseconds));
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  // Integer arithmetic, not `Number((x / 1000).toFixed(3))`: the same text, without formatting a float
  // for every answer (two resets per answer; toFixed was 0.5% of a chat request's CPU in a profile).
  const rest = total % 60_000;
  const fraction = rest % 1000;
  const seconds = fraction === 0 ? `${(rest - fraction) / 1000}s` : `${(rest - fraction) / 1000}.${millisecondDigits(fraction)}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${minutes}m${seconds}`;
  return seconds;
}

/** 1-999 milliseconds as the decimals of a second, trailing zeros dropped: 5 -> `005`, 50 -> `05`, 500 -> `5`. */
function millisecondDigits(milliseconds: number): string {
  if (milliseconds % 100 === 0) return String(milliseconds / 100);
  if (milliseconds % 10 === 0) return String(milliseconds / 10).padStart(2, '0');
  return String(milliseconds).padStart(3, '0');
}

/** The six x-ratelimit-* headers of a snapshot (the per-minute windows of the calling key). */
export function snapshotRateLimitHeaders(snapshot: LimitSnapshot): Record<string, string> {
  const headers: Record<string, string> = {};
  const requests = snapshot.requestsPerMinute;
  if (requests.limit > 0) {
    headers['x-ratelimit-limit-requests'] = String(requests.limit);
    headers['x-ratelimit-remaining-requests'] = String(requests.remaining);
    headers['x-ratelimit-reset-requests'] = formatResetDuration(requests.resetAtMs - snapshot.atMs);
  }
  const tokens = snapshot.tokensPerMinute;
  if (tokens.limit > 0) {
    headers['x-ratelimit-limit-tokens'] = String(tokens.limit);
    headers['x-ratelimit-remaining-tokens'] = String(tokens.remaining);
    headers['x-ratelimit-reset-tokens'] = formatResetDuration(tokens.resetAtMs - snapshot.atMs);
  }
  return headers;
}

/** Headers for any admission: the x-ratelimit-* figures, plus `retry-after` (whole seconds) when refused. */
export function rateLimitHeaders(result: AdmitResult): Record<string, string> {
  const headers = snapshotRateLimitHeaders(result.figures);
  if (!result.admitted) headers['retry-after'] = String(result.rejection.retryAfterSeconds);
  return headers;
}

function describeLimit(rejection: LimitRejection): string {
  const reset = new Date(rejection.resetAtMs).toISOString();
  const wait = `Try again in ${rejection.retryAfterSeconds} second${rejection.retryAfterSeconds === 1 ? '' : 's'}.`;
  const whose = rejection.scope === 'organization' ? 'this organization (all its keys together)' : 'this API key';
  const messages: Record<LimitCode, string> = {
    rpm_exceeded: `Rate limit reached: ${rejection.limit} requests per minute for ${whose}. ${wait}`,
    tpm_exceeded:
      `Rate limit reached: ${rejection.limit} tokens per minute for ${whose}; ${rejection.remaining} remain and this request ` +
      `needs up to ${rejection.requestedTokens} (prompt plus maximum output tokens). ${wait}`,
    budget_exceeded:
      `Budget reached: ${rejection.remaining} micro-USD of ${rejection.limit} remain and this request may cost up to ` +
      `${rejection.requestedMicroUsd ?? 0}. The budget resets at ${reset}.`,
    user_total_daily_limit_exceeded:
      `Daily token limit of ${rejection.limit} reached for this organization; ${rejection.remaining} remain and this request ` +
      `needs up to ${rejection.requestedTokens}. The limit resets at ${reset}.`,
    user_total_monthly_limit_exceeded:
      `Monthly token limit of ${rejection.limit} reached for this organization; ${rejection.remaining} remain and this request ` +
      `needs up to ${rejection.requestedTokens}. The limit resets at ${reset}.`,
  };
  return messages[rejection.code];
}

/** Budgets, and the organization-wide minute limits, say whose limit it was; the SPEC's own codes keep their shape. */
function showsScope(rejection: LimitRejection): boolean {
  return (
    rejection.code === 'budget_exceeded' ||
    (rejection.scope === 'organization' && (rejection.code === 'rpm_exceeded' || rejection.code === 'tpm_exceeded'))
  );
}

/**
 * The SPEC 429 for a refused admission, carrying its headers for the HTTP edge to send. `details` has
 * the SPEC shape, plus `scope` (`key` or `organization`) when the refusing limit says whose it is;
 * `budget` (services/budgets/) replaces the message and adds `period` for a budget refusal, whose
 * figures are micro-USD (a `total` budget never resets: `reset` and `retry_after` are null).
 */
export function rateLimitError(result: RejectedResult, budget?: { message: string; period: string; resets: boolean }): ServiceError {
  const { rejection } = result;
  const resets = budget?.resets ?? true;
  const headers = rateLimitHeaders(result);
  if (!resets) delete headers['retry-after'];
  return new ServiceError({
    status: 429,
    type: 'rate_limit_exceeded',
    code: rejection.code,
    message: budget?.message ?? describeLimit(rejection),
    details: {
      limit: rejection.limit,
      remaining: rejection.remaining,
      reset: resets ? new Date(rejection.resetAtMs).toISOString() : null,
      retry_after: resets ? rejection.retryAfterSeconds : null,
      ...(showsScope(rejection) ? { scope: rejection.scope } : {}),
      ...(budget === undefined ? {} : { period: budget.period }),
    },
    headers,
  });
}
