/**
 * Creating, listing, revoking and rotating keys: the operator's CLI and the owners' dashboard (the
 * /v1 interface itself has no key management endpoint, per SPEC "Authentication" 4).
 */
import type { Config, Permission } from '../config/index.ts';
import { ownTier, PERMISSIONS } from '../config/index.ts';
import { randomAlphanumeric } from '../core/ids.ts';
import { ServiceError } from '../core/service-error.ts';
import type { ApiKeyRecord, ApiKeysRepository } from '../db/repositories/api-keys-repository.ts';
import { generateKeySecret, hashKeySecret, redactKeySecret } from './api-key-secret.ts';
import { allowedKeyTiers, keyPlanProblem, type EffectivePlan } from './plans.ts';

/** Where the key service reads an organization's plan (accounts/organizations.ts). */
export interface OrganizationPlans {
  /** Undefined when the organization does not exist yet (its first key then sets its plan). */
  planOf(organizationId: string): Promise<EffectivePlan | undefined>;
}

export class KeyRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyRequestError';
  }
}

export interface CreateKeyRequest {
  organization?: string;
  tier?: string;
  /** Defaults to the tier's permissions. */
  permissions?: string[];
  /** Lifetime in milliseconds, or undefined for no expiry. */
  expiresInMs?: number;
  name?: string;
}

/**
 * 403 `key_limit_reached`: the organization holds as many active keys as its plan allows. Nothing was
 * created. `details`: the cap (`limit`) and the active keys counted (`active`).
 */
export function keyLimitReached(limit: number, active: number, plan: string): ServiceError {
  return new ServiceError({
    status: 403,
    type: 'permission_error',
    code: 'key_limit_reached',
    message:
      `Your organization has ${active} active API keys, the most its plan (${plan}) allows (${limit}). ` +
      'Revoke a key you no longer use, or ask the operator to raise the cap.',
    details: { limit, active },
  });
}

/** An organization's active keys against its cap (the dashboard shows them). */
export interface KeyAllowance {
  active: number;
  /** 0: unlimited. */
  limit: number;
}

export interface CreatedKey {
  /** The secret, shown once. */
  key: string;
  record: ApiKeyRecord;
}

export class KeyService {
  constructor(
    private readonly config: Config,
    private readonly repository: ApiKeysRepository,
    private readonly now: () => number = Date.now,
    /** With plans, a key can never exceed its organization's plan (tier and permissions). */
    private readonly plans?: OrganizationPlans,
  ) {}

  /** The tier and permissions a key may have: both checked against the organization's plan. */
  private async checkAgainstPlan(
    organization: string,
    tierName: string | undefined,
    permissions: string[] | undefined,
  ): Promise<{ tier: string; permissions: string[] }> {
    const plan = await this.plans?.planOf(organization);
    const defaultTier =
      plan === undefined || allowedKeyTiers(this.config, plan).includes(this.config.defaultTier) ? this.config.defaultTier : plan.tier;
    const tier = tierName ?? defaultTier;
    const tierConfig = ownTier(this.config.tiers, tier);
    if (tierConfig === undefined) {
      throw new KeyRequestError(`Unknown tier "${tier}". Configured tiers: ${Object.keys(this.config.tiers).join(', ')}.`);
    }
    // A new organization starts on the plan of its first key's tier, so that tier bounds it too.
    const bound = plan ?? { tier, permissions: tierConfig.permissions };
    const chosen = permissions ?? tierConfig.permissions.filter((permission) => (bound.permissions as string[]).includes(permission));
    const unknown = chosen.filter((permission) => !(PERMISSIONS as readonly string[]).includes(permission));
    if (unknown.length > 0) {
      throw new KeyRequestError(`Unknown permission(s): ${unknown.join(', ')}. Known: ${PERMISSIONS.join(', ')}.`);
    }
    if (plan !== undefined) {
      const problem = keyPlanProblem(this.config, plan, tier, chosen);
      if (problem !== undefined) throw new KeyRequestError(problem);
    } else if (this.plans !== undefined) {
      const outside = chosen.filter((permission) => !(tierConfig.permissions as string[]).includes(permission));
      if (outside.length > 0)
        throw new KeyRequestError(
          `The ${tier} plan does not allow the permission(s) ${outside.join(', ')}; it allows: ${tierConfig.permissions.join(', ')}.`,
        );
    }
    return { tier, permissions: chosen };
  }

