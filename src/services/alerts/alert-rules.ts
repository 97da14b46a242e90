/**
 * Which alert rules a budget's spend has met (README "Budgets and alerts"), computed from one
 * observation alone, so any instance reaches the same answer:
 *
 * - `threshold:<p>` for each threshold `p` (percent of the amount) the spend has reached:
 *   `spent * 100 >= amount * p`. Several reached at once are each a rule of their own.
 * - `projected` when, at the current rate, the period would end over the amount: the budget has a
 *   period with an end (not `total`), at least `minElapsedPercent` of it has passed (a rate from the
 *   first hours of a month says little), the amount is not reached yet (the 100% threshold speaks
 *   then), and `spent / elapsed * periodLength > amount`, compared exactly in integers.
 *
 * A rule met is not yet a rule fired: the unique row per budget, period start and rule
 * (db/repositories/budget-alerts-repository.ts) makes each fire once per period.
 */
import type { BudgetSpend } from '../budgets/spend-observer.ts';

export type AlertRule =
  | { kind: 'threshold'; /** Percent of the amount. */ percent: number }
  | { kind: 'projected'; /** Spend at the period's end at the current rate, micro-USD. */ projectedMicroUsd: number };

/** The rule's name in the alert row: `threshold:80`, `projected`. */
export function ruleName(rule: AlertRule): string {
  return rule.kind === 'threshold' ? `threshold:${rule.percent}` : 'projected';
}

/** The rules `budget` meets at `atMs` (ms since the epoch); none for a budget of no amount. */
export function rulesMet(budget: BudgetSpend, atMs: number, minElapsedPercent: number): AlertRule[] {
  const amount = budget.amountMicroUsd;
  const spent = budget.spentMicroUsd;
  if (!(amount > 0) || !Number.isFinite(spent)) return [];
  const rules: AlertRule[] = [];
  let previous = Number.NEGATIVE_INFINITY;
  for (const percent of budget.thresholdsPercent) {
    // Ascending by contract: a repeated or out-of-order value would fire a rule twice under two names.
    if (!(percent > previous) || !Number.isFinite(percent) || percent <= 0) continue;
    previous = percent;
    if (spent * 100 >= amount * percent) rules.push({ kind: 'threshold', percent });
  }
  const projected = projectedSpend(budget, atMs, minElapsedPercent);
  if (projected !== undefined) rules.push({ kind: 'projected', projectedMicroUsd: projected });
  return rules;
}

/** Spend at the period's end at the current rate when that is over the amount (the projected rule), else undefined. */
function projectedSpend(budget: BudgetSpend, atMs: number, minElapsedPercent: number): number | undefined {
  const { periodStartMs, periodEndMs, amountMicroUsd: amount, spentMicroUsd: spent } = budget;
  if (periodEndMs === null || budget.period === 'total' || spent >= amount || spent <= 0) return undefined;
  const length = periodEndMs - periodStartMs;
  const elapsed = Math.min(atMs, periodEndMs) - periodStartMs;
  if (!(length > 0) || elapsed <= 0 || elapsed * 100 < length * minElapsedPercent) return undefined;
  // Integers: spent x length passes 2^53 for a month of a large budget.
  const spentOverPeriod = BigInt(Math.trunc(spent)) * BigInt(Math.trunc(length));
  const elapsedMs = BigInt(Math.trunc(elapsed));
  if (spentOverPeriod <= BigInt(Math.trunc(amount)) * elapsedMs) return undefined;
  return Number(spentOverPeriod / elapsedMs);
}
