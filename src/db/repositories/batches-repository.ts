/**
 * Batches and their per-line requests. Work is coordinated through the database alone: a worker
 * takes a lease on a batch with a conditional update (so exactly one instance works on it), renews
 * it while working, and every state change it makes is conditional on still holding the lease. Each
 * line's outcome is recorded as it completes, with the counters in the same transaction, so a worker
 * that resumes after a crash redoes nothing that finished.
 */
import type { Kysely, Selectable, Updateable } from 'kysely';
import type { BatchesTable, BatchRequestsTable, DatabaseSchema } from '../schema.ts';
import { FilesRepository, type FileRecord } from './files-repository.ts';

export const BATCH_STATUSES = ['validating', 'in_progress', 'finalizing', 'completed', 'failed', 'canceled', 'expired'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];
/** Statuses that count against a tier's concurrent batches. */
export const ACTIVE_BATCH_STATUSES: readonly BatchStatus[] = ['validating', 'in_progress', 'finalizing'];

/** One entry of a batch's `errors.data` (validation failures). */
export interface BatchError {
  code: string;
  message: string;
  /** 1-based line of the input file, or null when the error is about the whole file. */
  line: number | null;
  param: string | null;
}

export interface BatchRecord {
  /** `batch-...`. */
  id: string;
  organizationId: string;
  /** Key whose permissions, limits and metering the lines run under. */
  keyId: string;
  endpoint: string;
  inputFileId: string;
  completionWindow: string;
  status: BatchStatus;
  metadata: Record<string, string> | null;
  errors: BatchError[] | null;
  outputFileId: string | null;
  errorFileId: string | null;
  /** Request counts (lines). */
  total: number;
  completed: number;
  failed: number;
  /** Milliseconds since epoch (this and every other `...At`). */
  createdAt: number;
  expiresAt: number;
  inProgressAt: number | null;
  finalizingAt: number | null;
  completedAt: number | null;
  failedAt: number | null;
  expiredAt: number | null;
  cancellingAt: number | null;
  cancelledAt: number | null;
  /** True once the output and error files are written or nothing is left to write. */
  resultsWritten: boolean;
  leaseOwner: string | null;
  /** Milliseconds since epoch. */
  leaseExpiresAt: number | null;
}

/** A column change a worker makes on its leased batch (snake_case, as stored). */
export type BatchChanges = Omit<Updateable<BatchesTable>, 'id' | 'organization_id' | 'key_id' | 'lease_owner' | 'lease_expires_at'>;

export type BatchRequestState = 'pending' | 'completed' | 'failed';

export interface BatchRequestRow {
  line: number;
  customId: string;
  /** JSON text of the request body. */
  body: string;
  state: BatchRequestState;
  attempts: number;
  resultId: string | null;
  statusCode: number | null;
  requestId: string | null;
  responseBody: string | null;
  errorCode: string | null;
  errorMessage: string | null;
}

export interface NewBatchRequest {
  line: number;
  customId: string;
  /** JSON text of the request body. */
  body: string;
}

export interface BatchOutcome {
  state: 'completed' | 'failed';
  resultId: string;
  statusCode: number | null;
  requestId: string | null;
  responseBody: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  /** Milliseconds since epoch. */
  finishedAt: number;
}

export interface BatchListQuery {
  organizationId: string;
  limit: number;
  /** Cursor: batches strictly older than this one (newest first). */
  after?: { createdAt: number; id: string };
  status?: BatchStatus;
}

const nullableNumber = (value: number | null): number | null => (value === null ? null : Number(value));

function toRecord(row: Selectable<BatchesTable>): BatchRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    keyId: row.key_id,
    endpoint: row.endpoint,
    inputFileId: row.input_file_id,
    completionWindow: row.completion_window,
    status: row.status as BatchStatus,
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, string>),
    errors: row.errors === null ? null : (JSON.parse(row.errors) as BatchError[]),
    outputFileId: row.output_file_id,
    errorFileId: row.error_file_id,
    total: Number(row.total),
    completed: Number(row.completed),
    failed: Number(row.failed),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    inProgressAt: nullableNumber(row.in_progress_at),
    finalizingAt: nullableNumber(row.finalizing_at),
    completedAt: nullableNumber(row.completed_at),
    failedAt: nullableNumber(row.failed_at),
    expiredAt: nullableNumber(row.expired_at),
    cancellingAt: nullableNumber(row.cancelling_at),
    cancelledAt: nullableNumber(row.cancelled_at),
    resultsWritten: Number(row.results_written) === 1,
    leaseOwner: row.lease_owner,
    leaseExpiresAt: nullableNumber(row.lease_expires_at),
  };
}

