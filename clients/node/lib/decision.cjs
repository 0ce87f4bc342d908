'use strict';
// Decisions: the module's replies (RESP2 arrays or RESP3 maps, single
// commands and RL.ALL) read into one shape, and what HTTP makes of them:
// the status, the draft-ietf-httpapi-ratelimit-headers-11 fields and a JSON body.

// --- parsing ------------------------------------------------------------------

const num = (v) => (typeof v === 'number' ? v : Number(v));
const bool = (v) => v === 1 || v === true || v === '1';
const str = (v) => (v === null || v === undefined ? null : typeof v === 'string' ? v : v.toString());

// A RESP3 map as the clients give it: node-redis a plain object (or a Map
// with a Map type mapping, or a flat [k, v, ...] array with an Array one).
function field(m, name) {
  if (m instanceof Map) return m.get(name);
  return m[name];
}

function isMap(reply) {
  return reply !== null && typeof reply === 'object' && !Array.isArray(reply) && !Buffer.isBuffer(reply);
}

// The sixth field of a RESP2 reply: RL.ACQUIRE's lease id (a bulk string or
// nil), or, for a rate limit called with MAXWAIT, wait_ms (an integer).
// concurrency: true/false when the caller knows the kind, undefined to go by
// the field's type (an integer is wait_ms).
function sixth(reply, concurrency) {
  if (reply.length <= 5) return [null, 0];
  const v = reply[5];
  const isWait = concurrency === undefined ? (typeof v === 'number' || typeof v === 'bigint') : !concurrency;
  return isWait ? [null, v === null || v === undefined ? 0 : num(v)] : [str(v), 0];
}

// One limit's reply: [allowed, limit, remaining, retry_after_ms,
// reset_after_ms (, lease | , wait_ms)] or the map of the same names.
// waitMs: 0 unless a MAXWAIT call booked a start that many ms ahead.
function parseReply(reply, concurrency) {
  if (Array.isArray(reply)) {
    const [lease, waitMs] = sixth(reply, concurrency);
    return {
      allowed: bool(reply[0]),
      limit: num(reply[1]),
      remaining: num(reply[2]),
      retryAfterMs: num(reply[3]),
      resetAfterMs: num(reply[4]),
      lease,
      waitMs,
    };
  }
  if (isMap(reply)) {
    const w = field(reply, 'wait_ms');
    return {
      allowed: bool(field(reply, 'allowed')),
      limit: num(field(reply, 'limit')),
      remaining: num(field(reply, 'remaining')),
      retryAfterMs: num(field(reply, 'retry_after_ms')),
      resetAfterMs: num(field(reply, 'reset_after_ms')),
      lease: str(field(reply, 'lease') ?? null),
      waitMs: w === null || w === undefined ? 0 : num(w),
    };
  }
  throw new TypeError(`redis-rl: unexpected reply ${JSON.stringify(reply)}`);
}

// RL.ALL: [allowed, retry_after_ms, reply, reply, ...] or
// {allowed, retry_after_ms, limits: [reply, ...]}.
// kinds (optional): per key, true for a CONCURRENCY spec (its sixth field is
// the lease), false for a rate limit (wait_ms with MAXWAIT).
function parseAllReply(reply, kinds) {
  const one = (r, i) => parseReply(r, kinds ? kinds[i] : undefined);
  if (Array.isArray(reply)) {
    return { allowed: bool(reply[0]), retryAfterMs: num(reply[1]), limits: reply.slice(2).map(one) };
  }
  if (isMap(reply)) {
    return {
      allowed: bool(field(reply, 'allowed')),
      retryAfterMs: num(field(reply, 'retry_after_ms')),
      limits: field(reply, 'limits').map(one),
    };
  }
  throw new TypeError(`redis-rl: unexpected RL.ALL reply ${JSON.stringify(reply)}`);
}

// --- the Decision ----------------------------------------------------------------

const ceilS = (ms) => Math.ceil(ms / 1000);
const EMPTY = Object.freeze({ allowed: false, limit: 0, remaining: 0, retryAfterMs: 0, resetAfterMs: 0, lease: null, waitMs: 0 });

// A Structured Field String (RFC 9651 3.3.3): printable ASCII, \ and " escaped.
const sfString = (s) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

