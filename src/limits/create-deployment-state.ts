/**
 * Builds the deployment-state backend the configuration implies, as createLimitStore does: Redis when
 * a Redis URL is configured and the backend is not forced to `memory` (state shared by every
 * instance; with `limitsBackend: off` too, since routing still shares cooldowns and usage), in process
 * otherwise.
 */
import type { Clock } from './clock.ts';
import type { DeploymentStateStore } from './deployment-state.ts';
import { MemoryDeploymentState } from './memory/memory-deployment-state.ts';

export interface CreateDeploymentStateOptions {
  backend?: 'memory' | 'redis' | 'off';
  redisUrl?: string | undefined;
  /** Default `<redisPrefix>routing:`. */
  keyPrefix?: string;
  /** The deployment's Redis prefix (config `redisPrefix`, REDIS_PREFIX; default `switchyard:`). */
  redisPrefix?: string;
  clock?: Clock;
  logger?: { warn(details: object, message: string): void };
}

export async function createDeploymentState(options: CreateDeploymentStateOptions = {}): Promise<DeploymentStateStore> {
  const { backend, redisUrl, redisPrefix = 'switchyard:', keyPrefix = `${redisPrefix}routing:`, clock, logger } = options;
  if (backend !== 'memory' && redisUrl !== undefined && redisUrl !== '') {
    // Imported only when configured, as the Redis limit store is (create-limit-store.ts).
    const { RedisDeploymentState } = await import('./redis/redis-deployment-state.ts');
    return new RedisDeploymentState({
      redis: redisUrl,
      keyPrefix,
      ...(clock === undefined ? {} : { clock }),
      ...(logger === undefined ? {} : { logger }),
    });
  }
  return new MemoryDeploymentState(clock === undefined ? {} : { clock });
}
