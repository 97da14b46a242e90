/**
 * The shared (Redis) limit store behind a circuit breaker, with a documented policy for the time it
 * cannot be reached (`limits.onStoreFailure`, README "When a dependency fails"):
 *
 * - `local` (default): admit against this instance's own memory counters until Redis returns. Each
 *   instance then enforces the full limits on its own: with N instances a key can get up to N times
 *   its per-minute limit for the length of the outage, and the daily/monthly totals counted meanwhile
 *   live only in that instance's memory.
 * - `open`: admit everything without counting (Envoy's `failure_mode_deny: false`).
 * - `closed`: refuse metered requests at once with 500 `service_unavailable` and `retry-after`.
 *
 * With `refusePaid`, a request that reserves money against a budget is refused like `closed` while the
 * shared count is unknown, whatever the policy (no budget can be overrun by an outage).
 *
 * Whatever the policy, requests that reserve no tokens (files, batches, models, key status) are never
 * refused because the store is away: they need no counter. A reservation is settled where it was
 * made; a settle that fails is not an error for the request (its counters expire on their own).
 * While the breaker is open no call reaches Redis, so a refusal or a local admission costs
 * microseconds, and the breaker's probe notices the heal.
 */
import type { CircuitBreaker } from '../core/circuit-breaker.ts';
import { DisabledLimitStore } from './disabled/disabled-limit-store.ts';
import type {
  AdmitCheck,
  AdmitResult,
  BudgetCharge,
  LimitPolicy,
  LimitSnapshot,
  LimitStore,
  LimitSubject,
  Reservation,
  SettleResult,
} from './limit-store.ts';
import { MemoryLimitStore } from './memory/memory-limit-store.ts';

export type StoreFailurePolicy = 'local' | 'open' | 'closed';

export interface FailoverLimitStoreOptions {
  primary: LimitStore;
  breaker: CircuitBreaker;
  policy: StoreFailurePolicy;
  clock?: { now(): number };
  /** While the shared count is unknown, refuse requests that reserve money against a budget, whatever `policy` (`limits.refusePaidOnStoreFailure`). */
  refusePaid?: boolean;
}

export class FailoverLimitStore implements LimitStore {
  private readonly primary: LimitStore;
  private readonly breaker: CircuitBreaker;
  private readonly policy: StoreFailurePolicy;
  private readonly refusePaid: boolean;
  private readonly local: LimitStore;
  private readonly uncounted: DisabledLimitStore;
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
  }

  admit(check: AdmitCheck): Promise<AdmitResult> {
    return this.breaker.orElse(
      () => this.primary.admit(check),
      () => this.fallbackAdmit(check),
    );
  }

  async settle(reservation: Reservation, actualTokens: number, actualCostMicroUsd?: number): Promise<SettleResult> {
    if (this.fallbackReservations.has(reservation)) return this.local.settle(reservation, actualTokens, actualCostMicroUsd);
    // The shared reservation stays charged at its estimate until its window expires: never more.
    return this.breaker.orElse(
      () => this.primary.settle(reservation, actualTokens, actualCostMicroUsd),
      async () => ({ settled: false, figures: await this.local.usage(reservation.subject, reservation.policy) }),
    );
  }

  usage(subject: LimitSubject, policy: LimitPolicy, budgets?: readonly BudgetCharge[]): Promise<LimitSnapshot> {
    return this.breaker.orElse(
      () => this.primary.usage(subject, policy, budgets),
      () => this.local.usage(subject, policy, budgets),
    );
  }

  async close(): Promise<void> {
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
      result = await this.local.admit(check);
    }
    this.fallbackAdmissions++;
    if (result.admitted) this.fallbackReservations.add(result.reservation);
    return result;
  }
}
