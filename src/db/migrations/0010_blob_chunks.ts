/**
 * Migration `0010_blob_chunks`. Its name is what databases record: never rename it, never edit it once applied.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './dialect.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
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
}
