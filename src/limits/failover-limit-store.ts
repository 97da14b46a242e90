/**
 * The shared (Redis) limit store behind a circuit breaker, with a documented policy for the time it
 * cannot be reached (`limits.onStoreFailure`, README "When a dependency fails"):
 *
 * - `local` (default): admit against this instance's own memory counters until Redis returns. Each
 *   instance starts its local count of a window from the last figures it read from Redis for that
 *   window (so what Redis already admitted of the minute is not handed out again), and writes what it
 *   admitted locally back to Redis when Redis returns, before its next shared decision (so the rest of
 *   the window is decided on everything admitted). With N instances a key can therefore get at most N
 *   times its per-minute limit in a minute of the outage (each instance at most the limit less what it
 *   last saw counted; the last admission Redis made was seen by some instance), and no more in the
 *   minute Redis returns; daily and monthly totals admitted meanwhile reach Redis when it returns.
 * - `open`: admit everything without counting (Envoy's `failure_mode_deny: false`).
 * - `closed`: refuse metered requests at once with 500 `service_unavailable` and `retry-after`.
 *
 * With `refusePaid`, a request that reserves money against a budget is refused like `closed` while the
 * shared count is unknown, whatever the policy (no budget can be overrun by an outage).
 *
 * Whatever the policy, requests that reserve no tokens (files, batches, models, key status) are never
 * refused because the store is away: they need no counter. A reservation is settled where it was
 * made; a settle that fails is not an error for the request. A shared settle that could not reach
 * Redis (or found the breaker open) is kept and tried again until it lands (`unsettled-settlements.ts`:
 * exactly once on Redis' side), so the budgets' settled spend is not undercounted by an outage; the
 * cost of requests admitted and settled locally during an outage is written back to the budgets'
 * counters with the owed counts when Redis returns.
 * While the breaker is open no call reaches Redis, so a refusal or a local admission costs
 * microseconds, and the breaker's probe notices the heal.
 */
import { isUnreachableError, type CircuitBreaker } from '../core/circuit-breaker.ts';
import { DisabledLimitStore } from './disabled/disabled-limit-store.ts';
import type { CounterValues } from './limit-decision.ts';
import {
  DEFAULT_RESERVATION_TTL_MS,
  type AdmitCheck,
  type AdmitResult,
  type BudgetCharge,
  type LimitPolicy,
  type LimitSnapshot,
  type LimitStore,
  type LimitSubject,
  type Reservation,
  type SettleResult,
} from './limit-store.ts';
import { windowsAt } from './limit-windows.ts';
import { MemoryLimitStore } from './memory/memory-limit-store.ts';
import type { LimitCountWriter } from './redis/redis-count-writer.ts';
import { UnsettledSettlements } from './unsettled-settlements.ts';

export type StoreFailurePolicy = 'local' | 'open' | 'closed';

export interface FailoverLimitStoreOptions {
  primary: LimitStore;
  breaker: CircuitBreaker;
  policy: StoreFailurePolicy;
  clock?: { now(): number };
  /** Writes counts admitted locally back to the shared store when it returns (policy `local`). */
  writer?: LimitCountWriter;
  /** While the shared count is unknown, refuse requests that reserve money against a budget, whatever `policy` (`limits.refusePaidOnStoreFailure`). */
  refusePaid?: boolean;
  /** How long the shared store keeps a reservation record, ms (default one hour): unsettled settlements are tried that long. */
  reservationTtlMs?: number;
}

/** Subjects whose last shared figures are remembered (most recently used kept). */
const KNOWN_SUBJECTS_MAX = 50_000;

/** Counts admitted locally and not yet written back, with the instant their windows were chosen. */
interface OwedCounts {
  subject: LimitSubject;
  counts: CounterValues;
  atMs: number;
}

/** Money spent on a budget by requests admitted and settled locally, not yet written back. */
interface OwedSpend {
  subject: LimitSubject;
  charge: BudgetCharge;
  costMicroUsd: number;
}

const subjectKey = (subject: LimitSubject): string => `${subject.organizationId}\u0000${subject.keyId}`;

function countsOf(figures: LimitSnapshot): CounterValues {
  return {
    requests: figures.requestsPerMinute.used,
    minuteTokens: figures.tokensPerMinute.used,
    dayTokens: figures.daily.used,
    monthTokens: figures.monthly.used,
  };
}

/**
 * Writes each entry of `owed` and deletes it once written. Unreachable again: the rest is kept for the
 * next call (thrown). Any other answer would repeat forever: that entry is dropped.
 */
async function drain<T>(owed: Map<string, T>, write: (entry: T) => Promise<void> | undefined): Promise<void> {
  for (const [key, entry] of [...owed]) {
    try {
      await write(entry);
    } catch (error) {
      if (isUnreachableError(error)) throw error;
    }
    owed.delete(key);
  }
}

