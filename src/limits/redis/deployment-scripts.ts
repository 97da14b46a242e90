/**
 * Lua scripts of the Redis deployment state. `ACQUIRE` is the check-and-count that keeps a
 * deployment's own requests-per-minute exact across instances; it mirrors `fitsLimits` in
 * ../deployment-state.ts. Every key of one model shares the `{model}` hash tag (one cluster slot).
 */

/**
 * KEYS: 1 requests counter of the minute, 2 tokens counter of the minute, 3 in-flight counter.
 * ARGV: 1 requests per minute (0 = unlimited), 2 tokens per minute (0 = unlimited), 3 tokens to add,
 *       4 time to live of the minute counters (ms), 5 time to live of the in-flight counter (ms).
 * Returns {acquired 0|1, requests, tokens}: after counting when acquired, before when not.
 */
export const ACQUIRE_SCRIPT = `
local requests = tonumber(redis.call('GET', KEYS[1]) or '0')
local tokens = tonumber(redis.call('GET', KEYS[2]) or '0')
local rpm = tonumber(ARGV[1])
local tpm = tonumber(ARGV[2])
local adding = tonumber(ARGV[3])
if rpm > 0 and requests + 1 > rpm then return {0, requests, tokens} end
if tpm > 0 and tokens > 0 and tokens + adding > tpm then return {0, requests, tokens} end
requests = redis.call('INCR', KEYS[1])
if requests == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
if adding > 0 then
  tokens = redis.call('INCRBY', KEYS[2], adding)
  if tokens == adding then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
end
redis.call('INCR', KEYS[3])
redis.call('PEXPIRE', KEYS[3], ARGV[5])
return {1, requests, tokens}
`;

/**
 * KEYS: 1 in-flight counter. ARGV: 1 its time to live (ms).
 * Never goes below zero (a counter that expired while requests ran restarts at zero).
 */
export const RELEASE_SCRIPT = `
local value = redis.call('DECR', KEYS[1])
if value < 0 then redis.call('SET', KEYS[1], 0, 'PX', ARGV[1]) end
return 0
`;

/** KEYS: 1 tokens counter of a minute. ARGV: 1 delta. A counter that is gone belongs to a finished minute. */
export const CORRECT_TOKENS_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  local value = redis.call('INCRBY', KEYS[1], ARGV[1])
  if value < 0 then redis.call('SET', KEYS[1], 0, 'KEEPTTL') end
end
return 0
`;

/** KEYS: 1 cooldown. ARGV: 1 until (ms since epoch), 2 time to live (ms). A later cooldown already set is kept. */
export const COOL_DOWN_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 0
`;

/** KEYS: 1 latency average. ARGV: 1 measurement (ms), 2 smoothing, 3 time to live (ms). */
export const OBSERVE_LATENCY_SCRIPT = `
local old = tonumber(redis.call('GET', KEYS[1]) or '-1')
local sample = tonumber(ARGV[1])
local smoothing = tonumber(ARGV[2])
local value = sample
if old >= 0 then value = old * (1 - smoothing) + sample * smoothing end
redis.call('SET', KEYS[1], tostring(value), 'PX', ARGV[3])
return 0
`;
