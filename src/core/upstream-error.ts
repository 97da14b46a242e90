/**
 * Failures of an upstream backend, already mapped to what the client may see, plus the hints the
 * generation service needs to decide on retries and fallbacks (retryable? how long did the upstream ask
 * us to wait?). Providers create these; `services/generation` retries, falls back and finally lets the
 * edge render them like any other ServiceError.
 *
 * Mapping (upstream errors are retried, then mapped to the SPEC envelope):
 * - upstream 4xx keeps its status and (sanitised) message, type `invalid_request_error`;
 *   429 stays 429 (`rate_limit_exceeded`, code `upstream_rate_limited`, with `retry-after`);
 *   401/403 are the operator's credentials, not the caller's: 500 `service_unavailable`.
 * - upstream 5xx (and 529 overloaded), connection failures and cut streams: 500 `service_unavailable`.
 * - timeouts: 500 `timeout`.
 * - a 200 whose body is not a valid answer (not JSON, empty, no choices/content, an `error` event, a
 *   stream without its closing event): 500 `service_unavailable`, never an empty success.
 * Retryable (before the first byte reaches the client): connection failures, timeouts, 408, 429, 5xx
 * and malformed 200s; the generation service retries them up to the provider's `maxRetries`.
 * Messages never carry the upstream URL or API key: providers pass upstream text through
 * `sanitizeUpstreamMessage` first.
 */
import { ServiceError, type ErrorType } from './service-error.ts';

/** What went wrong upstream. */
export type UpstreamFailureKind =
  /** The upstream answered with an HTTP error status (or an error event naming one). */
  | 'status'
  /** Connecting failed, the connection was reset, or the stream ended before it was complete. */
  | 'connection'
  /** The upstream did not answer (or went silent) within the provider's timeout. */
  | 'timeout'
  /** The upstream answered 200 but its body is not a valid answer (not JSON, empty, no choices). */
  | 'malformed';

export interface UpstreamErrorInit {
  kind: UpstreamFailureKind;
  /** HTTP status the client sees. */
  status: number;
  type: ErrorType;
  code: string;
  message: string;
  param?: string | null;
  headers?: Record<string, string>;
  /** The upstream's HTTP status (or the status its error event implies); null for connection failures and timeouts. */
  upstreamStatus: number | null;
  /** Whether trying the same upstream again may succeed (connection errors, 408, 429, 5xx). */
  retryable: boolean;
  /** Delay the upstream asked for (`retry-after-ms` / `retry-after`), milliseconds; null when it gave none. */
  retryAfterMs: number | null;
  cause?: unknown;
}

export class UpstreamError extends ServiceError {
  readonly kind: UpstreamFailureKind;
  /** The upstream's HTTP status; null for connection failures and timeouts. */
  readonly upstreamStatus: number | null;
  readonly retryable: boolean;
  /** Delay the upstream asked for before a retry, milliseconds; null when none was given. */
  readonly retryAfterMs: number | null;

  constructor(init: UpstreamErrorInit) {
    super({
      status: init.status,
      type: init.type,
      code: init.code,
      message: init.message,
      param: init.param ?? null,
      ...(init.headers === undefined ? {} : { headers: init.headers }),
      cause: init.cause,
    });
    this.name = 'UpstreamError';
    this.kind = init.kind;
    this.upstreamStatus = init.upstreamStatus;
    this.retryable = init.retryable;
    this.retryAfterMs = init.retryAfterMs;
  }

  /**
   * True when another model may do better: the upstream itself failed (connection, timeout, 5xx, 429,
   * its credentials or its model name), as opposed to a request every model would reject.
   */
  get fallbackEligible(): boolean {
    if (this.kind !== 'status') return true;
    const status = this.upstreamStatus ?? 500;
    return this.retryable || status === 401 || status === 403 || status === 404;
  }
}

export function isUpstreamError(value: unknown): value is UpstreamError {
  return value instanceof UpstreamError;
}

const CLIENT_ERROR_CODES: Record<number, string> = {
  400: 'invalid_parameter',
  404: 'not_found',
  409: 'conflict',
  413: 'request_too_large',
  422: 'invalid_parameter',
};

export interface UpstreamStatusErrorInit {
  /** HTTP status the upstream answered (or implied by its error event type). */
  upstreamStatus: number;
  /** The upstream's error message, ALREADY sanitised with `sanitizeUpstreamMessage`. */
  upstreamMessage: string;
  /** The upstream's `param`, when it named one. */
  param?: string | null;
  /** Delay the upstream asked for, milliseconds. */
  retryAfterMs?: number | null;
  cause?: unknown;
}

