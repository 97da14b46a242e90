/**
 * Migration `0002_stored_responses`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * Stored response-style conversations (`store: true`): one row per response, its input items and
 * the link to the response it continued, so any instance can continue, retrieve or delete it.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('stored_responses')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('organization_id', 'text', (column) => column.notNull())
    .addColumn('previous_response_id', 'text')
    .addColumn('model', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('instructions', 'text')
    .addColumn('response', 'text', (column) => column.notNull())
    .addColumn('input_items', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createIndex('stored_responses_organization_time')
    .on('stored_responses')
    .columns(['organization_id', 'created_at'])
    .execute();
}
