/**
 * The one way this folder opens a Redis connection, and the bound on every command sent over it.
 *
 * The bound is a silence bound, not a per-command deadline: a command fails after `commandTimeoutMs`
 * only when Redis has answered nothing on the connection during that time (frozen, partitioned,
 * gone). A command that waits behind a burst of this process's own work (a thousand requests parsed
 * on a busy core) while Redis keeps answering is not failed for it: failing it would move the
 * decision to the fallback store and over-admit exactly when the limits matter. The decision is
 * taken after pending I/O has been read (`setImmediate`), so replies already on the socket count.
 * `maxWaitMs` caps a command's wait in any case.
 *
 * The connect is bounded, reconnects come every half second at most (a healed Redis is found within
 * ~1 s), and connection errors go to the caller (a circuit breaker) instead of being printed once per
 * reconnect attempt.
 */
import { Redis } from 'ioredis';

export interface RedisConnectionOptions {
  /** Longest silence from Redis before a waiting command fails, ms. Default 1,000 (300 failed commands spuriously on a loaded 2-core machine: see README). */
  commandTimeoutMs?: number;
  /** Longest wait for a connection, ms. Default 1,000. */
  connectTimeoutMs?: number;
  /** Told about every connection error (feed a circuit breaker; do not log each one). */
  onError?: (error: unknown) => void;
  /** Queue commands while disconnected (default true); a probe connection refuses them at once instead. */
  enableOfflineQueue?: boolean;
}

export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 1_000;
export const DEFAULT_REDIS_CONNECT_TIMEOUT_MS = 1_000;
/** Longest pause between two reconnect attempts, ms. */
const MAX_RECONNECT_DELAY_MS = 500;

/** A command that got no answer while Redis said nothing for the whole bound. */
export class RedisSilentError extends Error {
  constructor(silenceMs: number) {
    super(`Redis answered nothing for ${silenceMs} ms: command timed out`);
    this.name = 'RedisSilentError';
  }
}

interface PendingCommand {
  startedMs: number;
  reject(error: Error): void;
}

/**
 * Runs commands over one connection with the silence bound. One unref'd sweep timer per connection
 * (every third of the bound, at most 100 ms) checks the commands waiting: a command costs a Set entry,
 * no timer of its own.
 */
export class RedisCommandBound {
  /** When the connection last delivered an answer (any command's), ms since epoch. */
  private lastHeardMs = Date.now();
  private readonly pending = new Set<PendingCommand>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly timeoutMs: number,
    /** Hard cap on one command's wait whatever Redis does, ms. */
    readonly maxWaitMs = Math.max(10 * timeoutMs, 10_000),
  ) {}

  run<T>(command: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: PendingCommand = { startedMs: Date.now(), reject };
      this.pending.add(entry);
      this.timer ??= this.startSweeping();
      command().then(
        (value) => {
          this.lastHeardMs = Date.now();
          if (this.pending.delete(entry)) resolve(value);
        },
        (error: unknown) => {
          // An error reply is an answer too; a connection error is not.
          if (error instanceof Error && error.name === 'ReplyError') this.lastHeardMs = Date.now();
          if (this.pending.delete(entry)) reject(error);
        },
      );
    });
  }

  private startSweeping(): NodeJS.Timeout {
    // The decision waits for the I/O already received (setImmediate runs after the poll phase), so a
    // reply sitting on the socket behind a busy event loop still counts as Redis answering.
    const timer = setInterval(() => setImmediate(() => this.sweep()), Math.min(100, Math.ceil(this.timeoutMs / 3)));
    timer.unref();
    return timer;
  }

  private sweep(): void {
    if (this.pending.size === 0) return;
    const now = Date.now();
    const silent = now - this.lastHeardMs >= this.timeoutMs;
    for (const entry of this.pending) {
      const waited = now - entry.startedMs;
      if ((silent && waited >= this.timeoutMs) || waited >= this.maxWaitMs) {
        this.pending.delete(entry);
        entry.reject(new RedisSilentError(Math.min(waited, now - this.lastHeardMs)));
      }
    }
  }
}

const bounds = new WeakMap<Redis, RedisCommandBound>();

/** The bound of a connection opened here, or a default one for a client made elsewhere. */
export function commandBoundOf(redis: Redis): RedisCommandBound {
  let bound = bounds.get(redis);
  if (bound === undefined) {
    bound = new RedisCommandBound(DEFAULT_REDIS_COMMAND_TIMEOUT_MS);
    bounds.set(redis, bound);
  }
  return bound;
}

export function openRedisConnection(url: string, options: RedisConnectionOptions = {}): Redis {
  const redis = new Redis(url, {
    connectTimeout: options.connectTimeoutMs ?? DEFAULT_REDIS_CONNECT_TIMEOUT_MS,
    // One retry rides out a reconnect; the silence bound limits the whole wait anyway.
    maxRetriesPerRequest: 1,
    // Auto-pipelining packs concurrent admits into one write.
    enableAutoPipelining: true,
    retryStrategy: (attempt: number) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    enableOfflineQueue: options.enableOfflineQueue ?? true,
  });
  bounds.set(redis, new RedisCommandBound(options.commandTimeoutMs ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS));
  // Without a listener ioredis prints every reconnect failure to the console.
  const onError = options.onError;
  redis.on('error', (error: unknown) => onError?.(error));
  return redis;
}
