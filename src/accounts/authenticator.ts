/**
 * Turns a presented secret into the caller's identity with no database round trip on the hot path.
 * A secret without the key format (`sk-sy-` + 43 letters and digits) is refused before any cache or
 * database. Every known key, and the SHA-256 of every recently seen unknown well-formed secret, is
 * cached (both bounded in count, and each entry in size by the format); a poller reads the
 * `keys_version` counter every `pollIntervalMs` and drops the cache when any key changed, on this or
 * any other instance. So a revocation takes effect within one poll interval everywhere.
 */
import type { Permission } from '../config/index.ts';
import { organizationSuspended, ServiceError } from '../core/service-error.ts';
import type { ApiKeyRecord, ApiKeysRepository } from '../db/repositories/api-keys-repository.ts';
import { hashKeySecret, hasKeyFormat } from './api-key-secret.ts';
import type { AuthContext, KeyPlanLimits } from '../services/caller-identity.ts';

export type { AuthContext };

type CachedContext = AuthContext & { revoked: boolean; suspended: boolean };

export interface AuthenticatorOptions {
  /** How often the key version is read, milliseconds. Default 500 (revocation visible within 1 s). */
  pollIntervalMs?: number;
  /** Most known secrets and unknown secrets' hashes remembered each (unknown ones protect the database from repeated bad keys). */
  negativeCacheSize?: number;
  /**
   * How long cached keys keep being accepted while the key version cannot be read (database away),
   * ms; past that every request is refused with 500 `service_unavailable` until a poll succeeds, so a
   * revocation made during an outage is never ignored for longer. Default 300,000; 0: never refuse.
   */
  maxStalenessMs?: number;
  now?: () => number;
  /** A key's limits from its tier and its organization's plan (read with the key); absent: tiers only. */
  planLimits?: (record: ApiKeyRecord) => KeyPlanLimits;
}

/** A SPEC 401 `auth_error` with the given code (API keys here; dashboard sessions in dashboard-accounts.ts). */
export function authError(code: string, message: string): ServiceError {
  return new ServiceError({ status: 401, type: 'auth_error', code, message });
}

export class Authenticator {
  private readonly known = new Map<string, CachedContext>();
  /** SHA-256 (hex) of unknown well-formed secrets: never the secret itself. */
  private readonly unknown = new Set<string>();
  private readonly byId = new Map<string, CachedContext>();
  /** Database reads of a key hash in flight, shared by every request that asks meanwhile. */
  private readonly lookups = new Map<string, Promise<ApiKeyRecord | undefined>>();
  private readonly planLimits: ((record: ApiKeyRecord) => KeyPlanLimits) | undefined;
  private version = -1;
  private timer: NodeJS.Timeout | undefined;
  private readonly pollIntervalMs: number;
  private readonly negativeCacheSize: number;
  private readonly now: () => number;
  private readonly maxStalenessMs: number;
  /** When the key version was last read, ms since epoch. */
  private verifiedAtMs = 0;
  /** Set by the poller once the version has been unreadable for longer than `maxStalenessMs`. */
  private stale = false;
  private polling = false;

  constructor(
    private readonly repository: ApiKeysRepository,
    options: AuthenticatorOptions = {},
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.negativeCacheSize = options.negativeCacheSize ?? 10_000;
    this.now = options.now ?? Date.now;
    this.maxStalenessMs = options.maxStalenessMs ?? 300_000;
    this.planLimits = options.planLimits;
  }

  /** True once keys have gone unverified (database away) for longer than `maxStalenessMs`. */
  get isStale(): boolean {
    return this.stale;
  }

