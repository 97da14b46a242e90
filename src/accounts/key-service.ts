/**
 * Creating, listing, revoking and rotating keys: the operator's CLI and the owners' dashboard (the
 * /v1 interface itself has no key management endpoint, per SPEC "Authentication" 4).
 */
import type { Config, Permission } from '../config/index.ts';
import { PERMISSIONS } from '../config/index.ts';
import { randomAlphanumeric } from '../core/ids.ts';
import type { ApiKeyRecord, ApiKeysRepository } from '../db/repositories/api-keys-repository.ts';
import { generateKeySecret, hashKeySecret, redactKeySecret } from './api-key-secret.ts';

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
  ) {}

  async create(request: CreateKeyRequest): Promise<CreatedKey> {
    const tierName = request.tier ?? this.config.defaultTier;
    const tier = this.config.tiers[tierName];
    if (tier === undefined) {
      throw new KeyRequestError(`Unknown tier "${tierName}". Configured tiers: ${Object.keys(this.config.tiers).join(', ')}.`);
    }
    const permissions = request.permissions ?? [...tier.permissions];
    const unknown = permissions.filter((permission) => !(PERMISSIONS as readonly string[]).includes(permission));
    if (unknown.length > 0) {
      throw new KeyRequestError(`Unknown permission(s): ${unknown.join(', ')}. Known: ${PERMISSIONS.join(', ')}.`);
    }
    if (request.expiresInMs !== undefined && !(request.expiresInMs > 0)) {
      throw new KeyRequestError('The expiry must be a positive duration, e.g. 30d, 12h or 90m.');
    }
    const organization = request.organization ?? this.config.defaultOrganization;
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(organization)) {
      throw new KeyRequestError('Organization ids use letters, digits, dot, dash and underscore (at most 100 characters).');
    }
    const secret = generateKeySecret();
    const createdAt = this.now();
    const record = await this.repository.create({
      id: `key_${randomAlphanumeric(16)}`,
      organizationId: organization,
      keyHash: hashKeySecret(secret),
      redacted: redactKeySecret(secret),
      name: request.name ?? null,
      tier: tierName,
      permissions: [...new Set(permissions as Permission[])],
      createdAt,
      expiresAt: request.expiresInMs === undefined ? null : createdAt + request.expiresInMs,
    });
    return { key: secret, record };
  }

  list(organization?: string): Promise<ApiKeyRecord[]> {
    return this.repository.list(organization);
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
    const created = await this.create({
      organization: previous.organizationId,
      tier: previous.tier,
      permissions: previous.permissions,
      ...(previous.name === null ? {} : { name: previous.name }),
      ...(previous.expiresAt === null ? {} : { expiresInMs: previous.expiresAt - now }),
    });
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
