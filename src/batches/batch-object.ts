/**
 * BatchRecord -> the wire Batch object. Follows the OpenAI Batch object (docs/wire-contracts.md "Files and
 * batches") with the SPEC's names where it gives them: ids `batch-...`, status `canceled`.
 * Timestamps are Unix seconds, null until the event happened.
 */
import type { BatchError, BatchRecord, BatchStatus } from './batch-records.ts';

export interface BatchObject {
  id: string;
  object: 'batch';
  endpoint: string;
  errors: { object: 'list'; data: BatchError[] } | null;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
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
}

const seconds = (milliseconds: number | null): number | null => (milliseconds === null ? null : Math.floor(milliseconds / 1000));

export function toBatchObject(batch: BatchRecord): BatchObject {
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
