/**
 * Picks the limit backend from the configuration: Redis when `redisUrl` is set (limits shared by
 * every instance), otherwise the in-process store (one instance only).
 */
import type { LimitStore, LimitStoreOptions } from './limit-store.ts';
import { MemoryLimitStore } from './memory/memory-limit-store.ts';
import { RedisLimitStore } from './redis/redis-limit-store.ts';

export interface CreateLimitStoreOptions extends LimitStoreOptions {
  /** `redis://...` from the config's `redisUrl`; absent or empty selects the memory store. */
  redisUrl?: string | undefined;
  /** Key prefix for the Redis backend (default `switchyard:limits:`). */
  keyPrefix?: string;
}

export function createLimitStore(options: CreateLimitStoreOptions = {}): LimitStore {
  const { redisUrl, keyPrefix, ...common } = options;
  if (redisUrl !== undefined && redisUrl !== '') {
    return new RedisLimitStore({ ...common, redis: redisUrl, ...(keyPrefix === undefined ? {} : { keyPrefix }) });
  }
  return new MemoryLimitStore(common);
}
