/**
 * The response cache (README "Response cache"; services/cache/): the `responseCache` config section.
 * Off by default: an organization has it when its plan is listed in `plans` or its entry in
 * `organizations` turns it on; a key's entry in `keys` turns it off (or on) for that key alone.
 */
import { z } from 'zod';

const seconds = z.number().int().positive();

/** What one organization's entry may set; a field left out comes from the section's defaults. */
export const responseCacheOrganizationSchema = z.strictObject({
  /** The cache for this organization's keys (overrides `plans`). */
  enabled: z.boolean().optional(),
  /** One cache for every key of the organization instead of one per key. Default false. */
  shareAcrossKeys: z.boolean().optional(),
  /** Also cache sampled answers (temperature above 0 or left to the model's default). Default false. */
  cacheSampled: z.boolean().optional(),
  /** TTL of an entry when the request names none, seconds. */
  defaultTtlSeconds: seconds.optional(),
  /** Longest TTL a request may ask for, seconds. */
  maxTtlSeconds: seconds.optional(),
});
export type ResponseCacheOrganizationConfig = z.infer<typeof responseCacheOrganizationSchema>;

export const responseCacheSchema = z
  .strictObject({
    /** Plans (tier names) whose organizations have the cache on. */
    plans: z.array(z.string().min(1)).default([]),
    /** Per-organization settings, by organization id. */
    organizations: z.record(z.string().min(1), responseCacheOrganizationSchema).default({}),
    /** Per-key switch, by key id: false turns the cache off for the key, true on (in the key's own scope). */
    keys: z.record(z.string().min(1), z.boolean()).default({}),
    /** TTL of an entry when neither the organization nor the request names one, seconds. */
    defaultTtlSeconds: seconds.default(3600),
    /** Longest TTL, seconds. */
    maxTtlSeconds: seconds.default(86_400),
    /** Where entries are shared between instances: `auto` (Redis when `redisUrl` is set, else this instance only), `memory`, `redis`. */
    store: z.enum(['auto', 'memory', 'redis']).default('auto'),
    /** Bytes the in-process LRU may hold (entries as stored, JSON). */
    memoryBytes: z
      .number()
      .int()
      .positive()
      .default(64 * 1024 * 1024),
    /** An answer larger than this (bytes, stored form) is not cached. */
    maxEntryBytes: z
      .number()
      .int()
      .positive()
      .default(1024 * 1024),
    /** How long a request waits for an identical one already asking the upstream before asking itself, ms. */
    followerWaitMs: z.number().int().nonnegative().default(30_000),
    /** How long the leader's claim on a missing entry lasts without renewal (a dead leader frees it after this), ms. */
    leaseMs: z.number().int().positive().default(60_000),
    /** Share of the answer's original cost a hit is charged, 0-1 (0: a hit costs nothing). */
    hitCostFraction: z.number().min(0).max(1).default(0),
  })
  .prefault({});
export type ResponseCacheConfig = z.infer<typeof responseCacheSchema>;
