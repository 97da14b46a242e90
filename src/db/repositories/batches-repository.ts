/**
 * Batches and their per-line requests. Work is coordinated through the database alone, with two
 * kinds of lease, each taken by one statement that only picks work whose lease is free or lapsed
 * (`FOR UPDATE SKIP LOCKED` on Postgres, so concurrent claimants never wait on or fight over a row;
 * on SQLite the statement is itself the single-writer transaction):
 *
 * - a batch lease for the batch-level steps (validate, move to finalizing, expire, write the result
 *   files), so exactly one instance does each; every state change is conditional on holding it;
 * - line leases, taken a chunk at a time by any instance with free capacity, so one large batch runs
 *   on every instance at once.
 *
 * A line's outcome is recorded with its counter AND its usage-ledger rows in one transaction, so a
 * line is either done and billed, or neither; an instance that resumes after a crash redoes only
 * lines that were never recorded.
 */
import { PostgresAdapter, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { LedgerRecord } from '../../services/metering/usage-ledger.ts';
import type { BatchesTable, BatchRequestsTable, DatabaseSchema } from '../schema.ts';
import { FilesRepository, type FileRecord } from './files-repository.ts';
import { containsText } from './text-search.ts';
import { UsageLedgerRepository } from './usage-ledger-repository.ts';

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
  /** Failures in a row of the current batch-level step (each backs off longer); 0 when none. */
  stepAttempts: number;
}

/** A column change a worker makes on its leased batch (snake_case, as stored). */
export type BatchChanges = Omit<
  Updateable<BatchesTable>,
  'id' | 'organization_id' | 'key_id' | 'lease_owner' | 'lease_expires_at' | 'step_attempts' | 'retry_at'
>;

