/**
 * Migration `0003_files_and_batches`. Its name is what databases record: never rename it, never edit it once applied.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
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
}
