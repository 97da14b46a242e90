/**
 * In-process limit store: the default for a single instance. Every operation runs synchronously
 * between two awaits, so Node's single thread makes check-and-consume atomic without locks.
 *
 * State is one record per organization (its day and month counters) holding one record per key (its
 * minute counters). Each counter remembers the start of the window it counts; a counter whose window
 * is over reads as 0 and restarts on the next charge, exactly like the Redis keys whose window is in
 * their name. Lookups use the caller's own id strings (no key building on the hot path), and finished
 * entries are swept now and then so memory stays bounded by the subjects active this month.
 * Several instances each with this store would each enforce the full limit: use redis/ for that.
 */
import { randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../clock.ts';
import { buildRejection, buildSnapshot, FAILED_BUDGET, failedBudget, failedLimits, type CounterValues } from '../limit-decision.ts';
import {
  assertTokenCount,
  DEFAULT_RESERVATION_TTL_MS,
  type AdmitCheck,
  type AdmitResult,
  type BudgetCharge,
  type LimitPolicy,
  type LimitSnapshot,
  type LimitStore,
  type LimitStoreOptions,
  type LimitSubject,
  type Reservation,
  type SettleResult,
} from '../limit-store.ts';
import { windowsAt, type ChargedWindows, type LimitWindow } from '../limit-windows.ts';

/** A count inside one window; `windowStartMs` says which. */
interface Counter {
  windowStartMs: number;
  value: number;
}

interface KeyState {
  requests: Counter;
  minuteTokens: Counter;
}

/** A budget in one period (the period is in the counter's name). */
interface BudgetState {
  committed: number;
  spent: number;
  /** Dropped by the sweep after this (null: a total budget, kept). */
  periodEndMs: number | null;
}

interface OrganizationState {
  dayTokens: Counter;
  monthTokens: Counter;
  /** Organization-wide minute counters (all keys). */
  requests: Counter;
  minuteTokens: Counter;
  budgets: Map<string, BudgetState>;
  keys: Map<string, KeyState>;
}

interface OpenReservation {
  estimatedTokens: number;
  estimatedCostMicroUsd: number;
  /** Milliseconds since the epoch after which a settle is ignored. */
  expiresAtMs: number;
}

/** Operations between two sweeps of finished entries. */
const SWEEP_EVERY_OPERATIONS = 10_000;

const newCounter = (): Counter => ({ windowStartMs: Number.NEGATIVE_INFINITY, value: 0 });

function read(counter: Counter | undefined, window: Readonly<LimitWindow>): number {
  return counter !== undefined && counter.windowStartMs === window.startMs ? counter.value : 0;
}

function charge(counter: Counter, window: Readonly<LimitWindow>, amount: number): number {
  if (counter.windowStartMs !== window.startMs) {
    counter.windowStartMs = window.startMs;
    counter.value = 0;
  }
  counter.value += amount;
  return counter.value;
}

/** Settlement only corrects the window the reservation was charged in, and only while it is current. */
function adjust(counter: Counter | undefined, chargedWindow: Readonly<LimitWindow>, delta: number): void {
  if (counter !== undefined && counter.windowStartMs === chargedWindow.startMs) counter.value = Math.max(0, counter.value + delta);
}

export class MemoryLimitStore implements LimitStore {
  private readonly organizations = new Map<string, OrganizationState>();
  private readonly reservations = new Map<string, OpenReservation>();
  private readonly clock: Clock;
  private readonly reservationTtlMs: number;
  /** Reservation ids only need to be unique within this store: a random prefix and a counter. */
  private readonly reservationPrefix = randomBytes(6).toString('hex');
  private reservationCounter = 0;
  private operationsSinceSweep = 0;

  constructor(options: LimitStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.reservationTtlMs = options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
  }

  /**
   * Restores the day and month token totals of organizations (from the usage ledger at start-up), so a
   * restart of a single instance does not hand every organization a fresh daily and monthly quota.
   * Only the current windows are set; minute counters start empty.
   */
  restoreTotals(totals: ReadonlyArray<{ organizationId: string; dayTokens: number; monthTokens: number }>): void {
    const windows = windowsAt(this.clock.now());
    for (const total of totals) {
      const organization = this.organizationState(total.organizationId);
      organization.dayTokens = { windowStartMs: windows.day.startMs, value: total.dayTokens };
      organization.monthTokens = { windowStartMs: windows.month.startMs, value: total.monthTokens };
    }
  }

  /**
   * Raises the current windows' counters of `subject` to `values` (figures read at `atMs`, e.g. from the
   * shared store), never lowering them; a window that has ended since `atMs` is left alone. The
   * failover store starts its local count from Redis' last known figures this way (issue 39).
   */
  raiseCounts(subject: LimitSubject, values: CounterValues, atMs: number): void {
    const now = windowsAt(this.clock.now());
    const then = windowsAt(atMs);
    const organization = this.organizationState(subject.organizationId);
    const key = this.keyState(organization, subject.keyId);
    const raise = (counter: Counter, window: Readonly<LimitWindow>, thenWindow: Readonly<LimitWindow>, value: number): void => {
      if (window.startMs !== thenWindow.startMs) return;
      if (counter.windowStartMs !== window.startMs) {
        counter.windowStartMs = window.startMs;
        counter.value = 0;
      }
      counter.value = Math.max(counter.value, value);
    };
    raise(key.requests, now.minute, then.minute, values.requests);
    raise(key.minuteTokens, now.minute, then.minute, values.minuteTokens);
    raise(organization.dayTokens, now.day, then.day, values.dayTokens);
    raise(organization.monthTokens, now.month, then.month, values.monthTokens);
  }

  async admit(check: AdmitCheck): Promise<AdmitResult> {
    assertTokenCount(check.estimatedTokens, 'estimatedTokens');
    const nowMs = this.clock.now();
    this.sweepNowAndThen(nowMs);
    const windows = windowsAt(nowMs);
    const organization = this.organizationState(check.subject.organizationId);
    const key = this.keyState(organization, check.subject.keyId);
    const budgetStates = check.budgets === undefined ? undefined : this.budgetStates(organization, check.budgets);
    const values = this.values(organization, key, windows, budgetStates);
    const cost = check.estimatedCostMicroUsd ?? 0;
    assertTokenCount(cost, 'estimatedCostMicroUsd');
    let failed = failedLimits(check.policy, values, check.estimatedTokens);
    const budgetIndex = failedBudget(check.budgets, values.budgetsCommitted, cost);
    if (budgetIndex >= 0) failed |= FAILED_BUDGET;
    if (failed !== 0) {
      const snapshot = buildSnapshot(check.policy, values, windows, nowMs);
      const budget =
        budgetIndex >= 0 ? { index: budgetIndex, charge: check.budgets![budgetIndex]!, estimatedCostMicroUsd: cost } : undefined;
      return { admitted: false, rejection: buildRejection(failed, snapshot, check.estimatedTokens, budget), figures: snapshot };
    }
    const estimate = check.estimatedTokens;
    const after: CounterValues = {
      requests: charge(key.requests, windows.minute, 1),
      minuteTokens: charge(key.minuteTokens, windows.minute, estimate),
      dayTokens: charge(organization.dayTokens, windows.day, estimate),
      monthTokens: charge(organization.monthTokens, windows.month, estimate),
      organizationRequests: charge(organization.requests, windows.minute, 1),
      organizationMinuteTokens: charge(organization.minuteTokens, windows.minute, estimate),
    };
    if (budgetStates !== undefined) {
      for (const state of budgetStates) state.committed += cost;
      after.budgetsCommitted = budgetStates.map((state) => state.committed);
      after.budgetsSpent = budgetStates.map((state) => state.spent);
    }
    this.reservationCounter += 1;
    // Written field by field: a conditional spread in this literal took V8's slow path on every admission.
    const reservation: { -readonly [Field in keyof Reservation]: Reservation[Field] } = {
      id: `${this.reservationPrefix}-${this.reservationCounter}`,
      subject: { organizationId: check.subject.organizationId, keyId: check.subject.keyId },
      policy: { ...check.policy },
      estimatedTokens: estimate,
      admittedAtMs: nowMs,
    };
    if (check.budgets !== undefined && check.budgets.length > 0) {
      reservation.budgets = check.budgets;
      reservation.estimatedCostMicroUsd = cost;
    }
    // A request-only admission (no tokens or budgets reserved) has nothing to settle: keep no record of it.
    if (estimate > 0 || reservation.budgets !== undefined)
      this.reservations.set(reservation.id, {
        estimatedTokens: estimate,
        estimatedCostMicroUsd: cost,
        expiresAtMs: nowMs + this.reservationTtlMs,
      });
    return { admitted: true, reservation, figures: buildSnapshot(check.policy, after, windows, nowMs) };
  }

  async settle(reservation: Reservation, actualTokens: number, actualCostMicroUsd = 0): Promise<SettleResult> {
    assertTokenCount(actualTokens, 'actualTokens');
    assertTokenCount(actualCostMicroUsd, 'actualCostMicroUsd');
    const nowMs = this.clock.now();
    const open = this.reservations.get(reservation.id);
    let settled = false;
    if (open !== undefined) {
      this.reservations.delete(reservation.id);
      if (open.expiresAtMs > nowMs) {
        settled = true;
        const delta = actualTokens - open.estimatedTokens;
        const organization = this.organizations.get(reservation.subject.organizationId);
        if (delta !== 0 && organization !== undefined) {
          const charged = windowsAt(reservation.admittedAtMs);
          const key = organization.keys.get(reservation.subject.keyId);
          adjust(key?.minuteTokens, charged.minute, delta);
          adjust(organization.minuteTokens, charged.minute, delta);
          adjust(organization.dayTokens, charged.day, delta);
          adjust(organization.monthTokens, charged.month, delta);
        }
        // Budgets: the reservation is replaced by the real cost in the period it was charged to.
        for (const charge of reservation.budgets ?? []) {
          const state = organization?.budgets.get(charge.counter);
          if (state === undefined) continue;
          state.committed = Math.max(0, state.committed + actualCostMicroUsd - open.estimatedCostMicroUsd);
          state.spent += actualCostMicroUsd;
        }
      }
    }
    return { settled, figures: this.snapshot(reservation.subject, reservation.policy, nowMs, reservation.budgets) };
  }

  async usage(subject: LimitSubject, policy: LimitPolicy, budgets?: readonly BudgetCharge[]): Promise<LimitSnapshot> {
    return this.snapshot(subject, policy, this.clock.now(), budgets);
  }

  async close(): Promise<void> {
    this.organizations.clear();
    this.reservations.clear();
  }

  private snapshot(subject: LimitSubject, policy: LimitPolicy, nowMs: number, budgets?: readonly BudgetCharge[]): LimitSnapshot {
    const windows = windowsAt(nowMs);
    const organization = this.organizations.get(subject.organizationId);
    const key = organization?.keys.get(subject.keyId);
    const budgetStates =
      budgets === undefined
        ? undefined
        : budgets.map(
            (charge) =>
              organization?.budgets.get(charge.counter) ?? {
                committed: charge.seedMicroUsd,
                spent: charge.seedMicroUsd,
                periodEndMs: null,
              },
          );
    return buildSnapshot(policy, this.values(organization, key, windows, budgetStates), windows, nowMs);
  }

  private values(
    organization: OrganizationState | undefined,
    key: KeyState | undefined,
    windows: ChargedWindows,
    budgets?: readonly BudgetState[],
  ): CounterValues {
    const values: CounterValues = {
      requests: read(key?.requests, windows.minute),
      minuteTokens: read(key?.minuteTokens, windows.minute),
      dayTokens: read(organization?.dayTokens, windows.day),
      monthTokens: read(organization?.monthTokens, windows.month),
      organizationRequests: read(organization?.requests, windows.minute),
      organizationMinuteTokens: read(organization?.minuteTokens, windows.minute),
    };
    if (budgets !== undefined) {
      values.budgetsCommitted = budgets.map((state) => state.committed);
      values.budgetsSpent = budgets.map((state) => state.spent);
    }
    return values;
  }

  /** The states of a check's budgets, created from the ledger seed when this store has none for the period. */
  private budgetStates(organization: OrganizationState, budgets: readonly BudgetCharge[]): BudgetState[] {
    return budgets.map((charge) => {
      let state = organization.budgets.get(charge.counter);
      if (state === undefined) {
        state = { committed: charge.seedMicroUsd, spent: charge.seedMicroUsd, periodEndMs: charge.periodEndMs };
        organization.budgets.set(charge.counter, state);
      }
      return state;
    });
  }

  private organizationState(organizationId: string): OrganizationState {
    let state = this.organizations.get(organizationId);
    if (state === undefined) {
      state = {
        dayTokens: newCounter(),
        monthTokens: newCounter(),
        requests: newCounter(),
        minuteTokens: newCounter(),
        budgets: new Map(),
        keys: new Map(),
      };
      this.organizations.set(organizationId, state);
    }
    return state;
  }

  private keyState(organization: OrganizationState, keyId: string): KeyState {
    let state = organization.keys.get(keyId);
    if (state === undefined) {
      state = { requests: newCounter(), minuteTokens: newCounter() };
      organization.keys.set(keyId, state);
    }
    return state;
  }

  /** Drops keys whose minute is over and organizations whose month is over, and expired reservations. */
  private sweepNowAndThen(nowMs: number): void {
    this.operationsSinceSweep += 1;
    if (this.operationsSinceSweep < SWEEP_EVERY_OPERATIONS) return;
    this.operationsSinceSweep = 0;
    const windows = windowsAt(nowMs);
    for (const [organizationId, organization] of this.organizations) {
      for (const [keyId, key] of organization.keys)
        if (key.requests.windowStartMs !== windows.minute.startMs) organization.keys.delete(keyId);
      for (const [counter, budget] of organization.budgets)
        if (budget.periodEndMs !== null && budget.periodEndMs + 60_000 <= nowMs) organization.budgets.delete(counter);
      if (
        organization.keys.size === 0 &&
        organization.budgets.size === 0 &&
        organization.monthTokens.windowStartMs !== windows.month.startMs
      )
        this.organizations.delete(organizationId);
    }
    for (const [id, open] of this.reservations) if (open.expiresAtMs <= nowMs) this.reservations.delete(id);
  }
}
