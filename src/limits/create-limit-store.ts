/**
 * Builds the limit backend the configuration names: Redis (limits shared by every instance), the
 * in-process store (one instance only), or the disabled store (`limitsBackend: off`). The Redis
 * backend is imported only when configured: ioredis holds ~2 MB of heap an instance without Redis
 * should not carry (about 3 MB of its peak resident size under load).
 */
import type { LimitStore, LimitStoreOptions } from './limit-store.ts';
import { DisabledLimitStore } from './disabled/disabled-limit-store.ts';
import { MemoryLimitStore } from './memory/memory-limit-store.ts';

export interface CreateLimitStoreOptions extends LimitStoreOptions {
  /** `off` admits everything; without `backend`, a `redisUrl` selects Redis and its absence memory. */
  backend?: 'memory' | 'redis' | 'off';
  /** `redis://...` from the config's `redisUrl`. */
  redisUrl?: string | undefined;
  /** Key prefix for the Redis backend (default `<redisPrefix>limits:`). */
  keyPrefix?: string;
  /** The deployment's Redis prefix (config `redisPrefix`, REDIS_PREFIX; default `switchyard:`). */
  redisPrefix?: string;
}

export async function createLimitStore(options: CreateLimitStoreOptions = {}): Promise<LimitStore> {
  const { backend, redisUrl, redisPrefix = 'switchyard:', keyPrefix = `${redisPrefix}limits:`, ...common } = options;
  if (backend === 'off') return new DisabledLimitStore(common);
  if (backend !== 'memory' && redisUrl !== undefined && redisUrl !== '') {
    const { RedisLimitStore } = await import('./redis/redis-limit-store.ts');
    return new RedisLimitStore({ ...common, redis: redisUrl, keyPrefix });
  }
  return new MemoryLimitStore(common);
}
