/**
 * Migration `0020_dashboard`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * The owners' dashboard: owners and members of organizations, one-time set-password
 * links, server-side sessions, sign-in attempts (throttling shared by every instance), the audit
 * log, and daily usage rollups kept beside the ledger so usage pages never scan raw ledger rows.
 */
import { sql, type Kysely } from 'kysely';
import { autoIncrementKey, type MigrationDialect } from './dialect.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await db.schema.alterTable('organizations').addColumn('allowed_tiers', 'text').execute();
  await db.schema
    .createTable('owners')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('organization_id', 'text', (column) => column.notNull().references('organizations.id'))
    .addColumn('email', 'text', (column) => column.notNull().unique())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('totp_secret', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('owners_organization').on('owners').column('organization_id').execute();
  await db.schema
    .createTable('owner_links')
    .addColumn('token_hash', 'text', (column) => column.primaryKey())
    .addColumn('owner_id', 'text', (column) => column.notNull().references('owners.id'))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema
    .createTable('dashboard_sessions')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('token_hash', 'text', (column) => column.notNull().unique())
    .addColumn('owner_id', 'text', (column) => column.notNull().references('owners.id'))
    .addColumn('organization_id', 'text', (column) => column.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('address', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('last_seen_at', 'bigint', (column) => column.notNull())
    .addColumn('idle_expires_at', 'bigint', (column) => column.notNull())
    .addColumn('absolute_expires_at', 'bigint', (column) => column.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('dashboard_sessions_owner').on('dashboard_sessions').column('owner_id').execute();
  await db.schema
    .createTable('sign_in_attempts')
    .addColumn('id', dialect === 'sqlite' ? 'integer' : 'bigint', autoIncrementKey(dialect))
    .addColumn('subject', 'text', (column) => column.notNull())
    .addColumn('succeeded', 'integer', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('sign_in_attempts_subject_time').on('sign_in_attempts').columns(['subject', 'created_at']).execute();
  await db.schema
    .createTable('audit_log')
    .addColumn('id', dialect === 'sqlite' ? 'integer' : 'bigint', autoIncrementKey(dialect))
    .addColumn('organization_id', 'text', (column) => column.notNull())
    .addColumn('actor', 'text', (column) => column.notNull())
    .addColumn('action', 'text', (column) => column.notNull())
    .addColumn('target', 'text')
    .addColumn('address', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('audit_log_organization_time').on('audit_log').columns(['organization_id', 'created_at']).execute();
  await db.schema
    .createTable('usage_daily')
    .addColumn('organization_id', 'text', (column) => column.notNull())
    .addColumn('day_start', 'bigint', (column) => column.notNull())
    .addColumn('model', 'text', (column) => column.notNull())
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('requests', 'bigint', (column) => column.notNull())
    .addColumn('input_tokens', 'bigint', (column) => column.notNull())
    .addColumn('output_tokens', 'bigint', (column) => column.notNull())
    .addColumn('cached_tokens', 'bigint', (column) => column.notNull())
    .addColumn('reasoning_tokens', 'bigint', (column) => column.notNull())
    .addColumn('cost_usd', 'double precision', (column) => column.notNull())
    .addPrimaryKeyConstraint('usage_daily_primary_key', ['organization_id', 'day_start', 'model', 'key_id'])
    .execute();
  // Rows already in the ledger get their rollups now; integer division gives the UTC day in both dialects.
  await sql`insert into usage_daily (organization_id, day_start, model, key_id, requests, input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd)
      select organization_id, (created_at / 86400000) * 86400000, model, key_id, count(*), sum(input_tokens), sum(output_tokens), sum(cached_tokens), sum(reasoning_tokens), sum(cost_usd)
      from usage_ledger group by organization_id, (created_at / 86400000) * 86400000, model, key_id`.execute(db);
}