class Decision {
  // A single command's raw reply, read straight into a Decision (the hot path).
  static fromReply(reply, policy, key, cost) {
    if (Array.isArray(reply)) {
      const d = new Decision(EMPTY, policy, key, cost);
      d.allowed = bool(reply[0]);
      d.limit = num(reply[1]);
      d.remaining = num(reply[2]);
      d.retryAfterMs = num(reply[3]);
      d.resetAfterMs = num(reply[4]);
      if (reply.length > 5) [d.lease, d.waitMs] = sixth(reply, policy ? policy.isConcurrency : undefined);
      d.never = d.retryAfterMs === -1;
      return d;
    }
    return new Decision(parseReply(reply, policy ? policy.isConcurrency : undefined), policy, key, cost);
  }

  constructor(r, policy, key, cost, source = 'redis', error = null) {
    this.allowed = r.allowed;
    this.limit = r.limit;
    this.remaining = r.remaining;
    this.retryAfterMs = r.retryAfterMs;
    this.resetAfterMs = r.resetAfterMs;
    this.lease = r.lease ?? null;
    // MAXWAIT: allowed and booked for now + waitMs; start then (pace() sleeps it). 0 otherwise.
    this.waitMs = r.waitMs ?? 0;
    this.never = r.retryAfterMs === -1;
    this.name = policy ? policy.name : null;
    this.key = key;
    this.cost = cost;
    this.source = source; // "redis" | "fail_open" | "fail_closed" | "local" | "durable"
    this.error = error;
    this.policy = policy; // the Limit value this decision is about
    this.decisions = null; // checkAll: each check's own Decision, in order
    this.deniedBy = null; // checkAll: the denying Decisions, most restrictive first
  }

  get failOpen() {
    return this.source === 'fail_open';
  }

  // 200 allowed; 413 when the cost can never fit; 503 when a Concurrency limit
  // (the service's capacity) or the fail-closed policy denies; else 429.
  get status() {
    if (this.allowed) return 200;
    if (this.source === 'fail_closed' || this.source === 'durable') return 503;
    if (this.never) return 413;
    const top = this.deniedBy ? this.deniedBy[0] : this;
    return top.policy && top.policy.isConcurrency ? 503 : 429;
  }

  // Decisions behind the headers, most restrictive first.
  ranked() {
    if (!this.decisions) return [this];
    return rank(this.decisions, this.allowed);
  }

  // RateLimit-Policy and RateLimit (one item per limit, most restrictive
  // first; Concurrency limits are left out: a slot comes back when a request
  // ends, not over a window), and Retry-After in whole seconds, rounded up,
  // when denied (and the request could ever be allowed).
  headers() {
    const h = {};
    if (this.source === 'fail_closed' || this.source === 'durable') {
      h['Retry-After'] = String(Math.max(1, ceilS(this.retryAfterMs)));
      return h;
    }
    if (this.source !== 'fail_open') {
      const policies = [];
      const states = [];
      for (const d of this.ranked()) {
        if (!d.policy || d.policy.isConcurrency || d.source === 'fail_open') continue;
        policies.push(policyItem(d));
        states.push(rateLimitItem(d));
      }
      if (policies.length) {
        h['RateLimit-Policy'] = policies.join(', ');
        h.RateLimit = states.join(', ');
      }
    }
    if (!this.allowed && !this.never) h['Retry-After'] = String(Math.max(1, ceilS(this.retryAfterMs)));
    return h;
  }

  // A JSON-serialisable body naming the limit that denied (never the identity
  // or the key): {error, limit, scope, quota, window_ms, unit?, cost,
  // retry_after_ms, retry_after_s?}; {allowed: true} when allowed.
  body() {
    if (this.allowed) return { allowed: true };
    if (this.source === 'fail_closed' || this.source === 'durable') {
      return { error: 'rate_limiter_unavailable', limit: this.name, scope: this.name, retry_after_ms: this.retryAfterMs };
    }
    const top = this.deniedBy && this.deniedBy.length ? this.deniedBy[0] : this;
    const p = top.policy;
    const error = this.never ? 'request_too_large' : p && p.isConcurrency ? 'concurrency_limited' : 'rate_limited';
    const body = { error, limit: top.name, scope: top.name };
    if (p) {
      body.quota = p.quota;
      body.window_ms = p.fillMs;
      if (p.unit) body.unit = p.unit;
    }
    body.cost = top.cost;
    body.retry_after_ms = this.retryAfterMs;
    if (this.retryAfterMs >= 0) body.retry_after_s = ceilS(this.retryAfterMs);
    return body;
  }

