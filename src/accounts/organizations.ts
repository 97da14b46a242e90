/**
 * The operator's organization use cases, shared by the operator's pages and CLI: plans and overrides
 * (narrowing the organization's keys at once when a plan narrows), suspension and reactivation, the
 * list across organizations, and the operators' audit log entry for each change.
 */
import { ownTier, type Config } from '../config/index.ts';
import { invalidParameter, notFound } from '../core/service-error.ts';
import type { OperatorAuditRepository } from '../db/repositories/operator-audit-repository.ts';
import type { OrganizationRecord, OrganizationsRepository, OrganizationSummary } from '../db/repositories/organizations-repository.ts';
import {
  allowedKeyTiers,
  checkOverrides,
  effectivePlan,
  highestTier,
  parseOverrides,
  type EffectivePlan,
  type PlanOverrides,
} from './plans.ts';

/** Who did it, for the operators' audit log: an operator's email (and address) or `cli`. */
export interface OperatorActor {
  email: string;
  address: string | null;
}

export const CLI_ACTOR: OperatorActor = { email: 'cli', address: null };

export interface OrganizationView extends OrganizationRecord {
  effective: EffectivePlan;
  overrides: PlanOverrides | null;
}

export class OrganizationService {
  constructor(
    private readonly config: Config,
    private readonly repository: OrganizationsRepository,
    private readonly auditLog: OperatorAuditRepository,
    private readonly now: () => number = Date.now,
  ) {}

  /** The plan an organization record works under (before the start-up backfill: its keys' highest tier). */
  planOfRecord(record: Pick<OrganizationRecord, 'plan' | 'planOverrides' | 'allowedTiers'>): EffectivePlan {
    const tier = record.plan ?? highestTier(this.config, record.allowedTiers === null ? [] : (JSON.parse(record.allowedTiers) as string[]));
    return effectivePlan(this.config, tier, parseOverrides(record.planOverrides));
  }

  /** The organization's effective plan; undefined when the organization does not exist yet. */
  async planOf(organizationId: string): Promise<EffectivePlan | undefined> {
    const record = await this.repository.find(organizationId);
    return record === undefined ? undefined : this.planOfRecord(record);
  }

  /** Whether the organization is suspended (its dashboard is read-only, its signed links refused). */
  async isSuspended(organizationId: string): Promise<boolean> {
    return (await this.repository.find(organizationId))?.status === 'suspended';
  }

  async get(organizationId: string): Promise<OrganizationView> {
    const record = await this.repository.find(organizationId);
    if (record === undefined) throw notFound('organization_not_found', `No organization ${organizationId}.`, 'organization');
    return { ...record, effective: this.planOfRecord(record), overrides: parseOverrides(record.planOverrides) };
  }

  async list(search?: string): Promise<Array<OrganizationSummary & { effective: EffectivePlan }>> {
    const rows = await this.repository.list(this.now(), search);
    return rows.map((row) => ({ ...row, effective: this.planOfRecord(row) }));
  }

  /** Organizations per configured tier, for the plans page. */
  async countsByPlan(): Promise<Map<string, number>> {
    return this.repository.countByPlan();
  }

  /**
   * Moves the organization to `tier` with `overrides` (null: none; undefined: keep the current ones),
   * and narrows its keys at once: a key ranked above the new plan takes the plan's tier, and loses
   * the permissions the plan does not allow. Returns the new plan and how many keys were narrowed.
   */
  async setPlan(
    organizationId: string,
    tier: string,
    overrides: unknown,
    actor: OperatorActor,
  ): Promise<{ plan: EffectivePlan; narrowedKeys: number }> {
    const current = await this.get(organizationId);
    if (ownTier(this.config.tiers, tier) === undefined)
      throw invalidParameter('plan', `Unknown plan "${tier}". Configured tiers: ${Object.keys(this.config.tiers).join(', ')}.`);
    const checked = overrides === undefined ? current.overrides : overrides === null ? null : checkOverrides(overrides);
    const stored = checked === null || Object.keys(checked).length === 0 ? null : checked;
    const plan = effectivePlan(this.config, tier, stored);
    const tiers = allowedKeyTiers(this.config, plan);
    const narrowedKeys = await this.repository.setPlan(organizationId, tier, stored === null ? null : JSON.stringify(stored), (key) => {
      // A key whose tier the plan does not list (above it, retired, or no configured tier at all) takes the plan's.
      const keyTier = tiers.includes(key.tier) ? key.tier : plan.tier;
      const permissions = key.permissions.filter((permission) => (plan.permissions as string[]).includes(permission));
      if (keyTier === key.tier && permissions.length === key.permissions.length) return undefined;
      return { tier: keyTier, permissions };
    });
    await this.audit(actor, 'organization.plan_changed', organizationId, null, {
      from: { plan: current.effective.tier, overrides: current.overrides },
      to: { plan: tier, overrides: stored },
      narrowed_keys: narrowedKeys,
    });
    return { plan, narrowedKeys };
  }

  async suspend(organizationId: string, actor: OperatorActor): Promise<void> {
    await this.get(organizationId);
    await this.repository.setStatus(organizationId, 'suspended', this.now());
    await this.audit(actor, 'organization.suspended', organizationId, null, null);
  }

  async resume(organizationId: string, actor: OperatorActor): Promise<void> {
    await this.get(organizationId);
    await this.repository.setStatus(organizationId, 'active', this.now());
    await this.audit(actor, 'organization.reactivated', organizationId, null, null);
  }

  /** Gives every organization made before plans existed a plan: the highest tier its keys (or `--tiers`) had. */
  async backfillPlans(): Promise<number> {
    const missing = await this.repository.withoutPlan();
    for (const organization of missing) await this.repository.fillPlan(organization.id, highestTier(this.config, organization.tiers));
    return missing.length;
  }

  /** Appends to the operators' audit log. */
  audit(actor: OperatorActor, action: string, organizationId: string | null, target: string | null, detail: unknown): Promise<void> {
    return this.auditLog.append({
      actor: actor.email,
      action,
      organizationId,
      target,
      detail: detail === null || detail === undefined ? null : JSON.stringify(detail),
      address: actor.address,
      createdAt: this.now(),
    });
  }
}
