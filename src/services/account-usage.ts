/**
 * The caller's token usage as SPEC's UsageInfo, read by `_metadata.user_total_usage` and by the
 * key-status endpoint. The figures come from the limit store (the same counters that enforce quotas),
 * so what a caller reads is what is enforced.
 */
import type { AuthContext } from './caller-identity.ts';
import type { UsageInfo } from './metering/usage-info.ts';
import type { BudgetInfo } from './budgets/budget-view.ts';

export type { UsageInfo } from './metering/usage-info.ts';

export interface AccountUsageSnapshot {
  daily: UsageInfo;
  monthly: UsageInfo;
  /** What `_metadata.user_total_usage` shows (the monthly quota, or the daily one when months are unlimited). */
  total: UsageInfo;
  /** The money budgets that apply (services/budgets/), when read with them. */
  budgets?: BudgetInfo[];
}

/** Whose usage: daily and monthly figures are the organization's, measured against the tier's limits. */
export type UsageSubject = Pick<AuthContext, 'organizationId' | 'keyId' | 'tier' | 'limits'>;

/**
 * The one reader of usage against limits: `/v1/auth/key`, `_metadata` and the dashboard's usage page
 * all call it, so they cannot disagree.
 */
export interface AccountUsageReader {
  read(subject: UsageSubject, options?: { budgets?: boolean }): Promise<AccountUsageSnapshot>;
}
