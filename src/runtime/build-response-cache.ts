/**
 * Start step of the response cache (services/cache/): the in-process tier, the shared store the
 * config chooses (`responseCache.store`: `auto` is Redis when `redisUrl` is set, else this instance
 * alone), the single flight over it, its metrics, and the purge messages from other instances.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config/index.ts';
import type { ResponseCacheAdmin } from '../dashboard/api/common.ts';
import type { Database } from '../db/database.ts';
import { CacheSavingsRepository } from '../db/repositories/cache-savings-repository.ts';
import type { CircuitBreaker } from '../core/circuit-breaker.ts';
import { CacheMetrics } from '../services/cache/cache-metrics.ts';
import { Flights } from '../services/cache/flights.ts';
import { GenerationCache } from '../services/cache/generation-cache.ts';
import { ResponseTiers } from '../services/cache/response-tiers.ts';
import { RedisResponseStore } from '../services/cache/stores/redis-response-store.ts';
import type { SharedResponseStore } from '../services/cache/stores/shared-response-store.ts';
import type { Opened } from './open-stores.ts';

export type { GenerationCache };

export interface ResponseCacheParts {
  redis: Redis | undefined;
  redisBreaker: CircuitBreaker | undefined;
  registry: Registry;
  logger: Logger;
  opened: Opened;
}

/** Logs the first shared-store failure of each minute (a store that is away would otherwise log per request). */
function failureLogger(logger: Logger): (error: unknown) => void {
  let lastLogMs = 0;
  let failures = 0;
  return (error) => {
    failures++;
    const now = Date.now();
    if (now - lastLogMs < 60_000) return;
    lastLogMs = now;
    logger.warn({ err: error, failures }, 'response cache: the shared store failed; requests are answered as misses');
  };
}

export function buildResponseCache(config: Config, parts: ResponseCacheParts): GenerationCache {
  const settings = config.responseCache;
  let shared: SharedResponseStore | undefined;
  let redisStore: RedisResponseStore | undefined;
  const wantsRedis = settings.store === 'redis' || settings.store === 'auto';
  if (wantsRedis && parts.redis !== undefined) shared = redisStore = new RedisResponseStore(parts.redis, config.redisPrefix);
  else if (settings.store === 'redis')
    parts.logger.warn("responseCache.store is redis but no Redis is configured: the cache is this instance's alone");
  const tiers = new ResponseTiers({
    memoryBytes: settings.memoryBytes,
    maxEntryBytes: settings.maxEntryBytes,
    shared,
    breaker: shared === undefined ? undefined : parts.redisBreaker,
    onSharedFailure: failureLogger(parts.logger),
  });
  if (redisStore !== undefined) {
    const store = redisStore;
    store.subscribePurges((organizationId) => tiers.dropOrganization(organizationId));
    // Closed by Runtime.close (GenerationCache.close), or here should a later start step fail.
    parts.opened.push(() => store.close());
  }
  const flights = new Flights(tiers, { followerWaitMs: settings.followerWaitMs, leaseMs: settings.leaseMs });
  const observer = new CacheMetrics(parts.registry, () => tiers.memoryBytes);
  return new GenerationCache({ config: settings, tiers, flights, observer });
}

/** The dashboard's side of the cache: purges and the savings read from the ledger. */
export function responseCacheAdmin(cache: GenerationCache, database: Database): ResponseCacheAdmin {
  const savings = new CacheSavingsRepository(database.db);
  return {
    purge: (organizationId) => cache.purge(organizationId),
    savings: (organizationId, fromMs, toMs) => savings.savings(organizationId, fromMs, toMs),
  };
}
