/**
 * Runs a batch line through the same use cases as the synchronous endpoint (decode, limits, metering
 * at the batch price, encode), on behalf of the key that created the batch: no HTTP round trip and no
 * internal credentials. A failure becomes the status and error body the endpoint would have answered.
 *
 * The line's usage-ledger record is not handed to the batched ledger writer: it comes back with the
 * response, and the worker writes it in the transaction that records the line's outcome (billed
 * exactly once, crash or not).
 */
import type { AuthContext } from '../accounts/authenticator.ts';
import { newId } from '../core/ids.ts';
import { CancellationSource } from '../core/cancellation.ts';
import { isUnreachableError } from '../core/circuit-breaker.ts';
import { isServiceError, serverError, type ServiceError } from '../core/service-error.ts';
import type { Caller } from '../services/caller.ts';
import type { LedgerRecord } from '../services/metering/usage-ledger.ts';
import type { LineExecutor, LineResponse } from './batch-worker.ts';

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
  /** The error body the endpoint's clients would read (the edge's renderer). */
  renderError(error: ServiceError, requestId: string): object;
  /** Told of each line's ledger record as it is made (the per-model token and cost metrics). */
  observeLedger?(record: LedgerRecord): void;
}

export function serviceLineExecutor(options: ServiceLineExecutorOptions): LineExecutor {
  return async ({ keyId, url, body }): Promise<LineResponse> => {
    const requestId = newId.request();
    const ledger: LedgerRecord[] = [];
    let auth: AuthContext;
    try {
      auth = await options.authenticateKeyId(keyId);
      const refusal = options.batchRefusal?.(auth);
      if (refusal !== undefined) throw refusal;
    } catch (error) {
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
