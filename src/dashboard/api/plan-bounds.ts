/**
 * The organization's plan as the owners' pages see it (accounts/plans.ts): which key tiers it may
 * create (its tier and those ranked below it, highest first) and which permissions.
 */
import { allowedKeyTiers, type EffectivePlan } from '../../accounts/plans.ts';
import { ownTier } from '../../config/index.ts';
import type { DashboardApiDependencies } from './common.ts';

export class PlanBounds {
  constructor(private readonly dependencies: Pick<DashboardApiDependencies, 'config' | 'accounts' | 'operator'>) {}

  /** The organization's plan, when plans are on (the operator services are mounted). */
  planOf(organizationId: string): Promise<EffectivePlan | undefined> {
    return this.dependencies.operator?.organizations.planOf(organizationId) ?? Promise.resolve(undefined);
  }

  /** The key tiers the organization may create, highest first. */
  async allowedTiers(organizationId: string, plan?: EffectivePlan): Promise<string[]> {
    const { config, accounts } = this.dependencies;
    const effective = plan ?? (await this.planOf(organizationId));
    if (effective !== undefined) return allowedKeyTiers(config, effective).reverse();
    return ((await accounts.allowedTiers(organizationId)) ?? [config.defaultTier]).filter(
      (tier) => ownTier(config.tiers, tier) !== undefined,
    );
  }
}
