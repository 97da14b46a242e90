/**
 * The ports the batch engine keeps its records through (batch-records.ts), with only the methods it
 * uses: batches (`BatchStore`), their leases and the state changes made under them (`BatchLeaseStore`)
 * and their per-line requests (`BatchLineStore`). The database implements them
 * (db/repositories/batches-repository.ts, batch-leases.ts, batch-lines.ts); the runtime wires those in.
 */
import type { LedgerRecord } from '../services/metering/usage-ledger.ts';
import type { FileRecord } from '../services/files/file-record.ts';
import type { BatchError, BatchOutcome, BatchRecord, BatchRequestRow, BatchStatus, NewBatchRequest } from './batch-records.ts';

export interface BatchListQuery {
  organizationId: string;
  limit: number;
  /** Cursor: batches strictly older than this one (newest first). */
  after?: { createdAt: number; id: string };
  status?: BatchStatus;
  /** Only batches whose id, endpoint or status contains this text (the dashboard's search). */
  search?: string;
}

/** A chunk of lines claimed by one worker, with the batch they belong to. */
export interface ClaimedLines {
  batch: BatchRecord;
  lines: BatchRequestRow[];
}

/**
 * A change a worker makes on its leased batch, named as the batch's columns are stored (snake_case;
 * never the lease, the step count or the backoff, which the lease methods own).
 */
export interface BatchChanges {
  status?: BatchStatus;
  /** JSON text of the `errors` array. */
  errors?: string | null;
  total?: number;
  output_file_id?: string | null;
  error_file_id?: string | null;
  /** 1 once the result files are written (or there is nothing to write). */
  results_written?: number;
  in_progress_at?: number | null;
  finalizing_at?: number | null;
  completed_at?: number | null;
  failed_at?: number | null;
  expired_at?: number | null;
  cancelling_at?: number | null;
  cancelled_at?: number | null;
}

/** Batch and line leases, and the state changes made under a batch lease (db/repositories/batch-leases.ts). */
export interface BatchLeaseStore {
  /** Takes the batch lease of one batch with a batch-level step to do, oldest first; undefined when there is none. */
  claimStep(workerId: string, now: number, leaseMs: number): Promise<BatchRecord | undefined>;
  /** Claims up to `limit` due lines of one running batch whose line lease is free or lapsed; undefined when none. */
  claimLines(workerId: string, now: number, leaseMs: number, limit: number): Promise<ClaimedLines | undefined>;
  /** Extends every line lease this worker holds; returns how many it renewed. */
  renewLines(workerId: string, now: number, leaseMs: number): Promise<number>;
  /** Gives claimed lines back unrun (stopping, or their batch was canceled), for any worker to take. */
  releaseLines(batchId: string, workerId: string, lines: readonly number[]): Promise<void>;
  /** Frees every batch and line lease held under `workerId` (a restarted instance); how many. */
  releaseAllHeldBy(workerId: string): Promise<number>;
  /** Extends the batch lease; false when this worker no longer holds it. */
  renewLease(id: string, workerId: string, now: number, leaseMs: number): Promise<boolean>;
  releaseLease(id: string, workerId: string): Promise<void>;
  /** A batch-level step failed for a reason that may heal: count it and back off; the failures in a row (0: lease lost). */
  stepFailed(id: string, workerId: string, now: number, backoffMs: number): Promise<number>;
  /** A batch-level step could not reach a dependency: wait `waitMs` without counting a failure; false: lease lost. */
  stepWait(id: string, workerId: string, now: number, waitMs: number): Promise<boolean>;
  /** Applies `changes` if the batch is in one of `from` and this worker holds its lease. */
  transition(id: string, workerId: string, from: readonly BatchStatus[], changes: BatchChanges): Promise<boolean>;
  /** Records the result files and applies `changes` in one transaction, under the same conditions as `transition`. */
  finish(id: string, workerId: string, from: readonly BatchStatus[], files: FileRecord[], changes: BatchChanges): Promise<boolean>;
}

/** The per-line requests of every batch (db/repositories/batch-lines.ts). */
export interface BatchLineStore {
  deleteRequests(batchId: string): Promise<void>;
  insertRequests(batchId: string, requests: NewBatchRequest[]): Promise<void>;
  /** The earliest retry time of a pending line of any running batch that no worker holds at `now`, or undefined. */
  nextRunningPendingAt(now: number): Promise<number | undefined>;
  /** Postpones a pending line (rate limited), counts the attempt and frees its lease, with the attempt's ledger rows. */
  deferRequest(batchId: string, line: number, nextAttemptAt: number, ledger?: readonly LedgerRecord[]): Promise<void>;
  /** Records a line's outcome, counts it and writes its ledger rows, once; false when it was already finished. */
  recordOutcome(batchId: string, line: number, outcome: BatchOutcome, ledger?: readonly LedgerRecord[]): Promise<boolean>;
  /** Fails every line still pending (the window ran out) and counts them; returns how many. */
  failPending(batchId: string, errorCode: string, errorMessage: string, now: number): Promise<number>;
  /** Finished lines in one state, in line order, after `afterLine` (paging through results). */
  finishedRequests(batchId: string, state: 'completed' | 'failed', afterLine: number, limit: number): Promise<BatchRequestRow[]>;
}

/** The batches (db/repositories/batches-repository.ts), with their lease and line stores. */
export interface BatchStore {
  readonly leases: BatchLeaseStore;
  readonly lines: BatchLineStore;
  insert(batch: BatchRecord): Promise<void>;
  findById(id: string): Promise<BatchRecord | undefined>;
  /** Removes a batch and its requests (a creation refused after the insert). */
  delete(id: string): Promise<void>;
  /** An organization's batches, newest first. */
  list(query: BatchListQuery): Promise<BatchRecord[]>;
  /** The batch's rank among the organization's active batches (checked after the insert). */
  activeRank(organizationId: string, batch: { createdAt: number; id: string }): Promise<number>;
  /** The earliest `expires_at` of the organization's active batches, or undefined. */
  earliestActiveExpiry(organizationId: string): Promise<number | undefined>;
  /** validating | in_progress -> canceled. False when the batch was in any other status. */
  cancel(id: string, now: number): Promise<boolean>;
  /** in_progress -> finalizing once no line is pending (any instance may call it; one succeeds). */
  finishIfDone(id: string, now: number): Promise<boolean>;
  /** in_progress -> failed for a cause that concerns the whole batch; pending lines fail with `lineCode`. */
  failRunning(id: string, error: BatchError, lineCode: string, now: number): Promise<boolean>;
}
