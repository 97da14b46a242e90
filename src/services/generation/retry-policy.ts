/**
 * When to try an upstream again and how long to wait: jittered exponential backoff, or the delay the
 * upstream asked for (`retry-after`), capped so that one request cannot be held for minutes. The
 * calculation is core/retry.ts's; this file holds the generation service's values and its sleep.
 */
import type { Cancellation } from '../../core/cancellation.ts';
import { retryDelay as delayBeforeRetry } from '../../core/retry.ts';

export interface RetryPolicy {
  /** Delay before the first retry, before jitter, milliseconds. */
  initialDelayMs: number;
  /** Largest backoff delay, before jitter, milliseconds. */
  maxDelayMs: number;
  /** Largest delay taken from an upstream's retry-after, milliseconds. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  initialDelayMs: 250,
  maxDelayMs: 4000,
  maxRetryAfterMs: 10_000,
};

/**
 * Delay before retry number `retryIndex` (0 for the first retry), milliseconds. With a retry-after
 * the upstream's delay wins (capped); otherwise `initial * 2^retryIndex` (capped), scaled by a random
 * factor in [0.5, 1) so that many clients do not retry in step.
 */
export function retryDelay(policy: RetryPolicy, retryIndex: number, retryAfterMs: number | null, random: () => number): number {
  const { initialDelayMs, maxDelayMs, maxRetryAfterMs } = policy;
  return delayBeforeRetry({ initialMs: initialDelayMs, maxMs: maxDelayMs, jitter: 0.5, maxRetryAfterMs }, retryIndex, retryAfterMs, random);
}

/** Resolves after `milliseconds`, or rejects with the signal's reason when it aborts first. */
export function sleep(milliseconds: number, signal: Cancellation): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
