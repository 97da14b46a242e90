/**
 * The budgets' `SpendObserver` (services/budgets/spend-observer.ts): told after every settlement that
 * touched a budget, it works out in memory which alert rules the spend meets (alert-rules.ts) and
 * returns at once. The rules not yet known to have fired wait in a bounded in-memory queue that one
 * background writer empties: for each, one transaction inserts the alert row (unique per budget,
 * period start and rule, so of every instance observing the same crossing exactly one inserts it) and,
 * for the inserter only, queues its deliveries in the outbox (an email per owner, a webhook per
 * endpoint), then wakes this instance's dispatcher. Nothing on the request path waits for the database
 * or any recipient.
 *
 * A rule once written (inserted or found) is remembered per instance (for the last `MAX_REMEMBERED`
 * budgets, their current period), so a budget past 80% costs no write, and no string, per request. While the database is away, writes back off;
 * the queue keeps at most `maxPending` rules (default `MAX_PENDING`); the rest are dropped, logged once,
 * and met again by the budget's next settlement, since nothing marks them written.
 */
import type { Logger } from 'pino';
import type { AlertsConfig } from '../../config/index.ts';
import { randomAlphanumeric } from '../../core/ids.ts';
import { backoff } from '../../core/retry.ts';
import type { AlertAudience, BudgetAlertRecords, FiredAlert, NewDelivery } from './alert-records.ts';
import type { BudgetSpend, SpendObservation, SpendObserver } from '../budgets/spend-observer.ts';
import { alertEmail, alertPayload, eventTypeOf } from './alert-messages.ts';
import { ruleName, rulesMet, type AlertRule } from './alert-rules.ts';

/** Rules waiting to be written, at most: past it a rule is dropped until the budget's next settlement meets it again. */
export const MAX_PENDING = 10_000;
/** Budgets whose written rules are remembered, per instance. */
const MAX_REMEMBERED = 50_000;
const WRITE_BACKOFF = { initialMs: 500, maxMs: 30_000, jitter: 0.5 };

export interface BudgetAlertsOptions {
  repository: Pick<BudgetAlertRecords, 'fire'>;
  config: AlertsConfig;
  /** The operator's name, signing the emails. */
  operator: string;
  logger: Logger;
  /** Deliveries were queued: wakes this instance's dispatcher. */
  onQueued: () => void;
  /** Time source of the deliveries' creation and retry window, ms since the epoch (tests). */
  now?: () => number;
  /** Rules waiting to be written, at most (default `MAX_PENDING`). */
  maxPending?: number;
}

/** One budget's rules known to be written: those of its latest period seen (a threshold's percent, or `projected`). */
interface Written {
  periodStartMs: number;
  rules: Set<number | 'projected'>;
}

const ruleIdOf = (rule: AlertRule): number | 'projected' => (rule.kind === 'threshold' ? rule.percent : 'projected');

interface Candidate {
  budget: BudgetSpend;
  rule: AlertRule;
  requestId: string;
  atMs: number;
}

export class BudgetAlerts implements SpendObserver {
  private readonly now: () => number;
  private readonly maxPending: number;
  /** Per budget id, oldest first (a Map keeps insertion order: the oldest is forgotten first). */
  private readonly written = new Map<string, Written>();
  private readonly pending = new Map<string, Candidate>();
  private writing: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private dropped = 0;
  /** Set by close(): nothing is retried any more (the database is about to close). */
  private closed = false;

  constructor(private readonly options: BudgetAlertsOptions) {
    this.now = options.now ?? Date.now;
    this.maxPending = options.maxPending ?? MAX_PENDING;
  }

  observe(observation: SpendObservation): void {
    try {
      const minElapsed = this.options.config.projectedMinElapsedPercent;
      for (const budget of observation.budgets) {
        for (const rule of rulesMet(budget, observation.atMs, minElapsed)) {
          const written = this.written.get(budget.budgetId);
          // The common case late in a period: no string is built, no write is queued.
          if (written !== undefined && written.periodStartMs === budget.periodStartMs && written.rules.has(ruleIdOf(rule))) continue;
          const key = `${budget.budgetId}\u0000${budget.periodStartMs}\u0000${ruleName(rule)}`;
          if (this.pending.has(key)) continue;
          if (this.pending.size >= this.maxPending) {
            if (this.dropped++ === 0)
              this.options.logger.warn(
                { pending: this.maxPending },
                'budget alerts queue is full; new alerts wait for the next settlement',
              );
            continue;
          }
          this.pending.set(key, { budget, rule, requestId: observation.requestId, atMs: observation.atMs });
        }
      }
      if (this.pending.size > 0 && this.writing === undefined && this.retryTimer === undefined && !this.closed) this.writing = this.drain();
    } catch (error) {
      // The contract: never throw into the settlement.
      this.options.logger.error({ err: error }, 'budget alert observation failed');
    }
  }

  /** Rules met but not yet written (at most `maxPending`). */
  get waiting(): number {
    return this.pending.size;
  }

  /** Resolves once the rules waiting now are written, or the writer is backing off (tests, shutdown). */
  async flush(): Promise<void> {
    while (this.writing !== undefined) await this.writing;
  }

