/**
 * The leases batch work is coordinated by, through the database alone. Each is taken by one statement
 * that only picks work whose lease is free or lapsed (`FOR UPDATE SKIP LOCKED` on Postgres, so
 * concurrent claimants never wait on or fight over a row; on SQLite the statement is itself the
 * single-writer transaction):
 *
 * - a batch lease for the batch-level steps (validate, move to finalizing, expire, write the result
 *   files), so exactly one instance does each; every state change a step makes (`transition`,
 *   `finish`) is conditional on holding it;
 * - line leases, taken a chunk at a time by any instance with free capacity, so one large batch runs
 *   on every instance at once.
 *
 * Leases are renewed while work goes on, given back on stop, lapse when their holder dies, and are
 * freed at start by a restarted instance under the same worker id.
 */
import { PostgresAdapter, type Kysely } from 'kysely';
import type { BatchRecord, BatchStatus } from '../../batches/batch-records.ts';
import type { BatchChanges, BatchLeaseStore, ClaimedLines } from '../../batches/batch-store.ts';
import type { DatabaseSchema } from '../schema.ts';
import { toRecord, toRequestRow } from './batch-rows.ts';
import { FilesRepository, type FileRecord } from './files-repository.ts';

// The change and the claimed chunk are the batch engine's (batches/batch-store.ts).
export type { BatchChanges, ClaimedLines } from '../../batches/batch-store.ts';

/** Thrown inside a transaction to roll it back when the lease turned out to be lost. */
class LeaseLost extends Error {}

export class BatchLeases implements BatchLeaseStore {
  /** Postgres takes row locks with SKIP LOCKED; SQLite runs one writer at a time anyway. */
  private readonly postgres: boolean;

  constructor(private readonly db: Kysely<DatabaseSchema>) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
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

  /**
   * Extends every line lease this worker holds; returns how many it renewed. On Postgres it never waits
   * for a row lock (`FOR UPDATE SKIP LOCKED`): a line locked now is being recorded by this worker (its
   * lease ends with it) or claimed by another because its lease lapsed. Waiting instead queued the
   * renewal behind every line recording (each one updates the batch's counters) until the statement
   * bound, and the leases lapsed meanwhile: other instances ran those lines again (issue 39).
   */
  async renewLines(workerId: string, now: number, leaseMs: number): Promise<number> {
    if (!this.postgres) {
      const result = await this.db
        .updateTable('batch_requests')
        .set({ lease_expires_at: now + leaseMs })
        .where('lease_owner', '=', workerId)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    }
    return this.db.transaction().execute(async (transaction) => {
      const held = await transaction
        .selectFrom('batch_requests')
        .select(['batch_id', 'line'])
        .where('lease_owner', '=', workerId)
        .where('state', '=', 'pending')
        .forUpdate()
        .skipLocked()
        .execute();
      const perBatch = new Map<string, number[]>();
      for (const row of held) perBatch.set(row.batch_id, [...(perBatch.get(row.batch_id) ?? []), row.line]);
      let renewed = 0;
      for (const [batchId, lines] of perBatch) {
        for (let start = 0; start < lines.length; start += 500) {
          const result = await transaction
            .updateTable('batch_requests')
            .set({ lease_expires_at: now + leaseMs })
            .where('batch_id', '=', batchId)
            .where('line', 'in', lines.slice(start, start + 500))
            .executeTakeFirst();
          renewed += Number(result.numUpdatedRows);
        }
      }
      return renewed;
    });
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

  /**
   * A batch-level step could not reach a dependency (object store, database): release the lease and
   * keep every instance off the batch until `now + waitMs`, without counting a failure (waiting for a
   * dependency is not an attempt used up). False when the lease was no longer held.
   */
  async stepWait(id: string, workerId: string, now: number, waitMs: number): Promise<boolean> {
    const result = await this.db
      .updateTable('batches')
      .set({ retry_at: now + waitMs, lease_owner: null, lease_expires_at: null })
      .where('id', '=', id)
      .where('lease_owner', '=', workerId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Applies `changes` if the batch is in one of `from` and this worker holds its lease. */
  async transition(id: string, workerId: string, from: readonly BatchStatus[], changes: BatchChanges): Promise<boolean> {
    return applyUnderLease(this.db, id, workerId, from, changes);
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
        if (!(await applyUnderLease(transaction, id, workerId, from, changes))) throw new LeaseLost();
      });
      return true;
    } catch (error) {
      if (error instanceof LeaseLost) return false;
      throw error;
    }
  }
}

/** `changes` applied to the batch if it is in one of `from` and `workerId` holds its lease; true when it was. */
async function applyUnderLease(
  db: Kysely<DatabaseSchema>,
  id: string,
  workerId: string,
  from: readonly BatchStatus[],
  changes: BatchChanges,
): Promise<boolean> {
  const result = await db
    .updateTable('batches')
    .set({ ...changes, step_attempts: 0, retry_at: null })
    .where('id', '=', id)
    .where('lease_owner', '=', workerId)
    .where('status', 'in', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
