-- A token bucket as teams ship it today (tokens and timestamp in a hash,
-- floats for the refill): the baseline RL.TOKENBUCKET is measured against.
-- KEYS[1] = key; ARGV = capacity, refill_tokens, refill_period_ms, cost.
local capacity, refill, period_ms = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local rate = refill / period_ms -- tokens per ms
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1]) or capacity
local ts = tonumber(state[2]) or now
if now > ts then tokens = math.min(capacity, tokens + (now - ts) * rate) end
if tokens < cost then
  local retry = cost <= capacity and math.ceil((cost - tokens) / rate) or -1
  return {0, capacity, math.floor(tokens), retry, math.ceil((capacity - tokens) / rate)}
end
tokens = tokens - cost
local reset = math.ceil((capacity - tokens) / rate)
redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.max(reset, 1))
return {1, capacity, math.floor(tokens), 0, reset}
