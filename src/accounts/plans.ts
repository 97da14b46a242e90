/**
 * Plans: every organization is on one of the configured tiers (its plan), with per-organization
 * overrides of any of the plan's figures (a custom plan). The one rule, stated once:
 *
 * - the day and month token quotas, concurrent batches and requests per batch are the organization's
 *   (its plan's figures, shared by all its keys);
 * - per-minute limits are each key's: its tier's figures, never above the plan's;
 * - a key's tier ranks at or below the plan (tiers rank in the order the config lists them, smallest
 *   first) and its permissions are a subset of the plan's.
 */
import { ownTier, PERMISSIONS, type Config, type Permission, type TierConfig } from '../config/index.ts';
import { invalidParameter } from '../core/service-error.ts';
import type { KeyPlanLimits } from '../services/caller-identity.ts';

/** Per-organization overrides of a plan's figures; a figure left out comes from the tier. 0: unlimited (rpm, tpm, day, month). */
export interface PlanOverrides {
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  tokensPerDay?: number;
  tokensPerMonth?: number;
  concurrentBatches?: number;
  maxRequestsPerBatch?: number;
  maxActiveKeys?: number;
  storageQuotaBytes?: number;
  organizationRequestsPerMinute?: number;
  organizationTokensPerMinute?: number;
  permissions?: Permission[];
}

export const OVERRIDE_FIELDS = [
  'requestsPerMinute',
  'tokensPerMinute',
  'tokensPerDay',
  'tokensPerMonth',
  'concurrentBatches',
  'maxRequestsPerBatch',
  'maxActiveKeys',
  'storageQuotaBytes',
  'organizationRequestsPerMinute',
  'organizationTokensPerMinute',
] as const;

/** The figures an organization works under: its tier's, with its overrides applied. */
export interface EffectivePlan {
  /** The tier the plan starts from. */
  tier: string;
  /** True when any override is set ("custom"). */
  custom: boolean;
  requestsPerMinute: number;
  tokensPerMinute: number;
  tokensPerDay: number;
  tokensPerMonth: number;
  concurrentBatches: number;
  maxRequestsPerBatch: number;
  /** Active keys the organization may hold at once; 0: unlimited. */
  maxActiveKeys: number;
  /** Bytes of stored files the organization may hold; 0: unlimited. */
  storageQuotaBytes: number;
  /** Per-minute limits over all the organization's keys together (0: unlimited). */
  organizationRequestsPerMinute: number;
  organizationTokensPerMinute: number;
  permissions: Permission[];
}

export type { KeyPlanLimits };

/** 0 means unlimited: the smaller of two limits, unlimited only when both are. */
function smallerLimit(first: number, second: number): number {
  if (first === 0) return second;
  if (second === 0) return first;
  return Math.min(first, second);
}

export function tierNames(config: Config): string[] {
  return Object.keys(config.tiers);
}

/** Position of a tier in the config (smallest first); -1 when not configured. */
export function tierRank(config: Config, tier: string): number {
  return tierNames(config).indexOf(tier);
}

/** The plan an organization without one gets: the highest-ranked configured tier among `tiers`, else the default tier. */
export function highestTier(config: Config, tiers: readonly string[]): string {
  let best: string | undefined;
  for (const tier of tiers)
    if (tierRank(config, tier) >= 0 && (best === undefined || tierRank(config, tier) > tierRank(config, best))) best = tier;
  return best ?? config.defaultTier;
}

export function effectivePlan(config: Config, tier: string | null, overrides: PlanOverrides | null): EffectivePlan {
  // A retired plan takes its replacement's figures (start-up refuses a dropped plan that is not retired);
  // names from input are looked up as own properties only (config/tiers.ts ownTier).
  const name =
    tier === null
      ? config.defaultTier
      : ownTier(config.tiers, tier) !== undefined
        ? tier
        : Object.hasOwn(config.retiredTiers, tier)
          ? config.retiredTiers[tier]!
          : config.defaultTier;
  const base: TierConfig = ownTier(config.tiers, name)!;
  const set = overrides ?? {};
  return {
    tier: name,
    custom: Object.keys(set).length > 0,
    requestsPerMinute: set.requestsPerMinute ?? base.requestsPerMinute,
    tokensPerMinute: set.tokensPerMinute ?? base.tokensPerMinute,
    tokensPerDay: set.tokensPerDay ?? base.tokensPerDay,
    tokensPerMonth: set.tokensPerMonth ?? base.tokensPerMonth,
    concurrentBatches: set.concurrentBatches ?? base.concurrentBatches,
    maxRequestsPerBatch: set.maxRequestsPerBatch ?? base.maxRequestsPerBatch,
    maxActiveKeys: set.maxActiveKeys ?? base.maxActiveKeys,
    storageQuotaBytes: set.storageQuotaBytes ?? base.storageQuotaBytes,
    organizationRequestsPerMinute: set.organizationRequestsPerMinute ?? base.organizationRequestsPerMinute,
    organizationTokensPerMinute: set.organizationTokensPerMinute ?? base.organizationTokensPerMinute,
    permissions: set.permissions ?? [...base.permissions],
  };
}

