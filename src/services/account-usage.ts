/**
 * The caller's daily and monthly token usage as SPEC's UsageInfo, read by `_metadata.user_total_usage`
 * and by the key-status endpoint. The figures come from the limit store (the same counters that enforce
 * quotas), so what a caller reads is what is enforced.
 */
import type { AuthContext } from '../accounts/authenticator.ts';

/** SPEC UsageInfo. */
export interface UsageInfo {
  /** Tokens used in the window. */
  used: number;
  /** Tokens allowed in the window; 0 when unlimited. */
  limit: number;
  /** Tokens left; 0 when unlimited... see `limit`. */
  remaining: number;
  /** ISO date-time when the window resets. */
  reset_at: string;
}

export interface AccountUsageSnapshot {
  daily: UsageInfo;
  monthly: UsageInfo;
}

export interface AccountUsageReader {
  read(auth: AuthContext): Promise<AccountUsageSnapshot>;
}

/** Next 00:00 UTC after `now` (milliseconds since epoch). */
export function nextUtcMidnight(now: number): Date {
  const date = new Date(now);
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1));
}

/** The 1st of the next month, 00:00 UTC, after `now`. */
export function nextUtcMonthStart(now: number): Date {
  const date = new Date(now);
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1));
}

/**
 * Usage before metering counts anything: zero used, the tier's limits. Replaced by the limit store's
 * reader when limits are wired.
 */
export class TierLimitsUsageReader implements AccountUsageReader {
  constructor(
    private readonly tiers: Readonly<Record<string, { tokensPerDay: number; tokensPerMonth: number }>>,
    private readonly now: () => number = Date.now,
  ) {}

  async read(auth: AuthContext): Promise<AccountUsageSnapshot> {
    const tier = this.tiers[auth.tier];
    const now = this.now();
    const daily = tier?.tokensPerDay ?? 0;
    const monthly = tier?.tokensPerMonth ?? 0;
    return {
      daily: { used: 0, limit: daily, remaining: daily, reset_at: nextUtcMidnight(now).toISOString() },
      monthly: { used: 0, limit: monthly, remaining: monthly, reset_at: nextUtcMonthStart(now).toISOString() },
    };
  }
}
