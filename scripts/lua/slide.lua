-- A sliding window counter as teams ship it today (one counter key per
-- fixed window): the baseline RL.SLIDE is measured against.
-- KEYS[1] = key; ARGV = limit, window_ms, cost.
local limit, window, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local idx = math.floor(now / window)
local cur_key = KEYS[1] .. ':' .. idx
local prev_key = KEYS[1] .. ':' .. (idx - 1)
local counts = redis.call('MGET', cur_key, prev_key)
local cur, prev = tonumber(counts[1]) or 0, tonumber(counts[2]) or 0
local weight = (window - (now - idx * window)) / window
local estimate = prev * weight + cur
if estimate + cost > limit then
  return {0, limit, math.max(0, math.floor(limit - estimate)), -1, 2 * window - (now - idx * window)}
end
redis.call('INCRBY', cur_key, cost)
redis.call('PEXPIRE', cur_key, 2 * window)
return {1, limit, math.floor(limit - estimate - cost), 0, 2 * window - (now - idx * window)}
