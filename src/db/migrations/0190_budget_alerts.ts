/**
 * Migration `0190_budget_alerts`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * Budget alerts (db/alerts-schema.ts): `budget_alerts`, one row per rule fired per budget and period
 * (unique, so racing instances fire it once); `webhook_endpoints`; and `alert_deliveries`, the outbox
 * the dispatchers claim from (due pending rows by `next_attempt_at`) and the delivery log the dashboard
 * lists (per organization, and all of them for operators, newest first).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('budget_alerts')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('budget_id', 'text', (column) => column.notNull())
    .addColumn('period_start', 'bigint', (column) => column.notNull())
    .addColumn('rule', 'text', (column) => column.notNull())
    .addColumn('organization_id', 'text', (column) => column.notNull())
    .addColumn('key_id', 'text')
    .addColumn('scope', 'text', (column) => column.notNull())
    .addColumn('period', 'text', (column) => column.notNull())
    .addColumn('period_end', 'bigint')
    .addColumn('amount_micro_usd', 'bigint', (column) => column.notNull())
    .addColumn('spent_micro_usd', 'bigint', (column) => column.notNull())
    .addColumn('threshold_percent', 'double precision')
    .addColumn('projected_micro_usd', 'bigint')
    .addColumn('request_id', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('budget_alerts_once').unique().on('budget_alerts').columns(['budget_id', 'period_start', 'rule']).execute();
  await db.schema.createIndex('budget_alerts_period_end').on('budget_alerts').column('period_end').execute();

  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('organization_id', 'text')
    .addColumn('url', 'text', (column) => column.notNull())
    .addColumn('description', 'text')
    .addColumn('events', 'text', (column) => column.notNull())
    .addColumn('secret', 'text', (column) => column.notNull())
    .addColumn('created_by', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_organization').on('webhook_endpoints').column('organization_id').execute();

  await db.schema
    .createTable('alert_deliveries')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('alert_id', 'text')
    .addColumn('event_type', 'text', (column) => column.notNull())
    .addColumn('organization_id', 'text')
    .addColumn('audience_organization_id', 'text')
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('endpoint_id', 'text')
    .addColumn('target', 'text', (column) => column.notNull())
    .addColumn('payload', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (column) => column.notNull())
    .addColumn('give_up_at', 'bigint', (column) => column.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('alert_deliveries_due').on('alert_deliveries').columns(['status', 'next_attempt_at']).execute();
  await db.schema
    .createIndex('alert_deliveries_audience')
    .on('alert_deliveries')
    .columns(['audience_organization_id', 'created_at'])
    .execute();
  await db.schema.createIndex('alert_deliveries_created').on('alert_deliveries').column('created_at').execute();
  await db.schema.createIndex('alert_deliveries_endpoint').on('alert_deliveries').columns(['endpoint_id', 'status']).execute();
}
