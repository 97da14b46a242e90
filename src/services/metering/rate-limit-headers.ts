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
  const seconds = `${Number(((total % 60_000) / 1000).toFixed(3))}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${minutes}m${seconds}`;
  return seconds;
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
  const messages: Record<LimitCode, string> = {
    rpm_exceeded: `Rate limit reached: ${rejection.limit} requests per minute for this API key. ${wait}`,
    tpm_exceeded:
      `Rate limit reached: ${rejection.limit} tokens per minute for this API key; ${rejection.remaining} remain and this request ` +
      `needs up to ${rejection.requestedTokens} (prompt plus maximum output tokens). ${wait}`,
    user_total_daily_limit_exceeded:
      `Daily token limit of ${rejection.limit} reached for this organization; ${rejection.remaining} remain and this request ` +
      `needs up to ${rejection.requestedTokens}. The limit resets at ${reset}.`,
    user_total_monthly_limit_exceeded:
      `Monthly token limit of ${rejection.limit} reached for this organization; ${rejection.remaining} remain and this request ` +
      `needs up to ${rejection.requestedTokens}. The limit resets at ${reset}.`,
  };
  return messages[rejection.code];
}

/** The SPEC 429 for a refused admission, carrying its headers for the HTTP edge to send. */
export function rateLimitError(result: RejectedResult): ServiceError {
  const { rejection } = result;
  return new ServiceError({
    status: 429,
    type: 'rate_limit_exceeded',
    code: rejection.code,
    message: describeLimit(rejection),
    details: {
      limit: rejection.limit,
      remaining: rejection.remaining,
      reset: new Date(rejection.resetAtMs).toISOString(),
      retry_after: rejection.retryAfterSeconds,
    },
    headers: rateLimitHeaders(result),
  });
}