export class FailoverLimitStore implements LimitStore {
  private readonly primary: LimitStore;
  private readonly breaker: CircuitBreaker;
  private readonly policy: StoreFailurePolicy;
  private readonly refusePaid: boolean;
  private readonly local: LimitStore;
  private readonly uncounted: DisabledLimitStore;
  private readonly clock: { now(): number };
  private readonly writer: LimitCountWriter | undefined;
  /** The last figures the shared store answered per subject (seed of the local count). */
  private readonly known = new Map<string, LimitSnapshot>();
  /** What was admitted locally per subject, owed to the shared store. */
  private readonly owed = new Map<string, OwedCounts>();
  /** Budget spend settled locally per budget counter, owed to the shared store. */
  private readonly owedSpend = new Map<string, OwedSpend>();
  /** Shared settlements that did not reach the store, tried again until they land. */
  readonly unsettled: UnsettledSettlements;
  private writingBack: Promise<void> | undefined;
  /** Reservations made while the shared store was away: settled where they were made. */
  private readonly fallbackReservations = new WeakSet<Reservation>();
  /** Admissions answered without the shared store since start (metrics and the breaker's log). */
  fallbackAdmissions = 0;

  constructor(options: FailoverLimitStoreOptions) {
    this.primary = options.primary;
    this.breaker = options.breaker;
    this.policy = options.policy;
    this.refusePaid = options.refusePaid === true;
    const clock = options.clock === undefined ? {} : { clock: options.clock };
    this.local = options.policy === 'local' ? new MemoryLimitStore(clock) : new DisabledLimitStore(clock);
    this.uncounted = new DisabledLimitStore(clock);
    this.clock = options.clock ?? { now: () => Date.now() };
    this.writer = options.policy === 'local' ? options.writer : undefined;
    this.unsettled = new UnsettledSettlements({
      settle: ({ reservation, actualTokens, actualCostMicroUsd }) =>
        this.breaker.orElse(
          () => this.primary.settle(reservation, actualTokens, actualCostMicroUsd),
          () => Promise.reject(this.breaker.unavailable()),
        ),
      reachable: () => this.breaker.state === 'closed',
      clock: this.clock,
      reservationTtlMs: options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS,
    });
  }

  /** Subjects with locally admitted counts, and budgets with local spend, not yet written back to the shared store (tests, metrics). */
  get owedSubjects(): number {
    return this.owed.size + this.owedSpend.size;
  }

  admit(check: AdmitCheck): Promise<AdmitResult> {
    return this.breaker.orElse(
      () =>
        this.shared(
          check.subject,
          () => this.primary.admit(check),
          (result) => result.figures,
        ),
      () => this.fallbackAdmit(check),
    );
  }

  async settle(reservation: Reservation, actualTokens: number, actualCostMicroUsd?: number): Promise<SettleResult> {
    if (this.fallbackReservations.has(reservation)) {
      const result = await this.local.settle(reservation, actualTokens, actualCostMicroUsd);
      if (result.settled) {
        this.owe(reservation.subject, reservation.admittedAtMs, 0, actualTokens - reservation.estimatedTokens);
        if (actualCostMicroUsd !== undefined && actualCostMicroUsd > 0)
          for (const charge of reservation.budgets ?? []) this.oweSpend(reservation.subject, charge, actualCostMicroUsd);
      }
      return result;
    }
    // Not taken by the shared store now: kept and tried again until it lands (the reservation stays
    // charged at its estimate meanwhile).
    return this.breaker.orElse(
      () =>
        this.shared(
          reservation.subject,
          () => this.primary.settle(reservation, actualTokens, actualCostMicroUsd),
          (result) => result.figures,
        ),
      async () => {
        this.unsettled.keep({ reservation, actualTokens, actualCostMicroUsd });
        return { settled: false, figures: await this.local.usage(reservation.subject, reservation.policy) };
      },
    );
  }

  usage(subject: LimitSubject, policy: LimitPolicy, budgets?: readonly BudgetCharge[]): Promise<LimitSnapshot> {
    return this.breaker.orElse(
      () =>
        this.shared(
          subject,
          () => this.primary.usage(subject, policy, budgets),
          (figures) => figures,
        ),
      () => {
        this.seedLocal(subject);
        return this.local.usage(subject, policy, budgets);
      },
    );
  }

