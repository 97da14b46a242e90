/**
 * Money budgets in config (README "Budgets and alerts"): a plan's default budget, `tiers.<plan>.budget`.
 * Amounts are USD in config and integer micro-USD everywhere they are stored or compared.
 */
import { z } from 'zod';

/** Budget periods: UTC calendar day, ISO week (from Monday 00:00 UTC), calendar month, or never reset. */
export const BUDGET_PERIODS = ['day', 'week', 'month', 'total'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** A money budget in config: USD with at most 6 decimals (it is counted in integer micro-USD). */
export const budgetSchema = z.strictObject({
  period: z.enum(BUDGET_PERIODS),
  amountUsd: z
    .number()
    .positive()
    .max(1e9)
    .refine((amount) => Math.abs(Math.round(amount * 1e6) - amount * 1e6) < 1e-6, 'amountUsd has at most 6 decimals (micro-USD)'),
});
