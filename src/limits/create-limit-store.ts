/**
 * Builds the limit backend the configuration names: Redis (limits shared by every instance), the
 * in-process store (one instance only), or the disabled store (`limitsBackend: off`).
 */
import type { LimitStore, LimitStoreOptions } from './limit-store.ts';
import { DisabledLimitStore } from './disabled/disabled-limit-store.ts';
import { MemoryLimitStore } from './memory/memory-limit-store.ts';
import { RedisLimitStore } from './redis/redis-limit-store.ts';

export interface CreateLimitStoreOptions extends LimitStoreOptions {
  /** `off` admits everything; without `backend`, a `redisUrl` selects Redis and its absence memory. */
  backend?: 'memory' | 'redis' | 'off';
  /** `redis://...` from the config's `redisUrl`. */
  redisUrl?: string | undefined;
  /** Key prefix for the Redis backend (default `switchyard:limits:`). */
  keyPrefix?: string;
}

export function createLimitStore(options: CreateLimitStoreOptions = {}): LimitStore {
  const { backend, redisUrl, keyPrefix, ...common } = options;
  if (backend === 'off') return new DisabledLimitStore(common);
  if (backend !== 'memory' && redisUrl !== undefined && redisUrl !== '') {
    return new RedisLimitStore({ ...common, redis: redisUrl, ...(keyPrefix === undefined ? {} : { keyPrefix }) });
  }
  return new MemoryLimitStore(common);
}
