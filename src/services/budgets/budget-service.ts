/**
 * Which money budgets apply to a request, and setting them. An organization's budget is its plan's
 * (config `tiers.<plan>.budget`) unless an operator set an override; a key's budget is set by an owner
 * and may not exceed its organization's. Each is counted in the limit store (limits/), in the same
 * atomic step as the rate limits, under a counter named after its current period.
 *
 * Budgets are read from the database per organization and kept `cacheTtlMs` (default 5 s): a change
 * made on this instance is seen at once, one made on another instance within that time. With each
 * budget the ledger's spend of its current period is read once (the seed a store without a count for
 * the period starts from: a restart does not forget spend).
 */
import { invalidParameter } from '../../core/service-error.ts';
import { BUDGET_PERIODS, type BudgetPeriod, type Config } from '../../config/index.ts';
import type { BudgetRecords, BudgetRow } from './budget-records.ts';
import type { BudgetCharge } from '../../limits/limit-store.ts';
import { budgetWindow, type BudgetWindow } from './budget-periods.ts';

/** The alert thresholds every budget gets (percent of its amount). */
export const DEFAULT_THRESHOLDS_PERCENT = [50, 80, 100];

/** One budget that applies to a request, in its current period. */
export interface ResolvedBudget {
  /** Stable across periods: `org_<organization>` or `key_<key>` (the alerts' budget id). */
  budgetId: string;
  scope: 'organization' | 'key';
  organizationId: string;
  keyId: string | null;
  period: BudgetPeriod;
  amountMicroUsd: number;
  /** Where the amount comes from: the plan, an operator's override, or the key's owner. */
  source: 'plan' | 'override' | 'key';
  window: BudgetWindow;
  /** What the limit store reserves against. */
  charge: BudgetCharge;
}

/** Who asks: the organization, the key, and the organization's plan (tier name). */
export interface BudgetSubject {
  organizationId: string;
  keyId: string;
  /** The organization's plan; the key's tier when plans are not known. */
  plan: string;
}

export interface BudgetAmount {
  period: BudgetPeriod;
  amountMicroUsd: number;
}

interface OrganizationEntry {
  rows: BudgetRow[];
  loadedAtMs: number;
  /** Ledger spend per counter name (a budget in one period). */
  seeds: Map<string, number>;
}

export interface BudgetServiceOptions {
  clock?: { now(): number };
  /** How long an organization's budgets are kept before they are read again, ms (default 5,000). */
  cacheTtlMs?: number;
}

export function planBudget(config: Pick<Config, 'tiers'>, plan: string): BudgetAmount | null {
  const budget = config.tiers[plan]?.budget ?? null;
  if (budget === null) return null;
  return { period: budget.period, amountMicroUsd: Math.round(budget.amountUsd * 1_000_000) };
}

/** Checks a budget given by an operator or owner: a known period and a positive whole number of micro-USD. */
export function checkBudgetAmount(value: { period?: unknown; amountMicroUsd?: unknown }, param = 'budget'): BudgetAmount {
  if (typeof value.period !== 'string' || !(BUDGET_PERIODS as readonly string[]).includes(value.period))
    throw invalidParameter(`${param}.period`, `period must be one of: ${BUDGET_PERIODS.join(', ')}.`);
  const amount = value.amountMicroUsd;
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0 || amount > 1e15)
    throw invalidParameter(`${param}.amount_micro_usd`, 'The amount is a positive whole number of micro-USD (1 USD = 1,000,000).');
  return { period: value.period as BudgetPeriod, amountMicroUsd: amount };
}

export class BudgetService {
  private readonly entries = new Map<string, OrganizationEntry>();
  private readonly loading = new Map<string, Promise<OrganizationEntry>>();
  /** Seed reads under way, by counter (organization-qualified: the counter names repeat across organizations). */
  private readonly seedLoads = new Map<string, Promise<void>>();
  private readonly clock: { now(): number };
  private readonly cacheTtlMs: number;

  constructor(
    private readonly config: Pick<Config, 'tiers'>,
    private readonly repository: BudgetRecords,
    options: BudgetServiceOptions = {},
  ) {
    this.clock = options.clock ?? { now: () => Date.now() };
    this.cacheTtlMs = options.cacheTtlMs ?? 5_000;
  }

  /** The budgets that apply to a request of `subject` now: the organization's, then the key's. */
  async applicable(subject: BudgetSubject): Promise<ResolvedBudget[]> {
    const nowMs = this.clock.now();
    let entry = this.entries.get(subject.organizationId);
    if (entry === undefined || nowMs - entry.loadedAtMs >= this.cacheTtlMs) entry = await this.load(subject.organizationId, nowMs);
    const resolved: ResolvedBudget[] = [];
    const override = entry.rows.find((row) => row.keyId === null);
    const organization = override ?? planBudget(this.config, subject.plan);
    if (organization !== null)
      resolved.push(this.resolve(entry, subject, null, organization, override === undefined ? 'plan' : 'override', nowMs));
    const key = entry.rows.find((row) => row.keyId === subject.keyId);
    if (key !== undefined) resolved.push(this.resolve(entry, subject, subject.keyId, key, 'key', nowMs));
    // Seeds not read yet (a new period, a new budget): read them now, once.
    const missing = resolved.filter((budget) => !entry.seeds.has(budget.charge.counter));
    if (missing.length > 0) {
      await Promise.all(missing.map((budget) => this.readSeed(entry, budget)));
      return resolved.map((budget) => this.resolve(entry, subject, budget.keyId, budget, budget.source, nowMs));
    }
    return resolved;
  }

