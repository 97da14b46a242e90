/**
 * Migration `0070_usage_ledger_request_unique`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * One row per request id, so a ledger write retried after a lost acknowledgement (or a journal
 * replayed twice) can never bill a request twice: the insert skips ids already stored. Earlier
 * duplicates, if any, are kept under a marked id rather than deleted (they were billed).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`UPDATE usage_ledger SET request_id = request_id || ':duplicate:' || CAST(id AS text)
      WHERE id NOT IN (SELECT MIN(id) FROM usage_ledger GROUP BY request_id)`.execute(db);
  await db.schema.createIndex('usage_ledger_request_id').unique().on('usage_ledger').column('request_id').execute();
}
