/**
 * Migration `0120_instance_configs`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * Each running instance and the hash of its effective config, renewed by a heartbeat: instances
 * whose configs differ are named in /readyz's body and the logs (services/instances). A table of
 * its own beside the fleet's `instances` rows (0100), which the operator console reads.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('instance_configs')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('config_hash', 'text', (column) => column.notNull())
    .addColumn('started_at', 'bigint', (column) => column.notNull())
    .addColumn('heartbeat_at', 'bigint', (column) => column.notNull())
    .execute();
}
