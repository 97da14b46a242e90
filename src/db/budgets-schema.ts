/**
 * Table types of money budgets (migration 0180), kept apart from schema.ts, which extends them. Same
 * conventions as schema.ts: integer milliseconds since the epoch, money in integer micro-USD.
 */

/**
 * One budget row: an organization's override of its plan's budget (`key_id` = '') or a key budget set
 * by an owner. Unique on (organization, key).
 */
export interface BudgetsTable {
  /** `bud_...`; the budget id alerts and counters use is derived from the scope, not from this. */
  id: string;
  organization_id: string;
  /** The key's id, or '' for the organization's own budget. */
  key_id: string;
  /** `day`, `week`, `month` or `total`. */
  period: string;
  amount_micro_usd: number;
  /** Who set it: `operator:<id>`, `owner:<id>` or `cli`. */
  updated_by: string;
  updated_at: number;
}

export interface BudgetsSchema {
  budgets: BudgetsTable;
}
