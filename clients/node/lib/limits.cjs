'use strict';
// Limits are values: declared once, then checked for any identity.
//
// Each limit knows its command and arguments, its name (for headers, logs and
// metrics), how to build the Redis key of an identity, and its own failure
// policy (onError). Arguments are prebuilt as strings once, at construction:
// node-redis wants string arguments, and a check then only appends a COST.

const { LocalBucket, LocalSemaphore } = require('./localBucket.cjs');

const MAX_U32 = 4294967295;
const MAX_MS = 1e12;
const CALENDAR = { HOUR: 3600e3, DAY: 86400e3, WEEK: 604800e3, MONTH: 30 * 86400e3, YEAR: 365 * 86400e3 };

function int(name, v, lo, hi) {
  if (!Number.isSafeInteger(v) || v < lo || v > hi) throw new RangeError(`${name} must be an integer from ${lo} to ${hi}, got ${v}`);
  return v;
}

// The "local" failure policy: an in-process limit with `share` of the global one.
class Local {
  constructor(share = 0.1) {
    if (typeof share === 'object' && share !== null) share = share.share ?? 0.1;
    if (!(typeof share === 'number' && share > 0 && share <= 1)) throw new RangeError('Local share must be in (0, 1]');
    this.share = share;
    Object.freeze(this);
  }

  toString() {
    return `local(${this.share})`;
  }
}

function checkPolicy(p) {
  if (p === undefined || p === null) return null;
  if (p === 'open' || p === 'closed' || p instanceof Local) return p;
  if (p === 'local') return new Local();
  throw new TypeError(`onError must be "open", "closed" or a Local, got ${String(p)}`);
}

// A name goes into headers (an sf-string) and keys: 1 to 128 of A-Z a-z 0-9 . _ : / -
const NAME_RE = /^[A-Za-z0-9._:/-]{1,128}$/;

class Limit {
  // kind: the RL.ALL / RL.PEEK keyword; command: the single command.
  constructor(kind, command, base, defaultName, opts = {}) {
    const { name, key, onError, unit } = opts;
    const n = name ?? defaultName;
    if (typeof n !== 'string' || !NAME_RE.test(n)) throw new TypeError(`limit name ${JSON.stringify(n)}: 1 to 128 of A-Z a-z 0-9 . _ : / -`);
    if (key !== undefined && typeof key !== 'function') throw new TypeError('key must be a function (identity, ctx) => string');
    if (unit !== undefined && unit !== null && !NAME_RE.test(unit)) throw new TypeError(`unit ${JSON.stringify(unit)}: 1 to 128 of A-Z a-z 0-9 . _ : / -`);
    this.kind = kind;
    this.command = command;
    this.name = n;
    this.keyFn = key ?? null;
    this.onError = checkPolicy(onError);
    this.unit = unit ?? null;
    this.base = base.map(String); // arguments after the key, without COST
    // fillMs (set by each kind): whole ms an empty limit takes to be full again,
    // the window w of its RateLimit-Policy item.
    this.spec = [kind, ...this.base]; // the RL.ALL / RL.PEEK spec, without COST
  }

  // The Redis key of an identity: `<prefix><name>:<identity>`, or with a hash
  // tag `<prefix>{<tag>}:<name>:<identity>`; a `key` option overrides it.
  keyFor(prefix, identity, tag) {
    if (identity === undefined || identity === null) throw new TypeError(`limit "${this.name}": identity is required`);
    if (tag !== undefined && (typeof tag !== 'string' || !tag || tag.includes('{') || tag.includes('}'))) {
      throw new TypeError('tag must be a non-empty string without { or }');
    }
    if (this.keyFn) return String(this.keyFn(identity, { prefix, name: this.name, tag }));
    return tag === undefined ? `${prefix}${this.name}:${identity}` : `${prefix}{${tag}}:${this.name}:${identity}`;
  }

  // The arguments after the key for a consuming call of `cost`.
  args(cost) {
    return cost === 1 ? this.base : [...this.base, 'COST', String(cost)];
  }

  // For the RateLimit field's t: [periodMs, units] when units come back
  // evenly (GCRA, token bucket); null when the reply does not say.
  get refill() {
    return null;
  }

  get isConcurrency() {
    return false;
  }

  // An in-process stand-in for this limit, for the Local failure policy.
  localFor(share) {
    return new LocalBucket(Math.max(1, Math.floor(this.quota * share)), this.fillMs);
  }

  toString() {
    return `${this.constructor.name}(${this.name})`;
  }

  // The parameters it sends, e.g. "Gcra(limit=10, periodMs=1000, burst=20)".
  describe() {
    const fields = this.constructor.fields || [];
    const b = this.base;
    const show = (v) => (/^[0-9]+$/.test(v) ? v : JSON.stringify(v));
    const parts = fields.map((f, i) => `${f}=${show(b[i])}`);
    for (let i = fields.length; i + 1 < b.length; i += 2) parts.push(`${b[i].toLowerCase()}=${show(b[i + 1])}`);
    return `${this.constructor.name}(${parts.join(', ')})`;
  }
}

// RL.GCRA key limit period_ms [BURST n]: `limit` per `periodMs`, bursts of `burst`.
class Gcra extends Limit {
  constructor(limit, periodMs, opts = {}) {
    int('limit', limit, 1, MAX_U32);
    int('periodMs', periodMs, 1, MAX_MS);
    const burst = opts.burst ?? null;
    if (burst !== null) int('burst', burst, 1, MAX_U32);
    const base = burst === null ? [limit, periodMs] : [limit, periodMs, 'BURST', burst];
    super('GCRA', 'RL.GCRA', base, `gcra-${limit}-per-${periodMs}ms${burst === null ? '' : `-burst-${burst}`}`, opts);
    Object.assign(this, { limit, periodMs, burst, quota: burst ?? limit });
    this.fillMs = Math.ceil((this.quota * periodMs) / limit);
    Object.freeze(this);
  }

