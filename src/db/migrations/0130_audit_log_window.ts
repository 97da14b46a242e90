/**
 * Migration `0130_audit_log_window`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * aggregated audit rows (failed sign-ins: one row per account and throttle window) carry the start
 * of their window, unique per organization, actor and action, so that the first failures of a window
 * racing on several instances count on one row (an upsert) instead of each starting one. Rows written
 * before keep `window_start` null: they are never aggregated into again (SQL's NULLs are distinct in a
 * unique index, in SQLite and Postgres alike), and every other audit row leaves it null too.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audit_log').addColumn('window_start', 'bigint').execute();
  await db.schema
    .createIndex('audit_log_window')
    .unique()
    .on('audit_log')
    .columns(['organization_id', 'actor', 'action', 'window_start'])
    .execute();
}