/** A chunk of lines claimed by one worker, with the batch they belong to. */
export interface ClaimedLines {
  batch: BatchRecord;
  lines: BatchRequestRow[];
}

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
  /** Only batches whose id, endpoint or status contains this text (the dashboard's search). */
  search?: string;
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
    stepAttempts: Number(row.step_attempts),
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
  /** Postgres takes row locks with SKIP LOCKED; SQLite runs one writer at a time anyway. */
  private readonly postgres: boolean;

  constructor(private readonly db: Kysely<DatabaseSchema>) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
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

  /**
   * Takes the batch lease of one batch with a batch-level step to do, oldest first, if its lease is
   * free or lapsed and it is not backing off (`retry_at`). Steps: validating; in_progress whose lines
   * are all finished (move to finalizing) or whose window ran out (expire) once no line is held;
   * finalizing; canceled or failed with results unwritten once no line is held (lines running
   * elsewhere finish first and reach the result files). Undefined when there is none.
   */
  async claimStep(workerId: string, now: number, leaseMs: number): Promise<BatchRecord | undefined> {
    let candidate = this.db
      .selectFrom('batches as b')
      .select('b.id')
      .where((eb) => {
        const linesHeld = eb.exists(
          eb
            .selectFrom('batch_requests as r')
            .select('r.line')
            .whereRef('r.batch_id', '=', 'b.id')
            .where('r.state', '=', 'pending')
            .where('r.lease_expires_at', '>=', now),
        );
        const linesPending = eb.exists(
          eb.selectFrom('batch_requests as r').select('r.line').whereRef('r.batch_id', '=', 'b.id').where('r.state', '=', 'pending'),
        );
        return eb.or([
          eb('b.status', 'in', ['validating', 'finalizing']),
          eb.and([eb('b.status', '=', 'in_progress'), eb.or([eb.not(linesPending), eb('b.expires_at', '<=', now)]), eb.not(linesHeld)]),
          eb.and([eb('b.status', 'in', ['canceled', 'failed']), eb('b.results_written', '=', 0), eb.not(linesHeld)]),
        ]);
      })
      .where((eb) => eb.or([eb('b.lease_expires_at', 'is', null), eb('b.lease_expires_at', '<', now)]))
      .where((eb) => eb.or([eb('b.retry_at', 'is', null), eb('b.retry_at', '<=', now)]))
      .orderBy('b.created_at')
      .limit(1);
    if (this.postgres) candidate = candidate.forUpdate('b').skipLocked();
    const row = await this.db
      .updateTable('batches')
      .set({ lease_owner: workerId, lease_expires_at: now + leaseMs })
      .where('id', '=', candidate)
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
      .returningAll()
      .executeTakeFirst();
    return row === undefined ? undefined : toRecord(row);
  }

  /**
   * Claims up to `limit` due lines of one running batch (oldest batch first, then line order) whose
   * line lease is free or lapsed: one statement per batch tried, leasing the chunk until `now + leaseMs`.
   * Undefined when no running batch has a line to claim now.
   */
  async claimLines(workerId: string, now: number, leaseMs: number, limit: number): Promise<ClaimedLines | undefined> {
    const running = await this.db
      .selectFrom('batches')
      .selectAll()
      .where('status', '=', 'in_progress')
      .where('expires_at', '>', now)
      // A suspended organization's batches pause: their lines wait, unclaimed, until it is reactivated.
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('organizations')
              .select('organizations.id')
              .whereRef('organizations.id', '=', 'batches.organization_id')
              .where('organizations.status', '=', 'suspended'),
          ),
        ),
      )
      .orderBy('created_at')
      .limit(20)
      .execute();
    for (const row of running) {
      const lines = await this.claimLinesOf(row.id, workerId, now, leaseMs, limit);
      if (lines.length > 0) return { batch: toRecord(row), lines: lines.map(toRequestRow).sort((a, b) => a.line - b.line) };
    }
    return undefined;
  }

  /** Leases up to `limit` due lines of one batch to `workerId`; the rows leased. */
  private async claimLinesOf(batchId: string, workerId: string, now: number, leaseMs: number, limit: number) {
    const due = (db: Kysely<DatabaseSchema>) =>
      db
        .selectFrom('batch_requests')
        .select('line')
        .where('batch_id', '=', batchId)
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
        .orderBy('line')
        .limit(limit);
    const lease = (db: Kysely<DatabaseSchema>, lines: readonly number[] | ReturnType<typeof due>) =>
      db
        .updateTable('batch_requests')
        .set({ lease_owner: workerId, lease_expires_at: now + leaseMs })
        .where('batch_id', '=', batchId)
        .where('line', 'in', lines)
        .where('state', '=', 'pending')
        .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
        .returningAll()
        .execute();
    // SQLite: one statement, atomic under its single writer.
    if (!this.postgres) return lease(this.db, due(this.db));
    // Postgres: lock the chunk first (SKIP LOCKED: claimants never wait on each other), then lease it by
    // key, in one transaction. Not `line IN (SELECT ... FOR UPDATE SKIP LOCKED)` in one statement: with
    // the statistics of a freshly filled table the planner runs that subquery (its sort and row locks)
    // once per row of the batch, and a 20,000-line batch stalled every instance for minutes.
    return this.db.transaction().execute(async (transaction) => {
      const locked = await due(transaction).forUpdate().skipLocked().execute();
      return locked.length === 0
        ? []
        : lease(
            transaction,
            locked.map((line) => line.line),
          );
    });
  }

  /** Extends every line lease this worker holds; returns how many lines it still holds. */
  async renewLines(workerId: string, now: number, leaseMs: number): Promise<number> {
    const result = await this.db
      .updateTable('batch_requests')
      .set({ lease_expires_at: now + leaseMs })
      .where('lease_owner', '=', workerId)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Gives claimed lines back unrun (stopping, or their batch was canceled), for any worker to take. */
  async releaseLines(batchId: string, workerId: string, lines: readonly number[]): Promise<void> {
    for (let start = 0; start < lines.length; start += 500) {
      await this.db
        .updateTable('batch_requests')
        .set({ lease_owner: null, lease_expires_at: null })
        .where('batch_id', '=', batchId)
        .where('line', 'in', lines.slice(start, start + 500))
        .where('lease_owner', '=', workerId)
        .execute();
    }
  }

  /**
   * Frees every batch and line lease held under `workerId`: a restarted instance (same worker id)
   * calls it before claiming, so what it held when it died is resumed at once instead of after the
   * lease lapses. Returns how many leases were freed.
   */
  async releaseAllHeldBy(workerId: string): Promise<number> {
    const batches = await this.db
      .updateTable('batches')
      .set({ lease_owner: null, lease_expires_at: null })
      .where('lease_owner', '=', workerId)
      .executeTakeFirst();
    const lines = await this.db
      .updateTable('batch_requests')
      .set({ lease_owner: null, lease_expires_at: null })
      .where('lease_owner', '=', workerId)
      .executeTakeFirst();
    return Number(batches.numUpdatedRows) + Number(lines.numUpdatedRows);
  }

  /** Extends the batch lease; false when this worker no longer holds it. */
  async renewLease(id: string, workerId: string, now: number, leaseMs: number): Promise<boolean> {
    const result = await this.db
      .updateTable('batches')
      .set({ lease_expires_at: now + leaseMs })
      .where('id', '=', id)
      .where('lease_owner', '=', workerId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async releaseLease(id: string, workerId: string): Promise<void> {
    await this.db
      .updateTable('batches')
      .set({ lease_owner: null, lease_expires_at: null })
      .where('id', '=', id)
      .where('lease_owner', '=', workerId)
      .execute();
  }

  /**
   * A batch-level step failed for a reason that may heal: count it, release the lease and keep every
   * instance off the batch until `now + backoffMs`. Returns the failures in a row so far (0 when the
   * lease was no longer held).
   */
  async stepFailed(id: string, workerId: string, now: number, backoffMs: number): Promise<number> {
    const row = await this.db
      .updateTable('batches')
      .set((eb) => ({ step_attempts: eb('step_attempts', '+', 1), retry_at: now + backoffMs, lease_owner: null, lease_expires_at: null }))
      .where('id', '=', id)
      .where('lease_owner', '=', workerId)
      .returning('step_attempts')
      .executeTakeFirst();
    return row === undefined ? 0 : Number(row.step_attempts);
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
      const lines = await transaction
        .updateTable('batch_requests')
        .set({
          state: 'failed',
          error_code: lineCode,
          error_message: error.message,
          finished_at: now,
          lease_owner: null,
          lease_expires_at: null,
        })
        .where('batch_id', '=', id)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      const count = Number(lines.numUpdatedRows);
      if (count > 0) {
        await transaction
          .updateTable('batches')
          .set((eb) => ({ failed: eb('failed', '+', count) }))
          .where('id', '=', id)
          .execute();
      }
      return true;
    });
  }

  /** Applies `changes` if the batch is in one of `from` and this worker holds its lease. */
  async transition(id: string, workerId: string, from: readonly BatchStatus[], changes: BatchChanges): Promise<boolean> {
    const result = await this.db
      .updateTable('batches')
      .set({ ...changes, step_attempts: 0, retry_at: null })
      .where('id', '=', id)
      .where('lease_owner', '=', workerId)
      .where('status', 'in', from)
      .executeTakeFirst();
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
        const result = await transaction
          .updateTable('batches')
          .set({ ...changes, step_attempts: 0, retry_at: null })
          .where('id', '=', id)
          .where('lease_owner', '=', workerId)
          .where('status', 'in', from)
          .executeTakeFirst();
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
