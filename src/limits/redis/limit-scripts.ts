/**
 * The Lua scripts of the Redis limit store. Each runs atomically inside Redis, so the check and the
 * consumption cannot interleave with another instance's: that is what makes "exactly N admitted"
 * hold across processes. All keys of one call share the `{organization}` hash tag (one cluster slot).
 * The admission rule mirrors `failedLimits` in ../limit-decision.ts (same bit flags).
 */

/**
 * KEYS: 1 requests-per-minute counter, 2 tokens-per-minute counter, 3 day tokens, 4 month tokens,
 *       5 reservation record, 6 and 7 the organization-wide requests and tokens of the minute, then
 *       two per budget: its committed (settled + reserved) and its settled micro-USD counters.
 * ARGV: 1..4 limits (rpm, tpm, day, month; 0 = unlimited), 5 estimated tokens,
 *       6..8 time to live of the minute, day and month counters (ms), 9 reservation time to live (ms),
 *       10 and 11 the organization-wide rpm and tpm limits, 12 count the organization's minute (0|1),
 *       13 the estimated cost (micro-USD), 14 the number of budgets, then three per budget: its amount,
 *       its counters' time to live (ms; 0 = kept, a `total` budget) and its seed (the ledger's spend).
 * Returns {admitted 0|1, failed flags, failing budget index (0-based, -1 none), requests, minute tokens,
 * day tokens, month tokens, organization requests, organization minute tokens, then committed and
 * settled of each budget}: the values after consumption when admitted, before it when not.
 * A budget's counters that do not exist start from the seed (a fresh period, or a Redis that lost them).
 */
export const ADMIT_SCRIPT = `
local values = redis.call('MGET', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[6], KEYS[7])
local requests = tonumber(values[1] or '0')
local minuteTokens = tonumber(values[2] or '0')
local dayTokens = tonumber(values[3] or '0')
local monthTokens = tonumber(values[4] or '0')
local orgRequests = tonumber(values[5] or '0')
local orgMinuteTokens = tonumber(values[6] or '0')
local estimate = tonumber(ARGV[5])
local cost = tonumber(ARGV[13])
local budgetCount = tonumber(ARGV[14])
local function exceeds(limit, used, adding)
  limit = tonumber(limit)
  return limit > 0 and used + adding > limit
end
local committed = {}
local spent = {}
for index = 1, budgetCount do
  local committedKey = KEYS[6 + index * 2]
  local spentKey = KEYS[7 + index * 2]
  local current = redis.call('GET', committedKey)
  if current then
    committed[index] = tonumber(current)
    spent[index] = tonumber(redis.call('GET', spentKey) or '0')
  else
    local seed = tonumber(ARGV[14 + index * 3])
    local ttl = tonumber(ARGV[13 + index * 3])
    if ttl > 0 then
      redis.call('SET', committedKey, seed, 'PX', ttl)
      redis.call('SET', spentKey, seed, 'PX', ttl)
    else
      redis.call('SET', committedKey, seed)
      redis.call('SET', spentKey, seed)
    end
    committed[index] = seed
    spent[index] = seed
  end
end
local failed = 0
if exceeds(ARGV[1], requests, 1) then failed = failed + 1 end
if exceeds(ARGV[2], minuteTokens, estimate) then failed = failed + 2 end
if exceeds(ARGV[3], dayTokens, estimate) then failed = failed + 4 end
if exceeds(ARGV[4], monthTokens, estimate) then failed = failed + 8 end
if exceeds(ARGV[10], orgRequests, 1) then failed = failed + 16 end
if exceeds(ARGV[11], orgMinuteTokens, estimate) then failed = failed + 32 end
local failedBudget = -1
for index = 1, budgetCount do
  if committed[index] + cost > tonumber(ARGV[12 + index * 3]) then
    failedBudget = index - 1
    failed = failed + 64
    break
  end
end
local function reply(admitted)
  local result = {admitted, failed, failedBudget, requests, minuteTokens, dayTokens, monthTokens, orgRequests, orgMinuteTokens}
  for index = 1, budgetCount do
    result[#result + 1] = committed[index]
    result[#result + 1] = spent[index]
  end
  return result
end
if failed > 0 then return reply(0) end
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
if ARGV[12] == '1' then
  orgRequests = charge(KEYS[6], 1, ARGV[6])
  orgMinuteTokens = charge(KEYS[7], estimate, ARGV[6])
end
for index = 1, budgetCount do
  committed[index] = redis.call('INCRBY', KEYS[6 + index * 2], cost)
end
-- A request-only admission reserves nothing and leaves no record to settle.
if estimate > 0 or budgetCount > 0 then redis.call('SET', KEYS[5], estimate .. ':' .. cost, 'PX', ARGV[9]) end
return reply(1)
`;

/**
 * KEYS: 1..3 the minute, day and month token counters charged at admission, 4 reservation record,
 *       5..8 the current requests, minute tokens, day tokens and month tokens counters (for figures),
 *       9 the organization's minute tokens charged at admission, 10 and 11 the organization's current
 *       minute counters, then two per budget charged: committed and settled.
 * ARGV: 1 actual tokens, 2 actual cost (micro-USD), 3 the number of budgets.
 * Deleting the reservation record is the "exactly once": only the call that finds it adjusts.
 * Returns {settled 0|1, requests, minute tokens, day tokens, month tokens, organization requests,
 * organization minute tokens, then committed and settled of each budget}.
 */
export const SETTLE_SCRIPT = `
local record = redis.call('GET', KEYS[4])
local settled = 0
local budgetCount = tonumber(ARGV[3])
if record then
  redis.call('DEL', KEYS[4])
  settled = 1
  -- 'tokens:cost'; a record without the cost is a reservation of tokens only.
  local estimate, cost = string.match(record, '^(%d+):?(%d*)$')
  if cost == nil or cost == '' then cost = '0' end
  local delta = tonumber(ARGV[1]) - tonumber(estimate or '0')
  if delta ~= 0 then
    for _, index in ipairs({1, 2, 3, 9}) do
      -- A counter that is gone belongs to a finished window: nothing left to correct.
      if redis.call('EXISTS', KEYS[index]) == 1 then
        local value = redis.call('INCRBY', KEYS[index], delta)
        if value < 0 then redis.call('SET', KEYS[index], 0, 'KEEPTTL') end
      end
    end
  end
  local actualCost = tonumber(ARGV[2])
  local costDelta = actualCost - tonumber(cost)
  for index = 1, budgetCount do
    local committedKey = KEYS[10 + index * 2]
    local spentKey = KEYS[11 + index * 2]
    if redis.call('EXISTS', committedKey) == 1 then
      local value = redis.call('INCRBY', committedKey, costDelta)
      if value < 0 then redis.call('SET', committedKey, 0, 'KEEPTTL') end
      redis.call('INCRBY', spentKey, actualCost)
    end
  end
end
local values = redis.call('MGET', KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[10], KEYS[11])
local result = {settled}
for index = 1, 6 do result[#result + 1] = tonumber(values[index] or '0') end
for index = 1, budgetCount do
  result[#result + 1] = tonumber(redis.call('GET', KEYS[10 + index * 2]) or '0')
  result[#result + 1] = tonumber(redis.call('GET', KEYS[11 + index * 2]) or '0')
end
return result
`;
