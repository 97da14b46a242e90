/**
 * The port of the store every instance shares (Redis, or Postgres without Redis): entries by
 * organization and key, the purge of one organization, and the lease that makes one request of many
 * identical ones the leader that asks the upstream (single flight across instances). Implementations
 * may throw: the cache turns every failure into a miss.
 */
export interface SharedResponseStore {
  /** For logs and metrics (`redis`, `postgres`). */
  readonly name: string;
  /** The stored entry (JSON text), or undefined. */
  get(organizationId: string, key: string): Promise<string | undefined>;
  /** Stores an entry for `ttlMs` milliseconds. */
  set(organizationId: string, key: string, value: string, ttlMs: number): Promise<void>;
  /** Deletes every entry of the organization; returns how many. */
  purgeOrganization(organizationId: string): Promise<number>;
  /** Takes the lease on `key` for `leaseMs` unless someone holds it; true when `token` now holds it. */
  claim(key: string, token: string, leaseMs: number): Promise<boolean>;
  /** Gives the lease back if `token` still holds it. */
  release(key: string, token: string): Promise<void>;
  /** The entry and whether anyone holds the lease, in one round trip (what a waiting follower polls). */
  poll(organizationId: string, key: string): Promise<{ value: string | undefined; claimed: boolean }>;
  close?(): Promise<void>;
}
