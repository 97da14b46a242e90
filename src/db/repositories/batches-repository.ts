/**
 * Batches (`batches` rows): created, read, listed and canceled for the batch API, and moved through
 * their statuses by the worker. The work itself is coordinated by the stores beside this one, reached
 * from it: `leases` (batch-leases.ts: claims, renewals, releases, and the state changes made under a
 * batch lease) and `lines` (batch-lines.ts: the per-line requests, their outcomes and the result
 * pages). The records are the batch engine's own (batches/batch-records.ts).
 */
import type { Kysely } from 'kysely';
import { ACTIVE_BATCH_STATUSES, type BatchError, type BatchRecord } from '../../batches/batch-records.ts';
import type { BatchListQuery, BatchStore } from '../../batches/batch-store.ts';
import type { DatabaseSchema } from '../schema.ts';
import { BatchLeases } from './batch-leases.ts';
import { BatchLines, failPendingLines } from './batch-lines.ts';
import { toRecord } from './batch-rows.ts';
import { containsText } from './text-search.ts';

// The list query and the port are the batch engine's (batches/batch-store.ts).
export type { BatchListQuery } from '../../batches/batch-store.ts';

export class BatchesRepository implements BatchStore {
  /** Batch and line leases, and the state changes made under a batch lease. */
  readonly leases: BatchLeases;
  /** The per-line requests of every batch. */
  readonly lines: BatchLines;

  constructor(private readonly db: Kysely<DatabaseSchema>) {
    this.leases = new BatchLeases(db);
    this.lines = new BatchLines(db);
  }

  async insert(batch: BatchRecord): Promise<void> {
    await this.db
      .insertInto('batches')
      .values({
        id: batch.id,
        organization_id: batch.organizationId,
        key_id: batch.keyId,
        endpoint: batch.endpoint,
        input_file_id: batch.inputFileId,
        completion_window: batch.completionWindow,
        status: batch.status,
        metadata: batch.metadata === null ? null : JSON.stringify(batch.metadata),
        errors: batch.errors === null ? null : JSON.stringify(batch.errors),
        output_file_id: batch.outputFileId,
        error_file_id: batch.errorFileId,
        total: batch.total,
        completed: batch.completed,
        failed: batch.failed,
        created_at: batch.createdAt,
        expires_at: batch.expiresAt,
        in_progress_at: batch.inProgressAt,
        finalizing_at: batch.finalizingAt,
        completed_at: batch.completedAt,
        failed_at: batch.failedAt,
        expired_at: batch.expiredAt,
        cancelling_at: batch.cancellingAt,
        cancelled_at: batch.cancelledAt,
        results_written: batch.resultsWritten ? 1 : 0,
        lease_owner: batch.leaseOwner,
        lease_expires_at: batch.leaseExpiresAt,
      })
      .execute();
  }

  async findById(id: string): Promise<BatchRecord | undefined> {
    const row = await this.db.selectFrom('batches').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toRecord(row);
  }

  /** Removes a batch and its requests (a creation refused after the insert). */
  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('batch_requests').where('batch_id', '=', id).execute();
    await this.db.deleteFrom('batches').where('id', '=', id).execute();
  }

  /** An organization's batches, newest first. */
  async list(query: BatchListQuery): Promise<BatchRecord[]> {
    let select = this.db.selectFrom('batches').selectAll().where('organization_id', '=', query.organizationId);
    if (query.status !== undefined) select = select.where('status', '=', query.status);
    const after = query.after;
    if (after !== undefined) {
      select = select.where((eb) =>
        eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]),
      );
    }
    const search = query.search;
    if (search !== undefined)
      select = select.where((eb) => eb.or([containsText('id', search), containsText('endpoint', search), containsText('status', search)]));
    const rows = await select.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
    return rows.map(toRecord);
  }

  /**
   * Active batches of the organization created no later than `batch` (ties broken by id): the
   * batch's rank among the active ones. Checked after the insert, so two concurrent creations can
   * never both slip under the limit.
   */
  async activeRank(organizationId: string, batch: { createdAt: number; id: string }): Promise<number> {
    const row = await this.db
      .selectFrom('batches')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where('organization_id', '=', organizationId)
      .where('status', 'in', ACTIVE_BATCH_STATUSES)
      .where((eb) =>
        eb.or([eb('created_at', '<', batch.createdAt), eb.and([eb('created_at', '=', batch.createdAt), eb('id', '<=', batch.id)])]),
      )
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  /** The earliest `expires_at` of the organization's active batches (a slot is free by then), or undefined. */
  async earliestActiveExpiry(organizationId: string): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('batches')
      .select((eb) => eb.fn.min<number>('expires_at').as('earliest'))
      .where('organization_id', '=', organizationId)
      .where('status', 'in', ACTIVE_BATCH_STATUSES)
      .executeTakeFirst();
    return row?.earliest === null || row?.earliest === undefined ? undefined : Number(row.earliest);
  }

  /** validating | in_progress -> canceled. False when the batch was in any other status. */
  async cancel(id: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('batches')
      .set({ status: 'canceled', cancelling_at: now, cancelled_at: now })
      .where('id', '=', id)
      .where('status', 'in', ['validating', 'in_progress'])
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** in_progress -> finalizing once no line is pending (any instance may call it; one succeeds). */
  async finishIfDone(id: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('batches')
      .set({ status: 'finalizing', finalizing_at: now })
      .where('id', '=', id)
      .where('status', '=', 'in_progress')
      .where((eb) =>
        eb.not(eb.exists(eb.selectFrom('batch_requests').select('line').where('batch_id', '=', id).where('state', '=', 'pending'))),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * in_progress -> failed for a cause that concerns the whole batch (its key was revoked, expired or
   * lost the batch permission): `errors` names it and every line still pending fails with `lineCode`,
   * in one transaction. The result files are written afterwards (results_written stays 0). False
   * when the batch was no longer in progress.
   */
  async failRunning(id: string, error: BatchError, lineCode: string, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const changed = await transaction
        .updateTable('batches')
        .set({ status: 'failed', failed_at: now, errors: JSON.stringify([error]) })
        .where('id', '=', id)
        .where('status', '=', 'in_progress')
        .executeTakeFirst();
      if (Number(changed.numUpdatedRows) !== 1) return false;
      await failPendingLines(transaction, id, lineCode, error.message, now);
      return true;
    });
  }
}
