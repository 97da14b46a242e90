/**
 * Who is asking, as every use case sees it: a plain object, nothing from the HTTP layer, so that the
 * routes and the batch worker call the same use cases.
 */
import type { AuthContext } from './caller-identity.ts';
import type { ModelConfig } from '../config/index.ts';
import type { Cancellation } from '../core/cancellation.ts';
import type { LedgerContext } from './metering/metering-service.ts';
import type { LedgerRecord } from './metering/usage-ledger.ts';
import type { RequestTrace } from '../telemetry/trace-types.ts';

export interface Caller {
  auth: AuthContext;
  requestId: string;
  /** A batch line: priced at 50%, outside the key's per-minute limits. */
  batch: boolean;
  /** process.hrtime.bigint() when the request arrived (ledger latency). */
  startedAt: bigint;
  /**
   * Aborted when the caller goes away: the edge's CancellationSource (core/cancellation.ts), or any
   * AbortSignal. `abortSignalOf` gives an AbortSignal for APIs that need one.
   */
  signal: Cancellation;
  /**
   * Where this request's ledger record goes instead of the batched usage ledger: the batch worker
   * collects a line's record and writes it in the transaction that records the line's outcome.
   */
  ledgerSink?: LedgerSink;
  /** The request's trace when tracing is on (child spans for limits, upstream attempts, the ledger). */
  trace?: RequestTrace | undefined;
  /** The `Cache-Control` request header, for the response cache (services/cache/cache-policy.ts). */
  cacheControl?: string | undefined;
}

/** Takes a request's ledger record (see `Caller.ledgerSink`). */
export type LedgerSink = (record: LedgerRecord) => void;

/** What the usage ledger records about a request besides its usage. */
export function ledgerContextOf(caller: Caller, model: ModelConfig, endpoint: string): LedgerContext {
  return {
    requestId: caller.requestId,
    model: model.id,
    endpoint,
    pricing: model.pricing,
    batch: caller.batch,
    startedAt: caller.startedAt,
    trace: caller.trace,
  };
}
