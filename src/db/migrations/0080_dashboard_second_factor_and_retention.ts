/**
 * Migration `0080_dashboard_second_factor_and_retention`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * The second factor: the last accepted TOTP time step (a used code is refused), the secret the
 * server generated at enrolment until a code confirms it, and one-time recovery codes (SHA-256).
 * Failed sign-ins are one audit row per account and window (`occurrences`). Indexes on time let
 * the retention timer delete old attempts, audit rows and sessions in bounded batches.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('owners').addColumn('totp_last_step', 'bigint').execute();
  await db.schema.alterTable('owners').addColumn('totp_pending_secret', 'text').execute();
  await db.schema
    .createTable('owner_recovery_codes')
    .addColumn('owner_id', 'text', (column) => column.notNull().references('owners.id'))
    .addColumn('code_hash', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('used_at', 'bigint')
    .addPrimaryKeyConstraint('owner_recovery_codes_primary_key', ['owner_id', 'code_hash'])
    .execute();
  await db.schema
    .alterTable('audit_log')
    .addColumn('occurrences', 'integer', (column) => column.notNull().defaultTo(1))
    .execute();
  await db.schema.createIndex('sign_in_attempts_time').on('sign_in_attempts').column('created_at').execute();
  await db.schema.createIndex('audit_log_time').on('audit_log').column('created_at').execute();
  await db.schema.createIndex('dashboard_sessions_expiry').on('dashboard_sessions').column('absolute_expires_at').execute();
}
