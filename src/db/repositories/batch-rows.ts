/**
 * Stored rows -> the batch engine's records (batches/batch-records.ts): the one place that reads the
 * `batches` and `batch_requests` columns back (numbers may come back as strings or bigints, JSON
 * columns as text). Shared by the three batch stores of this folder.
 */
import type { Selectable } from 'kysely';
import type { BatchError, BatchRecord, BatchRequestRow, BatchRequestState, BatchStatus } from '../../batches/batch-records.ts';
import type { BatchesTable, BatchRequestsTable } from '../schema.ts';

const nullableNumber = (value: number | null): number | null => (value === null ? null : Number(value));

export function toRecord(row: Selectable<BatchesTable>): BatchRecord {
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

export function toRequestRow(row: Selectable<BatchRequestsTable>): BatchRequestRow {
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
