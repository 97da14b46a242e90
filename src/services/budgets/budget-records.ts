/**
 * The money budgets as the budget service owns them: the row and the port it reads and writes them
 * through (only the methods it uses). The database implements the port
 * (db/repositories/budgets-repository.ts); the runtime wires that in. Nothing here imports anything.
 */
export interface BudgetRow {
  organizationId: string;
  /** null: the organization's own budget. */
  keyId: string | null;
  period: 'day' | 'week' | 'month' | 'total';
  amountMicroUsd: number;
  updatedBy: string;
  updatedAt: number;
}

/** Where budgets are kept, and the ledger sums that seed them (db/repositories/budgets-repository.ts implements it). */
export interface BudgetRecords {
  /** The organization's override and its keys' budgets. */
  forOrganization(organizationId: string): Promise<BudgetRow[]>;
  /** Every organization's override (the operator's list). */
  organizationOverrides(): Promise<BudgetRow[]>;
  /** Sets (inserts or replaces) one budget. */
  set(row: BudgetRow): Promise<void>;
  /** Removes one budget (the organization's override: back to the plan's); true when there was one. */
  remove(organizationId: string, keyId: string | null): Promise<boolean>;
  /** Micro-USD the ledger holds for the organization (or one of its keys) since `sinceMs`. */
  spentSince(organizationId: string, keyId: string | null, sinceMs: number): Promise<number>;
}
