/**
 * The Lua scripts of the Redis limit store. Each runs atomically inside Redis, so the check and the
 * consumption cannot interleave with another instance's: that is what makes "exactly N admitted"
 * hold across processes. All keys of one call share the `{organization}` hash tag (one cluster slot).
 * The admission rule mirrors `failedLimits` in ../limit-decision.ts (same bit flags).
 */

/**
 * KEYS: 1 requests-per-minute counter, 2 tokens-per-minute counter, 3 day tokens, 4 month tokens,
 *       5 reservation record.
 * ARGV: 1..4 limits (rpm, tpm, day, month; 0 = unlimited), 5 estimated tokens,
 *       6..8 time to live of the minute, day and month counters (ms), 9 reservation time to live (ms).
 * Returns {admitted 0|1, failed flags, requests, minute tokens, day tokens, month tokens}: the values
 * after consumption when admitted, before it when not.
 */
export const ADMIT_SCRIPT = `
local values = redis.call('MGET', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
local requests = tonumber(values[1] or '0')
local minuteTokens = tonumber(values[2] or '0')
local dayTokens = tonumber(values[3] or '0')
local monthTokens = tonumber(values[4] or '0')
local estimate = tonumber(ARGV[5])
local function exceeds(limit, used, adding)
  limit = tonumber(limit)
  return limit > 0 and used + adding > limit
end
local failed = 0
if exceeds(ARGV[1], requests, 1) then failed = failed + 1 end
if exceeds(ARGV[2], minuteTokens, estimate) then failed = failed + 2 end
if exceeds(ARGV[3], dayTokens, estimate) then failed = failed + 4 end
if exceeds(ARGV[4], monthTokens, estimate) then failed = failed + 8 end
if failed > 0 then
  return {0, failed, requests, minuteTokens, dayTokens, monthTokens}
end
-- A counter gets its time to live when this call creates it; its window is in its name, so the
-- expiry only frees memory and never changes what is counted.
local function charge(key, amount, ttl)
  local value = redis.call('INCRBY', key, amount)
  if value == amount then redis.call('PEXPIRE', key, ttl) end
  return value
end
requests = charge(KEYS[1], 1, ARGV[6])
minuteTokens = charge(KEYS[2], estimate, ARGV[6])
dayTokens = charge(KEYS[3], estimate, ARGV[7])
monthTokens = charge(KEYS[4], estimate, ARGV[8])
-- A request-only admission reserves no tokens and leaves no record to settle.
if estimate > 0 then redis.call('SET', KEYS[5], estimate, 'PX', ARGV[9]) end
return {1, 0, requests, minuteTokens, dayTokens, monthTokens}
`;

/**
 * KEYS: 1..3 the minute, day and month token counters charged at admission, 4 reservation record,
 *       5..8 the current requests, minute tokens, day tokens and month tokens counters (for figures).
 * ARGV: 1 actual tokens.
 * Deleting the reservation record is the "exactly once": only the call that finds it adjusts.
 * Returns {settled 0|1, requests, minute tokens, day tokens, month tokens} of the current windows.
 */
export const SETTLE_SCRIPT = `
local estimate = redis.call('GET', KEYS[4])
local settled = 0
if estimate then
  redis.call('DEL', KEYS[4])
  settled = 1
  local delta = tonumber(ARGV[1]) - tonumber(estimate)
  if delta ~= 0 then
    for index = 1, 3 do
      -- A counter that is gone belongs to a finished window: nothing left to correct.
      if redis.call('EXISTS', KEYS[index]) == 1 then
        local value = redis.call('INCRBY', KEYS[index], delta)
        if value < 0 then redis.call('SET', KEYS[index], 0, 'KEEPTTL') end
      end
    end
  end
end
local values = redis.call('MGET', KEYS[5], KEYS[6], KEYS[7], KEYS[8])
return {settled, tonumber(values[1] or '0'), tonumber(values[2] or '0'), tonumber(values[3] or '0'), tonumber(values[4] or '0')}
`;
