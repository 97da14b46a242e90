/**
 * Tiers as configured: the default tiers with the config's fields merged over them, field by field, and
 * the retired tiers whose existing keys take another tier's settings. A tier the config drops cannot
 * leave its keys unlimited: start-up refuses keys of a tier that is neither configured nor retired
 * (`unconfiguredTiers`), and a key that still meets an unknown tier gets the default tier's settings.
 */
import { ConfigError } from './config-error.ts';
import { DEFAULT_TIERS, tierSchema, type TierConfig } from './schema.ts';

/** The default tiers, with the config's fields over them; a new tier must name every field; `null` drops one. */
export function mergeTiers(
  overrides: Readonly<Record<string, { [Field in keyof TierConfig]?: TierConfig[Field] | undefined } | null>>,
): Record<string, TierConfig> {
  // Null-prototype: a tier name from input (`constructor`, `toString`, `__proto__`) finds nothing inherited.
  const merged: Record<string, TierConfig> = Object.create(null) as Record<string, TierConfig>;
  for (const name of new Set([...Object.keys(DEFAULT_TIERS), ...Object.keys(overrides)])) {
    const override = Object.hasOwn(overrides, name) ? overrides[name] : undefined;
    if (override === null) continue;
    const fields = Object.fromEntries(Object.entries(override ?? {}).filter(([, value]) => value !== undefined));
    const parsed = tierSchema.safeParse({ ...(Object.hasOwn(DEFAULT_TIERS, name) ? DEFAULT_TIERS[name] : {}), ...fields });
    if (!parsed.success) {
      const missing = parsed.error.issues.filter((issue) => issue.code === 'invalid_type').map((issue) => issue.path.join('.'));
      throw new ConfigError(
        `tiers.${name} is a new tier, so it needs every field${missing.length > 0 ? ` (missing: ${missing.join(', ')})` : ''}. Only the default tiers (${Object.keys(DEFAULT_TIERS).join(', ')}) can be partly overridden.`,
      );
    }
    merged[name] = parsed.data;
  }
  return merged;
}

interface TierSettings {
  readonly tiers: Readonly<Record<string, TierConfig>>;
  readonly retiredTiers: Readonly<Record<string, string>>;
  readonly defaultTier: string;
}

/**
 * The configured tier of that name, never an inherited property: every lookup of a name that came from
 * input (a plan, a key's tier) goes through this, so `constructor` or `__proto__` is simply unknown.
 */
export function ownTier(tiers: Readonly<Record<string, TierConfig>>, name: string): TierConfig | undefined {
  return Object.hasOwn(tiers, name) ? tiers[name] : undefined;
}

/** Every tier name a key may carry, with the settings it gets: the configured tiers and the retired ones. */
export function effectiveTiers(config: TierSettings): Record<string, TierConfig> {
  const effective: Record<string, TierConfig> = Object.create(null) as Record<string, TierConfig>;
  for (const [retired, replacement] of Object.entries(config.retiredTiers)) effective[retired] = ownTier(config.tiers, replacement)!;
  return Object.assign(effective, config.tiers);
}

/** A key's tier settings; a tier unknown here (another instance's config) gets the default tier's, never none. */
export function tierSettingsFor(config: TierSettings, tier: string): TierConfig {
  const retired = Object.hasOwn(config.retiredTiers, tier) ? config.retiredTiers[tier] : undefined;
  return ownTier(config.tiers, tier) ?? ownTier(config.tiers, retired ?? config.defaultTier)!;
}

/** Of the tiers existing keys use, those the config neither defines nor retires (start-up refuses them). */
export function unconfiguredTiers(config: TierSettings, tiersInUse: readonly string[]): string[] {
  return tiersInUse.filter((tier) => !Object.hasOwn(config.tiers, tier) && !Object.hasOwn(config.retiredTiers, tier)).sort();
}

/** The start-up refusal for keys of dropped tiers, naming them and both ways out. */
export function droppedTiersError(config: TierSettings, dropped: readonly string[]): ConfigError {
  const list = dropped.map((tier) => `"${tier}"`).join(', ');
  return new ConfigError(
    `Existing keys use the tier${dropped.length > 1 ? 's' : ''} ${list}, which the config no longer defines (configured: ${Object.keys(config.tiers).join(', ')}). ` +
      `Keep ${dropped.length > 1 ? 'them' : 'it'} under tiers, or map ${dropped.length > 1 ? 'each' : 'it'} to a configured tier with retiredTiers (e.g. retiredTiers: { ${dropped[0]}: ${config.defaultTier} }).`,
  );
}

/**
 * The start-up refusal for organizations whose plan is a dropped tier: without it they would silently
 * take the default tier's figures (higher limits, when the default ranks above the dropped tier).
 * `organizationsByTier`: the dropped tiers with the organizations on each.
 */
export function droppedPlansError(config: TierSettings, organizationsByTier: ReadonlyMap<string, readonly string[]>): ConfigError {
  const tiers = [...organizationsByTier.keys()].sort();
  const shown = (ids: readonly string[]) =>
    ids.length > 10 ? `${ids.slice(0, 10).join(', ')} and ${ids.length - 10} more` : ids.join(', ');
  const plans = tiers.map((tier) => `"${tier}" (${shown(organizationsByTier.get(tier)!)})`).join('; ');
  return new ConfigError(
    `Organizations have the plan${tiers.length > 1 ? 's' : ''} ${plans}, which the config no longer defines (configured: ${Object.keys(config.tiers).join(', ')}). ` +
      `Keep ${tiers.length > 1 ? 'them' : 'it'} under tiers, map ${tiers.length > 1 ? 'each' : 'it'} to a configured tier with retiredTiers (e.g. retiredTiers: { ${tiers[0]}: ${config.defaultTier} }), ` +
      `or move the organizations to another plan first (switchyard orgs set-plan).`,
  );
}
