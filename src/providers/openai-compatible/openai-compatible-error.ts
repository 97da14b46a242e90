/**
 * Error mapping for OpenAI-compatible upstreams. Error bodies follow the OpenAI error object
 * (https://platform.openai.com/docs/guides/error-codes, `{"error":{"message","type","param","code"}}`);
 * compatible servers vary (vLLM's older top-level `{"object":"error","message",...}`, Ollama's
 * `{"error":"text"}`, llama.cpp's numeric `code`), so every shape is read leniently. Messages are
 * sanitised before they can reach a client.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { upstreamStatusError, type UpstreamError } from '../../core/upstream-error.ts';
import { parseRetryAfter } from '../../core/retry.ts';
import { asObject, parseJson } from '../shared/lenient-json.ts';
import { readError, type OpenAIErrorView } from './openai-compatible-wire.ts';

/** Reads the error out of an error response body (JSON or plain text). */
export function readOpenAICompatibleErrorBody(text: string): OpenAIErrorView {
  const json = asObject(parseJson(text));
  if (json !== undefined) {
    const nested = json['error'] === undefined ? undefined : readError(json['error']);
    if (nested !== undefined) return nested;
    const topLevel = readError(json);
    if (topLevel?.message !== undefined) return topLevel;
  }
  const trimmed = text.trim();
  // Plain text is passed on when short; HTML pages from proxies are not.
  const message = trimmed.length > 0 && trimmed.length <= 500 && !trimmed.startsWith('<') ? trimmed : undefined;
  return { message, type: undefined, code: undefined, param: undefined };
}

/** The UpstreamError for a non-2xx answer. */
export function openAICompatibleStatusError(
  status: number,
  bodyText: string,
  headers: IncomingHttpHeaders,
  sanitize: (message: string) => string,
): UpstreamError {
  const error = readOpenAICompatibleErrorBody(bodyText);
  return upstreamStatusError({
    upstreamStatus: status,
    upstreamMessage: sanitize(error.message ?? ''),
    param: error.param ?? null,
    retryAfterMs: parseRetryAfter(headers),
  });
}

/** The HTTP status an in-stream error event implies (it carries no status line of its own). */
function statusOfStreamError(error: OpenAIErrorView): number {
  if (typeof error.code === 'number' && error.code >= 400 && error.code < 600) return error.code;
  const label = `${error.type ?? ''} ${typeof error.code === 'string' ? error.code : ''}`;
  if (label.includes('rate_limit')) return 429;
  if (label.includes('invalid_request') || label.includes('context_length')) return 400;
  return 500;
}

/** The UpstreamError for an `{"error": {...}}` event inside a stream. */
export function openAICompatibleStreamError(error: OpenAIErrorView, sanitize: (message: string) => string): UpstreamError {
  return upstreamStatusError({
    upstreamStatus: statusOfStreamError(error),
    upstreamMessage: sanitize(error.message ?? ''),
    param: error.param ?? null,
  });
}
