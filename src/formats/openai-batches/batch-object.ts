/**
 * A stored batch -> the wire Batch object (the `/v1/batches` routes and the dashboard answer with it). Follows the OpenAI Batch object (docs/wire-contracts.md "Files and
 * batches") with the SPEC's names where it gives them: ids `batch-...`, status `canceled`.
 * Timestamps are Unix seconds, null until the event happened.
 */
import { listPage } from '../shared/list-page.ts';

/** One entry of a batch's `errors.data` (validation failures). */
export interface BatchErrorFacts {
  code: string;
  message: string;
  /** 1-based line of the input file, or null when the error is about the whole file. */
  line: number | null;
  param: string | null;
}

/** What the wire shows of a stored batch (batches/batch-records.ts `BatchRecord` has these fields). */
export interface StoredBatchFacts<Status extends string = string> {
  id: string;
  endpoint: string;
  errors: BatchErrorFacts[] | null;
  inputFileId: string;
  completionWindow: string;
  status: Status;
  outputFileId: string | null;
  errorFileId: string | null;
  total: number;
  completed: number;
  failed: number;
  /** Milliseconds since epoch (this and every other `...At`). */
  createdAt: number;
  inProgressAt: number | null;
  expiresAt: number;
  finalizingAt: number | null;
  completedAt: number | null;
  failedAt: number | null;
  expiredAt: number | null;
  cancellingAt: number | null;
  cancelledAt: number | null;
  metadata: Record<string, string> | null;
}

export type BatchObject<Status extends string = string> = {
  id: string;
  object: 'batch';
  endpoint: string;
  errors: { object: 'list'; data: BatchErrorFacts[] } | null;
  input_file_id: string;
  completion_window: string;
  status: Status;
  output_file_id: string | null;
  error_file_id: string | null;
  /** Unix seconds (this and every other `*_at`). */
  created_at: number;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
};

const seconds = (milliseconds: number | null): number | null => (milliseconds === null ? null : Math.floor(milliseconds / 1000));

export function toBatchObject<Status extends string>(batch: StoredBatchFacts<Status>): BatchObject<Status> {
  return {
    id: batch.id,
    object: 'batch',
    endpoint: batch.endpoint,
    errors: batch.errors === null ? null : { object: 'list', data: batch.errors },
    input_file_id: batch.inputFileId,
    completion_window: batch.completionWindow,
    status: batch.status,
    output_file_id: batch.outputFileId,
    error_file_id: batch.errorFileId,
    created_at: Math.floor(batch.createdAt / 1000),
    in_progress_at: seconds(batch.inProgressAt),
    expires_at: Math.floor(batch.expiresAt / 1000),
    finalizing_at: seconds(batch.finalizingAt),
    completed_at: seconds(batch.completedAt),
    failed_at: seconds(batch.failedAt),
    expired_at: seconds(batch.expiredAt),
    cancelling_at: seconds(batch.cancellingAt),
    cancelled_at: seconds(batch.cancelledAt),
    request_counts: { total: batch.total, completed: batch.completed, failed: batch.failed },
    metadata: batch.metadata,
  };
}

/** A page of `GET /v1/batches`. */
export function encodeBatchList(batches: readonly StoredBatchFacts[], hasMore: boolean): Record<string, unknown> {
  return listPage(batches.map(toBatchObject), hasMore);
}
