/**
 * Migration `0210_usage_ledger_cache`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * The response cache (services/cache/): a ledger row answered from the cache says so, with the tokens
 * and the money (integer micro-USD) the upstream call it replaced would have cost.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('usage_ledger')
    .addColumn('cache_hit', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('usage_ledger')
    .addColumn('cache_saved_tokens', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('usage_ledger')
    .addColumn('cache_saved_micro_usd', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
}