  /**
   * A call on the shared store: first what is owed to it (written back once, whoever asks first), then
   * the call, whose figures are remembered as the subject's last known count.
   */
  private async shared<T>(subject: LimitSubject, call: () => Promise<T>, figuresOf: (result: T) => LimitSnapshot): Promise<T> {
    if (this.owed.size > 0 || this.owedSpend.size > 0) await this.writeBack();
    if (this.unsettled.size > 0) void this.unsettled.retry();
    const result = await call();
    const key = subjectKey(subject);
    this.known.delete(key);
    this.known.set(key, figuresOf(result));
    if (this.known.size > KNOWN_SUBJECTS_MAX) this.known.delete(this.known.keys().next().value!);
    return result;
  }

  /** Writes every owed count and spend back (single flight); a failure keeps what was not written for the next call. */
  private writeBack(): Promise<void> {
    this.writingBack ??= (async () => {
      try {
        await drain(this.owed, (owed) => this.writer?.addCounts(owed.subject, owed.counts, owed.atMs));
        await drain(this.owedSpend, (owed) => this.writer?.addSpend(owed.subject, owed.charge, owed.costMicroUsd));
      } finally {
        this.writingBack = undefined;
      }
    })();
    return this.writingBack;
  }

  /** Starts the local count of the subject's current windows from the last figures Redis answered. */
  private seedLocal(subject: LimitSubject): void {
    if (!(this.local instanceof MemoryLimitStore)) return;
    const figures = this.known.get(subjectKey(subject));
    if (figures !== undefined) this.local.raiseCounts(subject, countsOf(figures), figures.atMs);
  }

  /** Counts a local admission (or a settlement's correction) as owed to the shared store. */
  private owe(subject: LimitSubject, atMs: number, requests: number, tokens: number): void {
    if (this.writer === undefined || (requests === 0 && tokens === 0)) return;
    const key = subjectKey(subject);
    const nowMs = this.clock.now();
    let owed = this.owed.get(key);
    const current = windowsAt(nowMs);
    if (owed !== undefined && windowsAt(owed.atMs).minute.startMs !== current.minute.startMs) {
      // A new minute: what the last one owes is history for the minute counters, not for the day and month.
      const { dayTokens, monthTokens } = owed.counts;
      const sameDay = windowsAt(owed.atMs).day.startMs === current.day.startMs;
      const sameMonth = windowsAt(owed.atMs).month.startMs === current.month.startMs;
      owed = {
        subject,
        atMs: nowMs,
        counts: { requests: 0, minuteTokens: 0, dayTokens: sameDay ? dayTokens : 0, monthTokens: sameMonth ? monthTokens : 0 },
      };
      this.owed.set(key, owed);
    }
    if (owed === undefined) {
      owed = { subject, atMs: nowMs, counts: { requests: 0, minuteTokens: 0, dayTokens: 0, monthTokens: 0 } };
      this.owed.set(key, owed);
    }
    const admitted = windowsAt(atMs);
    if (admitted.minute.startMs === current.minute.startMs) {
      owed.counts.requests += requests;
      owed.counts.minuteTokens = Math.max(0, owed.counts.minuteTokens + tokens);
    }
    if (admitted.day.startMs === current.day.startMs) owed.counts.dayTokens = Math.max(0, owed.counts.dayTokens + tokens);
    if (admitted.month.startMs === current.month.startMs) owed.counts.monthTokens = Math.max(0, owed.counts.monthTokens + tokens);
  }

  /** Counts money settled locally on a budget as owed to the shared store's counters. */
  private oweSpend(subject: LimitSubject, charge: BudgetCharge, costMicroUsd: number): void {
    if (this.writer === undefined) return;
    const key = `${subject.organizationId}\u0000${charge.counter}`;
    const owed = this.owedSpend.get(key);
    if (owed === undefined) this.owedSpend.set(key, { subject, charge, costMicroUsd });
    else owed.costMicroUsd += costMicroUsd;
  }

  async close(): Promise<void> {
    // One last try of the settlements still kept (bounded by the connection's silence bound).
    await this.unsettled.close();
    await this.primary.close();
    await this.local.close();
  }

  private async fallbackAdmit(check: AdmitCheck): Promise<AdmitResult> {
    let result: AdmitResult;
    if (check.estimatedTokens === 0 && this.policy !== 'local') {
      // Request-only routes need no counter: never refused for the store's absence.
      result = await this.uncounted.admit(check);
    } else if (this.policy === 'closed' || (this.refusePaid && (check.budgets?.length ?? 0) > 0)) {
      throw this.breaker.unavailable();
    } else {
      this.seedLocal(check.subject);
      result = await this.local.admit(check);
      if (result.admitted) this.owe(check.subject, result.reservation.admittedAtMs, 1, check.estimatedTokens);
    }
    this.fallbackAdmissions++;
    if (result.admitted) this.fallbackReservations.add(result.reservation);
    return result;
  }
}
