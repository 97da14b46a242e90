/**
 * Migration `0001_accounts_and_ledger`. Its name is what databases record: never rename it, never edit it once applied.
 */
import type { Kysely } from 'kysely';
import { autoIncrementKey, type MigrationDialect } from './dialect.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('organizations')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('organization_id', 'text', (column) => column.notNull().references('organizations.id'))
    .addColumn('key_hash', 'text', (column) => column.notNull().unique())
    .addColumn('redacted', 'text', (column) => column.notNull())
    .addColumn('name', 'text')
    .addColumn('tier', 'text', (column) => column.notNull())
    .addColumn('permissions', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_organization').on('api_keys').column('organization_id').execute();
  await db.schema
    .createTable('counters')
    .addColumn('name', 'text', (column) => column.primaryKey())
    .addColumn('value', 'bigint', (column) => column.notNull())
    .execute();
  await db
    .insertInto('counters' as never)
    .values({ name: 'keys_version', value: 0 } as never)
    .execute();
  await db.schema
    .createTable('usage_ledger')
    .addColumn('id', dialect === 'sqlite' ? 'integer' : 'bigint', autoIncrementKey(dialect))
    .addColumn('request_id', 'text', (column) => column.notNull())
    .addColumn('organization_id', 'text', (column) => column.notNull())
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('model', 'text', (column) => column.notNull())
    .addColumn('endpoint', 'text', (column) => column.notNull())
    .addColumn('input_tokens', 'integer', (column) => column.notNull())
    .addColumn('output_tokens', 'integer', (column) => column.notNull())
    .addColumn('cached_tokens', 'integer', (column) => column.notNull())
    .addColumn('reasoning_tokens', 'integer', (column) => column.notNull())
    .addColumn('cost_usd', 'double precision', (column) => column.notNull())
    .addColumn('batch', 'integer', (column) => column.notNull())
    .addColumn('status_code', 'integer', (column) => column.notNull())
    .addColumn('latency_ms', 'double precision', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('usage_ledger_organization_time').on('usage_ledger').columns(['organization_id', 'created_at']).execute();
}
