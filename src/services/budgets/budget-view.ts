/**
 * How a budget is shown to callers (`/v1/auth/key` `budgets`, `_metadata.budgets`), the dashboard and
 * the CLI: amounts in integer micro-USD, the reset as an ISO date-time (null for a `total` budget);
 * and the 429 message of a refused request, naming the budget and when it resets.
 */
import type { BudgetFigures } from '../../limits/limit-store.ts';
import type { ResolvedBudget } from './budget-service.ts';

/** Wire shape (snake_case, as the rest of `_metadata`). */
export interface BudgetInfo {
  scope: 'organization' | 'key';
  period: string;
  limit_micro_usd: number;
  /** Settled spend of the period. */
  spent_micro_usd: number;
  /** What is left for new requests: the amount less settled spend and open reservations. */
  remaining_micro_usd: number;
  reset_at: string | null;
}

export function budgetInfo(budget: ResolvedBudget, figures: BudgetFigures | undefined): BudgetInfo {
  const committed = figures?.committedMicroUsd ?? budget.charge.seedMicroUsd;
  return {
    scope: budget.scope,
    period: budget.period,
    limit_micro_usd: budget.amountMicroUsd,
    spent_micro_usd: figures?.spentMicroUsd ?? budget.charge.seedMicroUsd,
    remaining_micro_usd: Math.max(0, budget.amountMicroUsd - committed),
    reset_at: budget.window.endMs === null ? null : new Date(budget.window.endMs).toISOString(),
  };
}

/** USD with up to 6 decimals, for messages: 1500000 -> `$1.50`, 1234 -> `$0.001234`. */
export function formatUsd(microUsd: number): string {
  const whole = Math.floor(microUsd / 1_000_000);
  const fraction = String(microUsd % 1_000_000)
    .padStart(6, '0')
    .replace(/0+$/, '');
  return `$${whole}.${fraction.length < 2 ? fraction.padEnd(2, '0') : fraction}`;
}

/** The 429 message: which budget, how much is left, and when it resets. */
export function budgetRefusalMessage(budget: ResolvedBudget, remainingMicroUsd: number, requestedMicroUsd: number): string {
  const whose = budget.scope === 'organization' ? "This organization's" : "This API key's";
  const per = budget.period === 'total' ? 'in total' : `per ${budget.period}`;
  const reset = budget.window.endMs === null ? 'It does not reset.' : `It resets at ${new Date(budget.window.endMs).toISOString()}.`;
  return (
    `${whose} budget of ${formatUsd(budget.amountMicroUsd)} ${per} is reached: ${formatUsd(remainingMicroUsd)} remains and this ` +
    `request may cost up to ${formatUsd(requestedMicroUsd)} (its prompt plus its maximum output). ${reset}`
  );
}
