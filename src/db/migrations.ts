/**
 * The one migration set, for SQLite and Postgres alike. Append new migrations; never edit applied ones.
 * Names sort in the order they apply.
 */
import { sql, type ColumnDefinitionBuilder, type Kysely, type Migration } from 'kysely';
import { migration as migration0130 } from './migrations/0130_audit_log_window.ts';
import { migration as migration0131 } from './migrations/0131_one_instances_table.ts';

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
        await db
          .insertInto('counters' as never)
          .values({ name: 'keys_version', value: 0 } as never)
          .execute();
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
        await db.schema
          .createIndex('usage_ledger_organization_time')
          .on('usage_ledger')
          .columns(['organization_id', 'created_at'])
          .execute();
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
        await db.schema
          .createIndex('stored_responses_organization_time')
          .on('stored_responses')
          .columns(['organization_id', 'created_at'])
          .execute();
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
        await db.schema
          .createIndex('batch_requests_state')
          .on('batch_requests')
          .columns(['batch_id', 'state', 'next_attempt_at'])
          .execute();
      },
    },
    '0010_blob_chunks': {
      async up(db: Kysely<unknown>): Promise<void> {
        // The `postgres` blob store (FILES_STORE=postgres): file bytes as chunks in the database, so
        // several instances share files without another service. Created in SQLite too (unused there)
        // so that both dialects keep one schema.
        const binary = dialect === 'postgres' ? 'bytea' : 'blob';
        // A put in progress: its chunks are written under `upload_id`, invisible until the put commits
        // by pointing `blob_objects` at them; `touched_at` (ms) lets a sweep remove abandoned ones.
        await db.schema
          .createTable('blob_uploads')
          .addColumn('upload_id', 'text', (column) => column.primaryKey())
          .addColumn('touched_at', 'bigint', (column) => column.notNull())
          .execute();
        await db.schema.createIndex('blob_uploads_touched').on('blob_uploads').column('touched_at').execute();
        await db.schema
          .createTable('blob_objects')
          .addColumn('key', 'text', (column) => column.primaryKey())
          .addColumn('upload_id', 'text', (column) => column.notNull())
          .addColumn('bytes', 'bigint', (column) => column.notNull())
          .addColumn('chunks', 'integer', (column) => column.notNull())
          .addColumn('created_at', 'bigint', (column) => column.notNull())
          .execute();
        await db.schema
          .createTable('blob_chunks')
          .addColumn('upload_id', 'text', (column) => column.notNull())
          .addColumn('seq', 'integer', (column) => column.notNull())
          .addColumn('data', binary, (column) => column.notNull())
          .addPrimaryKeyConstraint('blob_chunks_primary_key', ['upload_id', 'seq'])
          .execute();
        if (dialect === 'postgres') {
          // File bytes are mostly compressed already (images) or read back at once: skip TOAST's
          // compression, which costs CPU on every chunk for little gain.
          await sql`ALTER TABLE blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL`.execute(db);
        }
      },
    },
    '0020_dashboard': {
      // The owners' dashboard: owners and members of organizations, one-time set-password
      // links, server-side sessions, sign-in attempts (throttling shared by every instance), the audit
      // log, and daily usage rollups kept beside the ledger so usage pages never scan raw ledger rows.
      async up(db: Kysely<unknown>): Promise<void> {
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
          .addColumn('id', dialect === 'sqlite' ? 'integer' : 'bigint', autoIncrementKey)
          .addColumn('subject', 'text', (column) => column.notNull())
          .addColumn('succeeded', 'integer', (column) => column.notNull())
          .addColumn('created_at', 'bigint', (column) => column.notNull())
          .execute();
        await db.schema.createIndex('sign_in_attempts_subject_time').on('sign_in_attempts').columns(['subject', 'created_at']).execute();
        await db.schema
          .createTable('audit_log')
          .addColumn('id', dialect === 'sqlite' ? 'integer' : 'bigint', autoIncrementKey)
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
      },
    },
    '0040_stored_response_items': {
      // Output items of stored responses by id, so an `item_reference` input item (what the AI SDK sends
      // for earlier assistant turns) finds its response in one indexed read. Responses stored before this
      // migration are not indexed: their items are referenced by sending them in full.
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .createTable('stored_response_items')
          .addColumn('organization_id', 'text', (column) => column.notNull())
          .addColumn('item_id', 'text', (column) => column.notNull())
          .addColumn('response_id', 'text', (column) => column.notNull())
          .addPrimaryKeyConstraint('stored_response_items_primary_key', ['organization_id', 'item_id'])
          .execute();
        await db.schema.createIndex('stored_response_items_response').on('stored_response_items').column('response_id').execute();
      },
    },
    '0050_usage_ledger_deployment': {
      // Which deployment of a routed model answered (services/generation/routing).
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema.alterTable('usage_ledger').addColumn('deployment', 'text').execute();
      },
    },
    '0060_batch_line_leases': {
      // Lines are claimed in chunks by any instance (a lease per line row, taken for a chunk at once),
      // and a batch-level step that fails for a reason that may heal backs off across instances
      // (`step_attempts`, `retry_at`) instead of being re-claimed in a loop.
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema.alterTable('batch_requests').addColumn('lease_owner', 'text').execute();
        await db.schema.alterTable('batch_requests').addColumn('lease_expires_at', 'bigint').execute();
        await db.schema
          .alterTable('batches')
          .addColumn('step_attempts', 'integer', (column) => column.notNull().defaultTo(0))
          .execute();
        await db.schema.alterTable('batches').addColumn('retry_at', 'bigint').execute();
        await db.schema.createIndex('batch_requests_lease_owner').on('batch_requests').column('lease_owner').execute();
      },
    },
    '0070_usage_ledger_request_unique': {
      // One row per request id, so a ledger write retried after a lost acknowledgement (or a journal
      // replayed twice) can never bill a request twice: the insert skips ids already stored. Earlier
      // duplicates, if any, are kept under a marked id rather than deleted (they were billed).
      async up(db: Kysely<unknown>): Promise<void> {
        await sql`UPDATE usage_ledger SET request_id = request_id || ':duplicate:' || CAST(id AS text)
          WHERE id NOT IN (SELECT MIN(id) FROM usage_ledger GROUP BY request_id)`.execute(db);
        await db.schema.createIndex('usage_ledger_request_id').unique().on('usage_ledger').column('request_id').execute();
      },
    },
    '0080_dashboard_second_factor_and_retention': {
      // The second factor: the last accepted TOTP time step (a used code is refused), the secret the
      // server generated at enrolment until a code confirms it, and one-time recovery codes (SHA-256).
      // Failed sign-ins are one audit row per account and window (`occurrences`). Indexes on time let
      // the retention timer delete old attempts, audit rows and sessions in bounded batches.
      async up(db: Kysely<unknown>): Promise<void> {
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
      },
    },
    '0100_organization_plans': {
      // Plans per organization (a configured tier plus per-organization overrides of its figures),
      // suspension, the operators' audit log (apart from owners' logs), and one heartbeat row per
      // running instance for the operator's fleet page. Operators are `owners` rows with the role
      // `operator` in the reserved organization `_operators` (a name organization ids cannot take).
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema.alterTable('organizations').addColumn('plan', 'text').execute();
        await db.schema.alterTable('organizations').addColumn('plan_overrides', 'text').execute();
        await db.schema
          .alterTable('organizations')
          .addColumn('status', 'text', (column) => column.notNull().defaultTo('active'))
          .execute();
        await db.schema.alterTable('organizations').addColumn('suspended_at', 'bigint').execute();
        await db
          .insertInto('organizations' as never)
          .values({ id: '_operators', name: 'Operators', created_at: Date.now(), status: 'system' } as never)
          .execute();
        await db.schema
          .createTable('operator_audit')
          .addColumn('id', dialect === 'sqlite' ? 'integer' : 'bigint', autoIncrementKey)
          .addColumn('actor', 'text', (column) => column.notNull())
          .addColumn('action', 'text', (column) => column.notNull())
          .addColumn('organization_id', 'text')
          .addColumn('target', 'text')
          .addColumn('detail', 'text')
          .addColumn('address', 'text')
          .addColumn('created_at', 'bigint', (column) => column.notNull())
          .execute();
        await db.schema.createIndex('operator_audit_time').on('operator_audit').column('created_at').execute();
        await db.schema
          .createTable('instances')
          .addColumn('id', 'text', (column) => column.primaryKey())
          .addColumn('version', 'text', (column) => column.notNull())
          .addColumn('started_at', 'bigint', (column) => column.notNull())
          .addColumn('last_seen_at', 'bigint', (column) => column.notNull())
          .execute();
      },
    },
    '0120_instance_configs': {
      // Each running instance and the hash of its effective config, renewed by a heartbeat: instances
      // whose configs differ are named in /readyz's body and the logs (services/instances). A table of
      // its own beside the fleet's `instances` rows (0100), which the operator console reads.
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .createTable('instance_configs')
          .addColumn('id', 'text', (column) => column.primaryKey())
          .addColumn('config_hash', 'text', (column) => column.notNull())
          .addColumn('started_at', 'bigint', (column) => column.notNull())
          .addColumn('heartbeat_at', 'bigint', (column) => column.notNull())
          .execute();
      },
    },
    // New migrations are one file each under migrations/ (numbered 0130 on).
    '0130_audit_log_window': migration0130,
    '0131_one_instances_table': migration0131,
  };
}