  /**
   * Creates a key within the organization's plan: its tier and permissions, and its cap on active keys
   * (counted and inserted atomically, `key_limit_reached` past it). `replacing`: the key a rotation
   * replaces, left out of the count.
   */
  async create(request: CreateKeyRequest, replacing?: string): Promise<CreatedKey> {
    const organizationId = request.organization ?? this.config.defaultOrganization;
    const checked = await this.checkAgainstPlan(organizationId, request.tier, request.permissions);
    const tierName = checked.tier;
    const permissions = checked.permissions;
    if (request.expiresInMs !== undefined && !(request.expiresInMs > 0)) {
      throw new KeyRequestError('The expiry must be a positive duration, e.g. 30d, 12h or 90m.');
    }
    const organization = organizationId;
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(organization)) {
      throw new KeyRequestError('Organization ids use letters, digits, dot, dash and underscore (at most 100 characters).');
    }
    const secret = generateKeySecret();
    const createdAt = this.now();
    const plan = await this.plans?.planOf(organization);
    // A new organization starts on the plan of its first key's tier, so that tier's cap bounds it.
    const cap = this.plans === undefined ? 0 : (plan?.maxActiveKeys ?? this.config.tiers[tierName]!.maxActiveKeys);
    const created = await this.repository.create(
      {
        id: `key_${randomAlphanumeric(16)}`,
        organizationId: organization,
        keyHash: hashKeySecret(secret),
        redacted: redactKeySecret(secret),
        name: request.name ?? null,
        tier: tierName,
        permissions: [...new Set(permissions as Permission[])],
        createdAt,
        expiresAt: request.expiresInMs === undefined ? null : createdAt + request.expiresInMs,
      },
      cap === 0 ? undefined : { maxActive: cap, now: createdAt, ...(replacing === undefined ? {} : { replacing }) },
    );
    if ('refused' in created) throw keyLimitReached(cap, created.refused.active, plan?.tier ?? tierName);
    return { key: secret, record: created };
  }

  /** The organization's active keys and its cap (0: unlimited). */
  async allowance(organizationId: string): Promise<KeyAllowance> {
    const [active, plan] = await Promise.all([this.repository.countActive(organizationId, this.now()), this.plans?.planOf(organizationId)]);
    return { active, limit: plan?.maxActiveKeys ?? 0 };
  }

  list(organization?: string): Promise<ApiKeyRecord[]> {
    return this.repository.list(organization);
  }

  /**
   * Changes a key's name, tier or permissions (the operator's `keys update`, the owners' dashboard);
   * refused when the result would exceed the organization's plan. Takes effect on every instance within
   * a poll of the key cache (the write bumps `keys_version`).
   */
  async update(id: string, changes: { name?: string | null; tier?: string; permissions?: string[] }): Promise<ApiKeyRecord> {
    const current = await this.repository.findById(id);
    if (current === undefined || current.revokedAt !== null) throw new KeyRequestError(`No active key with id ${id}.`);
    const checked = await this.checkAgainstPlan(
      current.organizationId,
      changes.tier ?? current.tier,
      changes.permissions ?? current.permissions,
    );
    await this.repository.update(id, {
      ...(changes.name === undefined ? {} : { name: changes.name }),
      tier: checked.tier,
      permissions: [...new Set(checked.permissions)],
    });
    return (await this.repository.findById(id))!;
  }

  revoke(id: string): Promise<boolean> {
    return this.repository.revoke(id, this.now());
  }

  findById(id: string): Promise<ApiKeyRecord | undefined> {
    return this.repository.findById(id);
  }

  /**
   * Rotation: a new key with the old one's organization, name, tier, permissions and expiry; the old
   * key stays valid for `graceMs` more (0: it stops at once), then fails as expired on every instance
   * (the expiry change bumps `keys_version`, which each authenticator polls).
   */
  async rotate(id: string, graceMs: number): Promise<{ created: CreatedKey; previous: ApiKeyRecord }> {
    const previous = await this.repository.findById(id);
    const now = this.now();
    if (previous === undefined || previous.revokedAt !== null || (previous.expiresAt !== null && previous.expiresAt <= now)) {
      throw new KeyRequestError(`No active key with id ${id}.`);
    }
    if (!(graceMs >= 0)) throw new KeyRequestError('The grace period must be zero or more.');
    const created = await this.create(
      {
        organization: previous.organizationId,
        tier: previous.tier,
        permissions: previous.permissions,
        ...(previous.name === null ? {} : { name: previous.name }),
        ...(previous.expiresAt === null ? {} : { expiresInMs: previous.expiresAt - now }),
      },
      id,
    );
    await this.repository.expireBy(id, now + graceMs);
    return { created, previous };
  }
}

/** Parses `30d`, `12h`, `90m`, `45s` into milliseconds; undefined for anything else. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+)\s*([smhd])$/.exec(text.trim());
  if (match === null) return undefined;
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}
