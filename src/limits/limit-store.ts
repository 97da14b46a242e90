/**
 * The rate-limit and quota port (docs/design.md convention 8: a small port typed by what we use). Two
 * backends implement it: memory/ (one instance) and redis/ (several instances sharing one budget).
 *
 * Model, per SPEC "Limits" (docs/spec.md):
 * - Requests per minute and tokens per minute are counted per API key, in fixed one-minute windows
 *   aligned to the epoch minute (exact: with a limit of N, exactly N requests of one minute pass).
 * - Tokens per day (reset 00:00 UTC) and per month (reset on the 1st, 00:00 UTC) are counted per
 *   organization: the SPEC says "per user", and in Switchyard the account that owns keys and
 *   receives a plan is the organization, so every key of an organization draws on one budget.
 * - `admit` checks all four limits and, only if all pass, counts the request and reserves the
 *   estimated tokens in the minute, day and month buckets, atomically (one Lua script on Redis).
 * - `settle` replaces the reservation by the real figure exactly once. A reservation that is never
 *   settled (crash, bug) keeps its estimate charged: it can never cost more than the estimate.
 * - An admission with `estimatedTokens: 0` (request-only routes) keeps no reservation record; settling
 *   it is a no-op, so such routes need not settle at all.
 * - A limit of 0 means unlimited (same convention as TierConfig); usage is still counted.
 */
import type { TierConfig } from '../config/schema.ts';

/** The four limits applied to one request; 0 means unlimited. */
export interface LimitPolicy {
  /** Requests per minute per API key. */
  requestsPerMinute: number;
  /** Tokens (input + output) per minute per API key. */
  tokensPerMinute: number;
  /** Tokens per UTC day per organization. */
  tokensPerDay: number;
  /** Tokens per UTC calendar month per organization. */
  tokensPerMonth: number;
  /** Requests per minute summed over all the organization's keys (0 or absent: unlimited). */
  organizationRequestsPerMinute?: number;
  /** Tokens per minute summed over all the organization's keys (0 or absent: unlimited). */
  organizationTokensPerMinute?: number;
}

/**
 * One money budget a request is reserved against (services/budgets/ resolves them). The store knows
 * nothing of periods: `counter` names the budget in its current period (the period is part of the
 * name, like the limit windows), `periodEndMs` bounds how long its counters are kept.
 */
export interface BudgetCharge {
  /** Storage name of the budget in its current period, unique within the organization, e.g. `org:2026-11`. */
  readonly counter: string;
  /** The budget, integer micro-USD (> 0). */
  readonly amountMicroUsd: number;
  /** End of the current period (ms since the epoch); null for a `total` budget (kept forever). */
  readonly periodEndMs: number | null;
  /**
   * Spend of this period the ledger showed when the budget was read: the count starts from it when the
   * store has none (a restart, a flushed Redis), so a restart does not forget spend.
   */
  readonly seedMicroUsd: number;
}

/** A budget's figures at one instant, micro-USD. */
export interface BudgetFigures {
  /** Settled spend plus open reservations: what admission compares with the amount. */
  committedMicroUsd: number;
  /** Settled spend only (the real cost of finished requests). */
  spentMicroUsd: number;
}

export function limitPolicyFromTier(
  tier: Pick<TierConfig, 'requestsPerMinute' | 'tokensPerMinute' | 'tokensPerDay' | 'tokensPerMonth'> &
    Partial<Pick<TierConfig, 'organizationRequestsPerMinute' | 'organizationTokensPerMinute'>>,
): LimitPolicy {
  return {
    requestsPerMinute: tier.requestsPerMinute,
    tokensPerMinute: tier.tokensPerMinute,
    tokensPerDay: tier.tokensPerDay,
    tokensPerMonth: tier.tokensPerMonth,
    organizationRequestsPerMinute: tier.organizationRequestsPerMinute ?? 0,
    organizationTokensPerMinute: tier.organizationTokensPerMinute ?? 0,
  };
}

/** Who is counted: per-minute figures belong to the key, daily and monthly ones to its organization. */
export interface LimitSubject {
  organizationId: string;
  /** API key id (not the secret). */
  keyId: string;
}

export interface AdmitCheck {
  subject: LimitSubject;
  policy: LimitPolicy;
  /** Tokens to reserve, e.g. prompt tokens counted locally (core/count-tokens.ts) plus the maximum output tokens. Non-negative integer. */
  estimatedTokens: number;
  /** Budgets to reserve `estimatedCostMicroUsd` against, in the same atomic step (none: no budget applies). */
  budgets?: readonly BudgetCharge[];
  /** The request's worst-case cost, integer micro-USD (price-card `worstCaseCostMicroUsd`). */
  estimatedCostMicroUsd?: number;
}

/** The SPEC 429 codes, one per limit. */
export type LimitCode =
  'rpm_exceeded' | 'tpm_exceeded' | 'user_total_daily_limit_exceeded' | 'user_total_monthly_limit_exceeded' | 'budget_exceeded';

/** Whose limit refused: the key's per-minute window, or the organization's (quotas, organization-wide minute, budgets). */
export type LimitScope = 'key' | 'organization';