  toJSON() {
    const o = {
      allowed: this.allowed, limit: this.limit, remaining: this.remaining, retryAfterMs: this.retryAfterMs,
      resetAfterMs: this.resetAfterMs, lease: this.lease, never: this.never, name: this.name, source: this.source,
    };
    o.waitMs = this.waitMs;
    if (this.decisions) {
      o.decisions = this.decisions.map((d) => d.toJSON());
      o.deniedBy = this.deniedBy.map((d) => d.name);
    }
    return o;
  }
}

// The window an item's RateLimit t names (draft 4.1.2: the seconds within
// which the client can use no more than r): when one more unit than
// `remaining` is back. Denied: retryAfterMs (the moment Retry-After names).
// Full: 0. Even refill (GCRA, token bucket): the next unit comes
// (limit - remaining - 1) units before full. Quota: the window's end. Sliding
// window and log: resetAfterMs (the reply does not say when the first unit
// comes back; a bound that only makes a client wait longer).
function effectiveWindowMs(d) {
  if (!d.allowed && d.retryAfterMs >= 0) return d.retryAfterMs;
  if (d.remaining >= d.limit) return 0;
  const refill = d.source === 'local' ? null : d.policy.refill;
  if (!refill) return d.resetAfterMs;
  const [periodMs, units] = refill;
  const beforeFull = (d.limit - d.remaining - 1) * periodMs;
  return Math.max(0, Math.ceil((d.resetAfterMs * units - beforeFull) / units));
}

function policyItem(d) {
  const p = d.policy;
  return `${sfString(p.name)};q=${d.limit}${p.unit ? `;qu="${p.unit}"` : ''};w=${Math.max(1, ceilS(p.fillMs))}`;
}

function rateLimitItem(d) {
  return `${sfString(d.policy.name)};r=${Math.max(0, d.remaining)};t=${ceilS(effectiveWindowMs(d))}`;
}

// Most restrictive first. Denied: the denying limits by their wait, longest
// first ("never" is the longest), then the others. Allowed: the fewest more
// requests of this cost (remaining / cost), ties to the one taking longest to
// fill up.
function rank(decisions, allowed) {
  const key = (d) => {
    if (!allowed && !d.allowed) return [0, d.retryAfterMs < 0 ? -Infinity : -d.retryAfterMs, 0];
    return [1, Math.floor(d.remaining / Math.max(1, d.cost)), -d.resetAfterMs];
  };
  return decisions
    .map((d, i) => ({ d, k: key(d), i }))
    .sort((a, b) => a.k[0] - b.k[0] || a.k[1] - b.k[1] || a.k[2] - b.k[2] || a.i - b.i)
    .map((x) => x.d);
}

// The combined Decision of one RL.ALL.
function combine(parsed, checks, keys) {
  if (parsed.limits.length !== checks.length) {
    throw new TypeError(`redis-rl: RL.ALL answered ${parsed.limits.length} limits for ${checks.length} keys`);
  }
  const decisions = parsed.limits.map((r, i) => new Decision(r, checks[i].limit, keys[i], checks[i].cost));
  const ordered = rank(decisions, parsed.allowed);
  const top = ordered[0];
  // MAXWAIT: every key is booked for one start, so they all say the same wait_ms.
  const waitMs = decisions.reduce((m, x) => Math.max(m, x.waitMs), 0);
  const d = new Decision({
    allowed: parsed.allowed, limit: top.limit, remaining: top.remaining, retryAfterMs: parsed.retryAfterMs,
    resetAfterMs: top.resetAfterMs, lease: null, waitMs,
  }, top.policy, top.key, top.cost, 'redis');
  d.decisions = decisions;
  d.deniedBy = parsed.allowed ? [] : ordered.filter((x) => !x.allowed);
  return d;
}

module.exports = { Decision, parseReply, parseAllReply, combine, rank, effectiveWindowMs, ceilS, sfString };
