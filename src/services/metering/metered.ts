/**
 * The one admit -> work -> settle shape of every metered endpoint that is not a generation (embeddings,
 * moderations, images, token counts): admit `estimate` tokens against the caller's limits (the SPEC 429
 * is thrown from here), do the work, settle with the usage it reports and record the request in the
 * ledger. A failed work settles with nothing used and the error's status (500 for a non-ServiceError),
 * then rethrows. Generations meter their stream instead (`Admission.start`).
 */
import { isServiceError } from '../../core/service-error.ts';
import type { Usage } from '../../core/usage.ts';
import { SPAN_NAMES, traceStep } from '../../telemetry/trace-types.ts';
import type { Caller } from '../caller.ts';
import type { Admission, CostBound, LedgerContext, MeteringService } from './metering-service.ts';

/** What the work of a metered request yields: its value and the usage to settle with. */
export interface MeteredWork<T> {
  value: T;
  usage: Usage;
}

/** The value of a metered request and the admission that metered it (settled). */
export interface Metered<T> {
  value: T;
  admission: Admission;
}

export async function metered<T>(
  metering: Pick<MeteringService, 'admit'>,
  caller: Caller,
  estimate: number,
  ledger: LedgerContext,
  work: () => Promise<MeteredWork<T>>,
  /** What bounds the cost reserved against budgets; default: `estimate` input tokens at the card's prices, no output. */
  cost?: Omit<CostBound, 'pricing'>,
): Promise<Metered<T>> {
  const bound: CostBound = { pricing: ledger.pricing, ...(cost ?? { promptTokens: estimate, maxOutputTokens: 0 }) };
  const admission = await traceStep(
    caller.trace,
    SPAN_NAMES.admit,
    metering.admit(caller.auth, estimate, { batch: caller.batch, ledgerSink: caller.ledgerSink, cost: bound }),
  );
  let done: MeteredWork<T>;
  try {
    done = await work();
  } catch (error) {
    await admission.settle(undefined, ledger, isServiceError(error) ? error.status : 500);
    throw error;
  }
  await admission.settle(done.usage, ledger);
  return { value: done.value, admission };
}