/** Maps an upstream HTTP error status to the error the client sees (see the table at the top). */
export function upstreamStatusError(init: UpstreamStatusErrorInit): UpstreamError {
  const { upstreamStatus } = init;
  const retryAfterMs = init.retryAfterMs ?? null;
  const detail = init.upstreamMessage.trim();
  const common = { kind: 'status' as const, upstreamStatus, retryAfterMs, cause: init.cause };
  if (upstreamStatus === 429) {
    return new UpstreamError({
      ...common,
      status: 429,
      type: 'rate_limit_exceeded',
      code: 'upstream_rate_limited',
      message: `The upstream provider is rate limiting requests${detail ? `: ${detail}` : '.'} Retry later.`,
      retryable: true,
      ...(retryAfterMs === null ? {} : { headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) } }),
    });
  }
  if (upstreamStatus === 401 || upstreamStatus === 403) {
    return new UpstreamError({
      ...common,
      status: 500,
      type: 'server_error',
      code: 'service_unavailable',
      message: `The upstream provider refused Switchyard's credentials (HTTP ${upstreamStatus}). The operator must check the provider's apiKey.`,
      retryable: false,
    });
  }
  if (upstreamStatus === 408) {
    return new UpstreamError({
      ...common,
      status: 500,
      type: 'server_error',
      code: 'timeout',
      message: 'The upstream provider timed out (HTTP 408).',
      retryable: true,
    });
  }
  if (upstreamStatus >= 400 && upstreamStatus < 500) {
    return new UpstreamError({
      ...common,
      status: upstreamStatus,
      type: 'invalid_request_error',
      code: CLIENT_ERROR_CODES[upstreamStatus] ?? 'upstream_error',
      message: detail || `The upstream provider rejected the request (HTTP ${upstreamStatus}).`,
      param: init.param ?? null,
      retryable: false,
    });
  }
  return new UpstreamError({
    ...common,
    status: 500,
    type: 'server_error',
    code: 'service_unavailable',
    message: `The upstream provider failed (HTTP ${upstreamStatus})${detail ? `: ${detail}` : '.'}`,
    retryable: upstreamStatus >= 500,
  });
}

/** The upstream could not be reached, reset the connection, or ended a stream before it was complete. */
export function upstreamConnectionError(reason: string, cause?: unknown): UpstreamError {
  return new UpstreamError({
    kind: 'connection',
    status: 500,
    type: 'server_error',
    code: 'service_unavailable',
    message: `The upstream provider is unavailable: ${reason}.`,
    upstreamStatus: null,
    retryable: true,
    retryAfterMs: null,
    cause,
  });
}

/**
 * The upstream did not answer, or went silent, for longer than the provider's timeout. Retryable: a
 * stalled upstream connection often succeeds on a fresh one (the total wait is bounded by
 * `(maxRetries + 1) * timeoutMs`).
 */
export function upstreamTimeoutError(timeoutMs: number, cause?: unknown): UpstreamError {
  return new UpstreamError({
    kind: 'timeout',
    status: 500,
    type: 'server_error',
    code: 'timeout',
    message: `The upstream provider did not respond within ${timeoutMs} ms.`,
    upstreamStatus: null,
    retryable: true,
    retryAfterMs: null,
    cause,
  });
}

/**
 * The upstream answered 200 with a body that is not a valid answer. `reason` names the fault (never the
 * upstream's URL or key), e.g. `the body is not JSON`. Retryable like a broken connection: a proxy or
 * an overloaded server that garbled one answer often sends a good one next.
 */
export function upstreamMalformedError(reason: string, cause?: unknown): UpstreamError {
  return new UpstreamError({
    kind: 'malformed',
    status: 500,
    type: 'server_error',
    code: 'service_unavailable',
    message: `The upstream provider sent an invalid answer: ${reason}.`,
    upstreamStatus: null,
    retryable: true,
    retryAfterMs: null,
    cause,
  });
}

/** Longest upstream message passed on to clients, characters. */
const MAX_MESSAGE_LENGTH = 1000;
const URL_PATTERN = /\b(?:https?|wss?):\/\/[^\s"'<>)]+/gi;
/** Shapes of common API keys (OpenAI `sk-...`, Anthropic `sk-ant-...`, bearer tokens). */
const KEY_PATTERN = /\b(?:sk|pk|rk)-[A-Za-z0-9_-]{6,}|\bBearer\s+[A-Za-z0-9._~+/=-]{6,}/g;

/**
 * Removes what must never reach a client from an upstream message: the given secrets (API key, base
 * URL, host), every URL and anything shaped like an API key; and caps its length.
 */
export function sanitizeUpstreamMessage(message: string, secrets: ReadonlyArray<string | undefined> = []): string {
  let result = message;
  for (const secret of secrets) {
    if (secret !== undefined && secret.length >= 4) result = result.split(secret).join('[redacted]');
  }
  result = result.replace(URL_PATTERN, '[url]').replace(KEY_PATTERN, '[redacted]');
  return result.length > MAX_MESSAGE_LENGTH ? `${result.slice(0, MAX_MESSAGE_LENGTH)}…` : result;
}
