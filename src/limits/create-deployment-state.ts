/**
 * Builds the deployment-state backend the configuration implies, as createLimitStore does: Redis when
 * a Redis URL is configured and the backend is not forced to `memory` (state shared by every
 * instance; with `limitsBackend: off` too, since routing still shares cooldowns and usage), in process
 * otherwise. With a circuit breaker, the Redis state is wrapped in the failover state that applies
 * `routing.onStoreFailure`.
 */
import type { Redis } from 'ioredis';
import type { CircuitBreaker } from '../core/circuit-breaker.ts';
import type { Clock } from './clock.ts';
import type { DeploymentStateStore } from './deployment-state.ts';
import { FailoverDeploymentState } from './failover-deployment-state.ts';
import { MemoryDeploymentState } from './memory/memory-deployment-state.ts';

export interface CreateDeploymentStateOptions {
  backend?: 'memory' | 'redis' | 'off';
  redisUrl?: string | undefined;
  /** A connection to use instead of opening one from `redisUrl` (the caller closes it). */
  redis?: Redis;
  /** Default `<redisPrefix>routing:`. */
  keyPrefix?: string;
  /** The deployment's Redis prefix (config `redisPrefix`, REDIS_PREFIX; default `switchyard:`). */
  redisPrefix?: string;
  clock?: Clock;
  logger?: { warn(details: object, message: string): void };
  /** The Redis breaker: when given, Redis faults are handled by `onStoreFailure`. */
  breaker?: CircuitBreaker;
  /** What routing does while Redis cannot be reached (default `local`). */
  onStoreFailure?: 'local' | 'closed';
}

export async function createDeploymentState(options: CreateDeploymentStateOptions = {}): Promise<DeploymentStateStore> {
  const { backend, redisUrl, redis, redisPrefix = 'switchyard:', keyPrefix = `${redisPrefix}routing:`, clock, logger, breaker } = options;
  if (backend !== 'memory' && redisUrl !== undefined && redisUrl !== '') {
    // Imported only when configured, as the Redis limit store is (create-limit-store.ts).
    const { RedisDeploymentState } = await import('./redis/redis-deployment-state.ts');
    const primary = new RedisDeploymentState({
      redis: redis ?? redisUrl,
      keyPrefix,
      ...(clock === undefined ? {} : { clock }),
      ...(logger === undefined ? {} : { logger }),
      ...(breaker === undefined
        ? {}
        : {
            onReportError: (error: unknown) => {
              if (!breaker.recordFailure(error)) logger?.warn({ err: error }, 'deployment state: a report could not be written');
            },
          }),
    });
    if (breaker === undefined) return primary;
    return new FailoverDeploymentState({
      primary,
      breaker,
      policy: options.onStoreFailure ?? 'local',
      ...(clock === undefined ? {} : { clock }),
    });
  }
  return inProcessDeploymentState(clock);
}

/** Routing state kept in this process only (one instance; tests and tools that build a service alone). */
export function inProcessDeploymentState(clock?: Clock): DeploymentStateStore {
  return new MemoryDeploymentState(clock === undefined ? {} : { clock });
}
