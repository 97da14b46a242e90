/**
 * A batch's per-line requests (`batch_requests`): stored at validation, claimed by line leases
 * (batch-leases.ts), deferred or recorded once each, and paged back into the result files. A line's
 * outcome is recorded with its counter and its usage-ledger rows in one transaction, so a line is
 * either done and billed, or neither. Only a pending line holds a lease: every change that finishes or
 * defers a line frees it.
 */
import type { Kysely } from 'kysely';
import type { BatchOutcome, BatchRequestRow, NewBatchRequest } from '../../batches/batch-records.ts';
import type { BatchLineStore } from '../../batches/batch-store.ts';
import type { LedgerRecord } from '../../services/metering/usage-ledger.ts';
import type { DatabaseSchema } from '../schema.ts';
import { toRequestRow } from './batch-rows.ts';
import { UsageLedgerRepository } from './usage-ledger-repository.ts';

/**
 * Fails every line of the batch still pending with `code` and `message`, frees their leases and adds
 * them to the batch's `failed`, on `db` (the caller's transaction); returns how many. The one "fail the
 * pending lines and count them", for a batch whose window ran out (`BatchLines.failPending`) and for
 * one that failed as a whole (`BatchesRepository.failRunning`).
 */
export async function failPendingLines(
  db: Kysely<DatabaseSchema>,
  batchId: string,
  code: string,
  message: string,
  now: number,
): Promise<number> {
  const result = await db
    .updateTable('batch_requests')
    .set({ state: 'failed', error_code: code, error_message: message, finished_at: now, lease_owner: null, lease_expires_at: null })
    .where('batch_id', '=', batchId)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  const count = Number(result.numUpdatedRows);
  if (count > 0) {
    await db
      .updateTable('batches')
      .set((eb) => ({ failed: eb('failed', '+', count) }))
      .where('id', '=', batchId)
      .execute();
  }
  return count;
}

export class BatchLines implements BatchLineStore {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async deleteRequests(batchId: string): Promise<void> {
    await this.db.deleteFrom('batch_requests').where('batch_id', '=', batchId).execute();
  }

  async insertRequests(batchId: string, requests: NewBatchRequest[]): Promise<void> {
    // 200 rows x 14 columns stays well under every driver's bound-parameter limit.
    for (let start = 0; start < requests.length; start += 200) {
      await this.db
        .insertInto('batch_requests')
        .values(
          requests.slice(start, start + 200).map((request) => ({
            batch_id: batchId,
            line: request.line,
            custom_id: request.customId,
            body: request.body,
            state: 'pending',
            attempts: 0,
            next_attempt_at: 0,
            result_id: null,
            status_code: null,
            request_id: null,
            response_body: null,
            error_code: null,
            error_message: null,
            finished_at: null,
          })),
        )
        .execute();
    }
  }

  /** Pending lines due at `now`, in line order, leaving out `excludeLines` (already running). */
  async duePendingRequests(batchId: string, now: number, limit: number, excludeLines: number[] = []): Promise<BatchRequestRow[]> {
    let select = this.db
      .selectFrom('batch_requests')
      .selectAll()
      .where('batch_id', '=', batchId)
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', now);
    if (excludeLines.length > 0) select = select.where('line', 'not in', excludeLines);
    const rows = await select.orderBy('line').limit(limit).execute();
    return rows.map(toRequestRow);
  }

  /** The earliest time a pending line is due (milliseconds since epoch), or undefined when none is pending. */
  async nextPendingAt(batchId: string): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('batch_requests')
      .select((eb) => eb.fn.min<number>('next_attempt_at').as('next'))
      .where('batch_id', '=', batchId)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    return row?.next === null || row?.next === undefined ? undefined : Number(row.next);
  }

  /**
   * The earliest retry time of a pending line of any running batch that no worker holds at `now`
   * (milliseconds since epoch), or undefined.
   */
  async nextRunningPendingAt(now: number): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('batch_requests as r')
      .innerJoin('batches as b', 'b.id', 'r.batch_id')
      .select((eb) => eb.fn.min<number>('r.next_attempt_at').as('next'))
      .where('b.status', '=', 'in_progress')
      .where('r.state', '=', 'pending')
      .where((eb) => eb.or([eb('r.lease_expires_at', 'is', null), eb('r.lease_expires_at', '<', now)]))
      .executeTakeFirst();
    return row?.next === null || row?.next === undefined ? undefined : Number(row.next);
  }

  /**
   * Postpones a pending line (it was rate limited), counts the attempt and frees its lease; the
   * attempt's ledger rows (an upstream 429 after admission is recorded) go in the same transaction.
   */
  async deferRequest(batchId: string, line: number, nextAttemptAt: number, ledger: readonly LedgerRecord[] = []): Promise<void> {
    await this.db.transaction().execute(async (transaction) => {
      const result = await transaction
        .updateTable('batch_requests')
        .set((eb) => ({ next_attempt_at: nextAttemptAt, attempts: eb('attempts', '+', 1), lease_owner: null, lease_expires_at: null }))
        .where('batch_id', '=', batchId)
        .where('line', '=', line)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 1) await new UsageLedgerRepository(transaction).insertMany(ledger);
    });
  }

  /**
   * Records a line's outcome, counts it and writes its usage-ledger rows, all in one transaction and
   * once: a line already finished (by a worker whose lease lapsed meanwhile) is left as it is and its
   * rows are not written. False when it was already finished.
   */
  async recordOutcome(batchId: string, line: number, outcome: BatchOutcome, ledger: readonly LedgerRecord[] = []): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const result = await transaction
        .updateTable('batch_requests')
        .set((eb) => ({
          state: outcome.state,
          attempts: eb('attempts', '+', 1),
          result_id: outcome.resultId,
          status_code: outcome.statusCode,
          request_id: outcome.requestId,
          response_body: outcome.responseBody,
          error_code: outcome.errorCode,
          error_message: outcome.errorMessage,
          finished_at: outcome.finishedAt,
          lease_owner: null,
          lease_expires_at: null,
        }))
        .where('batch_id', '=', batchId)
        .where('line', '=', line)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await transaction
        .updateTable('batches')
        .set((eb) => (outcome.state === 'completed' ? { completed: eb('completed', '+', 1) } : { failed: eb('failed', '+', 1) }))
        .where('id', '=', batchId)
        .execute();
      await new UsageLedgerRepository(transaction).insertMany(ledger);
      return true;
    });
  }

  /** Fails every line still pending (the window ran out) and counts them; returns how many. */
  async failPending(batchId: string, errorCode: string, errorMessage: string, now: number): Promise<number> {
    return this.db.transaction().execute((transaction) => failPendingLines(transaction, batchId, errorCode, errorMessage, now));
  }

  /** Finished lines in one state, in line order, after `afterLine` (paging through results). */
  async finishedRequests(batchId: string, state: 'completed' | 'failed', afterLine: number, limit: number): Promise<BatchRequestRow[]> {
    const rows = await this.db
      .selectFrom('batch_requests')
      .selectAll()
      .where('batch_id', '=', batchId)
      .where('state', '=', state)
      .where('line', '>', afterLine)
      .orderBy('line')
      .limit(limit)
      .execute();
    return rows.map(toRequestRow);
  }
}
