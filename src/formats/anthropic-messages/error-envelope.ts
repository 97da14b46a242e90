/**
 * Errors as the message-style endpoint shows them, following docs/wire-contracts.md ("Anthropic SDK": error
 * body and mid-stream `event: error`). The SPEC envelope stays as it is (`error.message/type/code/param/
 * details` + `info_metadata`); this endpoint adds the top-level `"type":"error"` and `request_id` Anthropic
 * clients read. Both Anthropic SDKs (0.x and 1.x) classify HTTP errors by status, so the SPEC `error.type`
 * values are kept in HTTP bodies where SPEC gives one (404 excepted: see `withMessagesErrorType`); the
 * mid-stream error event, which has no status, carries an Anthropic type.
 */
import { isServiceError } from '../../core/service-error.ts';
import type { WrappableErrorEnvelope } from '../../core/generation-format.ts';
import type { SseEvent } from '../../core/sse-event.ts';
import type { AnthropicErrorType } from './wire-types.ts';

/**
 * Adds what Anthropic's `ErrorResponse` requires to a rendered SPEC error envelope (the edge's per-route
 * envelope hook): the top-level `"type":"error"` and `request_id` (the one `info_metadata` carries). A 404
 * is typed `not_found_error` as Anthropic's API types it: SPEC's 404 row types only the file endpoints'
 * `file_not_found`. Other statuses keep the SPEC type (docs/wire-contracts.md "SPEC-mandated differences").
 */
export function withMessagesErrorType<Envelope extends WrappableErrorEnvelope>(
  envelope: Envelope,
  status: number,
): { type: 'error'; request_id: string | null } & Envelope {
  const error = status === 404 ? { ...envelope.error, type: toAnthropicErrorType(404) } : envelope.error;
  return { type: 'error', ...envelope, error, request_id: envelope.info_metadata.request_id };
}

/** Anthropic error type for an HTTP status (docs/wire-contracts.md table); `service_unavailable` reads as overloaded. */
export function toAnthropicErrorType(status: number, code?: string): AnthropicErrorType {
  if (code === 'service_unavailable' || status === 503 || status === 529) return 'overloaded_error';
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    default:
      return status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error';
  }
}

/**
 * The `event: error` that ends a stream which already began. A ServiceError keeps its message and code;
 * anything else is reported without detail (it may hold internals such as upstream URLs).
 */
export function messagesErrorEvent(error: unknown): SseEvent {
  if (isServiceError(error)) {
    return {
      event: 'error',
      data: { type: 'error', error: { type: toAnthropicErrorType(error.status, error.code), message: error.message, code: error.code } },
    };
  }
  return {
    event: 'error',
    data: { type: 'error', error: { type: 'api_error', message: 'The generation failed with an internal error.', code: 'internal_error' } },
  };
}
