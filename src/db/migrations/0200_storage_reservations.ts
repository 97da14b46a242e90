/**
 * Migration `0200_storage_reservations`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * The storage quota per organization (db/storage-schema.ts): `storage_reservations`, the bytes uploads
 * in flight hold before their file row exists, so that instances racing on one organization's quota
 * never store past it. Stored bytes are the organization's file rows (not deleted, not purged); an
 * index on (organization_id, purged_at, deleted_at) makes that sum cheap.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('storage_reservations')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('organization_id', 'text', (column) => column.notNull())
    .addColumn('bytes', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createIndex('storage_reservations_organization')
    .on('storage_reservations')
    .columns(['organization_id', 'expires_at'])
    .execute();
  await db.schema.createIndex('files_organization_stored').on('files').columns(['organization_id', 'purged_at', 'deleted_at']).execute();
}
