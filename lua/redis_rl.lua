#!lua name=redis_rl
-- redis-rl as a Redis Functions library: the module's limiters for servers
-- that refuse MODULE LOAD (managed Redis and Valkey). One source, two ways:
--
--   FUNCTION LOAD REPLACE "$(cat lua/redis_rl.lua)"         (Redis 7+, Valkey 7.2+)
--   FCALL rl_gcra 1 key 10 1000 BURST 5
--   FCALL_RO rl_peek 1 key GCRA 10 1000
--
-- or, where functions are refused, the same file with its first line (the
-- shebang above) emptied, through SCRIPT LOAD / EVALSHA, the function's name
-- first among the arguments:
--
--   EVALSHA <sha> 1 key rl_gcra 10 1000 BURST 5
--
-- Arguments after the keys, replies (the RESP2 forms, on every protocol),
-- error texts and invariants are those of the module's commands (SPEC.md,
-- "Where modules cannot be loaded"). The module's source is the reference;
-- comments below name the Rust function each part follows.
--
-- Numbers: Lua 5.1 numbers are doubles, exact for integers below 2^53.
-- Every value here is either such a number or, when it does not fit, an
-- exact multi-limb integer (the X table below), so no decision is ever made
-- on a rounded value. Internal time is the module's: nanoseconds for GCRA and
-- the token bucket (whose charges are fractions of a microsecond), whole
-- microseconds for the log, the sliding window and leases (the server's clock
-- is whole microseconds, so that loses nothing), milliseconds for quotas.
-- The clock is TIME, read as the module reads its clock: whole microseconds
-- on Redis 7.2+ and Valkey, whole milliseconds before 7.2.

local LIB_VERSION = '1.0.1'

---------------------------------------------------------------------------
-- Exact non-negative integers: a Lua number below 2^53, or a table of base
-- 10^6 limbs (least significant first, normalized: a table always holds a
-- value of at least 2^53).
---------------------------------------------------------------------------
-- Redis 8 lets a library's load-time code see no global but `redis`, so
-- the library is built on the first call, not when it is loaded.
local function build()
-- Globals read once: a global read in a function may go through the
-- server's protection metatable, a local is an upvalue.
local type, tonumber, pcall, error, ipairs, pairs, unpack = type, tonumber, pcall, error, ipairs, pairs, unpack
local sformat, tconcat, tsort = string.format, table.concat, table.sort
local sfind, ssub, smatch = string.find, string.sub, string.match
local rcall, rpcall, error_reply = redis.call, redis.pcall, redis.error_reply
local HUGE = math.huge
local X = {}
local BASE = 1000000
local LIM = 9007199254740992 -- 2^53
local floor = math.floor

local function tobig(x)
  local t, i = {}, 0
  repeat
    i = i + 1
    local q = floor(x / BASE)
    t[i] = x - q * BASE
    x = q
  until x == 0
  return t
end

local function norm(t)
  local n = #t
  while n > 1 and t[n] == 0 do
    t[n] = nil
    n = n - 1
  end
  if n == 1 then return t[1] end
  if n == 2 then return t[1] + t[2] * BASE end
  if n == 3 and t[3] <= 9007 then
    local v = t[1] + t[2] * BASE + t[3] * BASE * BASE
    if v < LIM then return v end
  end
  return t
end

local function add_big(a, b)
  local r, carry = {}, 0
  local n = #a > #b and #a or #b
  for i = 1, n do
    local s = (a[i] or 0) + (b[i] or 0) + carry
    if s >= BASE then
      r[i] = s - BASE
      carry = 1
    else
      r[i] = s
      carry = 0
    end
  end
  if carry > 0 then r[n + 1] = carry end
  return norm(r)
end

local function sub_big(a, b)
  local r, borrow = {}, 0
  for i = 1, #a do
    local s = a[i] - (b[i] or 0) - borrow
    if s < 0 then
      r[i] = s + BASE
      borrow = 1
    else
      r[i] = s
      borrow = 0
    end
  end
  if borrow ~= 0 then error('redis_rl: negative difference') end
  return norm(r)
end

local function mul_big(a, b)
  local r = {}
  for i = 1, #a + #b do r[i] = 0 end
  for i = 1, #a do
    local ai, carry = a[i], 0
    if ai ~= 0 then
      for j = 1, #b do
        local t = r[i + j - 1] + ai * b[j] + carry
        carry = floor(t / BASE)
        r[i + j - 1] = t - carry * BASE
      end
      local k = i + #b
      while carry > 0 do
        local t = r[k] + carry
        carry = floor(t / BASE)
        r[k] = t - carry * BASE
        k = k + 1
      end
    end
  end
  return norm(r)
end

local function tofloat(x)
  if type(x) ~= 'table' then return x end
  local v = 0
  for i = #x, 1, -1 do v = v * BASE + x[i] end
  return v
end

function X.cmp(a, b)
  local ba, bb = type(a) == 'table', type(b) == 'table'
  if not ba and not bb then
    if a < b then return -1 elseif a > b then return 1 else return 0 end
  end
  if not ba then return -1 end
  if not bb then return 1 end
  if #a ~= #b then return #a < #b and -1 or 1 end
  for i = #a, 1, -1 do
    if a[i] ~= b[i] then return a[i] < b[i] and -1 or 1 end
  end
  return 0
end
local cmp = X.cmp

function X.add(a, b)
  if type(a) ~= 'table' and type(b) ~= 'table' then
    local s = a + b
    if s < LIM then return s end
  end
  return add_big(type(a) == 'table' and a or tobig(a), type(b) == 'table' and b or tobig(b))
end

-- a - b, a >= b.
function X.sub(a, b)
  if type(a) ~= 'table' then
    if type(b) == 'table' or b > a then error('redis_rl: negative difference') end
    return a - b
  end
  return sub_big(a, type(b) == 'table' and b or tobig(b))
end

function X.satsub(a, b)
  if cmp(a, b) <= 0 then return 0 end
  return X.sub(a, b)
end

function X.mul(a, b)
  if type(a) ~= 'table' and type(b) ~= 'table' then
    local p = a * b
    if p < LIM then return p end
  end
  if a == 0 or b == 0 then return 0 end
  return mul_big(type(a) == 'table' and a or tobig(a), type(b) == 'table' and b or tobig(b))
end

-- floor(a / d) and a % d, d > 0.
function X.divmod(a, d)
  if type(a) ~= 'table' then
    if type(d) == 'table' then return 0, a end
    -- a < 2^53: the quotient of doubles, floored, is exact.
    local q = floor(a / d)
    return q, a - q * d
  end
  if type(d) ~= 'table' and d < 9e9 then
    -- Short division: r * BASE + limb < d * BASE < 2^53.
    local q, r = {}, 0
    for i = #a, 1, -1 do
      local t = r * BASE + a[i]
      local qi = floor(t / d)
      q[i] = qi
      r = t - qi * d
    end
    return norm(q), r
  end
  -- Long division, one base-10^6 digit at a time; each digit estimated in
  -- floating point and corrected exactly (the loops make it exact whatever
  -- the estimate).
  local D = d
  local df = tofloat(D)
  local q, r = {}, 0
  for i = #a, 1, -1 do
    r = X.add(X.mul(r, BASE), a[i])
    local qd = 0
    if cmp(r, D) >= 0 then
      qd = floor(tofloat(r) / df)
      if qd >= BASE then qd = BASE - 1 end
      if qd < 1 then qd = 1 end
      local t = X.mul(D, qd)
      while cmp(t, r) > 0 do
        qd = qd - 1
        t = X.sub(t, D)
      end
      r = X.sub(r, t)
      while cmp(r, D) >= 0 do
        qd = qd + 1
        r = X.sub(r, D)
      end
    end
    q[i] = qd
  end
  return norm(q), r
end

function X.ceildiv(a, d)
  local q, r = X.divmod(a, d)
  if r ~= 0 then q = X.add(q, 1) end
  return q
end

function X.muldivfloor(a, b, d)
  return (X.divmod(X.mul(a, b), d))
end

function X.muldivceil(a, b, d)
  return X.ceildiv(X.mul(a, b), d)
end

function X.min(a, b) return cmp(a, b) <= 0 and a or b end
function X.max(a, b) return cmp(a, b) >= 0 and a or b end

