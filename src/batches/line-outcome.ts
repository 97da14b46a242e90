/**
 * One batch line's request and answer (the contract between the worker and its executor,
 * service-line-executor.ts in production), and what the answer means for the line: done (an outcome
 * for the output or error file), or deferred until a retry time (429, or something it needs is down).
 */
import { newId } from '../core/ids.ts';
import { parseRetryAfter, retryDelay, type RetryPolicy } from '../core/retry.ts';
import type { LedgerRecord } from '../services/metering/usage-ledger.ts';
import type { BatchOutcome } from './batch-records.ts';
import type { WorkerLog } from './worker-state.ts';

/** One batch line to run: POST `url` with the JSON text `body` on behalf of `keyId`. */
export interface LineRequest {
  keyId: string;
  url: string;
  /** JSON text of the request body. */
  body: string;
  /** The batch and the 1-based line this request is (for its trace). */
  batchId?: string;
  line?: number;
}

export interface LineResponse {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  /** Response body text. */
  body: string;
  /** The line's usage-ledger records, written with its outcome (none when nothing was metered). */
  ledger?: readonly LedgerRecord[];
  /** Set when no line of this batch can succeed any more (its key was revoked): the batch fails. */
  fatal?: { code: string; message: string };
  /**
   * Set when the line failed because something it needs is unavailable for now (a dependency down,
   * Switchyard's own `service_unavailable`): the line is deferred like a 429, never failed for it.
   */
  transient?: boolean;
}

/** Executes one line; production runs it through the services in-process (service-line-executor.ts). */
export type LineExecutor = (request: LineRequest) => Promise<LineResponse>;

/**
 * Deferrals of one line for "unavailable for now" before it is failed after all: with the backoff
 * capped at `maxBackoffMs` (default 60 s) that is about half an hour of a dependency or backend down;
 * a backend that never comes back (a model that cannot load) fails the line instead of holding it 24 h.
 */
export const MAX_TRANSIENT_DEFERRALS = 40;

/**
 * How long a deferred line waits: the answer's retry-after (at least 100 ms, so a line never spins),
 * else 1 s doubled per attempt, at most `maxBackoffMs`.
 */
export function lineRetryPolicy(maxBackoffMs: number): RetryPolicy {
  return { initialMs: 1_000, maxMs: maxBackoffMs, minRetryAfterMs: 100 };
}

/** Milliseconds to wait after a 429: `retry-after-ms`, then `retry-after` (seconds or HTTP date), else backoff. */
export function retryDelayMs(headers: LineResponse['headers'], attempts: number, maxBackoffMs: number, now: number): number {
  return retryDelay(lineRetryPolicy(maxBackoffMs), attempts, parseRetryAfter(headers, now));
}

function headerValue(headers: LineResponse['headers'], name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return String(Array.isArray(value) ? value[0] : value);
}

/** The route's error message (SPEC envelope `error.message`), else a generic one naming the status. */
function errorMessageOf(response: LineResponse): string {
  try {
    const parsed = JSON.parse(response.body) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === 'string') return parsed.error.message;
  } catch {
    // Not JSON: fall through to the generic message.
  }
  return `The request failed with HTTP status ${response.statusCode}.`;
}

/** A finished line's outcome: 2xx completed, else failed (`server_error` for 5xx, `invalid_request` for 4xx). */
export function outcomeOf(response: LineResponse, now: number): BatchOutcome {
  const succeeded = response.statusCode >= 200 && response.statusCode < 300;
  return {
    state: succeeded ? 'completed' : 'failed',
    resultId: newId.batchRequest(),
    statusCode: response.statusCode,
    requestId: headerValue(response.headers, 'x-request-id') ?? null,
    responseBody: response.body,
    errorCode: succeeded ? null : response.statusCode >= 500 ? 'server_error' : 'invalid_request',
    errorMessage: succeeded ? null : errorMessageOf(response),
    finishedAt: now,
  };
}

/** The outcome of a line the executor could not run at all (it threw). */
export function unexecutedOutcome(now: number): BatchOutcome {
  return {
    state: 'failed',
    resultId: newId.batchRequest(),
    statusCode: null,
    requestId: null,
    responseBody: null,
    errorCode: 'server_error',
    errorMessage: 'The server could not execute this request.',
    finishedAt: now,
  };
}

/** Lines deferred because a dependency was down: logged once when it starts, once when lines run again. */
export class DeferralLog {
  /** Since the first deferral (clock milliseconds), and how many lines so far; undefined when none. */
  private deferring: { sinceMs: number; lines: number } | undefined;

  constructor(
    private readonly log: WorkerLog | undefined,
    private readonly now: () => number,
  ) {}

  note(batchId: string, line: number, reason: unknown): void {
    if (this.deferring !== undefined) {
      this.deferring.lines++;
      return;
    }
    this.deferring = { sinceMs: this.now(), lines: 1 };
    this.log?.error(
      {
        batch_id: batchId,
        line,
        reason: typeof reason === 'string' ? reason : undefined,
        err: typeof reason === 'string' ? undefined : reason,
      },
      'batch lines are deferred: something they need is unavailable; they run again when it is back',
    );
  }

  end(): void {
    if (this.deferring === undefined) return;
    this.log?.info?.(
      { deferred_lines: this.deferring.lines, for_ms: this.now() - this.deferring.sinceMs },
      'batch lines run again: the deferred ones are retried',
    );
    this.deferring = undefined;
  }
}
