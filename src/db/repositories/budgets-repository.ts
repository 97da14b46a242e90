/**
 * Money budgets (migration 0180): organization overrides of the plan's budget (`key_id` '') and key
 * budgets, one row per organization and per key; and the ledger sums that seed a budget's count in a
 * store that has none for the period (a restart, a flushed Redis).
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { BudgetRecords, BudgetRow } from '../../services/budgets/budget-records.ts';
import type { DatabaseSchema } from '../schema.ts';

// The row and the port are the budget service's (services/budgets/budget-records.ts).
export type { BudgetRow } from '../../services/budgets/budget-records.ts';

function toRow(row: {
  organization_id: string;
  key_id: string;
  period: string;
  amount_micro_usd: number;
  updated_by: string;
  updated_at: number;
}): BudgetRow {
  return {
    organizationId: row.organization_id,
    keyId: row.key_id === '' ? null : row.key_id,
    period: row.period as BudgetRow['period'],
    amountMicroUsd: Number(row.amount_micro_usd),
    updatedBy: row.updated_by,
    updatedAt: Number(row.updated_at),
  };
}

export class BudgetsRepository implements BudgetRecords {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** The organization's override and its keys' budgets. */
  async forOrganization(organizationId: string): Promise<BudgetRow[]> {
    const rows = await this.db.selectFrom('budgets').selectAll().where('organization_id', '=', organizationId).execute();
    return rows.map(toRow);
  }

  /** Every organization's override (the operator's list). */
  async organizationOverrides(): Promise<BudgetRow[]> {
    const rows = await this.db.selectFrom('budgets').selectAll().where('key_id', '=', '').orderBy('organization_id').execute();
    return rows.map(toRow);
  }

  /** Sets (inserts or replaces) one budget. */
  async set(row: BudgetRow): Promise<void> {
    await this.db
      .insertInto('budgets')
      .values({
        id: `bud_${randomBytes(12).toString('hex')}`,
        organization_id: row.organizationId,
        key_id: row.keyId ?? '',
        period: row.period,
        amount_micro_usd: row.amountMicroUsd,
        updated_by: row.updatedBy,
        updated_at: row.updatedAt,
      })
      .onConflict((conflict) =>
        conflict.columns(['organization_id', 'key_id']).doUpdateSet({
          period: row.period,
          amount_micro_usd: row.amountMicroUsd,
          updated_by: row.updatedBy,
          updated_at: row.updatedAt,
        }),
      )
      .execute();
  }

  /** Removes one budget (the organization's override: back to the plan's); true when there was one. */
  async remove(organizationId: string, keyId: string | null): Promise<boolean> {
    const result = await this.db
      .deleteFrom('budgets')
      .where('organization_id', '=', organizationId)
      .where('key_id', '=', keyId ?? '')
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Micro-USD the ledger holds for the organization (or one of its keys) since `sinceMs`. */
  async spentSince(organizationId: string, keyId: string | null, sinceMs: number): Promise<number> {
    let query = this.db
      .selectFrom('usage_ledger')
      .select((eb) => eb.fn.sum<number>('cost_micro_usd').as('spent'))
      .where('organization_id', '=', organizationId)
      .where('created_at', '>=', sinceMs);
    if (keyId !== null) query = query.where('key_id', '=', keyId);
    const row = await query.executeTakeFirst();
    return Number(row?.spent ?? 0);
  }

  /** Micro-USD per key of the organization since `sinceMs` (one query for a page of keys). */
  async spentByKeySince(organizationId: string, sinceMs: number): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('usage_ledger')
      .select((eb) => ['key_id', eb.fn.sum<number>('cost_micro_usd').as('spent')])
      .where('organization_id', '=', organizationId)
      .where('created_at', '>=', sinceMs)
      .groupBy('key_id')
      .execute();
    return new Map(rows.map((row) => [row.key_id, Number(row.spent)]));
  }
}