  /** Reads the current version and starts polling. */
  async start(): Promise<void> {
    this.version = await this.repository.version();
    this.verifiedAtMs = this.now();
    this.timer = setInterval(() => void this.poll(), this.pollIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Checks the version now; drops the caches when keys changed. */
  async poll(): Promise<void> {
    // A poll waiting on a frozen database is not joined by another every interval.
    if (this.polling) return;
    this.polling = true;
    try {
      const current = await this.repository.version();
      this.verifiedAtMs = this.now();
      this.stale = false;
      if (current !== this.version) {
        this.version = current;
        this.known.clear();
        this.unknown.clear();
        this.byId.clear();
        this.lookups.clear();
      }
    } catch {
      // The database being briefly unreachable must not take auth down: cached keys keep working for
      // `maxStalenessMs`; the next poll retries.
      if (this.maxStalenessMs > 0 && this.now() - this.verifiedAtMs > this.maxStalenessMs) this.stale = true;
    } finally {
      this.polling = false;
    }
  }

  /**
   * The synchronous fast path: the AuthContext of a cached secret, or undefined when the database
   * must be asked (then call `authenticate`). Throws the SPEC 401 exactly as `authenticate` would.
   */
  authenticateCached(secret: string | undefined): AuthContext | undefined {
    if (secret === undefined || secret === '') return undefined;
    const entry = this.known.get(secret);
    if (entry === undefined) {
      if (!hasKeyFormat(secret) || this.unknown.has(hashKeySecret(secret))) throw this.invalid();
      return undefined;
    }
    return this.check(entry);
  }

  /** How many unknown secrets (as hashes) are remembered now. */
  get unknownSecretsCached(): number {
    return this.unknown.size;
  }

  /** Resolves a secret to its AuthContext, or throws the SPEC 401 error. */
  async authenticate(secret: string | undefined): Promise<AuthContext> {
    if (secret === undefined || secret === '') {
      throw authError('missing_api_key', 'No API key provided. Send it as "Authorization: Bearer <API_KEY>" (or the x-api-key header).');
    }
    // Known keys are cached by the presented secret itself (well-formed, so 49 characters), so a hit
    // costs no hash (SHA-256 per request was 1.5% of the gateway's CPU); unknown secrets only by their
    // hash, and the database only ever sees the hash.
    let entry = this.known.get(secret);
    if (entry === undefined) {
      if (!hasKeyFormat(secret)) throw this.invalid();
      const hash = hashKeySecret(secret);
      if (this.unknown.has(hash)) throw this.invalid();
      const record = await this.lookup(hash);
      if (record === undefined) {
        if (this.unknown.size >= this.negativeCacheSize) this.unknown.clear();
        this.unknown.add(hash);
        throw this.invalid();
      }
      entry = this.toContext(record);
      if (this.known.size >= this.negativeCacheSize) this.known.clear();
      this.known.set(secret, entry);
    }
    return this.check(entry);
  }

  /**
   * The key of `hash` from the database, one read for all who ask at once: the first requests of a key
   * (a fleet restarted under load: hundreds in flight per key) would otherwise each take a pooled
   * connection, queue past the request path's bound and fail with 500 (seen with 1,000 requests of 20
   * keys on a loaded machine). A change of the keys' version drops the reads in flight from sharing.
   */
  private lookup(hash: string): Promise<ApiKeyRecord | undefined> {
    const pending = this.lookups.get(hash);
    if (pending !== undefined) return pending;
    // Deleted only if still its own entry: a version change may have cleared it and a new read taken its place.
    const started = this.repository.findByHash(hash).finally(() => {
      if (this.lookups.get(hash) === started) this.lookups.delete(hash);
    });
    this.lookups.set(hash, started);
    return started;
  }

  private check(entry: CachedContext): AuthContext {
    if (this.stale) throw staleKeys();
    if (entry.revoked) throw this.invalid();
    if (entry.expiresAt !== null && entry.expiresAt <= this.now()) {
      // Rotation ends a key by its expiry too: the owner who rotated it (or any owner) has the way out.
      throw authError(
        'token_expired',
        'This API key has expired: it passed its expiry, or it was replaced by a rotation and its grace period ended. Use the key that replaced it, or create a new one in the dashboard (or ask an owner of the organization).',
      );
    }
    if (entry.suspended) throw organizationSuspended(entry.organizationId);
    return entry;
  }

  private toContext(record: ApiKeyRecord): CachedContext {
    const context: CachedContext = {
      keyId: record.id,
      organizationId: record.organizationId,
      tier: record.tier,
      permissions: new Set(record.permissions as Permission[]),
      expiresAt: record.expiresAt,
      revoked: record.revokedAt !== null,
      suspended: record.organization?.status === 'suspended',
    };
    if (this.planLimits !== undefined) context.limits = this.planLimits(record);
    return context;
  }

  /**
   * Resolves a key by its public id, for work the server does on a key's behalf (batch requests run
   * through the app in-process). Revoked or expired keys fail exactly as they would over HTTP.
   */
  async authenticateKeyId(keyId: string): Promise<AuthContext> {
    let entry = this.byId.get(keyId);
    if (entry === undefined) {
      const record = await this.repository.findById(keyId);
      if (record === undefined) throw this.invalid();
      entry = this.toContext(record);
      this.byId.set(keyId, entry);
    }
    return this.check(entry);
  }

  private invalid(): ServiceError {
    return authError('invalid_api_key', 'Invalid API key. Check the key you sent; revoked keys are invalid too.');
  }
}

/** The database has been away longer than cached keys may be trusted. */
function staleKeys(): ServiceError {
  return new ServiceError({
    status: 500,
    type: 'server_error',
    code: 'service_unavailable',
    message: 'API keys cannot be verified while the database is unavailable; try again shortly.',
    headers: { 'retry-after': '1' },
  });
}
