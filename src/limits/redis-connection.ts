/** The bounded Redis connection (redis/redis-connection.ts) for callers outside limits/: the CLI's cache purge. */
export { openRedisConnection, type RedisConnectionOptions } from './redis/redis-connection.ts';