/** Tiers a key of this plan may have: the plan's tier and every tier ranked below it. */
export function allowedKeyTiers(config: Config, plan: EffectivePlan): string[] {
  const rank = tierRank(config, plan.tier);
  return tierNames(config).filter((_name, index) => index <= rank);
}

/** A key's limits: per-minute figures from its tier capped by the plan; day, month and batches from the plan. */
export function keyLimits(config: Config, keyTier: string, plan: EffectivePlan): KeyPlanLimits {
  const tier = ownTier(config.tiers, keyTier);
  return {
    requestsPerMinute: tier === undefined ? plan.requestsPerMinute : smallerLimit(tier.requestsPerMinute, plan.requestsPerMinute),
    tokensPerMinute: tier === undefined ? plan.tokensPerMinute : smallerLimit(tier.tokensPerMinute, plan.tokensPerMinute),
    tokensPerDay: plan.tokensPerDay,
    tokensPerMonth: plan.tokensPerMonth,
    concurrentBatches: plan.concurrentBatches,
    maxRequestsPerBatch: plan.maxRequestsPerBatch,
    organizationRequestsPerMinute: plan.organizationRequestsPerMinute,
    organizationTokensPerMinute: plan.organizationTokensPerMinute,
    plan: plan.tier,
  };
}

/**
 * Why a key of `tier` with `permissions` does not fit the plan (a sentence naming what the plan
 * allows), or undefined when it fits.
 */
export function keyPlanProblem(config: Config, plan: EffectivePlan, tier: string, permissions: readonly string[]): string | undefined {
  const tiers = allowedKeyTiers(config, plan);
  if (!tiers.includes(tier)) return `The organization's plan (${plan.tier}) allows keys of these tiers only: ${tiers.join(', ')}.`;
  const outside = permissions.filter((permission) => !(plan.permissions as string[]).includes(permission));
  if (outside.length > 0)
    return `The organization's plan (${plan.tier}) does not allow the permission(s) ${outside.join(', ')}; it allows: ${plan.permissions.join(', ') || 'none'}.`;
  return undefined;
}

/** Reads stored overrides (JSON text), keeping only known fields. */
export function parseOverrides(text: string | null): PlanOverrides | null {
  if (text === null) return null;
  try {
    return checkOverrides(JSON.parse(text) as unknown, 'plan_overrides');
  } catch {
    return null;
  }
}

/**
 * Checks overrides given by an operator (dashboard or CLI): known fields only, non-negative integers
 * (requests per batch at least 1), known permissions. Throws the SPEC 400 naming the field.
 */
export function checkOverrides(value: unknown, param = 'overrides'): PlanOverrides {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalidParameter(param, 'Overrides are an object of plan figures.');
  const result: PlanOverrides = {};
  for (const [field, figure] of Object.entries(value)) {
    if (figure === null || figure === undefined) continue;
    if (field === 'permissions') {
      if (!Array.isArray(figure) || figure.some((entry) => !(PERMISSIONS as readonly unknown[]).includes(entry)))
        throw invalidParameter(`${param}.permissions`, `permissions are a list of: ${PERMISSIONS.join(', ')}.`);
      result.permissions = [...new Set(figure as Permission[])];
      continue;
    }
    if (!(OVERRIDE_FIELDS as readonly string[]).includes(field))
      throw invalidParameter(`${param}.${field}`, `Unknown plan figure "${field}". Known: ${OVERRIDE_FIELDS.join(', ')}, permissions.`);
    const minimum = field === 'maxRequestsPerBatch' ? 1 : 0;
    // Storage quotas are bytes: a few terabytes pass 1e12.
    const maximum = field === 'storageQuotaBytes' ? Number.MAX_SAFE_INTEGER : 1e12;
    if (typeof figure !== 'number' || !Number.isInteger(figure) || figure < minimum || figure > maximum)
      throw invalidParameter(`${param}.${field}`, `${field} must be a whole number of at least ${minimum}.`);
    result[field as (typeof OVERRIDE_FIELDS)[number]] = figure;
  }
  return result;
}