function toRequestRow(row: Selectable<BatchRequestsTable>): BatchRequestRow {
  return {
    line: Number(row.line),
    customId: row.custom_id,
    body: row.body,
    state: row.state as BatchRequestState,
    attempts: Number(row.attempts),
    resultId: row.result_id,
    statusCode: row.status_code === null ? null : Number(row.status_code),
    requestId: row.request_id,
    responseBody: row.response_body,
    errorCode: row.error_code,
    errorMessage: row.error_message,
  };
}

/** Thrown inside a transaction to roll it back when the lease turned out to be lost. */
class LeaseLost extends Error {}

export class BatchesRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

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
      select = select.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]));
    }
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
      .where((eb) => eb.or([eb('created_at', '<', batch.createdAt), eb.and([eb('created_at', '=', batch.createdAt), eb('id', '<=', batch.id)])]))
      .executeTakeFirstOrThrow();
    return Number(row.total);
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

  /**
   * Takes the lease of one batch that has work (not finished, or canceled with results unwritten)
   * and whose lease is free or lapsed. Oldest first; undefined when there is none.
   */
  async claim(workerId: string, now: number, leaseMs: number): Promise<BatchRecord | undefined> {
    const candidates = await this.db
      .selectFrom('batches')
      .select('id')
      .where((eb) => eb.or([eb('status', 'in', ACTIVE_BATCH_STATUSES), eb.and([eb('status', '=', 'canceled'), eb('results_written', '=', 0)])]))
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
      .orderBy('created_at')
      .limit(10)
      .execute();
    for (const candidate of candidates) {
      const result = await this.db
        .updateTable('batches')
        .set({ lease_owner: workerId, lease_expires_at: now + leaseMs })
        .where('id', '=', candidate.id)
        .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 1) return this.findById(candidate.id);
    }
    return undefined;
  }

  /** Extends the lease; false when this worker no longer holds it. */
  async renewLease(id: string, workerId: string, now: number, leaseMs: number): Promise<boolean> {
    const result = await this.db.updateTable('batches').set({ lease_expires_at: now + leaseMs }).where('id', '=', id).where('lease_owner', '=', workerId).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async releaseLease(id: string, workerId: string): Promise<void> {
    await this.db.updateTable('batches').set({ lease_owner: null, lease_expires_at: null }).where('id', '=', id).where('lease_owner', '=', workerId).execute();
  }

  /** Applies `changes` if the batch is in one of `from` and this worker holds its lease. */
  async transition(id: string, workerId: string, from: readonly BatchStatus[], changes: BatchChanges): Promise<boolean> {
    const result = await this.db.updateTable('batches').set(changes).where('id', '=', id).where('lease_owner', '=', workerId).where('status', 'in', from).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Records the result files and applies `changes` in one transaction, under the same conditions as
   * `transition`. False (and nothing written) when they do not hold.
   */
  async finish(id: string, workerId: string, from: readonly BatchStatus[], files: FileRecord[], changes: BatchChanges): Promise<boolean> {
    try {
      await this.db.transaction().execute(async (transaction) => {
        const fileRows = new FilesRepository(transaction);
        for (const file of files) await fileRows.insert(file);
        const result = await transaction.updateTable('batches').set(changes).where('id', '=', id).where('lease_owner', '=', workerId).where('status', 'in', from).executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) throw new LeaseLost();
      });
      return true;
    } catch (error) {
      if (error instanceof LeaseLost) return false;
      throw error;
    }
  }

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

  /** Postpones a pending line (it was rate limited) and counts the attempt. */
  async deferRequest(batchId: string, line: number, nextAttemptAt: number): Promise<void> {
    await this.db
      .updateTable('batch_requests')
      .set((eb) => ({ next_attempt_at: nextAttemptAt, attempts: eb('attempts', '+', 1) }))
      .where('batch_id', '=', batchId)
      .where('line', '=', line)
      .where('state', '=', 'pending')
      .execute();
  }

  /**
   * Records a line's outcome and counts it, once: a line already finished (by a worker that lost its
   * lease meanwhile) is left as it is. False when it was already finished.
   */
  async recordOutcome(batchId: string, line: number, outcome: BatchOutcome): Promise<boolean> {
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
      return true;
    });
  }

  /** Fails every line still pending (the window ran out) and counts them; returns how many. */
  async failPending(batchId: string, errorCode: string, errorMessage: string, now: number): Promise<number> {
    return this.db.transaction().execute(async (transaction) => {
      const result = await transaction
        .updateTable('batch_requests')
        .set({ state: 'failed', error_code: errorCode, error_message: errorMessage, finished_at: now })
        .where('batch_id', '=', batchId)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      const count = Number(result.numUpdatedRows);
      if (count > 0) {
        await transaction
          .updateTable('batches')
          .set((eb) => ({ failed: eb('failed', '+', count) }))
          .where('id', '=', batchId)
          .execute();
      }
      return count;
    });
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
