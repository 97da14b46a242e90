/**
 * Migration `0050_usage_ledger_deployment`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * Which deployment of a routed model answered (services/generation/routing).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('usage_ledger').addColumn('deployment', 'text').execute();
}