function X.tostr(x)
  if type(x) ~= 'table' then return sformat('%.0f', x) end
  local parts = { sformat('%d', x[#x]) }
  for i = #x - 1, 1, -1 do parts[#parts + 1] = sformat('%06d', x[i]) end
  return tconcat(parts)
end

-- A decimal string of digits (as this library stores them).
function X.parse(s)
  local n = #s
  if n <= 15 then return tonumber(s) end
  local t, i = {}, 0
  while n > 0 do
    i = i + 1
    local from = n - 5
    if from < 1 then from = 1 end
    t[i] = tonumber(s:sub(from, n))
    n = from - 1
  end
  return norm(t)
end

---------------------------------------------------------------------------
-- Errors, argument parsing (module/args.rs)
---------------------------------------------------------------------------
local WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value'
local MAX_COUNT = 4294967295
local MAX_PERIOD_MS = 1000000000000
local MAX_SPAN_MS = 1000000000000
local MAX_ID_LEN = 128

-- Our own error: raised as a table, answered as an error reply.
local function fail(msg) error({ rl_error = msg }, 0) end

local function arity(cmd) fail("ERR wrong number of arguments for '" .. cmd .. "' command") end

-- An integer's decimal digits: %d (a C long) for one below 2^53 in size,
-- %.0f (the double's exact value) past it; %d is cheaper by half.
local function fmt(n)
  if n < LIM and n > -LIM then return sformat('%d', n) end
  return sformat('%.0f', n)
end

-- string2ll's grammar: "0", or an optional '-' and digits without a leading 0.
-- Returns nil if not an integer, -1 for a negative one, HUGE past 2^64.
local function parse_integer(s)
  if s:find('^[1-9]%d*$') then
    if #s > 20 then return HUGE end
    return tonumber(s)
  end
  if s == '0' then return 0 end
  if s:find('^%-[1-9]%d*$') then return -1 end
  return nil
end

-- Duration arguments: one given with a unit (1s, 250ms, 10m, 2h, 1d) is
-- told that durations are whole milliseconds, as the module tells it.
local DURATION = { period_ms = true, refill_period_ms = true, window_ms = true, lease_ms = true }
local UNIT_MS = { ms = 1, s = 1000, sec = 1000, m = 60000, min = 60000, h = 3600000, d = 86400000 }

local function not_an_integer(s, name)
  local digits, unit = s:match('^(%d+)(%a+)$')
  local per = unit and #unit <= 3 and UNIT_MS[unit:lower()]
  if DURATION[name] and per then
    local n = tonumber(digits)
    if #digits <= 15 and n * per < 2 ^ 53 then
      fail('ERR ' .. name .. ' is not an integer: durations are whole milliseconds (that is ' .. fmt(n * per) .. ')')
    end
    fail('ERR ' .. name .. ' is not an integer: durations are whole milliseconds')
  end
  fail('ERR ' .. name .. ' is not an integer')
end

local function int_in(s, name, min, max)
  local v = parse_integer(s)
  if v == nil then not_an_integer(s, name) end
  if v < min or v > max then
    fail('ERR ' .. name .. ' is out of range (must be ' .. fmt(min) .. ' to ' .. fmt(max) .. ')')
  end
  return v
end

local function printable(word)
  if #word == 0 or #word > 32 or word:find('[^\33-\126]') then return nil end
  return word
end

local function unknown_option(word)
  local p = printable(word)
  if p then fail("ERR syntax error: unknown option '" .. p .. "'") end
  fail('ERR syntax error: unknown option')
end

-- A cursor over args[at..last] (Cursor in args.rs): spec names the RL.ALL
-- spec keyword (MissingArg instead of wrong arity), peek and refund say
-- whether PEEK / REFUND are options here.
local function cursor(args, at, last, cmd, spec, peek, refund)
  return { args = args, at = at, last = last, cmd = cmd, spec = spec, peek = peek, refund = refund }
end

local function next_arg(c, name)
  if c.at > c.last then
    if c.spec then fail('ERR syntax error: ' .. c.spec .. ' needs ' .. name) end
    arity(c.cmd)
  end
  c.at = c.at + 1
  return c.args[c.at - 1]
end

local function next_count(c, name) return int_in(next_arg(c, name), name, 1, MAX_COUNT) end
local function next_period(c, name) return int_in(next_arg(c, name), name, 1, MAX_PERIOD_MS) end

-- parse_options: BURST (if burst), extra (TZ or ID), COST, REFUND, PEEK.
local function options(c, burst, extra)
  local args, last = c.args, c.last
  local o = { cost = 1 }
  local cost_seen, extra_value = false, nil
  local i = c.at
  while i <= last do
    local w = args[i]:upper()
    local function value(name)
      if i + 1 <= last then return args[i + 1] end
      fail('ERR syntax error: ' .. name .. ' needs a value')
    end
    if burst and w == 'BURST' then
      if o.burst then fail('ERR syntax error: BURST given more than once') end
      o.burst = int_in(value('BURST'), 'BURST', 1, MAX_COUNT)
      i = i + 2
    elseif extra and w == extra then
      if extra_value then fail('ERR syntax error: ' .. extra .. ' given more than once') end
      extra_value = value(extra)
      i = i + 2
    elseif w == 'COST' then
      if cost_seen then fail('ERR syntax error: COST given more than once') end
      if o.refund then fail('ERR syntax error: REFUND cannot be combined with COST') end
      o.cost = int_in(value('COST'), 'COST', 0, MAX_COUNT)
      cost_seen = true
      i = i + 2
    elseif c.refund and w == 'REFUND' then
      if o.refund then fail('ERR syntax error: REFUND given more than once') end
      if cost_seen then fail('ERR syntax error: REFUND cannot be combined with COST') end
      if o.peek then fail('ERR syntax error: REFUND cannot be combined with PEEK') end
      o.refund = int_in(value('REFUND'), 'REFUND', 1, MAX_COUNT)
      i = i + 2
    elseif c.peek and w == 'PEEK' then
      if o.peek then fail('ERR syntax error: PEEK given more than once') end
      if o.refund then fail('ERR syntax error: REFUND cannot be combined with PEEK') end
      o.peek = true
      i = i + 1
    elseif w == 'WAIT' or w == 'MAXWAIT' then
      fail('ERR ' .. w .. ' is not available in the Lua library: a script cannot block')
    else
      unknown_option(args[i])
    end
  end
  c.at = last + 1
  return o, extra_value
end

---------------------------------------------------------------------------
-- Time
---------------------------------------------------------------------------
-- The module's clock: RedisModule_CachedMicroseconds (7.2+), else
-- RedisModule_Milliseconds.
local MS_CLOCK = redis.REDIS_VERSION_NUM == nil or redis.REDIS_VERSION_NUM < 0x070200

local function ceil_ms_us(us) return floor((us + 999) / 1000) end

---------------------------------------------------------------------------
-- Decisions and replies
---------------------------------------------------------------------------
local function decision(allowed, limit, remaining, retry, reset)
  return { allowed = allowed, limit = limit, remaining = remaining, retry = retry, reset = reset }
end

---------------------------------------------------------------------------
-- Key reads: a string state with a one-letter kind tag
---------------------------------------------------------------------------
-- Which of this library's limiters a key holds, by its value's form, for
-- a WRONGTYPE that says so (as the module's does): a string with a kind's
-- tag, or a lease set's hash.
local TAG_CMD = { G = 'RL.GCRA', T = 'RL.TOKENBUCKET', S = 'RL.SLIDE', Q = 'RL.QUOTA', L = 'RL.LOG' }
local TAG_FORM = { G = '^G%d+$', T = '^T%d+$', S = '^S%d+,%d+,%d+,%d+$', Q = '^Q%d+,%d+,%d+$', L = '^L%d+[;,%d]*$' }

local function held_by(key, v)
  if v == nil then v = rpcall('GET', key) end
  if type(v) == 'string' then
    local t = v:sub(1, 1)
    if TAG_FORM[t] and v:find(TAG_FORM[t]) then return TAG_CMD[t] end
    return nil
  end
  local h = rpcall('HGET', key, '')
  if type(h) == 'string' and h:find('^%d+,%d+$') then return 'RL.ACQUIRE' end
  return nil
end

-- WRONGTYPE for a key read as the limiter of command `want`: which limiter
-- it holds, if one of this library's; else Redis's own text. (`v`: the
-- key's string value, if read; nil to look.)
local function wrong_kind(key, v, want)
  local held = held_by(key, v)
  if held and want and held ~= want then
    fail('WRONGTYPE the key holds an ' .. held .. ' limiter, not an ' .. want .. ' one')
  end
  fail(WRONGTYPE)
end

local function get_string(key, tag)
  local v = rpcall('GET', key)
  if not v then return nil end
  if type(v) == 'table' then wrong_kind(key, false, TAG_CMD[tag]) end
  if v:sub(1, 1) ~= tag then wrong_kind(key, v, TAG_CMD[tag]) end
  return v:sub(2)
end

local function set_string(key, value, expire_at_ms)
  rcall('SET', key, value, 'PXAT', fmt(expire_at_ms))
end

local function del_key(key, existed)
  if existed then rcall('DEL', key) end
end

---------------------------------------------------------------------------
-- The schedule GCRA and the token bucket share (core/schedule.rs), in ns.
---------------------------------------------------------------------------
local S = {}

local SCHEDULES, NSCHEDULES = {}, 0

function S.new(period_ms, count, burst)
  -- Schedules are remembered by their parameters (while the library stays
  -- loaded): the arithmetic below runs once per distinct limit.
  local memo = sformat('%d:%d:%d', period_ms, count, burst) -- (integers to 10^12)
  local s = SCHEDULES[memo]
  if s ~= nil then return s or nil end
  if cmp(X.mul(burst, period_ms), X.mul(MAX_SPAN_MS, count)) > 0 then
    s = false
  else
    local P = X.mul(period_ms, 1000000)
    local unit = X.ceildiv(P, count)
    local burst_ns = X.mul(burst, unit)
    local below_next = X.sub(X.muldivceil(burst + 1, P, count), 1)
    s = { P = P, L = count, B = burst, unit = unit, allow = X.min(burst_ns, below_next) }
    s.span = X.max(s.allow, X.muldivceil(burst, P, count))
    -- The plain-number paths (fast_check: s.small; k.fast: s.fast) when
    -- every value they form is an integer below 2^53, so exact in a double:
    --   cost * P with cost <= B:              <= B * P          < 2^53;
    --   the charge ceil(cost * P / L):        <= ceil(B * P / L) <= span;
    --   backlog:                              <= span (read() caps it);
    --   after = backlog + charge:             <= 2 * span;
    --   now.n + after (instant_after):        < 10^9 + 2 * span < 2^53;
    --   room * L with room <= allow <= span:  <= span * L       < 2^53;
    --   ahead = ds * 10^9 + dn, ds < 9 * 10^6: < 9 * 10^15       < 2^53.
    -- Quotients of such values by exact divisors, floored, are exact
    -- (the rounding of a / d cannot reach the next integer: the gap to it is
    -- at least 1/d, half an ulp of a / d is below it). k.fast needs only
    -- the last three lines' bounds (s.fast): it forms cost * P and room * L
    -- with P / L in lowest terms, tests them per call (a product of two
    -- numbers below 2^53 is below 2^53 exactly when its rounded value is)
    -- and forms those past it with X, whose results (the charge <= span,
    -- the remaining < 2^32) are numbers.
    s.fast = type(P) == 'number' and type(s.span) == 'number' and 2 * s.span + 1000000000 < LIM
    s.small = s.fast and burst * P < LIM and s.span * count < LIM
    if s.fast then
      -- P / L in lowest terms (Pr / Lr), for k.fast's products: with the
      -- usual rates (L divides P: "100 per second") they stay small.
      local a, b = P, count
      while b > 0 do a, b = b, a % b end
      s.Pr, s.Lr = P / a, count / a
    end
  end
  if NSCHEDULES >= 1000 then SCHEDULES, NSCHEDULES = {}, 0 end
  SCHEDULES[memo] = s
  NSCHEDULES = NSCHEDULES + 1
  return s or nil
end

local function charge(s, cost)
  if cost == 1 then return s.unit end
  return X.muldivceil(cost, s.P, s.L)
end

local function span(s) return s.span end

local function remaining_at(s, backlog)
  if backlog == 0 then return s.B end
  local room = X.satsub(s.allow, backlog)
  return X.min(X.muldivfloor(room, s.L, s.P), s.B - 1)
end

local function ceil_ms_ns(ns) return X.ceildiv(ns, 1000000) end

local function sread(s, ahead)
  if cmp(ahead, s.allow) <= 0 then return ahead, false end
  local sp = span(s)
  return X.min(ahead, sp), cmp(ahead, sp) > 0
end

local function sallowed(s, after)
  return decision(true, s.B, remaining_at(s, after), 0, ceil_ms_ns(after))
end

-- An instant in ns is kept as { s = seconds, n = ns in that second } (both
-- exact numbers) and stored as its decimal ns.
local NS_PER_S = 1000000000

local function instant_string(t)
  if t.s == 0 then return fmt(t.n) end
  return fmt(t.s) .. sformat('%09d', t.n)
end

-- max(t - now, 0) in ns: a number while it is under 2^53 ns (104 days).
local function ahead_of(t, now)
  local ds = t.s - now.s
  if ds < 0 then return 0 end
  if ds < 9000000 then
    local d = ds * NS_PER_S + (t.n - now.n)
    return d > 0 and d or 0
  end
  return X.sub(X.add(X.mul(ds, NS_PER_S), t.n), now.n)
end

-- now + backlog (ns).
local function instant_after(now, backlog)
  local q, r
  if type(backlog) ~= 'table' then
    local n = now.n + backlog
    q = floor(n / NS_PER_S)
    r = n - q * NS_PER_S
  else
    q, r = X.divmod(X.add(backlog, now.n), NS_PER_S)
  end
  return { s = now.s + q, n = r }
end

-- now: { us = , ms = , s = , n = , raw = }
-- The key's expiry: the instant the limiter is full, rounded up to a whole
-- ms (no server's expiry, Redis 8's active one included, comes before it).
local function write_at(now, backlog)
  local st = instant_after(now, backlog)
  return { state = st, expire = st.s * 1000 + floor((st.n + 999999) / 1000000) }
end

-- ceil(x / d) and the largest c with ceil(c * P / L) <= room, for numbers
-- whose products stay below 2^53 (s.small).
local function ceil_div(x, d)
  local q = floor(x / d)
  if q * d < x then q = q + 1 end
  return q
end

local function fast_remaining(s, backlog)
  if backlog == 0 then return s.B end
  local room = s.allow - backlog
  if room <= 0 then return 0 end
  local r = floor(room * s.L / s.P)
  if r > s.B - 1 then r = s.B - 1 end
  return r
end

-- Schedule::check in plain numbers (see S.check).
local function fast_check(s, ahead, now, cost)
  local allow, B = s.allow, s.B
  local backlog, repair = ahead, false
  if ahead > allow and ahead > s.span then backlog, repair = s.span, true end
  if cost <= B then
    local after = backlog + (cost == 1 and s.unit or ceil_div(cost * s.P, s.L))
    if after <= allow or backlog == 0 then
      local w = nil
      if cost > 0 or repair then w = write_at(now, after) end
      return decision(true, B, fast_remaining(s, after), 0, ceil_div(after, 1000000)), w
    end
    local wait = after - allow
    if wait > backlog then wait = backlog end
    local w = nil
    if repair then w = write_at(now, backlog) end
    return decision(false, B, fast_remaining(s, backlog), ceil_div(wait, 1000000), ceil_div(backlog, 1000000)), w
  end
  local w = nil
  if repair then w = write_at(now, backlog) end
  return decision(false, B, fast_remaining(s, backlog), -1, ceil_div(backlog, 1000000)), w
end

-- Schedule::check: full_at (ns or nil) -> decision, write or nil
function S.check(s, full_at, now, cost)
  local ahead = 0
  if full_at then ahead = ahead_of(full_at, now) end
  if s.small and type(ahead) == 'number' then return fast_check(s, ahead, now, cost) end
  local backlog, repair = sread(s, ahead)
  local function denied(retry)
    local w = nil
    if repair then w = write_at(now, backlog) end
    return decision(false, s.B, remaining_at(s, backlog), retry, ceil_ms_ns(backlog)), w
  end
  if cost > s.B then return denied(-1) end
  local after = X.add(backlog, charge(s, cost))
  if cmp(after, s.allow) <= 0 or backlog == 0 then
    local w = nil
    if cost > 0 or repair then w = write_at(now, after) end
    return sallowed(s, after), w
  end
  local wait = X.min(X.sub(after, s.allow), backlog)
  return denied(ceil_ms_ns(wait))
end

-- Schedule::refund
function S.refund(s, full_at, now, units)
  local backlog = sread(s, ahead_of(full_at, now))
  local covered = cmp(s.P, s.L) >= 0
    and cmp(X.mul(X.satsub(backlog, 1), s.L), X.mul(units, s.P)) < 0
  local after
  if covered then
    after = 0
  else
    local give
    if cmp(X.mul(units, s.P), X.mul(backlog, s.L)) >= 0 then
      give = backlog
    else
      give = X.muldivfloor(units, s.P, s.L)
    end
    after = X.sub(backlog, give)
  end
  local w = nil
  if after ~= 0 then w = write_at(now, after) end
  return sallowed(s, after), w
end

---------------------------------------------------------------------------
-- Kinds. Each: grammar(cursor) -> limiter, opts; read(key) -> state;
-- decide(lim, state, now, cost) -> decision, change; settle(lim, state,
-- now, units) -> decision, change; write(key, state, change).
-- A change: { kind = 'consume' | 'repair' | 'refund' | 'delete', w = write }
-- (a 'refund' or 'delete' without w removes the key).
---------------------------------------------------------------------------
local K = {}

-- Algorithm::decide and ::settle for the fixed-size kinds.
local function generic_decide(kind, lim, st, now, cost)
  local d, w = kind.check(lim, st, now, cost)
  if w then
    return d, { kind = (d.allowed and cost > 0) and 'consume' or 'repair', w = w }
  end
  if st and kind.forgets and kind.forgets(lim, st, now) then return d, { kind = 'delete' } end
  return d, nil
end

local function generic_settle(kind, lim, st, now, units)
  if not st then
    local d = kind.check(lim, nil, now, 0)
    return d, nil
  end
  local d, w = kind.refund(lim, st, now, units)
  return d, { kind = 'refund', w = w }
end

local function schedule_kind(tag, keyword)
  local k = { keyword = keyword, tag = tag }
  local whole = '^' .. tag .. '%d+$'
  local FULL, SHORT = tag .. '%d%09d', tag .. '%d'
  -- The reply of k.fast, one table filled again on every call (a function's
  -- reply is read by the server before the next call runs, and this one is
  -- never kept): no table to allocate and collect per call.
  local REPLY = { 0, 0, 0, 0, 0 }
  -- The stored instant "<tag><ns since the epoch>" (GET's reply v, not
  -- nil): its seconds and its ns in that second.
  local function decode(key, v)
    -- (v.err: an error reply's text; a string's is string.err, nil.)
    if v.err then wrong_kind(key, false, k.cmd) end
    if not sfind(v, whole) then wrong_kind(key, v, k.cmd) end
    local n = #v
    -- (Digits only: the coercion reads them as tonumber does.)
    if n <= 10 then return 0, ssub(v, 2) + 0 end
    return ssub(v, 2, n - 9) + 0, ssub(v, n - 8) + 0
  end
  function k.read(key)
    local v = rpcall('GET', key)
    if not v then return nil end
    local sec, ns = decode(key, v)
    return { s = sec, n = ns }
  end
  -- The command on a schedule whose arithmetic is plain numbers (s.fast,
  -- see S.new for the bounds), not a refund: fast_check and the write
  -- without their tables. Returns the reply; or nil, the state read and the
  -- raw clock when the key's instant is too far ahead for plain numbers
  -- (the caller goes on with S.check).
  function k.fast(key, s, cost, peek)
    local v = rpcall('GET', key)
    local fs, fn
    if v then fs, fn = decode(key, v) end
    local t = rcall('TIME')
    local raw = t[1] * 1000000 + t[2]
    local us = raw
    if MS_CLOCK then us = us - us % 1000 end
    -- (x - x % d) / d is floor(x / d) without a call: for integers x below
    -- 2^53, x % d = x - floor(x / d) * d is exact, so is the rest.
    local nn = us % 1000000
    local ns = (us - nn) / 1000000
    nn = nn * 1000
    local ahead = 0
    if v then
      local ds = fs - ns
      if ds >= 9000000 then return nil, { s = fs, n = fn }, raw end
      if ds >= 0 then
        ahead = ds * 1000000000 + (fn - nn)
        if ahead < 0 then ahead = 0 end
      end
    end
    local allow, B = s.allow, s.B
    local backlog, repair = ahead, false
    if ahead > allow and ahead > s.span then backlog, repair = s.span, true end
    local allowed, retry, at = 0, -1, nil -- at: the backlog to store, if any
    if repair then at = backlog end
    if cost <= B then
      local charge = s.unit
      if cost ~= 1 then
        charge = cost * s.Pr
        if charge < LIM then charge = ceil_div(charge, s.Lr) else charge = X.muldivceil(cost, s.Pr, s.Lr) end
      end
      local after = backlog + charge
      if after <= allow or backlog == 0 then
        allowed, retry, backlog = 1, 0, after
        if cost > 0 then at = after elseif repair then at = after end
      else
        local wait = after - allow
        if wait > backlog then wait = backlog end
        retry = ceil_div(wait, 1000000)
      end
    end
    if at and not peek then
      -- write_at: now + at, and the expiry at that instant's next whole ms.
      local n = nn + at
      local r = n % 1000000000
      local sec = ns + (n - r) / 1000000000
      local up = r + 999999
      rcall('SET', key, sec == 0 and sformat(SHORT, r) or sformat(FULL, sec, r),
        'PXAT', sformat('%d', sec * 1000 + (up - up % 1000000) / 1000000))
    end
    -- fast_remaining(s, backlog) and ceil_div(backlog, 10^6), inline.
    local rem = B
    if backlog > 0 then
      rem = allow - backlog
      if rem <= 0 then
        rem = 0
      else
        local x = rem * s.Lr
        if x < LIM then rem = (x - x % s.Pr) / s.Pr else rem = X.muldivfloor(rem, s.Lr, s.Pr) end
        if rem > B - 1 then rem = B - 1 end
      end
    end
    local sub = backlog % 1000000
    local reset = (backlog - sub) / 1000000
    if sub > 0 then reset = reset + 1 end
    local r = REPLY
    r[1], r[2], r[3], r[4], r[5] = allowed, B, rem, retry, reset
    return r
  end
  function k.check(lim, st, now, cost) return S.check(lim, st, now, cost) end
  function k.refund(lim, st, now, units) return S.refund(lim, st, now, units) end
  function k.decide(lim, st, now, cost) return generic_decide(k, lim, st, now, cost) end
  function k.settle(lim, st, now, units) return generic_settle(k, lim, st, now, units) end
  function k.write(key, st, ch)
    if ch.w then
      set_string(key, tag .. instant_string(ch.w.state), ch.w.expire)
    else
      del_key(key, st ~= nil)
    end
  end
  return k
end

K.GCRA = schedule_kind('G', 'GCRA')
K.GCRA.positionals = 2
K.GCRA.cmd = 'RL.GCRA'
function K.GCRA.grammar(c)
  local limit = next_count(c, 'limit')
  local period = next_period(c, 'period_ms')
  local o = options(c, true)
  local s = S.new(period, limit, o.burst or limit)
  if not s then fail('ERR BURST is out of range: BURST * period_ms / limit exceeds 10^12 ms') end
  return s, o
end

K.TOKENBUCKET = schedule_kind('T', 'TOKENBUCKET')
K.TOKENBUCKET.positionals = 3
K.TOKENBUCKET.cmd = 'RL.TOKENBUCKET'
function K.TOKENBUCKET.grammar(c)
  local capacity = next_count(c, 'capacity')
  local refill = next_count(c, 'refill_tokens')
  local period = next_period(c, 'refill_period_ms')
  local o = options(c, false)
  local s = S.new(period, refill, capacity)
  if not s then fail('ERR capacity is out of range: refilling capacity takes more than 10^12 ms') end
  return s, o
end

-- Sections: the code of a kind that nothing outside it uses runs in a
-- function of its own, called once: its closures find their upvalues in
-- that function's few locals, not among the hundreds of this one's (the
-- EVAL form builds the library on every call). Not indented, to keep it
-- readable.
---------------------------------------------------------------------------
-- Sliding window (core/sliding_window.rs), in us.
-- State "S<window_start_ms>,<window_ms>,<cur>,<prev>".
---------------------------------------------------------------------------
local SW = { keyword = 'SLIDE', positionals = 2, cmd = 'RL.SLIDE' }
K.SLIDE = SW
local function section_sliding_window() -- (see "Sections" above)

function SW.grammar(c)
  local limit = next_count(c, 'limit')
  local window = next_period(c, 'window_ms')
  local o = options(c, false)
  -- SW.fast when limit * w * 3 < 2^53 (w = window_ms * 1000): see there.
  return { limit = limit, window_ms = window, fast = 3 * limit * window * 1000 < LIM }, o
end

function SW.read(key)
  local v = get_string(key, 'S')
  if v == nil then return nil end
  local a, b, cc, d = v:match('^(%d+),(%d+),(%d+),(%d+)$')
  if not a then fail(WRONGTYPE) end
  -- (Digits only: the coercion reads them as tonumber does, in one strtod.)
  return { start_ms = a + 0, window_ms = b + 0, cur = cc + 0, prev = d + 0 }
end

local function sw_regrid(lim, s, start_ms)
  local prev_start = start_ms - lim.window_ms
  if prev_start < 0 then prev_start = 0 end
  local cur, prev = 0, 0
  local function place(ends_ms, count)
    if ends_ms > start_ms then
      cur = cur + count
    elseif ends_ms > prev_start then
      prev = prev + count
    end
  end
  place(s.start_ms + s.window_ms, s.cur)
  place(s.start_ms, s.prev)
  return cur, prev
end

local function sw_counts(lim, s, now_us, start_ms)
  if not s then return 0, 0, false end
  if s.start_ms * 1000 > now_us then return lim.limit, 0, true end
  local cur, prev = sw_regrid(lim, s, start_ms)
  local regridded = s.window_ms ~= lim.window_ms and (cur > 0 or prev > 0)
  local capped = cur > lim.limit or prev > lim.limit
  if cur > lim.limit then cur = lim.limit end
  if prev > lim.limit then prev = lim.limit end
  return cur, prev, regridded or capped
end

local function sw_write(lim, start_ms, cur, prev)
  local windows = cur > 0 and 2 or 1
  return { state = { start_ms = start_ms, window_ms = lim.window_ms, cur = cur, prev = prev },
    expire = start_ms + windows * lim.window_ms }
end

function SW.check(lim, st, now, cost)
  local now_us = now.us
  local w = lim.window_ms * 1000
  local elapsed = now_us % w
  local start_ms = (now_us - elapsed) / 1000
  local limit = lim.limit
  local cur, prev, repair = sw_counts(lim, st, now_us, start_ms)
  local lw = X.mul(limit, w)
  local function scaled(c) return X.add(X.mul(prev, w - elapsed), X.mul(c, w)) end
  local function remaining(c) return (X.divmod(X.satsub(lw, scaled(c)), w)) end
  local function reset_us(c)
    local to_end = w - elapsed
    if c > 0 then return to_end + w elseif prev > 0 then return to_end else return 0 end
  end
  local function repair_write()
    if repair then return sw_write(lim, start_ms, cur, prev) end
    return nil
  end
  if cost > limit then
    return decision(false, limit, remaining(cur), -1, ceil_ms_us(reset_us(cur))), repair_write()
  end
  if cost == 0 or cmp(scaled(cur + cost), lw) <= 0 then
    local after = cur + cost
    local wr = nil
    if cost > 0 or repair then wr = sw_write(lim, start_ms, after, prev) end
    return decision(true, limit, remaining(after), 0, ceil_ms_us(reset_us(after))), wr
  end
  local wait_us
  if cur + cost <= limit then
    local slack = limit - cur - cost
    local e_needed = w - X.divmod(X.mul(slack, w), prev)
    wait_us = e_needed - elapsed
  else
    local slack = limit - cost
    local e_needed = w - X.divmod(X.mul(slack, w), cur)
    wait_us = (w - elapsed) + e_needed
  end
  return decision(false, limit, remaining(cur), ceil_ms_us(wait_us), ceil_ms_us(reset_us(cur))), repair_write()
end

-- The command (not a refund) in plain numbers, when 3 * limit * w < 2^53:
-- SW.check, sw_counts and the write without their tables and closures.
-- Every product below is then exact: counts are capped at limit before
-- any product, cost <= limit where one is formed, so prev * (w - elapsed)
-- <= limit * w, (cur + cost) * w <= 2 * limit * w, their sum <= 3 * limit
-- * w, slack * w <= limit * w; and floor(a / b) of such values is exact.
local SW_REPLY = { 0, 0, 0, 0, 0 } -- refilled per call, as schedule_kind's
function SW.fast(key, lim, cost, peek)
  local v = rpcall('GET', key)
  local ss, sw, sc, sp -- the stored start_ms, window_ms, cur, prev
  if v then
    if v.err then wrong_kind(key, false, 'RL.SLIDE') end
    local a, b, c, d = smatch(v, '^S(%d+),(%d+),(%d+),(%d+)$')
    if not a then
      if ssub(v, 1, 1) ~= 'S' then wrong_kind(key, v, 'RL.SLIDE') end
      fail(WRONGTYPE)
    end
    ss, sw, sc, sp = a + 0, b + 0, c + 0, d + 0
  end
  local t = rcall('TIME')
  local us = t[1] * 1000000 + t[2]
  if MS_CLOCK then us = us - us % 1000 end
  local window_ms, limit = lim.window_ms, lim.limit
  local w = window_ms * 1000
  local elapsed = us % w
  local start_ms = (us - elapsed) / 1000
  -- sw_counts / sw_regrid
  local cur, prev, repair, forgets = 0, 0, false, false
  if v then
    if ss * 1000 > us then
      cur, repair = limit, true
    else
      local prev_start = start_ms - window_ms
      if prev_start < 0 then prev_start = 0 end
      local e = ss + sw
      if e > start_ms then cur = sc elseif e > prev_start then prev = sc end
      if ss > start_ms then cur = cur + sp elseif ss > prev_start then prev = prev + sp end
      if sw ~= window_ms then
        if cur > 0 or prev > 0 then repair = true else forgets = true end
      end
      if cur > limit then cur, repair = limit, true end
      if prev > limit then prev, repair = limit, true end
    end
  end
  local to_end = w - elapsed
  local lw = limit * w
  local pw = prev * to_end
  local allowed, retry, c = 0, -1, cur -- c: the count the reply reads
  local wc = nil -- the count to store (nil: no write)
  if repair then wc = cur end
  if cost <= limit then
    local after = cur + cost
    if cost == 0 or pw + after * w <= lw then
      allowed, retry, c = 1, 0, after
      if cost > 0 or repair then wc = after end
    else
      local wait_us
      if after <= limit then
        wait_us = (w - floor((limit - after) * w / prev)) - elapsed
      else
        wait_us = to_end + (w - floor((limit - cost) * w / cur))
      end
      retry = floor((wait_us + 999) / 1000)
    end
  end
  if not peek then
    if wc then
      rcall('SET', key, sformat('S%d,%d,%d,%d', start_ms, window_ms, wc, prev),
        'PXAT', sformat('%d', start_ms + (wc > 0 and 2 or 1) * window_ms))
    elseif forgets then
      rcall('DEL', key)
    end
  end
  local room = lw - (pw + c * w)
  local reset_us = 0
  if c > 0 then reset_us = to_end + w elseif prev > 0 then reset_us = to_end end
  local r = SW_REPLY
  r[1], r[2], r[3], r[4], r[5] = allowed, limit, room > 0 and floor(room / w) or 0, retry,
    floor((reset_us + 999) / 1000)
  return r
end

function SW.refund(lim, st, now, units)
  local now_us = now.us
  local w = lim.window_ms * 1000
  local start_ms = (now_us - now_us % w) / 1000
  local cur, prev = sw_counts(lim, st, now_us, start_ms)
  local from_cur = cur < units and cur or units
  cur = cur - from_cur
  local rest = units - from_cur
  prev = prev - (prev < rest and prev or rest)
  local wr = nil
  if cur > 0 or prev > 0 then wr = sw_write(lim, start_ms, cur, prev) end
  local d = SW.check(lim, wr and wr.state or nil, now, 0)
  return d, wr
end

function SW.forgets(lim, st, now)
  local now_us = now.us
  local w = lim.window_ms * 1000
  local start_ms = (now_us - now_us % w) / 1000
  if st.window_ms == lim.window_ms or st.start_ms * 1000 > now_us then return false end
  local cur, prev = sw_regrid(lim, st, start_ms)
  return cur == 0 and prev == 0
end

function SW.decide(lim, st, now, cost) return generic_decide(SW, lim, st, now, cost) end
function SW.settle(lim, st, now, units) return generic_settle(SW, lim, st, now, units) end

function SW.write(key, st, ch)
  if ch.w then
    local s = ch.w.state
    set_string(key, 'S' .. fmt(s.start_ms) .. ',' .. fmt(s.window_ms) .. ',' .. fmt(s.cur) .. ',' .. fmt(s.prev),
      ch.w.expire)
  else
    del_key(key, st ~= nil)
  end
end

end
section_sliding_window()

---------------------------------------------------------------------------
-- Quota (core/quota.rs, core/calendar.rs), in ms.
-- State "Q<count>,<start_ms>,<end_ms>".
---------------------------------------------------------------------------
local Q = { keyword = 'QUOTA', positionals = 2, cmd = 'RL.QUOTA' }
K.QUOTA = Q
local function section_quota() -- (see "Sections" above)

local UNITS = { HOUR = true, DAY = true, WEEK = true, MONTH = true, YEAR = true }

-- The zone tables, made by zones() when a TZ is first named (the EVAL
-- form builds the library on every call, most calls name none).
local FIXED_ZONES, zone_data, zone_names
local function zones()
if zone_names then return end
-- Zones with one fixed UTC offset forever, as the module's tzdb has them
-- (seconds east of UTC). Names compare case-insensitively, as jiff's do.
-- (Etc/GMT+N is N hours WEST of Greenwich: POSIX signs.)
FIXED_ZONES = {
  ['utc'] = 0, ['etc/utc'] = 0, ['etc/uct'] = 0, ['uct'] = 0, ['etc/universal'] = 0, ['universal'] = 0,
  ['etc/zulu'] = 0, ['zulu'] = 0, ['gmt'] = 0, ['etc/gmt'] = 0, ['etc/gmt+0'] = 0, ['etc/gmt-0'] = 0,
  ['etc/gmt0'] = 0, ['gmt+0'] = 0, ['gmt-0'] = 0, ['gmt0'] = 0, ['greenwich'] = 0, ['etc/greenwich'] = 0,
  ['etc/gmt+1'] = -3600, ['etc/gmt+2'] = -7200, ['etc/gmt+3'] = -10800, ['etc/gmt+4'] = -14400,
  ['etc/gmt+5'] = -18000, ['etc/gmt+6'] = -21600, ['etc/gmt+7'] = -25200, ['etc/gmt+8'] = -28800,
  ['etc/gmt+9'] = -32400, ['etc/gmt+10'] = -36000, ['etc/gmt+11'] = -39600, ['etc/gmt+12'] = -43200,
  ['etc/gmt-1'] = 3600, ['etc/gmt-2'] = 7200, ['etc/gmt-3'] = 10800, ['etc/gmt-4'] = 14400,
  ['etc/gmt-5'] = 18000, ['etc/gmt-6'] = 21600, ['etc/gmt-7'] = 25200, ['etc/gmt-8'] = 28800,
  ['etc/gmt-9'] = 32400, ['etc/gmt-10'] = 36000, ['etc/gmt-11'] = 39600, ['etc/gmt-12'] = 43200,
  ['etc/gmt-13'] = 46800, ['etc/gmt-14'] = 50400,
}

-- Zones with daylight saving time or other changes: every UTC offset
-- transition from 1970 to 2201, generated from the module's own tzdata by
-- lua/tzgen (scripts/gen-lua-tz.sh). ZONE_DATA[i]: "<offset at the epoch>;
-- <seconds since the previous transition>,<offset>;..." (offsets in seconds
-- east of UTC); ZONE_NAMES[lower-case name] = i.
  -- GENERATED ZONES BEGIN: scripts/gen-lua-tz.sh from lua/tzgen/zones.txt
  -- (jiff 0.2.46, bundled tzdata 2026f): do not edit.
  local TZDATA = '2026f'
  local ZONE_DATA = {
    '-18000;9961200,-14400;15721200,-18000;15728400,-14400;16326000,-18000;15728400,-14400;15721200,-18000;15728400,-14400;15721200,-18000;6051600,-14400;25398000,-18000;10285200,-14400;21164400,-18000;15728400,-14400;16326000,-18000;15123600,-14400;16326000,-18000;15728400,-14400;15721200,-18000;15728400,-14400;15721200,-18000;15728400,-14400;15721200,-18000;15728400,-14400;15721200,-18000;15728400,-14400;16326000,-18000;15123600,-14400;16326000,-18000;15728400,-14400;15721200,-18000;15728400,-14400;15721200,-18000;15728400,-14400;15721200,-18000;13914000,-14400;17535600,-18000;13914000,-14400;18140400,-18000;13309200,-14400;18140400,-18000;13309200,-14400;18140400,-18000;13914000,-14400;17535600,-18000;13914000,-14400;17535600,-18000;13914000,-14400;18140400,-18000;13309200,-14400;18140400,-18000;13309200,-14400;18140400,-18000;13914000,-14400;17535600,-18000;13914000,-14400;17535600,-18000;13914000,-14400;17535600,-18000;13914000,-14400;18140400,-18000;13309200,-14400;18140400,-18000;13309200,-14400;18140400,-18000;13914000,-14400;17535600,-18000;13914000,-14400;17535600,-18000;13914000,-14400;18140400,-18000;13309200,-14400;18140400,-18000;13309200,-14400;18140400,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000',
    '-21600;9964800,-18000;15721200,-21600;15728400,-18000;16326000,-21600;15728400,-18000;15721200,-21600;15728400,-18000;15721200,-21600;6051600,-18000;25398000,-21600;10285200,-18000;21164400,-21600;15728400,-18000;16326000,-21600;15123600,-18000;16326000,-21600;15728400,-18000;15721200,-21600;15728400,-18000;15721200,-21600;15728400,-18000;15721200,-21600;15728400,-18000;15721200,-21600;15728400,-18000;16326000,-21600;15123600,-18000;16326000,-21600;15728400,-18000;15721200,-21600;15728400,-18000;15721200,-21600;15728400,-18000;15721200,-21600;13914000,-18000;17535600,-21600;13914000,-18000;18140400,-21600;13309200,-18000;18140400,-21600;13309200,-18000;18140400,-21600;13914000,-18000;17535600,-21600;13914000,-18000;17535600,-21600;13914000,-18000;18140400,-21600;13309200,-18000;18140400,-21600;13309200,-18000;18140400,-21600;13914000,-18000;17535600,-21600;13914000,-18000;17535600,-21600;13914000,-18000;17535600,-21600;13914000,-18000;18140400,-21600;13309200,-18000;18140400,-21600;13309200,-18000;18140400,-21600;13914000,-18000;17535600,-21600;13914000,-18000;17535600,-21600;13914000,-18000;18140400,-21600;13309200,-18000;18140400,-21600;13309200,-18000;18140400,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;11494800,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600;10890000,-18000;20559600,-21600',
    '-25200;9968400,-21600;15721200,-25200;15728400,-21600;16326000,-25200;15728400,-21600;15721200,-25200;15728400,-21600;15721200,-25200;6051600,-21600;25398000,-25200;10285200,-21600;21164400,-25200;15728400,-21600;16326000,-25200;15123600,-21600;16326000,-25200;15728400,-21600;15721200,-25200;15728400,-21600;15721200,-25200;15728400,-21600;15721200,-25200;15728400,-21600;15721200,-25200;15728400,-21600;16326000,-25200;15123600,-21600;16326000,-25200;15728400,-21600;15721200,-25200;15728400,-21600;15721200,-25200;15728400,-21600;15721200,-25200;13914000,-21600;17535600,-25200;13914000,-21600;18140400,-25200;13309200,-21600;18140400,-25200;13309200,-21600;18140400,-25200;13914000,-21600;17535600,-25200;13914000,-21600;17535600,-25200;13914000,-21600;18140400,-25200;13309200,-21600;18140400,-25200;13309200,-21600;18140400,-25200;13914000,-21600;17535600,-25200;13914000,-21600;17535600,-25200;13914000,-21600;17535600,-25200;13914000,-21600;18140400,-25200;13309200,-21600;18140400,-25200;13309200,-21600;18140400,-25200;13914000,-21600;17535600,-25200;13914000,-21600;17535600,-25200;13914000,-21600;18140400,-25200;13309200,-21600;18140400,-25200;13309200,-21600;18140400,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;11494800,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200;10890000,-21600;20559600,-25200',
    '-25200',
    '-28800;9972000,-25200;15721200,-28800;15728400,-25200;16326000,-28800;15728400,-25200;15721200,-28800;15728400,-25200;15721200,-28800;6051600,-25200;25398000,-28800;10285200,-25200;21164400,-28800;15728400,-25200;16326000,-28800;15123600,-25200;16326000,-28800;15728400,-25200;15721200,-28800;15728400,-25200;15721200,-28800;15728400,-25200;15721200,-28800;15728400,-25200;15721200,-28800;15728400,-25200;16326000,-28800;15123600,-25200;16326000,-28800;15728400,-25200;15721200,-28800;15728400,-25200;15721200,-28800;15728400,-25200;15721200,-28800;13914000,-25200;17535600,-28800;13914000,-25200;18140400,-28800;13309200,-25200;18140400,-28800;13309200,-25200;18140400,-28800;13914000,-25200;17535600,-28800;13914000,-25200;17535600,-28800;13914000,-25200;18140400,-28800;13309200,-25200;18140400,-28800;13309200,-25200;18140400,-28800;13914000,-25200;17535600,-28800;13914000,-25200;17535600,-28800;13914000,-25200;17535600,-28800;13914000,-25200;18140400,-28800;13309200,-25200;18140400,-28800;13309200,-25200;18140400,-28800;13914000,-25200;17535600,-28800;13914000,-25200;17535600,-28800;13914000,-25200;18140400,-28800;13309200,-25200;18140400,-28800;13309200,-25200;18140400,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;11494800,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800;10890000,-25200;20559600,-28800',
    '-36000;9979200,-32400;15721200,-36000;15728400,-32400;16326000,-36000;15728400,-32400;15721200,-36000;15728400,-32400;15721200,-36000;6051600,-32400;25398000,-36000;10285200,-32400;21164400,-36000;15728400,-32400;16326000,-36000;15123600,-32400;16326000,-36000;15728400,-32400;15721200,-36000;15728400,-32400;15721200,-36000;15728400,-32400;15721200,-36000;15728400,-32400;15721200,-36000;15728400,-32400;16326000,-36000;15123600,-32400;32050800,-28800;15721200,-32400;15728400,-28800;15721200,-32400;15728400,-28800;15721200,-32400;13914000,-28800;17535600,-32400;13914000,-28800;18140400,-32400;13309200,-28800;18140400,-32400;13309200,-28800;18140400,-32400;13914000,-28800;17535600,-32400;13914000,-28800;17535600,-32400;13914000,-28800;18140400,-32400;13309200,-28800;18140400,-32400;13309200,-28800;18140400,-32400;13914000,-28800;17535600,-32400;13914000,-28800;17535600,-32400;13914000,-28800;17535600,-32400;13914000,-28800;18140400,-32400;13309200,-28800;18140400,-32400;13309200,-28800;18140400,-32400;13914000,-28800;17535600,-32400;13914000,-28800;17535600,-32400;13914000,-28800;18140400,-32400;13309200,-28800;18140400,-32400;13309200,-28800;18140400,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;11494800,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400;10890000,-28800;20559600,-32400',
    '-18000;9961200,-14400;15721200,-18000;15728400,-14400;16326000,-18000;15728400,-14400;15721200,-18000;15728400,-14400;15721200,-18000;15728400,-14400;15721200,-18000;15728400,-14400;15721200,-18000;15728400,-14400;16326000,-18000;15123600,-14400;16326000,-18000;15728400,-14400;15721200,-18000;15728400,-14400;15721200,-18000;15728400,-14400;15721200,-18000;15728400,-14400;15721200,-18000;15728400,-14400;16326000,-18000;15123600,-14400;16326000,-18000;15728400,-14400;15721200,-18000;15728400,-14400;15721200,-18000;15728400,-14400;15721200,-18000;13914000,-14400;17535600,-18000;13914000,-14400;18140400,-18000;13309200,-14400;18140400,-18000;13309200,-14400;18140400,-18000;13914000,-14400;17535600,-18000;13914000,-14400;17535600,-18000;13914000,-14400;18140400,-18000;13309200,-14400;18140400,-18000;13309200,-14400;18140400,-18000;13914000,-14400;17535600,-18000;13914000,-14400;17535600,-18000;13914000,-14400;17535600,-18000;13914000,-14400;18140400,-18000;13309200,-14400;18140400,-18000;13309200,-14400;18140400,-18000;13914000,-14400;17535600,-18000;13914000,-14400;17535600,-18000;13914000,-14400;18140400,-18000;13309200,-14400;18140400,-18000;13309200,-14400;18140400,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;11494800,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000;10890000,-14400;20559600,-18000',
    '-21600;828864000,-18000;17535600,-21600;13914000,-18000;17535600,-21600;13914000,-18000;17535600,-21600;13914000,-18000;18140400,-21600;13309200,-18000;18140400,-21600;16333200,-18000;12697200,-21600;16333200,-18000;17535600,-21600;13914000,-18000;17535600,-21600;13914000,-18000;18140400,-21600;13309200,-18000;18140400,-21600;13309200,-18000;18140400,-21600;13309200,-18000;18140400,-21600;13914000,-18000;17535600,-21600;13914000,-18000;17535600,-21600;13914000,-18000;18140400,-21600;13309200,-18000;18140400,-21600;13309200,-18000;18140400,-21600;13914000,-18000;17535600,-21600;13914000,-18000;17535600,-21600;13914000,-18000;17535600,-21600;13914000,-18000;18140400,-21600;13309200,-18000;18140400,-21600;13309200,-18000;18140400,-21600;13914000,-18000;17535600,-21600;13914000,-18000;17535600,-21600;13914000,-18000;18140400,-21600;13309200,-18000;18140400,-21600',
    '-10800;499748400,-7200;11487600,-10800;19357200,-7200;9673200,-10800;21862800,-7200;9068400,-10800;21776400,-7200;9068400,-10800;22381200,-7200;10278000,-10800;21776400,-7200;10278000,-10800;21171600,-7200;9673200,-10800;22381200,-7200;8463600,-10800;22381200,-7200;10882800,-10800;20566800,-7200;10882800,-10800;20566800,-7200;10278000,-10800;20566800,-7200;11487600,-10800;20048400,-7200;12610800,-10800;19357200,-7200;11487600,-10800;19357200,-7200;12697200,-10800;19357200,-7200;11487600,-10800;20566800,-7200;10882800,-10800;22381200,-7200;9068400,-10800;21171600,-7200;10278000,-10800;22554000,-7200;9500400,-10800;20566800,-7200;10882800,-10800;22381200,-7200;9673200,-10800;19962000,-7200;10882800,-10800;21171600,-7200;10278000,-10800;21171600,-7200;10882800,-10800;20566800,-7200;10882800,-10800;20566800,-7200;11487600,-10800;20566800,-7200;10278000,-10800;21171600,-7200;10278000,-10800;21171600,-7200;10882800,-10800;20566800,-7200;10882800,-10800;20566800,-7200;10882800,-10800;20566800,-7200;10882800,-10800;22381200,-7200;9068400,-10800',
    '-10800;7527600,-14400;16938000,-10800;13302000,-14400;18147600,-10800;13302000,-14400;18752400,-10800;12697200,-14400;17542800,-10800;13906800,-14400;18752400,-10800;12697200,-14400;18752400,-10800;13302000,-14400;18147600,-10800;13302000,-14400;18147600,-10800;13302000,-14400;18752400,-10800;12697200,-14400;18752400,-10800;12697200,-14400;18752400,-10800;13302000,-14400;18147600,-10800;13302000,-14400;18147600,-10800;13302000,-14400;18147600,-10800;13302000,-14400;18752400,-10800;12697200,-14400;18752400,-10800;12697200,-14400;18752400,-10800;15721200,-14400;15728400,-10800;13302000,-14400;18147600,-10800;13302000,-14400;18752400,-10800;12697200,-14400;16333200,-10800;15116400,-14400;18752400,-10800;13302000,-14400;18147600,-10800;13302000,-14400;18147600,-10800;13302000,-14400;18147600,-10800;13302000,-14400;18752400,-10800;12697200,-14400;18752400,-10800;14511600,-14400;16938000,-10800;13302000,-14400;16938000,-10800;16326000,-14400;16333200,-10800;13302000,-14400;18752400,-10800;12697200,-14400;18752400,-10800;12697200,-14400;18752400,-10800;12697200,-14400;18752400,-10800;13302000,-14400;18147600,-10800;13302000,-14400;18147600,-10800;13302000,-14400;18752400,-10800;12697200,-14400;18752400,-10800;14511600,-14400;16938000,-10800;13302000,-14400;18147600,-10800;15116400,-14400;16333200,-10800;18140400,-14400;9075600,-10800;21769200,-14400;10890000,-10800;20559600,-14400;11494800,-10800;19954800,-14400;11494800,-10800;53218800,-14400;7866000,-10800;23583600,-14400;7866000,-10800;23583600,-14400;7866000,-10800;20559600,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13914000,-10800;17535600,-14400;13309200,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18140400,-14400;13309200,-10800;18745200,-14400;12704400,-10800;18745200,-14400;13309200,-10800;18140400,-14400;13309200,-10800',
    '-12600;9955800,-9000;15721200,-12600;15728400,-9000;16326000,-12600;15728400,-9000;15721200,-12600;15728400,-9000;15721200,-12600;15728400,-9000;15721200,-12600;15728400,-9000;15721200,-12600;15728400,-9000;16326000,-12600;15123600,-9000;16326000,-12600;15728400,-9000;15721200,-12600;15728400,-9000;15721200,-12600;15728400,-9000;15721200,-12600;15728400,-9000;15721200,-12600;15728400,-9000;16326000,-12600;15123600,-9000;16326000,-12600;15728400,-9000;15721200,-12600;15728400,-9000;15721200,-12600;15728400,-9000;15721200,-12600;13906860,-9000;17535600,-12600;13914000,-5400;18136800,-12600;13312800,-9000;18140400,-12600;13309200,-9000;18140400,-12600;13914000,-9000;17535600,-12600;13914000,-9000;17535600,-12600;13914000,-9000;18140400,-12600;13309200,-9000;18140400,-12600;13309200,-9000;18140400,-12600;13914000,-9000;17535600,-12600;13914000,-9000;17535600,-12600;13914000,-9000;17535600,-12600;13914000,-9000;18140400,-12600;13309200,-9000;18140400,-12600;13309200,-9000;18140400,-12600;13914000,-9000;17535600,-12600;13914000,-9000;17535600,-12600;13914000,-9000;18140400,-12600;13309200,-9000;18140400,-12600;13309200,-9000;18140400,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20566740,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;11494800,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600;10890000,-9000;20559600,-12600',
    '3600;57722400,0;12096000,3600;19353600,0;12096000,3600;19353600,0;12096000,3600;19353600,0;12096000,3600;19353600,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;19353600,0;12096000,3600;19353600,0;12096000,3600;19353600,0;13302000,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13910400,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0',
    '3600;212544000,0;15724800,3600;15724800,0;16333200,3600;15724800,0;15724800,3600;15724800,0;16329600,3600;15120000,0;15721200,3600;15724800,0;15724800,3600;15724800,0;15724800,3600;15724800,0;15724800,3600;16329600,0;15724800,3600;15724800,0;15728400,3600;15724800,0;15724800,3600;15724800,0;15724800,3600;15724800,0;15724800,3600;15724800,0;15724800,3600;16329600,0;15724800,3600;15724800,0;15724800,3600;31449600,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;34473600,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18144000,0;13305600,3600;18748800,0;12700800,3600;18748800,0;12700800,3600;18748800,0;13305600,3600;18144000,0;13305600,3600;18144000,0',
    '3600;196819200,7200;15721200,3600;16336800,7200;15120000,3600;16329600,7200;15724800,3600;15724800,7200;15724800,3600;16329600,7200;15120000,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;16329600,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;16329600,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;16329600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600',
    '3600;323830800,7200;15120000,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;16329600,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;16329600,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;16329600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600',
    '3600;135122400,7200;15123600,3600;16326000,7200;15123600,3600;15116400,7200;15728400,3600;16326000,7200;15123600,3600;16336800,7200;15724800,3600;15724800,7200;15724800,3600;16329600,7200;15120000,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;16329600,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;16329600,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;16329600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600',
    '3600;228877200,7200;15120000,3600;16329600,7200;15724800,3600;15724800,7200;15724800,3600;16329600,7200;15120000,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;16329600,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;16329600,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;16329600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600',
    '3600;354675600,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;16329600,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;16329600,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;16329600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600',
    '3600;228873600,7200;15120000,3600;16329600,7200;15724800,3600;15724800,7200;15724800,3600;16329600,7200;15120000,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;16329600,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15728400,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;16329600,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;15724800,7200;15724800,3600;16329600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600;13305600,7200;18748800,3600;12700800,7200;18748800,3600;12700800,7200;18748800,3600;13305600,7200;18144000,3600;13305600,7200;18144000,3600',
    '7200;166485600,10800;19699200,7200;11844000,10800;15724800,7200;15120000,10800;15206400,7200;16243200,10800;15123600,7200;16351200,10800;15609600,7200;15980400,10800;15548400,7200;15739200,10800;15724800,7200;15724800,10800;15724800,7200;15724800,10800;15724800,7200;15724800,10800;16329600,7200;15724800,10800;15724800,7200;15724800,10800;15724800,7200;15724800,10800;15724800,7200;15724800,10800;15724800,7200;15724800,10800;15724800,7200;15724800,10800;16329600,7200;15724800,10800;15724800,7200;15724800,10800;15724800,7200;15724800,10800;15724800,7200;15724800,10800;15724800,7200;15724800,10800;15724800,7200;16329600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200',
    '7200;107910000,10800;13305600,7200;12704400,10800;18745200,7200;12013200,10800;19436400,7200;12099600,10800;19350000,7200;13309200,10800;16930800,7200;14518800,10800;168130800,14400;5439600,10800;34218000,7200;14688000,10800;13910400,7200;15811200,10800;15724800,7200;15724800,10800;15724800,7200;15724800,10800;15724800,7200;15724800,10800;15724800,7200;15724800,10800;16329600,7200;15724800,10800;15724800,7200;15724800,10800;15724800,7200;15724800,10800;15724800,7200;15120000,10800;16329600,7200;15724800,10800;15724800,7200;16329600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12700800,10800;18748800,7200;12700800,10800;18748800,7200;12708000,10800;18748800,7200;13305600,10800;18144000,7200;13305600,10800;18144000,7200;13305600,10800;18748800,7200;12787200,10800;18662400,7200;12700800,10800;18748800,7200;13305600,10800;18144000,7200;13392000,10800;18057600,7200;13305600,10800;19353600,7200;12096000,10800',
    '10800;354920400,14400;15807600,10800;15728400,14400;15807600,10800;15728400,14400;15807600,10800;15814800,14400;15732000,10800;15724800,14400;15724800,10800;15724800,14400;15724800,10800;15724800,14400;15724800,10800;15724800,14400;15724800,10800;15724800,14400;15724800,10800;15724800,14400;16329600,10800;31453200,7200;9676800,10800;6044400,14400;15724800,10800;15724800,14400;15724800,10800;15724800,14400;15724800,10800;15724800,14400;15724800,10800;16329600,14400;18144000,10800;13305600,14400;18144000,10800;13305600,14400;18144000,10800;13305600,14400;18748800,10800;12700800,14400;18748800,10800;12700800,14400;18748800,10800;13305600,14400;18144000,10800;13305600,14400;18144000,10800;13305600,14400;18748800,10800;12700800,14400;18748800,10800;12700800,14400;18748800,10800;12700800,14400;18748800,10800;13305600,14400;18144000,10800;13305600,14400;18144000,10800;13305600,14400;18748800,10800;12700800,14400;113094000,10800',
    '7200;10364400,10800;13222800,7200;18313200,10800;13222800,7200;18399600,10800;13222800,7200;18313200,10800;13222800,7200;18313200,10800;13222800,7200;18313200,10800;13222800,7200;18399600,10800;13222800,7200;18313200,10800;13222800,7200;18313200,10800;13222800,7200;18313200,10800;13222800,7200;18399600,10800;13222800,7200;18313200,10800;13222800,7200;25657200,10800;5878800,7200;24534000,10800;7002000,7200;18399600,10800;13222800,7200;18313200,10800;13222800,7200;18313200,10800;13222800,7200;18313200,10800;13222800,7200;18399600,10800;13222800,7200;18745200,10800;12790800,7200;18313200,10800;13222800,7200;18313200,10800;13222800,7200;18399600,10800;13222800,7200;18313200,10800;13222800,7200;18313200,10800;13222800,7200;18050400,10800;13302000,7200;18147600,10800;13302000,7200;18147600,10800;13302000,7200;18147600,10800;13302000,7200;18752400,10800;13302000,7200;18147600,10800;13302000,7200;18147600,10800;13302000,7200;18147600,10800;13302000,7200;18147600,10800;13302000,7200;18752400,10800;13302000,7200;18147600,10800;13302000,7200;18147600,10800;12697200,7200;18752400,10800;11487600,7200;19962000,10800;10882800,7200;20566800,10800;10278000,7200;21776400,10800;8895600,7200;2595600,10800;1810800,7200;114310800,10800;3625200,7200;3027600,10800;4834800,7200;270954000,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200;15123600,10800;16326000,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;15721200,7200;15728400,10800;16326000,7200;15123600,10800;16326000,7200',
    '7200',
    '14400',
    '12600;227820600,16200;18403200,14400;13393800,18000;11491200,14400;8467200,12600;16936200,16200;10018800,12600;15901200,16200;16066800,12600;334717200,16200;12265200,12600;15728400,16200;15894000,12600;15642000,16200;15894000,12600;15642000,16200;15894000,12600;15642000,16200;15894000,12600;15642000,16200;15894000,12600;15728400,16200;15894000,12600;15642000,16200;15894000,12600;15642000,16200;15894000,12600;15642000,16200;15894000,12600;15728400,16200;15894000,12600;15642000,16200;15894000,12600;15642000,16200;15894000,12600;15642000,16200;15894000,12600;15728400,16200;15894000,12600;78714000,16200;15894000,12600;15728400,16200;15894000,12600;15642000,16200;15894000,12600;15642000,16200;15894000,12600;15642000,16200;15894000,12600;15728400,16200;15894000,12600;15642000,16200;15894000,12600;15642000,16200;15894000,12600;15642000,16200;15894000,12600;15728400,16200;15894000,12600;15642000,16200;15894000,12600;15642000,16200;15894000,12600;15642000,16200;15894000,12600;15728400,16200;15894000,12600;15642000,16200;15894000,12600',
    '19800',
    '19800;504901800,20700',
    '28800;515527200,32400;11487600,28800;18147600,32400;13302000,28800;18752400,32400;12697200,28800;18752400,32400;13302000,28800;18147600,32400;13302000,28800;18147600,32400;13302000,28800',
    '28800;9315000,32400;15721200,28800;15728400,32400;15721200,28800;15728400,32400;16326000,28800;15728400,32400;15721200,28800;6051600,32400;25398000,28800;15728400,32400;15721200,28800;15728400,32400;15721200,28800;81046800,32400;13906800,28800',
    '27000;378662400,28800',
    '32400',
    '32400;547578000,36000;13305600,32400;18144000,36000;13305600,32400',
    '28800;152042400,32400;10886400,28800;273369600,32400;10886400,28800;243129600,32400;9072000,28800;465696000,32400;9676800,28800;18748800,32400;13305600,28800;18144000,32400;13305600,28800',
    '34200;57688200,37800;10281600,34200;21168000,37800;10886400,34200;20563200,37800;10886400,34200;20563200,37800;10886400,34200;20563200,37800;11491200,34200;20563200,37800;10886400,34200;20563200,37800;10886400,34200;20563200,37800;10886400,34200;20563200,37800;10886400,34200;20563200,37800;10886400,34200;20563200,37800;11491200,34200;20563200,37800;10886400,34200;20563200,37800;10886400,34200;20563200,37800;10886400,34200;20563200,37800;12096000,34200;18748800,37800;12700800,34200;19353600,37800;12700800,34200;19353600,37800;12096000,34200;19353600,37800;12096000,34200;19353600,37800;10886400,34200;20563200,37800;12700800,34200;18748800,37800;11491200,34200;20563200,37800;12096000,34200;19353600,37800;12700800,34200;18748800,37800;13305600,34200;18144000,37800;13305600,34200;18144000,37800;13305600,34200;18144000,37800;13305600,34200;18748800,37800;12700800,34200;18748800,37800;12700800,34200;18748800,37800;13305600,34200;18144000,37800;13305600,34200;18144000,37800;13305600,34200;18748800,37800;12700800,34200;18748800,37800;13305600,34200;18144000,37800;12700800,34200;18748800,37800;13910400,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;16329600,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;16329600,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;16329600,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;16329600,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;16329600,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;16329600,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800;15724800,34200;16329600,37800;15724800,34200;15724800,37800;15724800,34200;15724800,37800',
    '36000;57686400,39600;10281600,36000;21168000,39600;10886400,36000;20563200,39600;10886400,36000;20563200,39600;10886400,36000;20563200,39600;11491200,36000;20563200,39600;10886400,36000;20563200,39600;10886400,36000;20563200,39600;10886400,36000;20563200,39600;10886400,36000;20563200,39600;10886400,36000;20563200,39600;13910400,36000;18144000,39600;10886400,36000;20563200,39600;10886400,36000;20563200,39600;10886400,36000;20563200,39600;12096000,36000;18748800,39600;12700800,36000;19353600,39600;12700800,36000;19353600,39600;12096000,36000;19353600,39600;10886400,36000;20563200,39600;10886400,36000;20563200,39600;10886400,36000;20563200,39600;11491200,36000;20563200,39600;10886400,36000;20563200,39600;10886400,36000;20563200,39600;13305600,36000;18144000,39600;13305600,36000;18144000,39600;13305600,36000;18144000,39600;13305600,36000;18748800,39600;12700800,36000;13305600,39600;18144000,36000;18748800,39600;13305600,36000;18144000,39600;13305600,36000;18144000,39600;13305600,36000;18748800,39600;12700800,36000;18748800,39600;13305600,36000;18144000,39600;12700800,36000;18748800,39600;13910400,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;16329600,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;16329600,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;16329600,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;16329600,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;16329600,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;16329600,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600;15724800,36000;16329600,39600;15724800,36000;15724800,39600;15724800,36000;15724800,39600',
    '36000;352216800,37800;20568600,41400;11487600,37800;20566800,41400;10882800,37800;20566800,41400;10882800,37800;20566800,41400;10882800,37800;20566800,39600;12094200,37800;18750600,39600;12699000,37800;19355400,39600;12699000,37800;19355400,39600;12094200,37800;19355400,39600;10884600,37800;20565000,39600;10884600,37800;20565000,39600;10884600,37800;20565000,39600;11489400,37800;20565000,39600;10884600,37800;20565000,39600;10884600,37800;20565000,39600;13303800,37800;18145800,39600;13303800,37800;18145800,39600;13303800,37800;18145800,39600;13303800,37800;18750600,39600;12699000,37800;13307400,39600;18142200,37800;18750600,39600;13303800,37800;18145800,39600;13303800,37800;18145800,39600;13303800,37800;18750600,39600;12699000,37800;18750600,39600;13303800,37800;18145800,39600;12699000,37800;18750600,39600;13908600,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;16327800,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;16327800,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;16327800,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;16327800,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;16327800,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;16327800,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600;15723000,37800;16331400,39600;15723000,37800;15726600,39600;15723000,37800;15726600,39600',
    '43200;152632800,46800;9676800,43200;21168000,46800;11491200,43200;20563200,46800;10886400,43200;20563200,46800;10886400,43200;20563200,46800;10886400,43200;20563200,46800;10886400,43200;20563200,46800;10886400,43200;20563200,46800;11491200,43200;20563200,46800;10886400,43200;20563200,46800;10886400,43200;20563200,46800;10886400,43200;20563200,46800;10886400,43200;20563200,46800;10886400,43200;20563200,46800;11491200,43200;20563200,46800;10886400,43200;18748800,46800;13910400,43200;17539200,46800;13910400,43200;17539200,46800;13910400,43200;17539200,46800;14515200,43200;16934400,46800;14515200,43200;16934400,46800;14515200,43200;16934400,46800;14515200,43200;17539200,46800;13910400,43200;17539200,46800;13910400,43200;17539200,46800;14515200,43200;16934400,46800;14515200,43200;16934400,46800;14515200,43200;17539200,46800;13910400,43200;17539200,46800;13910400,43200;17539200,46800;14515200,43200;16934400,46800;14515200,43200;16934400,46800;14515200,43200;16934400,46800;14515200,43200;16934400,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16934400,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16934400,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16934400,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16934400,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16934400,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16934400,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800;16329600,43200;15724800,46800;16329600,43200;15120000,46800;16329600,43200;15120000,46800',
    '45900;152632800,49500;9676800,45900;21168000,49500;11491200,45900;20563200,49500;10886400,45900;20563200,49500;10886400,45900;20563200,49500;10886400,45900;20563200,49500;10886400,45900;20563200,49500;10886400,45900;20563200,49500;11491200,45900;20563200,49500;10886400,45900;20563200,49500;10886400,45900;20563200,49500;10886400,45900;20563200,49500;10886400,45900;20563200,49500;10886400,45900;20563200,49500;11491200,45900;20563200,49500;10886400,45900;18748800,49500;13910400,45900;17539200,49500;13910400,45900;17539200,49500;13910400,45900;17539200,49500;14515200,45900;16934400,49500;14515200,45900;16934400,49500;14515200,45900;16934400,49500;14515200,45900;17539200,49500;13910400,45900;17539200,49500;13910400,45900;17539200,49500;14515200,45900;16934400,49500;14515200,45900;16934400,49500;14515200,45900;17539200,49500;13910400,45900;17539200,49500;13910400,45900;17539200,49500;14515200,45900;16934400,49500;14515200,45900;16934400,49500;14515200,45900;16934400,49500;14515200,45900;16934400,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16934400,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16934400,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16934400,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16934400,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16934400,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16934400,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500;16329600,45900;15724800,49500;16329600,45900;15120000,49500;16329600,45900;15120000,49500',
    '-39600;1285498800,-36000;16254000,-39600;15120000,-36000;8366400,50400;7963200,46800;15724800,50400;16329600,46800;15120000,50400;16329600,46800;15120000,50400;16329600,46800;15120000,50400;16329600,46800;15120000,50400;16329600,46800;15120000,50400;16329600,46800;15724800,50400;16329600,46800;15120000,50400;16329600,46800;15120000,50400;16329600,46800',
    '-36000',
  }
  local ZONE_NAMES = {
    ['africa/cairo'] = 23,
    ['africa/johannesburg'] = 24,
    ['america/anchorage'] = 6,
    ['america/chicago'] = 2,
    ['america/denver'] = 3,
    ['america/los_angeles'] = 5,
    ['america/mexico_city'] = 8,
    ['america/new_york'] = 1,
    ['america/phoenix'] = 4,
    ['america/santiago'] = 10,
    ['america/sao_paulo'] = 9,
    ['america/st_johns'] = 11,
    ['america/toronto'] = 7,
    ['asia/calcutta'] = 27,
    ['asia/dubai'] = 25,
    ['asia/hong_kong'] = 30,
    ['asia/kathmandu'] = 28,
    ['asia/kolkata'] = 27,
    ['asia/seoul'] = 33,
    ['asia/shanghai'] = 29,
    ['asia/singapore'] = 31,
    ['asia/tehran'] = 26,
    ['asia/tokyo'] = 32,
    ['australia/adelaide'] = 35,
    ['australia/lord_howe'] = 37,
    ['australia/perth'] = 34,
    ['australia/sydney'] = 36,
    ['europe/amsterdam'] = 17,
    ['europe/athens'] = 20,
    ['europe/berlin'] = 15,
    ['europe/dublin'] = 12,
    ['europe/istanbul'] = 21,
    ['europe/lisbon'] = 13,
    ['europe/london'] = 12,
    ['europe/madrid'] = 16,
    ['europe/moscow'] = 22,
    ['europe/paris'] = 14,
    ['europe/stockholm'] = 15,
    ['europe/warsaw'] = 19,
    ['europe/zurich'] = 18,
    ['pacific/apia'] = 40,
    ['pacific/auckland'] = 38,
    ['pacific/chatham'] = 39,
    ['pacific/honolulu'] = 41,
    ['us/central'] = 2,
    ['us/eastern'] = 1,
    ['us/pacific'] = 5,
  }
  -- GENERATED ZONES END
zone_data, zone_names = ZONE_DATA, ZONE_NAMES
end
local ZONE_END_MS = 7258118400000 -- 2200-01-01T00:00Z: the rules run a year past it
local ZONE_CACHE = {}

-- A zone's rules as arrays: T[i] (ms), B[i] and O[i] (the offsets before and
-- after, ms); init: the offset before T[1].
local function zone_rules(i)
  local z = ZONE_CACHE[i]
  if z then return z end
  local data = zone_data[i]
  local init = tonumber(data:match('^(%-?%d+)'))
  z = { init = init * 1000, T = {}, B = {}, O = {} }
  local t, prev = 0, init * 1000
  for dt, off in data:gmatch(';(%d+),(%-?%d+)') do
    t = t + tonumber(dt)
    local n = #z.T + 1
    z.T[n] = t * 1000
    z.B[n] = prev
    z.O[n] = tonumber(off) * 1000
    prev = z.O[n]
  end
  ZONE_CACHE[i] = z
  return z
end

-- The largest i with f(i) <= x (0 if none), f increasing.
local function last_at_or_below(n, f, x)
  local lo, hi = 0, n
  while lo < hi do
    local mid = floor((lo + hi + 1) / 2)
    if f(mid) <= x then lo = mid else hi = mid - 1 end
  end
  return lo
end

local function offset_at(z, utc_ms)
  local i = last_at_or_below(#z.T, function(k) return z.T[k] end, utc_ms)
  if i == 0 then return z.init end
  return z.O[i]
end

-- first_instant_at_or_after (calendar.rs): the instant a local time c (ms)
-- is first reached: under its one offset; the earlier reading of a repeated
-- (folded) time; the transition for a skipped one.
local function first_instant(z, c)
  local T, B, O = z.T, z.B, z.O
  local i = last_at_or_below(#T, function(k)
    return T[k] + (B[k] < O[k] and B[k] or O[k])
  end, c)
  if i == 0 then return c - z.init end
  local hi = B[i] > O[i] and B[i] or O[i]
  if c < T[i] + hi then
    if O[i] > B[i] then return T[i] end -- a gap: the clock jumps over c at T[i]
    return c - B[i] -- a fold: read under the offset before
  end
  return c - O[i]
end

local function days_from_civil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = floor(y / 400)
  local yoe = y - era * 400
  local mp = (m + 9) % 12
  local doy = floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + floor(yoe / 4) - floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

local function civil_from_days(z)
  z = z + 719468
  local era = floor(z / 146097)
  local doe = z - era * 146097
  local yoe = floor((doe - floor(doe / 1460) + floor(doe / 36524) - floor(doe / 146096)) / 365)
  local y = yoe + era * 400
  local doy = doe - (365 * yoe + floor(yoe / 4) - floor(yoe / 100))
  local mp = floor((5 * doy + 2) / 153)
  local d = doy - floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  if m <= 2 then y = y + 1 end
  return y, m, d
end

local DAY_MS = 86400000

-- The window [start, end) holding local time t (ms, local = UTC + offset)
-- of a calendar unit, in local ms.
local function local_window(unit, t)
  if unit == 'HOUR' then
    local s = t - t % 3600000
    return s, s + 3600000
  end
  local days = floor(t / DAY_MS)
  if unit == 'DAY' then return days * DAY_MS, (days + 1) * DAY_MS end
  if unit == 'WEEK' then
    local monday = days - (days + 3) % 7
    return monday * DAY_MS, (monday + 7) * DAY_MS
  end
  local y, m = civil_from_days(days)
  if unit == 'MONTH' then
    local ny, nm = y, m + 1
    if nm > 12 then ny, nm = y + 1, 1 end
    return days_from_civil(y, m, 1) * DAY_MS, days_from_civil(ny, nm, 1) * DAY_MS
  end
  return days_from_civil(y, 1, 1) * DAY_MS, days_from_civil(y + 1, 1, 1) * DAY_MS
end

local compute_window

-- Calendar::window: the last window computed for these parameters (kept on
-- the parsed limiter, which is remembered), while now is inside it.
local function quota_window(lim, now_ms)
  local w = lim.win
  if w and w.start_ms <= now_ms and now_ms < w.end_ms then return w end
  w = compute_window(lim, now_ms)
  lim.win = w
  return w
end

function compute_window(lim, now_ms)
  if lim.fixed then
    local start = now_ms - now_ms % lim.fixed
    return { start_ms = start, end_ms = start + lim.fixed }
  end
  if lim.zone then
    local z = zone_rules(lim.zone)
    if now_ms >= ZONE_END_MS then
      fail("ERR TZ: this library's rules for '" .. lim.tz .. "' end in the year 2200")
    end
    -- Calendar::compute: the unit holding now's local time, stepped on while
    -- the next one has already begun (a fold back across a boundary).
    local civil = local_window(lim.unit, now_ms + offset_at(z, now_ms))
    local start = first_instant(z, civil)
    for _ = 1, 8 do
      local _, nxt = local_window(lim.unit, civil)
      local e = first_instant(z, nxt)
      if e > now_ms then return { start_ms = start, end_ms = e } end
      civil, start = nxt, e
    end
    fail('ERR period is out of range: time outside the calendar\'s range')
  end
  local off = lim.offset_ms
  local s, e = local_window(lim.unit, now_ms + off)
  return { start_ms = s - off, end_ms = e - off }
end

function Q.grammar(c)
  local limit = next_count(c, 'limit')
  local period = next_arg(c, 'period')
  local o, tz = options(c, false, 'TZ')
  local lim = { limit = limit }
  local up = period:upper()
  if UNITS[up] then
    lim.unit = up
  else
    local ok, v = pcall(int_in, period, 'period', 1, MAX_PERIOD_MS)
    if not ok then fail('ERR period is out of range: must be HOUR, DAY, WEEK, MONTH, YEAR or 1 to 10^12 ms') end
    lim.fixed = v
  end
  if tz and lim.fixed then fail('ERR TZ applies only to HOUR, DAY, WEEK, MONTH or YEAR') end
  lim.offset_ms = 0
  if tz then
    local off = nil
    if #tz > 0 and #tz <= 64 then
      zones()
      off = FIXED_ZONES[tz:lower()]
      local zi = zone_names[tz:lower()]
      if off == nil and zi then
        off = 0
        lim.zone = zi
        lim.tz = tz
      end
    end
    if off == nil then
      local p = printable(tz)
      if p then fail("ERR TZ: unknown time zone '" .. p .. "'") end
      fail('ERR TZ: unknown time zone')
    end
    lim.offset_ms = off * 1000
  end
  lim.fast = true -- Q.fast
  return lim, o
end

function Q.read(key)
  local v = get_string(key, 'Q')
  if v == nil then return nil end
  local a, b, cc = v:match('^(%d+),(%d+),(%d+)$')
  if not a then fail(WRONGTYPE) end
  return { count = a + 0, start_ms = b + 0, end_ms = cc + 0 }
end

-- Quota::read: count, window, repair
local function q_read(lim, st, cur, now_ms)
  if not st or st.end_ms <= now_ms then return 0, cur, false end
  if st.start_ms > now_ms then return lim.limit, cur, true end
  -- A changed period or zone: one window to the later end, stored by every
  -- call other than PEEK (a repair), as the module does.
  if st.end_ms > cur.end_ms then
    local count = st.count
    if count > lim.limit then count = lim.limit end
    return count, { start_ms = st.start_ms, end_ms = st.end_ms }, false
  end
  local count = st.count
  if count > lim.limit then count = lim.limit end
  return count, cur, st.start_ms ~= cur.start_ms or st.end_ms ~= cur.end_ms
end

local function q_decision(lim, allowed, count, win, now_ms, retry)
  local reset = 0
  if count > 0 then reset = win.end_ms - now_ms end
  if reset < 0 then reset = 0 end
  return decision(allowed, lim.limit, lim.limit - count, retry, reset)
end

local function q_write(count, win)
  return { state = { count = count, start_ms = win.start_ms, end_ms = win.end_ms }, expire = win.end_ms }
end

function Q.check(lim, st, now, cost)
  local now_ms = now.ms
  local count, win, repair = q_read(lim, st, quota_window(lim, now_ms), now_ms)
  local rw = nil
  if repair then rw = q_write(count, win) end
  if cost > lim.limit then return q_decision(lim, false, count, win, now_ms, -1), rw end
  if count + cost <= lim.limit then
    local after = count + cost
    local wr = nil
    if cost > 0 or repair then wr = q_write(after, win) end
    return q_decision(lim, true, after, win, now_ms, 0), wr
  end
  local retry = win.end_ms - now_ms
  if retry < 0 then retry = 0 end
  return q_decision(lim, false, count, win, now_ms, retry), rw
end

-- The command (not a refund) without Q.check's tables: counts below 2^32
-- and instants in ms are plain numbers, exactly.
local Q_REPLY = { 0, 0, 0, 0, 0 } -- refilled per call, as schedule_kind's
function Q.fast(key, lim, cost, peek)
  local v = rpcall('GET', key)
  local sc, ss, se -- the stored count, start_ms, end_ms
  if v then
    if v.err then wrong_kind(key, false, 'RL.QUOTA') end
    local a, b, c = smatch(v, '^Q(%d+),(%d+),(%d+)$')
    if not a then
      if ssub(v, 1, 1) ~= 'Q' then wrong_kind(key, v, 'RL.QUOTA') end
      fail(WRONGTYPE)
    end
    sc, ss, se = a + 0, b + 0, c + 0
  end
  local t = rcall('TIME')
  local us = t[1] * 1000000 + t[2]
  if MS_CLOCK then us = us - us % 1000 end
  local now_ms = floor(us / 1000)
  local win = quota_window(lim, now_ms)
  local limit = lim.limit
  -- q_read: count, the window [ws, we), repair
  local count, ws, we, repair = 0, win.start_ms, win.end_ms, false
  if v and se > now_ms then
    if ss > now_ms then
      count, repair = limit, true
    else
      count = sc < limit and sc or limit
      if se > we then
        ws, we = ss, se
      else
        repair = ss ~= ws or se ~= we
      end
    end
  end
  local allowed, retry, c = 0, -1, count -- c: the count the reply reads
  local wc = nil -- the count to store (nil: no write)
  if repair then wc = count end
  if cost <= limit then
    if count + cost <= limit then
      allowed, retry, c = 1, 0, count + cost
      if cost > 0 or repair then wc = c end
    else
      retry = we - now_ms
      if retry < 0 then retry = 0 end
    end
  end
  if wc and not peek then
    rcall('SET', key, sformat('Q%d,%d,%d', wc, ws, we), 'PXAT', sformat('%d', we))
  end
  local reset = 0
  if c > 0 then
    reset = we - now_ms
    if reset < 0 then reset = 0 end
  end
  local r = Q_REPLY
  r[1], r[2], r[3], r[4], r[5] = allowed, limit, limit - c, retry, reset
  return r
end

function Q.refund(lim, st, now, units)
  local now_ms = now.ms
  local count, win = q_read(lim, st, quota_window(lim, now_ms), now_ms)
  local after = count - (units < count and units or count)
  local wr = nil
  if after > 0 then wr = q_write(after, win) end
  return q_decision(lim, true, after, win, now_ms, 0), wr
end

function Q.decide(lim, st, now, cost) return generic_decide(Q, lim, st, now, cost) end
function Q.settle(lim, st, now, units) return generic_settle(Q, lim, st, now, units) end

function Q.write(key, st, ch)
  if ch.w then
    local s = ch.w.state
    set_string(key, 'Q' .. fmt(s.count) .. ',' .. fmt(s.start_ms) .. ',' .. fmt(s.end_ms), ch.w.expire)
  else
    del_key(key, st ~= nil)
  end
end

end
section_quota()

---------------------------------------------------------------------------
-- Sliding log (core/log.rs), in us.
-- State "L<window_ms>" then ";<t_us>,<cost>" per entry, oldest first.
---------------------------------------------------------------------------
local LG = { keyword = 'LOG', positionals = 2, cmd = 'RL.LOG' }
K.LOG = LG
local function section_sliding_log() -- (see "Sections" above)

function LG.grammar(c)
  local limit = int_in(next_arg(c, 'limit'), 'limit', 1, 10000)
  local window = next_period(c, 'window_ms')
  local o = options(c, false)
  return { limit = limit, window_ms = window, W = window * 1000 }, o
end

function LG.read(key)
  local v = get_string(key, 'L')
  if v == nil then return nil end
  local wms, rest = v:match('^(%d+)(.*)$')
  if not wms then fail(WRONGTYPE) end
  local e = {}
  for t, c in rest:gmatch(';(%d+),(%d+)') do e[#e + 1] = { t + 0, c + 0 } end
  return { window_ms = wms + 0, e = e }
end

-- View: the entries as this call reads them (SlidingLog::read). The view
-- shares the state's entry tables ({ t_us, cost }); the functions below
-- replace an entry they change (the state read stays as it was: rl_all
-- decides again on it).
local function lg_view(lim, st, now_us)
  local view = { e = {}, total = 0 }
  if not st then return view, false end
  local W = lim.W
  local e, n = st.e, #st.e
  local ve, vn, total = view.e, 0, 0
  local future, repaired = 0, st.window_ms ~= lim.window_ms
  for i = 1, n do
    local x = e[i]
    local t = x[1]
    if t > now_us then
      future = future + x[2]
    elseif t + W > now_us then
      vn = vn + 1
      ve[vn] = x
      total = total + x[2]
    end
  end
  view.total = total
  if future > 0 or (n > 0 and e[n][1] > now_us) then
    repaired = true
  end
  return view, repaired, future
end

local function lg_add(view, t, cost)
  view.total = view.total + cost
  local n = #view.e
  if n > 0 and view.e[n][1] == t then
    view.e[n] = { t, view.e[n][2] + cost }
  else
    view.e[n + 1] = { t, cost }
  end
end

local function lg_drop_oldest(view, units)
  local e = view.e
  local first = 1
  while units > 0 and first <= #e do
    local c = e[first][2]
    if c <= units then
      units = units - c
      view.total = view.total - c
      first = first + 1
    else
      e[first] = { e[first][1], c - units }
      view.total = view.total - units
      units = 0
    end
  end
  if first > 1 then
    local kept = {}
    for i = first, #e do kept[#kept + 1] = e[i] end
    view.e = kept
  end
end

local function lg_drop_newest(view, units)
  local e = view.e
  while units > 0 and #e > 0 do
    local last = e[#e]
    local cut = last[2] < units and last[2] or units
    units = units - cut
    view.total = view.total - cut
    if last[2] == cut then e[#e] = nil else e[#e] = { last[1], last[2] - cut } end
  end
end

local function lg_read(lim, st, now_us)
  local view, repaired, future = lg_view(lim, st, now_us)
  if future and future > 0 then lg_add(view, now_us, future) end
  if view.total > lim.limit then
    lg_drop_oldest(view, view.total - lim.limit)
    repaired = true
  end
  return view, repaired
end

local function lg_outcome(lim, view, now, allowed, retry, writes, kind)
  local n = #view.e
  local reset = 0
  if n > 0 then
    local ages = view.e[n][1] + lim.W
    if ages > now.us then reset = ceil_ms_us(ages - now.us) end
  end
  local remaining = lim.limit - view.total
  if remaining < 0 then remaining = 0 end
  local d = decision(allowed, lim.limit, remaining, retry, reset)
  if not writes then return d, nil end
  local ch = { kind = kind }
  if n > 0 then
    -- Expires when the newest entry ages out, rounded up to a whole ms.
    local ages = view.e[n][1] + lim.W
    ch.w = { state = { window_ms = lim.window_ms, e = view.e }, expire = floor((ages + 999) / 1000) }
  end
  if n == 0 and kind == 'repair' then ch.kind = 'delete' end
  return d, ch
end

function LG.decide(lim, st, now, cost)
  local view, repaired = lg_read(lim, st, now.us)
  local limit = lim.limit
  if cost > limit then return lg_outcome(lim, view, now, false, -1, repaired, 'repair') end
  if cost == 0 then return lg_outcome(lim, view, now, true, 0, repaired, 'repair') end
  if view.total + cost <= limit then
    lg_add(view, now.us, cost)
    return lg_outcome(lim, view, now, true, 0, true, 'consume')
  end
  local need = view.total + cost - limit
  local at = now.us
  local j = 1
  while need > 0 and j <= #view.e do
    need = need - view.e[j][2]
    at = view.e[j][1]
    j = j + 1
  end
  local wait = at + lim.W - now.us
  if wait < 0 then wait = 0 end
  return lg_outcome(lim, view, now, false, ceil_ms_us(wait), repaired, 'repair')
end

function LG.settle(lim, st, now, units)
  if not st then return LG.decide(lim, nil, now, 0) end
  local view = lg_read(lim, st, now.us)
  lg_drop_newest(view, units)
  return lg_outcome(lim, view, now, true, 0, true, 'refund')
end

function LG.write(key, st, ch)
  if ch.w then
    local s = ch.w.state
    local parts = { 'L', fmt(s.window_ms) }
    local e = s.e
    for i = 1, #e do
      local t, c = e[i][1], e[i][2]
      if t < LIM and c < LIM then
        parts[i + 2] = sformat(';%d,%d', t, c)
      else
        parts[i + 2] = ';' .. fmt(t) .. ',' .. fmt(c)
      end
    end
    set_string(key, tconcat(parts), ch.w.expire)
  else
    del_key(key, st ~= nil)
  end
end

end
section_sliding_log()

-- now: { us = , ms = , s = , n = , raw = } from TIME's raw us.
local function clock_at(raw)
  local us = raw
  -- The module's clock: RedisModule_CachedMicroseconds (7.2+), else
  -- RedisModule_Milliseconds.
  if MS_CLOCK then us = us - us % 1000 end
  local ms = floor(us / 1000)
  local sec = floor(us / 1000000)
  return { us = us, ms = ms, s = sec, n = (us - sec * 1000000) * 1000, raw = raw }
end

local function clock()
  local t = rcall('TIME')
  -- (TIME's digits, read as tonumber reads them.)
  return clock_at(t[1] * 1000000 + t[2])
end

local function one_key(keys, name)
  if #keys ~= 1 then fail('ERR ' .. name .. ' takes exactly 1 key') end
  return keys[1]
end

---------------------------------------------------------------------------
-- Leases (core/lease.rs), in us. One hash: field "" holds
-- "<next_seq>,<last_start_us>"; every other field is a lease id holding
-- "<deadline_us>,<units>,<lease_ms>".
---------------------------------------------------------------------------
local LS = { keyword = 'CONCURRENCY', positionals = 2, cmd = 'RL.ACQUIRE' }
K.CONCURRENCY = LS
local function section_leases() -- (see "Sections" above)

function LS.grammar(c)
  c.refund = false
  local limit = int_in(next_arg(c, 'limit'), 'limit', 1, 100000)
  local lease_ms = next_period(c, 'lease_ms')
  local o, id = options(c, false, 'ID')
  if id and (#id < 1 or #id > MAX_ID_LEN) then fail('ERR ID must be 1 to 128 bytes') end
  -- LS.fast for generated ids (a named lease may renew).
  return { limit = limit, lease_ms = lease_ms, id = id, fast = id == nil }, o
end

-- The lease set from HGETALL's reply v (nil: no key).
function LS.parse(key, v)
  if v.err then wrong_kind(key, nil, 'RL.ACQUIRE') end
  if #v == 0 then return nil end
  local st = { leases = {}, by_id = {} }
  for i = 1, #v, 2 do
    local f, val = v[i], v[i + 1]
    if f == '' then
      local seq, last = val:match('^(%d+),(%d+)$')
      if not seq then fail(WRONGTYPE) end
      st.seq, st.last = seq + 0, last + 0
    else
      local dl, units, lms = val:match('^(%d+),(%d+),(%d+)$')
      if not dl then fail(WRONGTYPE) end
      local l = { id = f, dl = dl + 0, units = units + 0, lms = lms + 0 }
      st.leases[#st.leases + 1] = l
      st.by_id[f] = l
    end
  end
  if not st.seq then fail(WRONGTYPE) end
  return st
end

function LS.read(key) return LS.parse(key, rpcall('HGETALL', key)) end

-- Reading::of: the set is read at its own time, `at` (now, or the meta
-- field's last start if later: the clock went back), and its deadlines
-- move back by `shift` = at - now onto the clock.
local function l_reading(st, now, seed)
  local r = { st = st, now = now, at = now, shift = 0, expired = 0, live = 0, nexp = 0 }
  if not st then
    r.seq, r.last, r.jumped = seed, 0, false
    return r
  end
  if st.last > now then r.at = st.last end
  r.shift = r.at - now
  for _, l in ipairs(st.leases) do
    if l.dl <= r.at then
      r.expired = r.expired + l.units
      r.nexp = r.nexp + 1
    else
      r.live = r.live + l.units
    end
  end
  r.seq, r.last = st.seq, st.last
  r.jumped = r.shift > 0
  return r
end

local function l_live(r, id)
  if not r.st then return false end
  local l = r.st.by_id[id]
  return l ~= nil and l.dl > r.at
end

local function l_shortens(r)
  return r.jumped and r.live > 0
end

local function l_last(r, except)
  if not r.st then return nil end
  local last = nil
  for _, l in ipairs(r.st.leases) do
    if l.dl > r.at and l.id ~= except then
      if last == nil or l.dl > last then last = l.dl end
    end
  end
  return last and last - r.shift
end

local function l_wait_ms(r, need)
  if not r.st then return 0 end
  local live = {}
  for _, l in ipairs(r.st.leases) do
    if l.dl > r.at then live[#live + 1] = { l.dl, l.units } end
  end
  tsort(live, function(a, b) return a[1] < b[1] end)
  local u = 0
  for _, x in ipairs(live) do
    u = u + x[2]
    if u >= need then return ceil_ms_us(x[1] - r.at) end
  end
  return 0
end

local function l_reset(last, now)
  if last == nil then return 0 end
  return ceil_ms_us(last > now and last - now or 0)
end

-- Reading::write_around / write: a change { kind, op, opid, add, renew,
-- seq, last, reset, expire, delete, shift }.
local function l_write(r, kind, op, id, set, seq, lease)
  local except = (op ~= 'none') and id or nil
  local last = l_last(r, except)
  if set and (last == nil or set > last) then last = set end
  local last_start
  if r.jumped then
    last_start = r.now
  elseif set then
    last_start = r.last > r.now and r.last or r.now
  else
    last_start = r.last
  end
  local reset = l_reset(last, r.now)
  return {
    kind = kind, op = op, id = id, lease = lease, seq = seq, last = last_start, reset = reset,
    expire = last and floor((last + 999) / 1000) or 0, delete = last == nil, shift = r.shift,
  }
end

local function l_generated_seq(id)
  local seq = id:match('^%d+%-(%d+)$')
  if not seq or #seq > 20 then return nil end
  return tonumber(seq)
end

local SEQ_MAX = 4503599627370496 -- 2^52: sequence numbers this library moves past
local GEN = { next = 0 }

-- Leases::acquire
local function l_acquire(lim, st, now, cost)
  local now_us = now.us
  local r = l_reading(st, now_us, 0)
  local limit = lim.limit
  local deadline = now_us + lim.lease_ms * 1000
  local function dec(allowed, live, retry, reset)
    local rem = limit - live
    if rem < 0 then rem = 0 end
    return decision(allowed, limit, rem, retry, reset)
  end
  local function read_only(allowed, retry)
    if l_shortens(r) then
      local ch = l_write(r, 'repair', 'none', nil, nil, r.seq)
      return dec(allowed, r.live, retry, ch.reset), ch
    end
    return dec(allowed, r.live, retry, l_reset(l_last(r, nil), now_us)), nil
  end
  if cost == 0 then return read_only(true, 0) end
  if lim.id and l_live(r, lim.id) then
    local ch = l_write(r, 'consume', 'renew', lim.id, deadline, r.seq,
      { dl = deadline, lms = lim.lease_ms })
    return dec(true, r.live, 0, ch.reset), ch
  end
  if cost > limit then return read_only(false, -1) end
  if r.live + cost > limit then return read_only(false, l_wait_ms(r, r.live + cost - limit)) end
  local id = lim.id
  local seq = r.seq
  if id then
    local s = l_generated_seq(id)
    if s and s < SEQ_MAX and s + 1 > seq then seq = s + 1 end
  else
    -- Generated ids never repeat on a key, also across its lives (the key
    -- goes when its last lease ends): the sequence is at least the key's,
    -- this library instance's (a node-wide counter while the library stays
    -- loaded) and the server's clock in us, unfloored (every call takes
    -- more than 1 us, so the clock alone tells calls apart, across
    -- restarts and in EVAL mode too).
    if GEN.next > seq then seq = GEN.next end
    if now.raw > seq then seq = now.raw end
    local now_ms = floor(now_us / 1000)
    local function gen_id()
      if seq < LIM then return sformat('%d-%d', now_ms, seq) end
      return fmt(now_ms) .. '-' .. fmt(seq)
    end
    id = gen_id()
    -- Never an id a live lease holds (a client may have named one so).
    while l_live(r, id) do
      seq = seq + 1
      id = gen_id()
    end
    seq = seq + 1
    GEN.next = seq
  end
  local ch = l_write(r, 'consume', 'add', id, deadline, seq,
    { dl = deadline, units = cost, lms = lim.lease_ms })
  return dec(true, r.live + cost, 0, ch.reset), ch
end

function LS.decide(lim, st, now, cost) return l_acquire(lim, st, now, cost) end
function LS.settle(lim, st, now, units) return l_acquire(lim, st, now, 0) end

function LS.lease_of(ch)
  if ch and ch.kind == 'consume' and (ch.op == 'add' or ch.op == 'renew') then return ch.id end
  return nil
end

local function hcall(cmd, key, list)
  local n = #list
  local i = 1
  while i <= n do
    local j = i + 999
    if j > n then j = n end
    rcall(cmd, key, unpack(list, i, j))
    i = j + 1
  end
end

-- A lease's field value (non-negative numbers: read as digits, or made of
-- such).
local function enc(dl, units, lms)
  if dl < LIM and units < LIM and lms < LIM then return sformat('%d,%d,%d', dl, units, lms) end
  return fmt(dl) .. ',' .. fmt(units) .. ',' .. fmt(lms)
end

local function enc_meta(seq, last)
  if seq < LIM and last < LIM then return sformat('%d,%d', seq, last) end
  return fmt(seq) .. ',' .. fmt(last)
end

-- LeaseChange::apply, as hash edits.
function LS.write(key, st, ch, now)
  if ch.delete then
    del_key(key, st ~= nil)
    return
  end
  local nowv = now.us
  local set, del = {}, {}
  if st then
    -- A repair moves every deadline back by the shift (0 at the least).
    local shift = ch.shift
    for _, l in ipairs(st.leases) do
      local dl = l.dl - shift
      if dl < 0 then dl = 0 end
      if dl <= nowv then
        if not (ch.op == 'add' and l.id == ch.id) then del[#del + 1] = l.id end
      elseif shift > 0 and l.id ~= ch.id then
        set[#set + 1] = l.id
        set[#set + 1] = enc(dl, l.units, l.lms)
      end
    end
  end
  if ch.op == 'add' then
    set[#set + 1] = ch.id
    set[#set + 1] = enc(ch.lease.dl, ch.lease.units, ch.lease.lms)
  elseif ch.op == 'renew' then
    local l = st.by_id[ch.id]
    set[#set + 1] = ch.id
    set[#set + 1] = enc(ch.lease.dl, l.units, ch.lease.lms)
  elseif ch.op == 'release' then
    del[#del + 1] = ch.id
  end
  set[#set + 1] = ''
  set[#set + 1] = enc_meta(ch.seq, ch.last)
  if #del > 0 then hcall('HDEL', key, del) end
  hcall('HSET', key, set)
  rcall('PEXPIREAT', key, fmt(ch.expire))
end

-- The plain path of leases, for the common case: HGETALL's flat reply read
-- in one pass (checked as LS.parse checks it) into the few sums a decision
-- needs, no table per lease. scan(key, v, us, except) -> seq, last (the
-- meta field), live units, the latest deadline of the live leases other
-- than `except` (as l_last, for a set whose time is not ahead of now), the
-- expired ids (a list, or nil), and whether `except` is live.
local function ls_scan(key, v, us, except)
  local seq, last, live, latest, expired, mine = nil, nil, 0, nil, nil, false
  for i = 1, #v, 2 do
    local f, val = v[i], v[i + 1]
    if f == '' then
      local a, b = smatch(val, '^(%d+),(%d+)$')
      if not a then fail(WRONGTYPE) end
      seq, last = a + 0, b + 0
    else
      local a, b = smatch(val, '^(%d+),(%d+),(%d+)$')
      if not a then fail(WRONGTYPE) end
      local dl = a + 0
      if dl <= us then
        if expired then expired[#expired + 1] = f else expired = { f } end
      else
        live = live + b
        if f == except then
          mine = true
        else
          if latest == nil or dl > latest then latest = dl end
        end
      end
    end
  end
  if not seq then fail(WRONGTYPE) end
  return seq, last, live, latest, expired, mine
end

-- Whether a live lease holds the id (v: HGETALL's reply, checked).
local function ls_live_id(v, id, us)
  for i = 1, #v, 2 do
    if v[i] == id then return smatch(v[i + 1], '^%d+') + 0 > us end
  end
  return false
end

local function ls_time()
  local t = rcall('TIME')
  local raw = t[1] * 1000000 + t[2]
  local us = raw
  if MS_CLOCK then us = us - us % 1000 end
  return us, raw
end

-- RL.ACQUIRE with a generated id, COST > 0, no PEEK, while the clock has
-- not gone back past the key's last start (else, and for a denial that
-- must wait, the caller goes on with l_acquire: nil, the lease set, raw).
function LS.fast(key, lim, cost, peek)
  if cost == 0 or peek then return nil end
  local v = rpcall('HGETALL', key)
  if v.err then wrong_kind(key, nil, 'RL.ACQUIRE') end
  local us, raw = ls_time()
  local seq, last, live, latest, expired = 0, 0, 0, nil, nil
  if #v > 0 then seq, last, live, latest, expired = ls_scan(key, v, us, nil) end
  local limit = lim.limit
  if last > us or (cost <= limit and live + cost > limit) then return nil, LS.parse(key, v), raw end
  if cost > limit then
    -- read_only(false, -1): nothing written.
    local reset = 0
    if latest then reset = ceil_ms_us(latest - us) end
    local rem = limit - live
    return { 0, limit, rem > 0 and rem or 0, -1, reset, false }
  end
  -- A generated id (see l_acquire).
  if GEN.next > seq then seq = GEN.next end
  if raw > seq then seq = raw end
  local now_ms = floor(us / 1000)
  local id = seq < LIM and sformat('%d-%d', now_ms, seq) or fmt(now_ms) .. '-' .. fmt(seq)
  while #v > 0 and ls_live_id(v, id, us) do
    seq = seq + 1
    id = seq < LIM and sformat('%d-%d', now_ms, seq) or fmt(now_ms) .. '-' .. fmt(seq)
  end
  seq = seq + 1
  GEN.next = seq
  local deadline = us + lim.lease_ms * 1000
  if latest == nil or deadline > latest then latest = deadline end
  -- LS.write: the expired leases go (but one under the new id, set anew).
  if expired then
    local del = {}
    for i = 1, #expired do
      if expired[i] ~= id then del[#del + 1] = expired[i] end
    end
    if #del > 0 then hcall('HDEL', key, del) end
  end
  rcall('HSET', key, id, enc(deadline, cost, lim.lease_ms), '', enc_meta(seq, us))
  rcall('PEXPIREAT', key, fmt(floor((latest + 999) / 1000)))
  local rem = limit - live - cost
  return { 1, limit, rem > 0 and rem or 0, 0, ceil_ms_us(latest - us), id }
end

-- commands/lease.rs
function LS.release_command(keys, args)
  local key = one_key(keys, 'rl_release')
  if #args ~= 1 then arity('RL.RELEASE') end
  local id = args[1]
  if #id < 1 or #id > MAX_ID_LEN then fail('ERR id must be 1 to 128 bytes') end
  local v = rpcall('HGETALL', key)
  if v.err then wrong_kind(key, nil, 'RL.ACQUIRE') end
  if #v == 0 then return 0 end
  local us, raw = ls_time()
  local seq, last, _, latest, expired, mine = ls_scan(key, v, us, id)
  if last > us then
    -- The clock went back: Reading::write_around's clamping.
    local st, now = LS.parse(key, v), clock_at(raw)
    local r = l_reading(st, now.us, 0)
    if not l_live(r, id) then return 0 end
    local ch = l_write(r, 'release', 'release', id, nil, r.seq)
    LS.write(key, st, ch, now)
    return 1
  end
  if not mine then return 0 end
  -- l_write + LS.write: the key goes with its last live lease; else the
  -- expired leases and this one go, the expiry follows the latest.
  if latest == nil then
    rcall('DEL', key)
    return 1
  end
  local del = expired or {}
  del[#del + 1] = id
  hcall('HDEL', key, del)
  rcall('HSET', key, '', enc_meta(seq, last))
  rcall('PEXPIREAT', key, fmt(floor((latest + 999) / 1000)))
  return 1
end

function LS.renew_command(keys, args)
  local key = one_key(keys, 'rl_renew')
  if #args ~= 2 then arity('RL.RENEW') end
  local id = args[1]
  if #id < 1 or #id > MAX_ID_LEN then fail('ERR id must be 1 to 128 bytes') end
  local lease_ms = int_in(args[2], 'lease_ms', 1, MAX_PERIOD_MS)
  local st = LS.read(key)
  local now = clock()
  local r = l_reading(st, now.us, 0)
  if not l_live(r, id) then return 0 end
  local dl = now.us + lease_ms * 1000
  local ch = l_write(r, 'renew', 'renew', id, dl, r.seq, { dl = dl, lms = lease_ms })
  LS.write(key, st, ch, now)
  return 1
end

end
section_leases()

---------------------------------------------------------------------------
-- Entry points
---------------------------------------------------------------------------
local function section_entry_points() -- (see "Sections" above)
local KEYWORDS = { 'GCRA', 'TOKENBUCKET', 'SLIDE', 'LOG', 'QUOTA', 'CONCURRENCY' }
local EXPECTED = 'GCRA, TOKENBUCKET, SLIDE, LOG, QUOTA or CONCURRENCY'

-- The reply array (a new table, its array part sized by the constructor).
local function reply_kind(kind, d, ch)
  if kind == LS then
    return { d.allowed and 1 or 0, d.limit, d.remaining, d.retry, d.reset, LS.lease_of(ch) or false }
  end
  return { d.allowed and 1 or 0, d.limit, d.remaining, d.retry, d.reset }
end

-- Parsed arguments, remembered by their exact words (while the library
-- stays loaded; a tree of tables, one level per word): a call whose
-- arguments were seen before is not parsed again. Errors are not kept.
local PARSED, NPARSED = {}, 0
local LEAF = {} -- the key of a parse in the tree (no word is a table)

local function parse(args, from, kind, cmd, peek)
  return kind.grammar(cursor(args, from, #args, cmd, nil, peek, peek))
end

-- Files `value` in the tree at `t` under the words args[from..to] (the
-- levels made as needed), and counts it.
local function memo_put(t, args, from, to, value)
  for j = from, to do
    local w = args[j]
    local nxt = t[w]
    if nxt == nil then
      nxt = {}
      t[w] = nxt
    end
    t = nxt
  end
  t[LEAF] = value
  NPARSED = NPARSED + 1
end

local function parse_memo(memo, args, from, kind, cmd, peek)
  local t = memo
  for i = from, #args do
    local nxt = t[args[i]]
    if nxt == nil then
      local lim, o = parse(args, from, kind, cmd, peek)
      if NPARSED >= 4096 then
        PARSED, NPARSED = {}, 0
        return lim, o
      end
      memo_put(memo, args, from, #args, { lim, o })
      return lim, o
    end
    t = nxt
  end
  local hit = t[LEAF]
  if hit == nil then
    local lim, o = parse(args, from, kind, cmd, peek)
    memo_put(t, args, 1, 0, { lim, o })
    return lim, o
  end
  return hit[1], hit[2]
end

local function memo_of(kind, what)
  local m = PARSED[kind]
  if m == nil then
    m = { cmd = {}, peek = {} }
    PARSED[kind] = m
  end
  return m[what]
end

-- commands/mod.rs run()
local function kind_command(kind, fname)
  local fast, positionals, cmd = kind.fast, kind.positionals, kind.cmd
  local function run(key, lim, o, st, now)
    local d, ch
    if o.refund then
      d, ch = kind.settle(lim, st, now, o.refund)
    else
      d, ch = kind.decide(lim, st, now, o.cost)
    end
    local wrote = not o.peek and ch ~= nil
    if wrote then kind.write(key, st, ch, now) end
    return reply_kind(kind, d, wrote and ch or nil)
  end
  return function(keys, args)
    if #keys ~= 1 then fail('ERR ' .. fname .. ' takes exactly 1 key') end
    local key = keys[1]
    if #args < positionals then arity(cmd) end
    -- parse_memo's look-up, inline.
    local t, hit = PARSED[kind], nil
    if t then
      t = t.cmd
      for i = 1, #args do
        t = t[args[i]]
        if t == nil then break end
      end
      if t then hit = t[LEAF] end
    end
    local lim, o
    if hit then
      lim, o = hit[1], hit[2]
    else
      lim, o = parse_memo(memo_of(kind, 'cmd'), args, 1, kind, cmd, true)
    end
    if fast and lim.fast and not o.refund then
      local r, st, raw = fast(key, lim, o.cost, o.peek)
      if r then return r end
      if raw then return run(key, lim, o, st, clock_at(raw)) end
    end
    return run(key, lim, o, kind.read(key), clock())
  end
end

local function kind_by_keyword(word)
  local up = word:upper()
  for _, k in ipairs(KEYWORDS) do
    if up == k then return K[k] end
  end
  return nil
end

local function unknown_limiter(word)
  local p = printable(word)
  if p then fail("ERR syntax error: unknown limiter '" .. p .. "' (expected " .. EXPECTED .. ')') end
  fail('ERR syntax error: unknown limiter (expected ' .. EXPECTED .. ')')
end

-- commands/peek.rs: FCALL_RO rl_peek 1 key KIND args...
local function rl_peek(keys, args)
  local key = one_key(keys, 'rl_peek')
  -- RL.PEEK's arity is -2 (the kind): the kind is checked first, so a call
  -- that forgot it is told the keywords, as the module tells it.
  if #args < 1 then arity('RL.PEEK') end
  local kind = kind_by_keyword(args[1])
  if not kind then
    local p = printable(args[1])
    local named = p and ("unknown limiter '" .. p .. "'") or 'unknown limiter'
    fail('ERR syntax error: ' .. named .. ' (expected ' .. EXPECTED .. '): RL.PEEK takes the kind first, as in ' ..
      'RL.PEEK GCRA key limit period_ms')
  end
  if #args < 1 + kind.positionals then arity('RL.PEEK') end
  local lim, o = parse_memo(memo_of(kind, 'peek'), args, 2, kind, 'RL.PEEK', false)
  if kind.fast and lim.fast then
    -- The plain path with PEEK: it writes nothing.
    local r, st, raw = kind.fast(key, lim, o.cost, true)
    if r then return r end
    if raw then return reply_kind(kind, kind.decide(lim, st, clock_at(raw), o.cost), nil) end
  end
  local st = kind.read(key)
  local d = kind.decide(lim, st, clock(), o.cost)
  return reply_kind(kind, d, nil)
end

-- commands/all_args.rs + all.rs: FCALL rl_all numkeys keys... specs... [PEEK]
local TAKES_VALUE = { COST = true, REFUND = true, BURST = true, TZ = true, ID = true }

local function ends_spec(word)
  local up = word:upper()
  return up == 'PEEK' or kind_by_keyword(word) ~= nil
end

-- The specs of rl_all's arguments (all_args.rs): { kind, lim, cost, refund }
-- each, and PEEK.
local function all_parse(args, nkeys, len)
  local specs = {}
  local i = 1
  while #specs < nkeys do
    if i > len then
      fail('ERR syntax error: one spec per key is needed (numkeys is ' .. nkeys .. ', found ' .. #specs .. ' specs)')
    end
    local word = args[i]
    if word:upper() == 'PEEK' then
      if i == len then
        fail('ERR syntax error: one spec per key is needed (numkeys is ' .. nkeys .. ', found ' .. #specs .. ' specs)')
      end
      fail('ERR syntax error: PEEK must be the last argument')
    end
    local j = i + 1
    while j <= len and not ends_spec(args[j]) do
      j = j + (TAKES_VALUE[args[j]:upper()] and 2 or 1)
    end
    if j > len + 1 then j = len + 1 end
    local n = #specs + 1
    local ok, res = pcall(function()
      local kind = kind_by_keyword(word)
      if not kind then unknown_limiter(word) end
      local c = cursor(args, i + 1, j - 1, kind.cmd, kind.keyword, false, true)
      local lim, o = kind.grammar(c)
      return { kind = kind, lim = lim, cost = o.cost, refund = o.refund }
    end)
    if not ok then
      if type(res) == 'table' and res.rl_error then fail(res.rl_error .. ' (spec ' .. n .. ')') end
      error(res, 0)
    end
    specs[n] = res
    i = j
  end
  local peek = false
  if i <= len then
    if args[i]:upper() == 'PEEK' then
      if i ~= len then fail('ERR syntax error: PEEK must be the last argument') end
      peek = true
    else
      fail('ERR syntax error: one spec per key is needed (numkeys is ' .. nkeys .. ', found more specs)')
    end
  end
  if peek then
    for _, s in ipairs(specs) do
      if s.refund then fail('ERR syntax error: REFUND cannot be combined with PEEK') end
    end
  end
  return specs, peek
end

-- all_parse, remembered as parse_memo remembers a command's arguments (in
-- the same tree, under 'all' and numkeys).
local function all_specs(args, nkeys, len)
  local root = PARSED.all
  local t = root and root[nkeys]
  for i = 1, len do
    if t == nil then break end
    t = t[args[i]]
  end
  local hit = t and t[LEAF]
  if hit then return hit[1], hit[2] end
  local specs, peek = all_parse(args, nkeys, len) -- (errors are not kept)
  if NPARSED >= 4096 then
    PARSED, NPARSED = {}, 0
    return specs, peek
  end
  root = PARSED.all
  if root == nil then
    root = {}
    PARSED.all = root
  end
  t = root[nkeys]
  if t == nil then
    t = {}
    root[nkeys] = t
  end
  memo_put(t, args, 1, len, { specs, peek })
  return specs, peek
end

local function rl_all(keys, args)
  local nkeys = #keys
  local len = #args
  -- The server's arity check of RL.ALL (-6: RL.ALL numkeys key spec limit window).
  if 2 + nkeys + len < 6 then arity('RL.ALL') end
  if nkeys < 1 or nkeys > 16 then fail('ERR numkeys is out of range (must be 1 to 16)') end
  for second = 2, nkeys do
    for first = 1, second - 1 do
      if keys[first] == keys[second] then
        fail('ERR key ' .. second .. ' is the same as key ' .. first .. ': each key may appear only once')
      end
    end
  end
  local tmpl, peek = all_specs(args, nkeys, len)
  local specs = {}
  for n = 1, #tmpl do
    local t = tmpl[n]
    specs[n] = { kind = t.kind, lim = t.lim, cost = t.cost, refund = t.refund }
  end

  local now = clock()
  for n, s in ipairs(specs) do s.st = s.kind.read(keys[n]) end
  local allowed = true
  for _, s in ipairs(specs) do
    if s.refund then
      s.d, s.ch = s.kind.settle(s.lim, s.st, now, s.refund)
    else
      s.d, s.ch = s.kind.decide(s.lim, s.st, now, s.cost)
    end
    if not s.d.allowed then allowed = false end
  end
  local retry = 0
  if not allowed then
    for _, s in ipairs(specs) do
      if not s.d.allowed then
        if s.d.retry < 0 then
          retry = -1
          break
        end
        if s.d.retry > retry then retry = s.d.retry end
      end
    end
  end
  local out = { allowed and 1 or 0, retry }
  for n, s in ipairs(specs) do
    local wrote = false
    if not peek then
      local ch = s.ch
      if not allowed then
        local sd, sch = s.kind.decide(s.lim, s.st, now, 0)
        if s.refund then s.d = sd end
        ch = sch
      end
      if ch then
        s.kind.write(keys[n], s.st, ch, now)
        wrote = allowed
      end
    end
    out[n + 2] = reply_kind(s.kind, s.d, wrote and s.ch or nil)
  end
  return out
end

local function rl_version(keys, args)
  return LIB_VERSION
end

local FUNCS = {
  rl_gcra = kind_command(K.GCRA, 'rl_gcra'),
  rl_tokenbucket = kind_command(K.TOKENBUCKET, 'rl_tokenbucket'),
  rl_slide = kind_command(K.SLIDE, 'rl_slide'),
  rl_log = kind_command(K.LOG, 'rl_log'),
  rl_quota = kind_command(K.QUOTA, 'rl_quota'),
  rl_acquire = kind_command(K.CONCURRENCY, 'rl_acquire'),
  rl_release = LS.release_command,
  rl_renew = LS.renew_command,
  rl_all = rl_all,
  rl_peek = rl_peek,
  rl_version = rl_version,
}
return FUNCS
end
local FUNCS = section_entry_points()

-- What a function's entry does with an error its pcall caught: our own
-- (raised as tables) become error replies; anything else is raised again.
local function caught(res)
  if type(res) == 'table' and res.rl_error then return error_reply(res.rl_error) end
  error(res, 0)
end
return { funcs = FUNCS, caught = caught, pcall = pcall }
end

local NAMES = { 'rl_gcra', 'rl_tokenbucket', 'rl_slide', 'rl_log', 'rl_quota', 'rl_acquire', 'rl_release',
  'rl_renew', 'rl_all', 'rl_peek', 'rl_version' }
local lib = nil

if redis.register_function then
  for i = 1, #NAMES do
    local name = NAMES[i]
    local flags = {}
    if name == 'rl_peek' or name == 'rl_version' then flags = { 'no-writes' } end
    local f, caught, protect = nil, nil, nil
    redis.register_function({
      function_name = name,
      callback = function(keys, args)
        if not f then
          if not lib then lib = build() end
          f, caught, protect = lib.funcs[name], lib.caught, lib.pcall
        end
        local ok, res = protect(f, keys, args)
        if ok then return res end
        return caught(res)
      end,
      flags = flags,
    })
  end
else
  -- EVAL / EVALSHA: EVALSHA sha numkeys keys... function_name args...
  local args = {}
  for i = 2, #ARGV do args[i - 1] = ARGV[i] end
  lib = build()
  local f = lib.funcs[ARGV[1] or '']
  if not f then
    return redis.error_reply('ERR redis_rl: the first argument after the keys names the function (rl_gcra ...)')
  end
  local ok, res = pcall(f, KEYS, args)
  if ok then return res end
  return lib.caught(res)
end
