/**
 * Migration `0060_batch_line_leases`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * Lines are claimed in chunks by any instance (a lease per line row, taken for a chunk at once),
 * and a batch-level step that fails for a reason that may heal backs off across instances
 * (`step_attempts`, `retry_at`) instead of being re-claimed in a loop.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('batch_requests').addColumn('lease_owner', 'text').execute();
  await db.schema.alterTable('batch_requests').addColumn('lease_expires_at', 'bigint').execute();
  await db.schema
    .alterTable('batches')
    .addColumn('step_attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('batches').addColumn('retry_at', 'bigint').execute();
  await db.schema.createIndex('batch_requests_lease_owner').on('batch_requests').column('lease_owner').execute();
}
