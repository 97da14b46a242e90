/**
 * Error mapping for the Anthropic Messages API (https://docs.anthropic.com/en/api/errors): error bodies
 * and `error` stream events are `{"type":"error","error":{"type","message"}}`; the error type implies
 * the HTTP status when an event arrives inside a 200 stream. Messages are sanitised before they can
 * reach a client.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { upstreamStatusError, type UpstreamError } from '../../core/upstream-error.ts';
import { parseRetryAfter } from '../../core/retry.ts';
import { asObject, parseJson } from '../shared/lenient-json.ts';
import { readError, type AnthropicErrorView } from './anthropic-wire.ts';

/** HTTP statuses of the documented error types. */
const STATUS_BY_ERROR_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export function readAnthropicErrorBody(text: string): AnthropicErrorView {
  const json = asObject(parseJson(text));
  if (json !== undefined && json['error'] !== undefined) return readError(json['error']);
  const trimmed = text.trim();
  const message = trimmed.length > 0 && trimmed.length <= 500 && !trimmed.startsWith('<') ? trimmed : undefined;
  return { type: undefined, message };
}

/** The UpstreamError for a non-2xx answer. */
export function anthropicStatusError(
  status: number,
  bodyText: string,
  headers: IncomingHttpHeaders,
  sanitize: (message: string) => string,
): UpstreamError {
  const error = readAnthropicErrorBody(bodyText);
  return upstreamStatusError({
    upstreamStatus: status,
    upstreamMessage: sanitize(error.message ?? ''),
    retryAfterMs: parseRetryAfter(headers),
  });
}

/** The UpstreamError for an `error` event inside a stream (e.g. `overloaded_error`). */
export function anthropicStreamError(error: AnthropicErrorView, sanitize: (message: string) => string): UpstreamError {
  const status = (error.type === undefined ? undefined : STATUS_BY_ERROR_TYPE[error.type]) ?? 500;
  return upstreamStatusError({ upstreamStatus: status, upstreamMessage: sanitize(error.message ?? '') });
}
