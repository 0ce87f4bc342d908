-- GCRA as teams ship it today: the baseline RL.GCRA is measured against.
-- KEYS[1] = key; ARGV = limit, period_ms, burst, cost.
-- State: the theoretical arrival time (µs) as a string, with PX expiry.
local limit, period_ms = tonumber(ARGV[1]), tonumber(ARGV[2])
local burst, cost = tonumber(ARGV[3]), tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = math.ceil(period_ms * 1000 / limit)
local span = interval * burst
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local backlog = tat - now
if backlog > span then backlog = span end
local after = backlog + cost * interval
if after > span then
  return {0, burst, math.floor((span - backlog) / interval), math.ceil((after - span) / 1000),
          math.ceil(backlog / 1000)}
end
local reset = math.ceil(after / 1000)
redis.call('SET', KEYS[1], string.format('%d', now + after), 'PX', reset)
return {1, burst, math.floor((span - after) / interval), 0, reset}