/** Figures of one limit window. */
export interface WindowFigures {
  /** The limit (requests or tokens); 0 means unlimited. */
  limit: number;
  /** Requests or tokens counted in the current window, open reservations included. */
  used: number;
  /** `max(0, limit - used)`; 0 when the limit is 0 (unlimited: look at `limit`). */
  remaining: number;
  /** When the window ends and the count restarts, milliseconds since the epoch. */
  resetAtMs: number;
}

/** All four windows of a subject at one instant. */
export interface LimitSnapshot {
  /** Requests in the current minute, per key. */
  requestsPerMinute: WindowFigures;
  /** Tokens in the current minute, per key. */
  tokensPerMinute: WindowFigures;
  /** Tokens today (UTC), per organization. */
  daily: WindowFigures;
  /** Tokens this month (UTC), per organization. */
  monthly: WindowFigures;
  /** The instant the figures were read at, milliseconds since the epoch. */
  atMs: number;
  /** Requests in the current minute over all the organization's keys (present when that limit is set). */
  organizationRequestsPerMinute?: WindowFigures;
  /** Tokens in the current minute over all the organization's keys (present when that limit is set). */
  organizationTokensPerMinute?: WindowFigures;
  /** The budgets of the check or reservation, in its order. */
  budgets?: BudgetFigures[];
}

/**
 * The handle of an admitted request's token reservation. A plain, serialisable object: it names the
 * windows that were charged so that settlement adjusts those same buckets even if it happens later.
 */
export interface Reservation {
  /** Unique id; settling twice with the same id is a no-op. */
  readonly id: string;
  readonly subject: LimitSubject;
  readonly policy: LimitPolicy;
  /** Tokens reserved at admission. */
  readonly estimatedTokens: number;
  /** Admission time, milliseconds since the epoch: selects the minute, day and month buckets charged. */
  readonly admittedAtMs: number;
  /** The budgets charged at admission (settlement corrects these same period counters). */
  readonly budgets?: readonly BudgetCharge[];
  /** Micro-USD reserved against each budget at admission. */
  readonly estimatedCostMicroUsd?: number;
}

export interface LimitRejection {
  code: LimitCode;
  /** The limit that failed (requests for `rpm_exceeded`, tokens otherwise). */
  limit: number;
  /** What was left of it before this request, requests or tokens. */
  remaining: number;
  /** When that limit's window resets, milliseconds since the epoch. */
  resetAtMs: number;
  /** Whole seconds until the reset, at least 1 (the `retry-after` value). */
  retryAfterSeconds: number;
  /** Tokens this request asked to reserve. */
  requestedTokens: number;
  /** Whether the key's or the organization's limit refused (organization-wide minute limits and budgets say which). */
  scope?: LimitScope;
  /** For `budget_exceeded`: which of the check's budgets refused (its index) and the micro-USD asked for. */
  budgetIndex?: number;
  requestedMicroUsd?: number;
}

export type AdmitResult =
  | {
      admitted: true;
      reservation: Reservation;
      /** Figures after this request was counted and its tokens reserved. */
      figures: LimitSnapshot;
    }
  | {
      admitted: false;
      /** When several limits fail, the one that resets last (so waiting `retry_after` is never pointless). */
      rejection: LimitRejection;
      /** Figures before this request (nothing was consumed). */
      figures: LimitSnapshot;
    };

/** An admission that passed / was refused (narrowed `AdmitResult`). */
export type AdmittedResult = Extract<AdmitResult, { admitted: true }>;
export type RejectedResult = Extract<AdmitResult, { admitted: false }>;

export interface SettleResult {
  /** True the first time a reservation is settled; false on a repeat or after the reservation expired. */
  settled: boolean;
  /** Figures of the current windows after settlement (for `_metadata.user_total_usage`). */
  figures: LimitSnapshot;
}

export interface LimitStore {
  /** Checks every limit and, only if all pass, counts one request and reserves `estimatedTokens`. Atomic. */
  admit(check: AdmitCheck): Promise<AdmitResult>;
  /**
   * Replaces the reservation by `actualTokens` (non-negative integer): releases what was not used, or
   * charges the excess. Adjusts the buckets charged at admission; a bucket whose window is over is
   * left alone. Exactly once per reservation; later calls return `settled: false` and change nothing.
   * `actualCostMicroUsd` (default 0) replaces the budgets' reservation the same way, in the same step,
   * and is added to their settled spend.
   */
  settle(reservation: Reservation, actualTokens: number, actualCostMicroUsd?: number): Promise<SettleResult>;
  /** Current figures of a subject, e.g. for the key-status endpoint's `usage_info`. Changes nothing. */
  usage(subject: LimitSubject, policy: LimitPolicy, budgets?: readonly BudgetCharge[]): Promise<LimitSnapshot>;
  /** Releases timers and connections the store owns. */
  close(): Promise<void>;
}

export interface LimitStoreOptions {
  /** Time source; defaults to the system clock. */
  clock?: { now(): number };
  /**
   * How long an unsettled reservation is remembered, milliseconds (default one hour). A settle after
   * that is a no-op and the estimate stays charged: longer streams should raise it.
   */
  reservationTtlMs?: number;
}

export const DEFAULT_RESERVATION_TTL_MS = 60 * 60 * 1000;

/** Rejects token figures that are not non-negative safe integers (a NaN would poison a counter forever). */
export function assertTokenCount(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative integer number of tokens, got ${String(value)}.`);
  }
}
