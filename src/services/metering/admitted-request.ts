/**
 * The admit -> work shape of the request-limited endpoints (files, batches, models, stored responses):
 * one request is admitted against the caller's request limits, no tokens (the SPEC 429 is thrown from
 * here, before the request is read further), then the work runs. Such an admission reserves nothing, so
 * there is nothing to settle and no ledger row. A failure of the work is rethrown as an `AnswerFailure`
 * carrying the admission, so the error answer has its rate-limit headers and usage figures too.
 * Token-metered endpoints use `metered()` (metered.ts) or `Admission.start` instead.
 */
import { SPAN_NAMES, traceStep } from '../../telemetry/trace-types.ts';
import { AnswerFailure, type JsonAnswer } from '../answer.ts';
import type { Caller } from '../caller.ts';
import type { Admission, MeteringService } from './metering-service.ts';

export type RequestMetering = Pick<MeteringService, 'admit'>;

/** Admits one request of `caller`, then runs `work` with the admission. */
export async function withAdmittedRequest<T>(
  metering: RequestMetering,
  caller: Caller,
  work: (admission: Admission) => Promise<T>,
): Promise<T> {
  const admission = await traceStep(caller.trace, SPAN_NAMES.admit, metering.admit(caller.auth, 0));
  try {
    return await work(admission);
  } catch (error) {
    throw new AnswerFailure(error, admission);
  }
}

/** Admits one request of `caller` and answers the JSON body `work` builds, with the admission's headers. */
export function answerAdmittedRequest(
  metering: RequestMetering,
  caller: Caller,
  work: () => Promise<Record<string, unknown>>,
): Promise<JsonAnswer> {
  return withAdmittedRequest(metering, caller, async (admission) => ({
    stream: false,
    body: await work(),
    headers: admission.headers,
    admission,
  }));
}
