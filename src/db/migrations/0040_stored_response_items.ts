/**
 * Migration `0040_stored_response_items`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * Output items of stored responses by id, so an `item_reference` input item (what the AI SDK sends
 * for earlier assistant turns) finds its response in one indexed read. Responses stored before this
 * migration are not indexed: their items are referenced by sending them in full.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('stored_response_items')
    .addColumn('organization_id', 'text', (column) => column.notNull())
    .addColumn('item_id', 'text', (column) => column.notNull())
    .addColumn('response_id', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('stored_response_items_primary_key', ['organization_id', 'item_id'])
    .execute();
  await db.schema.createIndex('stored_response_items_response').on('stored_response_items').column('response_id').execute();
}
