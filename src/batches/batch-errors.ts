/**
 * The batch error codes of SPEC "Batch error codes" with the HTTP statuses chosen here (the SPEC
 * leaves them open): 403 batch_api_not_allowed, 400 missing_required_field / invalid_endpoint /
 * invalid_input_file, 429 concurrent_batches_limit, 404 batch_not_found, 409 cannot_cancel.
 * The 409 and 429 carry `x-should-retry: false`: retrying them unchanged cannot succeed soon, and the
 * official SDKs would otherwise retry both automatically.
 */
import { ServiceError } from '../core/service-error.ts';

export function batchApiNotAllowed(tier: string): ServiceError {
  return new ServiceError({
    status: 403,
    type: 'permission_error',
    code: 'batch_api_not_allowed',
    message: `The batch API is not available on the ${tier} tier. Ask the operator for a key on a tier that allows batches.`,
  });
}

export function missingRequiredField(param: string): ServiceError {
  return new ServiceError({
    status: 400,
    type: 'invalid_request_error',
    code: 'missing_required_field',
    param,
    message: `Missing required field: '${param}'.`,
  });
}

export function invalidEndpoint(endpoint: string, supported: readonly string[]): ServiceError {
  return new ServiceError({
    status: 400,
    type: 'invalid_request_error',
    code: 'invalid_endpoint',
    param: 'endpoint',
    message: `Endpoint '${endpoint}' is not supported for batches. Use one of: ${supported.join(', ')}.`,
  });
}

export function invalidInputFile(fileId: string, reason: string): ServiceError {
  return new ServiceError({
    status: 400,
    type: 'invalid_request_error',
    code: 'invalid_input_file',
    param: 'input_file_id',
    message: `Input file '${fileId}' cannot be used: ${reason}`,
  });
}

/**
 * `resetAtMs`: when a slot is free at the latest, the end of the 24-hour window of the oldest active
 * batch (SPEC: rate-limit `details.reset` is a date-time). A slot may free sooner, so `retry_after`
 * stays null.
 */
export function concurrentBatchesLimit(limit: number, resetAtMs: number): ServiceError {
  return new ServiceError({
    status: 429,
    type: 'rate_limit_exceeded',
    code: 'concurrent_batches_limit',
    message: `Too many active batches: this tier allows ${limit} validating, in progress or finalizing at once. Wait for one to finish or cancel one.`,
    details: { limit, remaining: 0, reset: new Date(resetAtMs).toISOString(), retry_after: null },
    headers: { 'x-should-retry': 'false' },
  });
}

export function batchNotFound(batchId: string): ServiceError {
  return new ServiceError({
    status: 404,
    type: 'invalid_request_error',
    code: 'batch_not_found',
    param: 'batch_id',
    message: `No batch found with id '${batchId}'.`,
  });
}

export function cannotCancel(batchId: string, status: string): ServiceError {
  return new ServiceError({
    status: 409,
    type: 'invalid_request_error',
    code: 'cannot_cancel',
    message: `Batch '${batchId}' is ${status}; only validating or in-progress batches can be canceled.`,
    headers: { 'x-should-retry': 'false' },
  });
}
