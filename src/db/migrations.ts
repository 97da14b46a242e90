/**
 * The one migration set, for SQLite and Postgres alike. Append new migrations; never edit applied ones.
 * Names sort in the order they apply.
 */
import type { ColumnDefinitionBuilder, Kysely, Migration } from 'kysely';

export type MigrationDialect = 'sqlite' | 'postgres';

/** The migration set for one dialect; differences are confined to column helpers below. */
export function createMigrations(dialect: MigrationDialect): Record<string, Migration> {
  /** An auto-incrementing integer primary key in each dialect's own spelling. */
  const autoIncrementKey = (column: ColumnDefinitionBuilder): ColumnDefinitionBuilder =>
    dialect === 'sqlite' ? column.primaryKey().autoIncrement() : column.primaryKey().generatedByDefaultAsIdentity();
  return {
    '0001_accounts_and_ledger': {
      async up(db: Kysely<unknown>): Promise<void> {
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
        await db.insertInto('counters' as never).values({ name: 'keys_version', value: 0 } as never).execute();
        await db.schema
          .createTable('usage_ledger')
          .addColumn('id', dialect === 'sqlite' ? 'integer' : 'bigint', autoIncrementKey)
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
      },
    },
    '0002_stored_responses': {
      // Stored response-style conversations (`store: true`): one row per response, its input items and
      // the link to the response it continued, so any instance can continue, retrieve or delete it.
      async up(db: Kysely<unknown>): Promise<void> {
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
        await db.schema.createIndex('stored_responses_organization_time').on('stored_responses').columns(['organization_id', 'created_at']).execute();
      },
    },
    '0003_files_and_batches': {
      async up(db: Kysely<unknown>): Promise<void> {
        // Stored files (batch input and output, uploads, generated images). Bytes live in the blob
        // store under the file id; `purged_at` records when they were removed from it.
        await db.schema
          .createTable('files')
          .addColumn('id', 'text', (column) => column.primaryKey())
          .addColumn('organization_id', 'text', (column) => column.notNull())
          .addColumn('purpose', 'text', (column) => column.notNull())
          .addColumn('filename', 'text', (column) => column.notNull())
          .addColumn('bytes', 'bigint', (column) => column.notNull())
          .addColumn('media_type', 'text', (column) => column.notNull())
          .addColumn('created_at', 'bigint', (column) => column.notNull())
          .addColumn('expires_at', 'bigint')
          .addColumn('deleted_at', 'bigint')
          .addColumn('purged_at', 'bigint')
          .execute();
        await db.schema.createIndex('files_organization_time').on('files').columns(['organization_id', 'created_at']).execute();
        await db.schema.createIndex('files_expiry').on('files').columns(['purged_at', 'expires_at']).execute();
        // Server-wide values every instance must agree on (the file-URL signing secret).
        await db.schema
          .createTable('settings')
          .addColumn('name', 'text', (column) => column.primaryKey())
          .addColumn('value', 'text', (column) => column.notNull())
          .execute();
        await db.schema
          .createTable('batches')
          .addColumn('id', 'text', (column) => column.primaryKey())
          .addColumn('organization_id', 'text', (column) => column.notNull())
          .addColumn('key_id', 'text', (column) => column.notNull())
          .addColumn('endpoint', 'text', (column) => column.notNull())
          .addColumn('input_file_id', 'text', (column) => column.notNull())
          .addColumn('completion_window', 'text', (column) => column.notNull())
          .addColumn('status', 'text', (column) => column.notNull())
          .addColumn('metadata', 'text')
          .addColumn('errors', 'text')
          .addColumn('output_file_id', 'text')
          .addColumn('error_file_id', 'text')
          .addColumn('total', 'integer', (column) => column.notNull())
          .addColumn('completed', 'integer', (column) => column.notNull())
          .addColumn('failed', 'integer', (column) => column.notNull())
          .addColumn('created_at', 'bigint', (column) => column.notNull())
          .addColumn('expires_at', 'bigint', (column) => column.notNull())
          .addColumn('in_progress_at', 'bigint')
          .addColumn('finalizing_at', 'bigint')
          .addColumn('completed_at', 'bigint')
          .addColumn('failed_at', 'bigint')
          .addColumn('expired_at', 'bigint')
          .addColumn('cancelling_at', 'bigint')
          .addColumn('cancelled_at', 'bigint')
          .addColumn('results_written', 'integer', (column) => column.notNull())
          .addColumn('lease_owner', 'text')
          .addColumn('lease_expires_at', 'bigint')
          .execute();
        await db.schema.createIndex('batches_organization_time').on('batches').columns(['organization_id', 'created_at']).execute();
        await db.schema.createIndex('batches_status').on('batches').columns(['status', 'results_written']).execute();
        // One row per input line: the request, then its result, so a restart resumes where it stopped.
        await db.schema
          .createTable('batch_requests')
          .addColumn('batch_id', 'text', (column) => column.notNull().references('batches.id').onDelete('cascade'))
          .addColumn('line', 'integer', (column) => column.notNull())
          .addColumn('custom_id', 'text', (column) => column.notNull())
          .addColumn('body', 'text', (column) => column.notNull())
          .addColumn('state', 'text', (column) => column.notNull())
          .addColumn('attempts', 'integer', (column) => column.notNull())
          .addColumn('next_attempt_at', 'bigint', (column) => column.notNull())
          .addColumn('result_id', 'text')
          .addColumn('status_code', 'integer')
          .addColumn('request_id', 'text')
          .addColumn('response_body', 'text')
          .addColumn('error_code', 'text')
          .addColumn('error_message', 'text')
          .addColumn('finished_at', 'bigint')
          .addPrimaryKeyConstraint('batch_requests_primary_key', ['batch_id', 'line'])
          .execute();
        await db.schema.createIndex('batch_requests_state').on('batch_requests').columns(['batch_id', 'state', 'next_attempt_at']).execute();
      },
    },
    '0060_batch_line_leases': {
      // Lines are claimed in chunks by any instance (a lease per line row, taken for a chunk at once),
      // and a batch-level step that fails for a reason that may heal backs off across instances
      // (`step_attempts`, `retry_at`) instead of being re-claimed in a loop.
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema.alterTable('batch_requests').addColumn('lease_owner', 'text').execute();
        await db.schema.alterTable('batch_requests').addColumn('lease_expires_at', 'bigint').execute();
        await db.schema.alterTable('batches').addColumn('step_attempts', 'integer', (column) => column.notNull().defaultTo(0)).execute();
        await db.schema.alterTable('batches').addColumn('retry_at', 'bigint').execute();
        await db.schema.createIndex('batch_requests_lease_owner').on('batch_requests').column('lease_owner').execute();
      },
    },
  };
}
