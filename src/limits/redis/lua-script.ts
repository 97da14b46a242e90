/**
 * Running a Lua script on Redis by its SHA-1 (EVALSHA), sending the source (EVAL) only when Redis
 * answers NOSCRIPT (after a restart or failover flushed its script cache). Shared by the Redis limit
 * store and the Redis deployment state; each turns a failure into its own 500.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface LuaScript {
  source: string;
  sha1: string;
}

export function luaScript(source: string): LuaScript {
  return { source, sha1: createHash('sha1').update(source).digest('hex') };
}

export async function evalScript(redis: Redis, script: LuaScript, keys: readonly string[], args: readonly number[]): Promise<unknown> {
  try {
    return await redis.evalsha(script.sha1, keys.length, ...keys, ...args);
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('NOSCRIPT'))
      return await redis.eval(script.source, keys.length, ...keys, ...args);
    throw error;
  }
}
