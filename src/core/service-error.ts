/**
 * Coded errors. Everything below `http/` throws a ServiceError (or lets an unknown error become
 * `internal_error`); only `http/` renders it, as the SPEC envelope (`error` + `info_metadata`).
 * Status, type and code values follow docs/spec.md "Errors"; 403/404/405/409/413 use the same
 * `invalid_request_error`/`permission_error` shapes the OpenAI SDK classifies by status.
 */

/** SPEC error types plus the two the SPEC leaves open (403 permission, 404/405 routing). */
export type ErrorType =
  'invalid_request_error' | 'auth_error' | 'permission_error' | 'not_found_error' | 'rate_limit_exceeded' | 'server_error';

export interface ServiceErrorInit {
  /** HTTP status the error is answered with. */
  status: number;
  type: ErrorType;
  /** Machine-readable code, e.g. `invalid_parameter`, `rpm_exceeded`, `file_not_found`. */
  code: string;
  message: string;
  /** Dotted path of the offending request field (`messages[2].content`), or null. */
  param?: string | null;
  /** Structured extra detail (rate-limit details per SPEC), or null. */
  details?: Record<string, unknown> | null;
  /** Extra response headers (e.g. `retry-after` on 429). */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class ServiceError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string;
  readonly param: string | null;
  readonly details: Record<string, unknown> | null;
  readonly headers: Record<string, string>;

  constructor(init: ServiceErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'ServiceError';
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param ?? null;
    this.details = init.details ?? null;
    this.headers = init.headers ?? {};
  }
}

export function isServiceError(value: unknown): value is ServiceError {
  return value instanceof ServiceError;
}

/** 400 `invalid_parameter`: a field is present but its value is not allowed. */
export function invalidParameter(param: string | null, message: string): ServiceError {
  return new ServiceError({ status: 400, type: 'invalid_request_error', code: 'invalid_parameter', param, message });
}

/** 400 `missing_parameter`: a required field is absent. */
export function missingParameter(param: string, message = `Missing required parameter: '${param}'.`): ServiceError {
  return new ServiceError({ status: 400, type: 'invalid_request_error', code: 'missing_parameter', param, message });
}

/** 400 `invalid_format`: the body or a field has the wrong shape or type (malformed JSON, wrong content type). */
export function invalidFormat(param: string | null, message: string): ServiceError {
  return new ServiceError({ status: 400, type: 'invalid_request_error', code: 'invalid_format', param, message });
}

/** 400 `invalid_messages`: the conversation itself is malformed (roles, order, content blocks). */
export function invalidMessages(param: string, message: string): ServiceError {
  return new ServiceError({ status: 400, type: 'invalid_request_error', code: 'invalid_messages', param, message });
}

/** 404 for an unknown resource id (model, response, batch...). `code` names what was not found. */
export function notFound(code: string, message: string, param: string | null = null): ServiceError {
  return new ServiceError({ status: 404, type: 'invalid_request_error', code, param, message });
}

/** 403: a valid key without the permission an endpoint needs. */
export function permissionDenied(permission: string): ServiceError {
  return new ServiceError({
    status: 403,
    type: 'permission_error',
    code: 'permission_denied',
    message: `This API key does not have the '${permission}' permission. Ask the operator for a key that grants it.`,
  });
}

/** 500 family: `internal_error`, `service_unavailable` or `timeout`. Messages never carry upstream URLs or keys. */
export function serverError(code: 'internal_error' | 'service_unavailable' | 'timeout', message: string, cause?: unknown): ServiceError {
  return new ServiceError({ status: 500, type: 'server_error', code, message, cause });
}

/**
 * 403 for a key of a suspended organization: the SPEC's refused-key type and code, with a message that
 * says why (the status tells SDKs not to retry and tells the caller the key itself is fine).
 */
export function organizationSuspended(organizationId: string): ServiceError {
  return new ServiceError({
    status: 403,
    type: 'auth_error',
    code: 'invalid_api_key',
    message: `The organization ${organizationId} is suspended: its API keys are refused until the operator reactivates it.`,
  });
}

/** Whether `error` is the refusal of a suspended organization's key (`organizationSuspended`). */
export function isSuspension(error: unknown): boolean {
  return error instanceof ServiceError && error.status === 403 && error.type === 'auth_error';
}
