/**
 * `_metadata` (success) and `info_metadata` (error): SPEC "Metadata object". processing_time is in
 * milliseconds (integer on the key-status endpoint, as the SPEC shows it; three decimals elsewhere).
 * user_total_usage reports the monthly token quota (the daily one when months are unlimited).
 */
import type { FastifyRequest } from 'fastify';
import { isUnreachableError } from '../core/circuit-breaker.ts';
import type { AccountUsageReader, UsageInfo } from '../services/account-usage.ts';
import type { BudgetInfo } from '../services/budgets/budget-view.ts';
import type { Admission } from '../services/metering/metering-service.ts';
import { routeFacts } from './route-facts.ts';

export interface Metadata {
  creator: string;
  status: boolean;
  timestamp: string;
  request_id: string | null;
  /** Milliseconds from arrival to this body being built. */
  processing_time: number | null;
  tier: string | null;
  user_total_usage: UsageInfo | null;
  /** What the response cache did (README "Response cache"); only on answers of callers that have the cache. */
  cache?: 'hit' | 'miss' | 'bypass';
  /** Money budgets the request was reserved against (present when any applied). */
  budgets?: BudgetInfo[];
}

export interface MetadataSource {
  operator: string;
  usage: AccountUsageReader;
}

export function elapsedMilliseconds(request: FastifyRequest): number {
  return Number(process.hrtime.bigint() - request.startedAt) / 1e6;
}

/** The metadata object; `admission` (the answer's, or a failed use case's) gives its figures without a read. */
export async function buildMetadata(
  request: FastifyRequest,
  source: MetadataSource,
  success: boolean,
  admission?: Admission,
): Promise<Metadata> {
  let usage = usageInHand(request, admission);
  if (usage === undefined) {
    try {
      usage = (await source.usage.read(request.auth!)).total;
    } catch (error) {
      // A usage read failing (e.g. Redis briefly away) must not fail the answer itself. A dependency
      // away is logged once by its breaker, not once per request (issue 39).
      if (isUnreachableError(error)) request.log.debug({ err: error }, 'usage read failed while building metadata');
      else request.log.warn({ err: error }, 'usage read failed while building metadata');
      usage = null;
    }
  }
  return metadataWith(request, source, success, usage, admission);
}

/**
 * `user_total_usage` when it needs no read: null without a key, else from the answer's admission or the
 * request's usage snapshot; undefined when the store must be read (`buildMetadata` does). An admitted
 * request (every use case's answer) builds its `_metadata` without an await.
 */
export function usageInHand(request: FastifyRequest, admission?: Admission): UsageInfo | null | undefined {
  if (request.auth === undefined) return null;
  return admission?.totalUsage ?? request.usageSnapshot?.total;
}

let isoMillisecond = Number.NaN;
let isoText = '';
let isoSecond = Number.NaN;
/** 10000-01-01T00:00:00.000Z: from there on toISOString writes `+010000-...`. */
const LAST_FOUR_DIGIT_YEAR_MS = 253_402_300_800_000;
/** `YYYY-MM-DDTHH:MM:SS.` of `isoSecond`. */
let isoSecondText = '';

/**
 * The current time as an ISO 8601 string, formatted once per millisecond (every answer carries one).
 * `Date.prototype.toISOString` once per second, the milliseconds appended: ~1 µs a call against
 * ~0.1 (the answers of one loaded server are a millisecond or less apart, so the first cache alone
 * rarely hits). The same text as toISOString; outside years 1970-9999 (never Date.now()), toISOString itself.
 */
export function isoNow(now = Date.now()): string {
  if (now !== isoMillisecond) {
    if (!(now >= 0 && now < LAST_FOUR_DIGIT_YEAR_MS)) return new Date(now).toISOString();
    isoMillisecond = now;
    const milliseconds = now % 1000;
    const second = now - milliseconds;
    if (second !== isoSecond) {
      isoSecond = second;
      isoSecondText = new Date(second).toISOString().slice(0, 20);
    }
    isoText = `${isoSecondText}${milliseconds < 10 ? '00' : milliseconds < 100 ? '0' : ''}${milliseconds}Z`;
  }
  return isoText;
}

/** The metadata object with `user_total_usage` already known; `budgets` from the admission, when it has any. */
export function metadataWith(
  request: FastifyRequest,
  source: MetadataSource,
  success: boolean,
  usage: UsageInfo | null,
  admission?: Admission,
): Metadata {
  const elapsed = elapsedMilliseconds(request);
  const metadata: Metadata = {
    creator: source.operator,
    status: success,
    timestamp: isoNow(),
    request_id: request.id,
    processing_time: routeFacts(request).settings?.integerProcessingTime ? Math.round(elapsed) : Math.round(elapsed * 1000) / 1000,
    tier: request.auth?.tier ?? null,
    user_total_usage: usage,
  };
  const budgets = admission?.budgetFigures;
  if (budgets !== undefined && budgets.length > 0) metadata.budgets = budgets;
  return metadata;
}

/** `info_metadata` of an error answered outside an HTTP request (a batch line's error body). */
export function errorMetadata(operator: string, requestId: string): Metadata {
  return {
    creator: operator,
    status: false,
    timestamp: new Date().toISOString(),
    request_id: requestId,
    processing_time: null,
    tier: null,
    user_total_usage: null,
  };
}
