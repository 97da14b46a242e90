/**
 * The batch engine's records (SPEC "Batch", "Batch status"): a batch, its per-line requests and
 * what a finished line holds. They are declared here, by their owner; `db/repositories/` stores and
 * reads them (batches-repository.ts and its lease and line stores), as it does the ledger's records.
 * Nothing here imports anything.
 */
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
