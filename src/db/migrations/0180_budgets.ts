/**
 * Migration `0180_budgets`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * Money budgets (services/budgets/): the ledger gains `cost_micro_usd`, the request's cost in integer
 * micro-USD (the unit budgets are counted in; `cost_usd` stays for its readers), backfilled from
 * `cost_usd` (itself priced from the tokens when the row was written). `budgets` holds the
 * per-organization overrides of the plan's budget (`key_id` null) and the owners' key budgets: one
 * row per organization and per key (the unique index), amount in micro-USD, period `day`, `week`,
 * `month` or `total`.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('usage_ledger')
    .addColumn('cost_micro_usd', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
  await sql`update usage_ledger set cost_micro_usd = round(cost_usd * 1000000) where cost_usd <> 0`.execute(db);
  await db.schema
    .createTable('budgets')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('organization_id', 'text', (column) => column.notNull())
    // '' for the organization's own budget: a unique index treats NULLs as distinct.
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('period', 'text', (column) => column.notNull())
    .addColumn('amount_micro_usd', 'bigint', (column) => column.notNull())
    .addColumn('updated_by', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('budgets_scope').unique().on('budgets').columns(['organization_id', 'key_id']).execute();
}
