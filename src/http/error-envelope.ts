/**
 * The only renderer of error bodies (docs/design.md convention 6): SPEC envelope
 * `{ error: { message, type, code, param, details }, info_metadata }`, wrapped by the route's client
 * format where its clients read errors differently (Anthropic: a top-level `"type":"error"`). Also maps framework errors (bad JSON, body
 * too large, wrong content type) to ServiceErrors so no framework default body ever leaves.
 */
import { DependencyUnavailableError, isUnreachableError } from '../core/circuit-breaker.ts';
import type { GenerationFormat } from '../core/generation-format.ts';
import { invalidFormat, ServiceError, serverError } from '../core/service-error.ts';
import type { Metadata } from './metadata.ts';

export interface ErrorEnvelope {
  error: {
    message: string;
    type: string;
    code: string;
    param: string | null;
    details: Record<string, unknown> | null;
  };
  info_metadata: Metadata;
}

/** The SPEC envelope; a route's client format may wrap it (`wrapErrorEnvelope`). */
export function renderError(
  error: ServiceError,
  metadata: Metadata,
  format?: Pick<GenerationFormat<unknown>, 'wrapErrorEnvelope'>,
): ErrorEnvelope {
  const body: ErrorEnvelope = {
    error: { message: error.message, type: error.type, code: error.code, param: error.param, details: error.details },
    info_metadata: metadata,
  };
  return format?.wrapErrorEnvelope?.(body, error.status) ?? body;
}

interface FrameworkError {
  code?: string;
  statusCode?: number;
  message?: string;
}

/** Turns anything thrown into a ServiceError; unknown errors become 500 internal_error. */
export function toServiceError(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  const framework = (typeof error === 'object' && error !== null ? error : {}) as FrameworkError;
  switch (framework.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ServiceError({
        status: 413,
        type: 'invalid_request_error',
        code: 'request_too_large',
        message: 'The request body is larger than this server accepts.',
      });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return invalidFormat(null, 'Unsupported Content-Type. Send the body as application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalidFormat(null, 'The request body is empty; a JSON object was expected.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return invalidFormat(null, 'The Content-Length header does not match the body.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return invalidFormat(null, `The request body is not valid JSON: ${framework.message ?? ''}`.trim());
  }
  if (error instanceof SyntaxError) return invalidFormat(null, `The request body is not valid JSON: ${error.message}`);
  if (typeof framework.statusCode === 'number' && framework.statusCode >= 400 && framework.statusCode < 500) {
    return new ServiceError({
      status: framework.statusCode,
      type: 'invalid_request_error',
      code: 'invalid_request',
      message: framework.message ?? 'Invalid request.',
    });
  }
  // A dependency that could not be reached (outside any breaker's watch): say so, and when to retry.
  if (isUnreachableError(error)) return new DependencyUnavailableError('unknown', 'A service this request needs', 1, error);
  return serverError('internal_error', 'The server had an error while processing your request.', error);
}
