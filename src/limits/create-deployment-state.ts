/**
 * Builds the deployment-state backend the configuration implies, as createLimitStore does: Redis when
 * a Redis URL is configured and the backend is not forced to `memory` (state shared by every
 * instance; with `limitsBackend: off` too, since routing still shares cooldowns and usage), in process
 * otherwise.
 */
import type { Clock } from './clock.ts';
import type { DeploymentStateStore } from './deployment-state.ts';
import { MemoryDeploymentState } from './memory/memory-deployment-state.ts';
import { RedisDeploymentState } from './redis/redis-deployment-state.ts';

export interface CreateDeploymentStateOptions {
  backend?: 'memory' | 'redis' | 'off';
  redisUrl?: string | undefined;
  keyPrefix?: string;
  clock?: Clock;
  logger?: { warn(details: object, message: string): void };
}

export function createDeploymentState(options: CreateDeploymentStateOptions = {}): DeploymentStateStore {
  const { backend, redisUrl, keyPrefix, clock, logger } = options;
  if (backend !== 'memory' && redisUrl !== undefined && redisUrl !== '') {
    return new RedisDeploymentState({
      redis: redisUrl,
      ...(keyPrefix === undefined ? {} : { keyPrefix }),
      ...(clock === undefined ? {} : { clock }),
      ...(logger === undefined ? {} : { logger }),
    });
  }
  return new MemoryDeploymentState(clock === undefined ? {} : { clock });
}
