/**
 * Runs a batch line through the same use cases as the synchronous endpoint (decode, limits, metering
 * at the batch price, encode), on behalf of the key that created the batch: no HTTP round trip and no
 * internal credentials. A failure becomes the status and error body the endpoint would have answered.
 *
 * The line's usage-ledger record is not handed to the batched ledger writer: it comes back with the
 * response, and the worker writes it in the transaction that records the line's outcome (billed
 * exactly once, crash or not).
 */
import { newId } from '../core/ids.ts';
import { CancellationSource } from '../core/cancellation.ts';
import { isUnreachableError } from '../core/circuit-breaker.ts';
import { isServiceError, isSuspension, serverError, type ServiceError } from '../core/service-error.ts';
import type { Caller } from '../services/caller.ts';
import type { AuthContext } from '../services/caller-identity.ts';
import type { LedgerRecord } from '../services/metering/usage-ledger.ts';
import type { RequestTrace, Tracing } from '../telemetry/trace-types.ts';
import type { LineExecutor, LineRequest, LineResponse } from './batch-worker.ts';

/** Answers one line's request body as `caller`: the endpoint's normal response body. */
export type BatchLineHandler = (caller: Caller, body: unknown) => Promise<Record<string, unknown>>;

export interface ServiceLineExecutorOptions {
  /** One handler per batch endpoint path (`/v1/chat/completions`, `/v1/embeddings`, `/v1/responses`). */
  handlers: ReadonlyMap<string, BatchLineHandler>;
  /** The batch owner's key, as the edge would authenticate it (401 when revoked or expired). */
  authenticateKeyId(keyId: string): Promise<AuthContext>;
  /**
   * Why this key may no longer run batches (its tier lost the batch API, or the key the `batches`
   * permission), or undefined when it may.
   */
  batchRefusal?(auth: AuthContext): ServiceError | undefined;
  /**
   * Why this key may not run a line of `url` now (it lacks, or lost, that endpoint's permission), or
   * undefined. Unlike `batchRefusal`, the line fails alone (403 `permission_denied`), not the batch.
   */
  endpointRefusal?(auth: AuthContext, url: string): ServiceError | undefined;
  /** The error body the endpoint's clients would read (the edge's renderer). */
  renderError(error: ServiceError, requestId: string): object;
  /** Told of each line's ledger record as it is made (the per-model token and cost metrics). */
  observeLedger?(record: LedgerRecord): void;
  /** Traces (undefined: off): each line is a span of its own, in its batch's trace. */
  tracing?: Tracing | undefined;
}

/** How long a line of a suspended organization waits before it may be claimed again, seconds. */
const SUSPENDED_RETRY_SECONDS = 5;

export function serviceLineExecutor(options: ServiceLineExecutorOptions): LineExecutor {
  const execute = lineExecutor(options);
  const tracing = options.tracing;
  if (tracing === undefined) return (request) => execute(request, newId.request(), undefined);
  return async (request) => {
    const requestId = newId.request();
    const trace = tracing.startBatchLine({ batchId: request.batchId ?? '', line: request.line ?? 0, url: request.url, requestId });
    try {
      const response = await execute(request, requestId, trace);
      if (response.statusCode >= 400) trace.setAttribute('error.type', String(response.statusCode));
      trace.end(response.statusCode);
      return response;
    } catch (error) {
      trace.fail(error, 500);
      trace.end(500);
      throw error;
    }
  };
}

function lineExecutor(
  options: ServiceLineExecutorOptions,
): (request: LineRequest, requestId: string, trace: RequestTrace | undefined) => Promise<LineResponse> {
  return async ({ keyId, url, body }, requestId, trace): Promise<LineResponse> => {
    const ledger: LedgerRecord[] = [];
    let auth: AuthContext;
    try {
      auth = await options.authenticateKeyId(keyId);
      const refusal = options.batchRefusal?.(auth);
      if (refusal !== undefined) throw refusal;
    } catch (error) {
      // The organization was suspended meanwhile: the line waits (a deferral, as after a 429); the
      // batch's other lines are not claimed until it is reactivated (db/repositories/batch-leases.ts claimLines).
      if (isSuspension(error)) {
        return { ...failed(options, error, requestId), statusCode: 429, headers: { 'retry-after': String(SUSPENDED_RETRY_SECONDS) } };
      }
      // The key itself can no longer run this batch: no line of it can succeed, so the batch fails.
      if (isServiceError(error) && (error.status === 401 || error.status === 403)) {
        return {
          ...failed(options, error, requestId),
          fatal: { code: error.code, message: `The batch's API key can no longer run it: ${error.message}` },
        };
      }
      return failed(options, error, requestId);
    }
    try {
      const endpointRefusal = options.endpointRefusal?.(auth, url);
      if (endpointRefusal !== undefined) throw endpointRefusal;
      const handler = options.handlers.get(url);
      if (handler === undefined) throw serverError('internal_error', `No batch handler for ${url}.`);
      // Lines run to the end once started (a stopping worker stops claiming instead): a source nobody
      // aborts, one per line so listeners never pile up on a shared one.
      const signal = new CancellationSource();
      const caller: Caller = {
        auth,
        requestId,
        batch: true,
        startedAt: process.hrtime.bigint(),
        signal,
        ledgerSink: (record) => {
          ledger.push(record);
          options.observeLedger?.(record);
        },
        trace,
      };
      const answer = await handler(caller, JSON.parse(body));
      return { statusCode: 200, headers: { 'x-request-id': requestId }, body: JSON.stringify(answer), ledger };
    } catch (error) {
      return { ...failed(options, error, requestId), ledger };
    }
  };
}

function failed(options: ServiceLineExecutorOptions, error: unknown, requestId: string): LineResponse {
  const failure = isServiceError(error)
    ? error
    : serverError('internal_error', 'The server had an error while processing this request.', error);
  return {
    statusCode: failure.status,
    headers: { ...failure.headers, 'x-request-id': requestId },
    body: JSON.stringify(options.renderError(failure, requestId)),
    // Unavailable for now (a dependency down, no backend answering): the worker defers the line.
    ...(failure.code === 'service_unavailable' || isUnreachableError(error) ? { transient: true } : {}),
  };
}