  /** The organization's budget (override or plan) and every key budget it has, for the dashboard and CLI. */
  async ofOrganization(
    organizationId: string,
    plan: string,
  ): Promise<{ organization: (BudgetAmount & { source: 'plan' | 'override' }) | null; keys: BudgetRow[] }> {
    const rows = await this.repository.forOrganization(organizationId);
    const override = rows.find((row) => row.keyId === null);
    const fromPlan = planBudget(this.config, plan);
    return {
      organization:
        override !== undefined
          ? { period: override.period, amountMicroUsd: override.amountMicroUsd, source: 'override' }
          : fromPlan === null
            ? null
            : { ...fromPlan, source: 'plan' },
      keys: rows.filter((row) => row.keyId !== null),
    };
  }

  /** Every organization's override (the operator's list). */
  overrides(): Promise<BudgetRow[]> {
    return this.repository.organizationOverrides();
  }

  /** Ledger spend of a budget's current period (what the dashboard and CLI show beside the live count). */
  spentInPeriod(organizationId: string, keyId: string | null, period: BudgetPeriod): Promise<number> {
    return this.repository.spentSince(organizationId, keyId, budgetWindow(period, this.clock.now()).startMs);
  }

  /** Sets (or with null removes) an organization's override of its plan's budget (operators). */
  async setOrganizationBudget(organizationId: string, budget: BudgetAmount | null, actor: string): Promise<void> {
    if (budget === null) await this.repository.remove(organizationId, null);
    else await this.repository.set({ organizationId, keyId: null, ...budget, updatedBy: actor, updatedAt: this.clock.now() });
    this.entries.delete(organizationId);
  }

  /**
   * Sets (or with null removes) a key's budget (owners). Refused with 400 when it is above the
   * organization's budget: a key may never be allowed more than its organization.
   */
  async setKeyBudget(organizationId: string, plan: string, keyId: string, budget: BudgetAmount | null, actor: string): Promise<void> {
    if (budget === null) {
      await this.repository.remove(organizationId, keyId);
    } else {
      const { organization } = await this.ofOrganization(organizationId, plan);
      if (organization !== null && budget.amountMicroUsd > organization.amountMicroUsd)
        throw invalidParameter(
          'budget.amount_micro_usd',
          `A key's budget cannot be above its organization's (${organization.amountMicroUsd} micro-USD per ${organization.period}).`,
        );
      await this.repository.set({ organizationId, keyId, ...budget, updatedBy: actor, updatedAt: this.clock.now() });
    }
    this.entries.delete(organizationId);
  }

  private resolve(
    entry: OrganizationEntry,
    subject: BudgetSubject,
    keyId: string | null,
    amount: BudgetAmount,
    source: ResolvedBudget['source'],
    nowMs: number,
  ): ResolvedBudget {
    const window = budgetWindow(amount.period, nowMs);
    const counter = keyId === null ? `org:${amount.period}:${window.label}` : `key:${keyId}:${amount.period}:${window.label}`;
    return {
      budgetId: keyId === null ? `org_${subject.organizationId}` : `key_${keyId}`,
      scope: keyId === null ? 'organization' : 'key',
      organizationId: subject.organizationId,
      keyId,
      period: amount.period,
      amountMicroUsd: amount.amountMicroUsd,
      source,
      window,
      charge: { counter, amountMicroUsd: amount.amountMicroUsd, periodEndMs: window.endMs, seedMicroUsd: entry.seeds.get(counter) ?? 0 },
    };
  }

  /** Reads a budget's ledger spend for its period once, however many requests ask at the same moment. */
  private readSeed(entry: OrganizationEntry, budget: ResolvedBudget): Promise<void> {
    const counter = budget.charge.counter;
    const name = `${budget.organizationId}\n${counter}`;
    let pending = this.seedLoads.get(name);
    if (pending === undefined) {
      pending = this.repository
        .spentSince(budget.organizationId, budget.keyId, budget.window.startMs)
        .then((spent) => {
          entry.seeds.set(counter, spent);
        })
        .finally(() => this.seedLoads.delete(name));
      this.seedLoads.set(name, pending);
    }
    return pending;
  }

  private load(organizationId: string, nowMs: number): Promise<OrganizationEntry> {
    let pending = this.loading.get(organizationId);
    if (pending === undefined) {
      const previous = this.entries.get(organizationId);
      pending = this.repository
        .forOrganization(organizationId)
        .then((rows) => {
          // Seeds stay valid for their period (the name carries it); a reload only refreshes the rows.
          const entry: OrganizationEntry = { rows, loadedAtMs: nowMs, seeds: previous?.seeds ?? new Map() };
          this.entries.set(organizationId, entry);
          return entry;
        })
        .finally(() => this.loading.delete(organizationId));
      this.loading.set(organizationId, pending);
    }
    return pending;
  }
}
