/**
 * Errors as the message-style endpoint shows them, following docs/wire-contracts.md ("Anthropic SDK": error
 * body and mid-stream `event: error`). The SPEC envelope stays as it is (`error.message/type/code/param/
 * details` + `info_metadata`); this endpoint adds the top-level `"type":"error"` Anthropic clients read.
 * Both Anthropic SDKs (0.x and 1.x) classify HTTP errors by status, so the SPEC `error.type` values are
 * kept in HTTP bodies; only the mid-stream error event, which has no status, carries an Anthropic type.
 */
import { isServiceError } from '../../core/service-error.ts';
import type { SseEvent } from '../../core/sse-event.ts';
import type { AnthropicErrorType } from './wire-types.ts';

/** Adds the top-level `"type":"error"` to a rendered SPEC error envelope (the edge's per-route envelope hook). */
export function withMessagesErrorType<Envelope extends object>(envelope: Envelope): { type: 'error' } & Envelope {
  return { type: 'error', ...envelope };
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
