/** What a settled request did to each budget that applied to it (money in integer micro-USD). */
export interface BudgetSpend {
  budgetId: string;
  scope: 'organization' | 'key';
  organizationId: string;
  /** The key of a key budget; null for an organization budget. */
  keyId: string | null;
  period: 'day' | 'week' | 'month' | 'total';
  /** Start of the current period, ms since the epoch (0 for `total`). */
  periodStartMs: number;
  /** End of the current period (the reset), ms since the epoch; null for `total`. */
  periodEndMs: number | null;
  amountMicroUsd: number;
  /** Spent in the period after this settlement (open reservations of other requests not included). */
  spentMicroUsd: number;
  /** Alert thresholds, percent of the amount, ascending (default [50, 80, 100]). */
  thresholdsPercent: number[];
}
export interface SpendObservation { requestId: string; organizationId: string; keyId: string; atMs: number; budgets: BudgetSpend[] }
/** Told after every settlement that touched a budget. Must return at once and never throw: delivery happens elsewhere. */
export interface SpendObserver { observe(observation: SpendObservation): void }
