/**
 * Builds the limit backend the configuration names: Redis (limits shared by every instance), the
 * in-process store (one instance only), or the disabled store (`limitsBackend: off`). The Redis
 * backend is imported only when configured: ioredis holds ~2 MB of heap an instance without Redis
 * should not carry (about 3 MB of its peak resident size under load). With a circuit breaker, the
 * Redis store is wrapped in the failover store that applies `limits.onStoreFailure`.
 */
import type { Redis } from 'ioredis';
import type { CircuitBreaker } from '../core/circuit-breaker.ts';
import { systemClock } from './clock.ts';
import type { LimitStore, LimitStoreOptions } from './limit-store.ts';
import { DisabledLimitStore } from './disabled/disabled-limit-store.ts';
import { FailoverLimitStore, type StoreFailurePolicy } from './failover-limit-store.ts';
import { MemoryLimitStore } from './memory/memory-limit-store.ts';

export interface CreateLimitStoreOptions extends LimitStoreOptions {
  /** `off` admits everything; without `backend`, a `redisUrl` selects Redis and its absence memory. */
  backend?: 'memory' | 'redis' | 'off';
  /** `redis://...` from the config's `redisUrl`. */
  redisUrl?: string | undefined;
  /** A connection to use instead of opening one from `redisUrl` (the caller closes it). */
  redis?: Redis;
  /** Key prefix for the Redis backend (default `<redisPrefix>limits:`). */
  keyPrefix?: string;
  /** The deployment's Redis prefix (config `redisPrefix`, REDIS_PREFIX; default `switchyard:`). */
  redisPrefix?: string;
  /** The Redis breaker: when given, Redis faults are handled by `onStoreFailure`. */
  breaker?: CircuitBreaker;
  /** What admission does while Redis cannot be reached (default `local`). */
  onStoreFailure?: StoreFailurePolicy;
  /** Refuse requests reserving against a budget while Redis cannot be reached (`limits.refusePaidOnStoreFailure`). */
  refusePaidOnStoreFailure?: boolean;
}

export async function createLimitStore(options: CreateLimitStoreOptions = {}): Promise<LimitStore> {
  const {
    backend,
    redisUrl,
    redis,
    redisPrefix = 'switchyard:',
    keyPrefix = `${redisPrefix}limits:`,
    breaker,
    onStoreFailure,
    refusePaidOnStoreFailure,
    ...common
  } = options;
  if (backend === 'off') return new DisabledLimitStore(common);
  if (backend !== 'memory' && redisUrl !== undefined && redisUrl !== '') {
    const { RedisLimitStore } = await import('./redis/redis-limit-store.ts');
    const primary = new RedisLimitStore({ ...common, redis: redis ?? redisUrl, keyPrefix });
    if (breaker === undefined) return primary;
    // Counts admitted locally during an outage are written back through the shared connection.
    const { RedisCountWriter } = await import('./redis/redis-count-writer.ts');
    return new FailoverLimitStore({
      primary,
      breaker,
      policy: onStoreFailure ?? 'local',
      refusePaid: refusePaidOnStoreFailure === true,
      ...(common.clock === undefined ? {} : { clock: common.clock }),
      ...(common.reservationTtlMs === undefined ? {} : { reservationTtlMs: common.reservationTtlMs }),
      ...(redis === undefined ? {} : { writer: new RedisCountWriter(redis, keyPrefix, common.clock ?? systemClock) }),
    });
  }
  return new MemoryLimitStore(common);
}