  get refill() {
    return [this.periodMs, this.limit];
  }
}

// RL.TOKENBUCKET key capacity refill_tokens refill_period_ms.
class TokenBucket extends Limit {
  constructor(capacity, refillTokens, refillPeriodMs, opts = {}) {
    int('capacity', capacity, 1, MAX_U32);
    int('refillTokens', refillTokens, 1, MAX_U32);
    int('refillPeriodMs', refillPeriodMs, 1, MAX_MS);
    super('TOKENBUCKET', 'RL.TOKENBUCKET', [capacity, refillTokens, refillPeriodMs],
      `tokenbucket-${capacity}-${refillTokens}-per-${refillPeriodMs}ms`, opts);
    Object.assign(this, { capacity, refillTokens, refillPeriodMs, quota: capacity });
    this.fillMs = Math.ceil((capacity * refillPeriodMs) / refillTokens);
    Object.freeze(this);
  }

  get refill() {
    return [this.refillPeriodMs, this.refillTokens];
  }
}

// RL.SLIDE key limit window_ms: a sliding window counter.
class Slide extends Limit {
  constructor(limit, windowMs, opts = {}) {
    int('limit', limit, 1, MAX_U32);
    int('windowMs', windowMs, 1, MAX_MS);
    super('SLIDE', 'RL.SLIDE', [limit, windowMs], `slide-${limit}-per-${windowMs}ms`, opts);
    Object.assign(this, { limit, windowMs, quota: limit, fillMs: windowMs });
    Object.freeze(this);
  }
}

// RL.LOG key limit window_ms: an exact sliding log (limit at most 10,000).
class Log extends Limit {
  constructor(limit, windowMs, opts = {}) {
    int('limit', limit, 1, 10000);
    int('windowMs', windowMs, 1, MAX_MS);
    super('LOG', 'RL.LOG', [limit, windowMs], `log-${limit}-per-${windowMs}ms`, opts);
    Object.assign(this, { limit, windowMs, quota: limit, fillMs: windowMs });
    Object.freeze(this);
  }
}

// RL.QUOTA key limit period [TZ zone]: a count per calendar window
// ("HOUR" | "DAY" | "WEEK" | "MONTH" | "YEAR", in `tz`, default UTC) or per
// fixed window of `period` ms aligned to the Unix epoch.
class Quota extends Limit {
  constructor(limit, period, opts = {}) {
    int('limit', limit, 1, MAX_U32);
    let periodArg;
    let periodMs;
    if (typeof period === 'string') {
      periodArg = period.toUpperCase();
      periodMs = CALENDAR[periodArg];
      if (!periodMs) throw new RangeError(`period must be HOUR, DAY, WEEK, MONTH, YEAR or a number of ms, got ${period}`);
    } else {
      periodMs = int('period', period, 1, MAX_MS);
      periodArg = period;
      if (opts.tz != null) throw new RangeError('tz needs a calendar period (HOUR, DAY, WEEK, MONTH, YEAR)');
    }
    const tz = opts.tz ?? null;
    if (tz !== null && (typeof tz !== 'string' || !tz)) throw new TypeError('tz must be an IANA zone name');
    const base = tz === null ? [limit, periodArg] : [limit, periodArg, 'TZ', tz];
    const p = typeof period === 'string' ? periodArg.toLowerCase() : `${periodMs}ms`;
    super('QUOTA', 'RL.QUOTA', base, `quota-${limit}-per-${p}${tz ? `-${tz}` : ''}`, opts);
    // fillMs: a calendar window's nominal length (a month as 30 days, a
    // year as 365), for the policy's w only; the server keeps the calendar.
    Object.assign(this, { limit, period: periodArg, tz, quota: limit, fillMs: periodMs });
    Object.freeze(this);
  }
}

// RL.ACQUIRE key limit lease_ms: at most `limit` units held at once; each
// lease lives `leaseMs` unless renewed or released.
class Concurrency extends Limit {
  constructor(limit, leaseMs, opts = {}) {
    int('limit', limit, 1, 100000);
    int('leaseMs', leaseMs, 1, MAX_MS);
    super('CONCURRENCY', 'RL.ACQUIRE', [limit, leaseMs], `concurrency-${limit}-lease-${leaseMs}ms`, opts);
    Object.assign(this, { limit, leaseMs, quota: limit, fillMs: leaseMs });
    Object.freeze(this);
  }

  get isConcurrency() {
    return true;
  }

  args(cost, id) {
    const a = cost === 1 ? [...this.base] : [...this.base, 'COST', String(cost)];
    if (id !== undefined && id !== null) a.push('ID', String(id));
    return a;
  }

  localFor(share) {
    return new LocalSemaphore(Math.max(1, Math.floor(this.limit * share)));
  }
}

Gcra.fields = ['limit', 'periodMs'];
TokenBucket.fields = ['capacity', 'refillTokens', 'refillPeriodMs'];
Slide.fields = ['limit', 'windowMs'];
Log.fields = ['limit', 'windowMs'];
Quota.fields = ['limit', 'period'];
Concurrency.fields = ['limit', 'leaseMs'];

module.exports = { Limit, Gcra, TokenBucket, Slide, Log, Quota, Concurrency, Local, checkPolicy };