  /** Writes what waits (bounded by `timeoutMs`), then stops retrying. */
  async close(timeoutMs = 5_000): Promise<void> {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.pending.size > 0 && this.writing === undefined) this.writing = this.drain();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.flush(), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    this.closed = true;
    clearTimeout(this.retryTimer);
  }

  /** Writes the waiting rules one by one; on a failure, backs off and tries again later. */
  private async drain(): Promise<void> {
    // Off the caller's stack: observe() has returned before the first write starts.
    await Promise.resolve();
    let queued = false;
    try {
      for (const [key, candidate] of this.pending) {
        if (await this.write(candidate)) queued = true;
        this.pending.delete(key);
        this.remember(candidate);
      }
      if (this.failures > 0) this.options.logger.info('budget alerts are written again');
      this.failures = 0;
      if (this.dropped > 0) this.options.logger.warn({ dropped: this.dropped }, 'budget alerts were dropped while the queue was full');
      this.dropped = 0;
    } catch (error) {
      if (this.failures++ === 0)
        this.options.logger.warn({ err: error }, 'budget alerts cannot be written (database); retrying with backoff');
      if (this.closed) return;
      this.retryTimer = setTimeout(
        () => {
          this.retryTimer = undefined;
          if (this.writing === undefined) this.writing = this.drain();
        },
        backoff(WRITE_BACKOFF, this.failures - 1),
      );
      this.retryTimer.unref();
    } finally {
      this.writing = undefined;
      if (queued) this.options.onQueued();
    }
  }

  /**
   * Marks a rule written. A later period replaces an earlier one; past `MAX_REMEMBERED` budgets the
   * oldest is forgotten: its next settlement then tries its inserts once more, finds the rows and
   * remembers them again (a write per rule, no alert).
   */
  private remember(candidate: Candidate): void {
    const { budgetId, periodStartMs } = candidate.budget;
    let entry = this.written.get(budgetId);
    if (entry === undefined || entry.periodStartMs < periodStartMs) {
      if (entry === undefined && this.written.size >= MAX_REMEMBERED) {
        const oldest = this.written.keys().next();
        if (oldest.done !== true) this.written.delete(oldest.value);
      }
      entry = { periodStartMs, rules: new Set() };
      this.written.set(budgetId, entry);
    }
    if (entry.periodStartMs === periodStartMs) entry.rules.add(ruleIdOf(candidate.rule));
  }

  /** One rule: the alert row and, when this instance inserted it, its deliveries. True when inserted. */
  private async write(candidate: Candidate): Promise<boolean> {
    const { budget, rule } = candidate;
    const alert: FiredAlert = {
      id: `alert_${randomAlphanumeric(24)}`,
      budgetId: budget.budgetId,
      periodStart: budget.periodStartMs,
      rule: ruleName(rule),
      organizationId: budget.organizationId,
      keyId: budget.keyId,
      scope: budget.scope,
      period: budget.period,
      periodEnd: budget.periodEndMs,
      amountMicroUsd: budget.amountMicroUsd,
      spentMicroUsd: budget.spentMicroUsd,
      thresholdPercent: rule.kind === 'threshold' ? rule.percent : null,
      projectedMicroUsd: rule.kind === 'projected' ? rule.projectedMicroUsd : null,
      requestId: candidate.requestId,
      createdAt: candidate.atMs,
    };
    const eventType = eventTypeOf(alert);
    return this.options.repository.fire(alert, eventType, (audience) => this.deliveriesOf(alert, eventType, audience));
  }

  /** An email per owner (when alert mail is on) and a webhook per endpoint that takes the event. */
  private deliveriesOf(alert: FiredAlert, eventType: string, audience: AlertAudience): NewDelivery[] {
    const now = this.now();
    const giveUpAt = now + this.options.config.delivery.retryForMs;
    const common = { alertId: alert.id, eventType, organizationId: alert.organizationId, nextAttemptAt: now, giveUpAt, createdAt: now };
    const deliveries: NewDelivery[] = [];
    if (this.options.config.emails && audience.ownerEmails.length > 0) {
      const email = JSON.stringify(alertEmail(alert, audience.keyLabel, this.options.operator));
      for (const to of audience.ownerEmails) {
        deliveries.push({
          ...common,
          id: newMessageId(),
          kind: 'email',
          audienceOrganizationId: alert.organizationId,
          endpointId: null,
          target: to,
          payload: email,
        });
      }
    }
    if (audience.endpoints.length > 0) {
      const payload = alertPayload(alert, audience.keyLabel);
      for (const endpoint of audience.endpoints) {
        deliveries.push({
          ...common,
          id: newMessageId(),
          kind: 'webhook',
          audienceOrganizationId: endpoint.organizationId,
          endpointId: endpoint.id,
          target: endpoint.url,
          payload,
        });
      }
    }
    return deliveries;
  }
}

/** A delivery's id, which is also its webhook's `webhook-id`. */
export function newMessageId(): string {
  return `msg_${randomAlphanumeric(24)}`;
}
