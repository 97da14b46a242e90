/**
 * The one way this folder opens a Redis connection: every command bounded (`commandTimeoutMs`, also
 * while it waits in the offline queue during a reconnect), the connect bounded, reconnects every
 * half second at most (so a healed Redis is found within ~1 s), and connection errors handed to the
 * caller (a circuit breaker) instead of printed once per reconnect attempt.
 */
import { Redis } from 'ioredis';

export interface RedisConnectionOptions {
  /** Longest wait for one command's answer, ms. Default 300. */
  commandTimeoutMs?: number;
  /** Longest wait for a connection, ms. Default 1,000. */
  connectTimeoutMs?: number;
  /** Told about every connection error (feed a circuit breaker; do not log each one). */
  onError?: (error: unknown) => void;
}

export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 300;
export const DEFAULT_REDIS_CONNECT_TIMEOUT_MS = 1_000;
/** Longest pause between two reconnect attempts, ms. */
const MAX_RECONNECT_DELAY_MS = 500;

export function openRedisConnection(url: string, options: RedisConnectionOptions = {}): Redis {
  const redis = new Redis(url, {
    commandTimeout: options.commandTimeoutMs ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: options.connectTimeoutMs ?? DEFAULT_REDIS_CONNECT_TIMEOUT_MS,
    // One retry rides out a reconnect; the command timeout bounds the whole wait anyway.
    maxRetriesPerRequest: 1,
    // Auto-pipelining packs concurrent admits into one write.
    enableAutoPipelining: true,
    retryStrategy: (attempt: number) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
  });
  // Without a listener ioredis prints every reconnect failure to the console.
  const onError = options.onError;
  redis.on('error', (error: unknown) => onError?.(error));
  return redis;
}
