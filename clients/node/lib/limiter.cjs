'use strict';
// The entry point: new Limiter(client, {prefix, onError, timeoutMs, metrics, backend}).

const { randomUUID } = require('node:crypto');
const { Decision, parseAllReply, combine } = require('./decision.cjs');
const { makeBackend } = require('./backend.cjs');
const { keySlot } = require('./crc16.cjs');
const { Limit, Local, checkPolicy } = require('./limits.cjs');
const { RateLimited, CrossSlotError, RedisTimeoutError, LeaseLostError, ModuleNotLoadedError } = require('./errors.cjs');

const DEFAULT_TIMEOUT_MS = 100;
const LOCAL_MAX_KEYS = 10000; // in-process stand-ins kept per limit under the Local policy

// --- errors: which ones the failure policy takes ------------------------------

// Error replies that say the server cannot serve now (the policy applies).
// Every other error reply is raised: usage errors (ERR for a bad argument,
// WRONGTYPE, CROSSSLOT), authentication and ACL errors (NOAUTH, NOPERM), and
// an unknown command (the module is not loaded: ModuleNotLoadedError), which
// are misconfigurations a failure policy must not hide.
const UNAVAILABLE_REPLY = /^(LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|READONLY|OOM|MISCONF|NOREPLICAS|UNBLOCKED)\b|^ERR max number of clients/;
const UNKNOWN_COMMAND = /^ERR unknown command/i;

// ioredis: ReplyError (its name); node-redis 5: ErrorReply and its
// subclasses SimpleError / BlobError (their class names; name is "Error").
const REPLY_ERRORS = new Set(['ReplyError', 'ErrorReply', 'SimpleError', 'BlobError']);
function isErrorReply(err) {
  if (REPLY_ERRORS.has(err.name)) return true;
  for (let p = Object.getPrototypeOf(err); p && p !== Error.prototype; p = Object.getPrototypeOf(p)) {
    if (p.constructor && REPLY_ERRORS.has(p.constructor.name)) return true;
  }
  return false;
}

// What to raise for an error the policy does not answer.
function raised(err) {
  if (isErrorReply(err) && UNKNOWN_COMMAND.test(err.message || '')) return new ModuleNotLoadedError(err);
  return err;
}

// true: the failure policy answers; false: raise it to the caller.
function isUnavailable(err) {
  if (!(err instanceof Error)) return false;
  if (err instanceof RedisTimeoutError) return true;
  if (isErrorReply(err)) return UNAVAILABLE_REPLY.test(err.message || '');
  if (err instanceof TypeError || err instanceof RangeError || err instanceof CrossSlotError) return false;
  return true; // connection refused / reset / closed, offline queue off, ioredis MaxRetriesPerRequestError...
}

// The timeout of every call of one Limiter, on one coarse timer: a call's
// reject function goes into the open bucket; each tick (a quarter of the
// timeout) closes the bucket, due timeoutMs later, and rejects the buckets
// that are due. A call that answers clears its slot (so nothing it holds
// outlives it), and costs a push and a store instead of a timer of its own (a
// setTimeout/clearTimeout pair per call costs about 0.4 µs, more than all the
// rest of a decision). A call times out between timeoutMs and timeoutMs plus
// a tick after it was made.
class Deadlines {
  constructor(ms) {
    this.ms = ms;
    this.tickMs = Math.max(1, Math.ceil(ms / 4));
    this.open = [];
    this.due = []; // [at, rejects], oldest first
    this.timer = null;
    this.onTick = () => this.tick();
  }

  wrap(promise) {
    return new Promise((resolve, reject) => {
      const bucket = this.open;
      const i = bucket.length;
      bucket.push(reject);
      // Not unref'd: every call settles, and the timer runs only while one is pending.
      if (this.timer === null) this.timer = setInterval(this.onTick, this.tickMs);
      promise.then((v) => { bucket[i] = null; resolve(v); }, (e) => { bucket[i] = null; reject(e); });
    });
  }

  tick() {
    const now = performance.now();
    if (this.open.length) {
      this.due.push([now + this.ms, this.open]);
      this.open = [];
    }
    let n = 0;
    while (n < this.due.length && this.due[n][0] <= now) n++;
    if (n) {
      let err = null;
      for (const [, rejects] of this.due.splice(0, n)) {
        for (const r of rejects) if (r !== null) r(err || (err = new RedisTimeoutError(this.ms)));
      }
    }
    if (!this.due.length && !this.open.length) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}

function checkCost(cost, min = 0) {
  if (!Number.isSafeInteger(cost) || cost < min || cost > 4294967295) {
    throw new RangeError(`cost must be an integer from ${min} to 4294967295, got ${cost}`);
  }
  return cost;
}

function checkLimit(limit) {
  if (!(limit instanceof Limit)) throw new TypeError('expected a limit (Gcra, TokenBucket, Slide, Log, Quota, Concurrency)');
  return limit;
}

const hrNow = () => process.hrtime.bigint();
const secondsSince = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;

class Limiter {
  constructor(client, opts = {}) {
    const { prefix = 'rl:', onError = 'closed', timeoutMs = DEFAULT_TIMEOUT_MS, metrics = null, backend, onFallback = null,
      logger = console } = opts;
    if (typeof prefix !== 'string') throw new TypeError('prefix must be a string');
    if (timeoutMs !== null && timeoutMs !== 0 && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
      throw new RangeError('timeoutMs must be a positive number (or 0/null: no timeout)');
    }
    this.client = client;
    this.backend = makeBackend(backend, client);
    this.prefix = prefix;
    this.onError = checkPolicy(onError) ?? 'closed';
    this.timeoutMs = timeoutMs || 0;
    this.deadlines = this.timeoutMs ? new Deadlines(this.timeoutMs) : null;
    this.metrics = metrics;
    this.onFallback = onFallback;
    this.logger = logger;
    // Counters of the failure policy's activations (also per policy).
    this.fallbacks = { total: 0, open: 0, closed: 0, local: 0 };
    this.degraded = false; // Redis failing now (logged once per outage)
    this.locals = new Map(); // Limit -> Map(key -> local stand-in)
  }

  key(limit, identity, tag) {
    return limit.keyFor(this.prefix, identity, tag);
  }

  // A Redis call under the Limiter's timeout.
  call(promise) {
    return this.deadlines === null ? promise : this.deadlines.wrap(promise);
  }

  // --- single limits ------------------------------------------------------------

  // The limit's own command with COST `cost`; a Concurrency limit acquires a
  // lease (see acquire() for one that is released for you).
  // opts: a cost, or {cost, tag, id}; tag places the hash tag as checkAll does.
  async check(limit, identity, opts) {
    let cost = 1;
    let tag;
    let id;
    if (opts !== undefined) {
      if (typeof opts === 'number') cost = opts;
      else ({ cost = 1, tag, id } = opts);
    }
    if (!(limit instanceof Limit)) checkLimit(limit);
    if (cost !== 1) checkCost(cost);
    const key = limit.keyFor(this.prefix, identity, tag);
    const args = limit.isConcurrency ? limit.args(cost, id) : limit.args(cost);
    const t0 = this.metrics ? hrNow() : 0n;
    let raw;
    try {
      raw = await this.call(this.backend.check(limit, key, args));
    } catch (err) {
      return this.failed(limit, key, cost, err, t0, 'consume');
    }
    const d = Decision.fromReply(raw, limit, key, cost);
    if (this.degraded) this.recovered();
    if (this.metrics) this.metrics.onDecision(limit.name, d, secondsSince(t0));
    return d;
  }

  // What check() would answer, without consuming or writing anything (RL.PEEK;
  // works on read-only replicas).
  async peek(limit, identity, opts) {
    const cost = opts === undefined ? 1 : typeof opts === 'number' ? opts : opts.cost ?? 1;
    checkLimit(limit);
    checkCost(cost);
    const key = limit.keyFor(this.prefix, identity, typeof opts === 'object' ? opts.tag : undefined);
    return this.run(limit, key, cost, () => this.backend.peek(limit, key, limit.args(cost)), 'peek');
  }

  // Give `amount` units back (REFUND): the state after the refund, allowed.
  async refund(limit, identity, amount, opts) {
    checkLimit(limit);
    if (limit.isConcurrency) throw new TypeError('a Concurrency limit has no refund: release the lease');
    checkCost(amount, 1);
    const key = limit.keyFor(this.prefix, identity, opts && opts.tag);
    const t0 = this.metrics ? hrNow() : 0n;
    let raw;
    try {
      raw = await this.call(this.backend.check(limit, key, [...limit.base, 'REFUND', String(amount)]));
    } catch (err) {
      // No failure policy: a refund that did not happen must not look done.
      if (this.metrics && this.metrics.onError) this.metrics.onError(limit.name, err);
      throw raised(err);
    }
    const d = Decision.fromReply(raw, limit, key, 0);
    if (this.metrics) this.metrics.onDecision(limit.name, d, secondsSince(t0));
    return d;
  }

  async run(limit, key, cost, send, mode) {
    const t0 = this.metrics ? hrNow() : 0n;
    let raw;
    try {
      raw = await this.call(send());
    } catch (err) {
      return this.failed(limit, key, cost, err, t0, mode);
    }
    const d = Decision.fromReply(raw, limit, key, cost);
    if (this.degraded) this.recovered();
    if (this.metrics) this.metrics.onDecision(limit.name, d, secondsSince(t0));
    return d;
  }

  // --- several limits, one decision ---------------------------------------------

  // checks: [[limit, identity], [limit, identity, cost], ...] or
  // [{limit, identity, cost}, ...]. One RL.ALL: all or nothing.
  async checkAll(checks, opts = {}) {
    const { cost = 1, tag, peek = false } = opts;
    if (!Array.isArray(checks) || checks.length === 0) throw new TypeError('checkAll needs a non-empty array of checks');
    if (tag !== undefined && (typeof tag !== 'string' || !tag || /[{}]/.test(tag))) {
      throw new TypeError('tag must be a non-empty string without { or }');
    }
    const norm = checks.map((c) => {
      const [limit, identity, c2, id] = Array.isArray(c) ? c : [c.limit, c.identity, c.cost, c.id];
      checkLimit(limit);
      return { limit, identity, cost: checkCost(c2 ?? cost), id };
    });
    const keys = norm.map((c) => c.limit.keyFor(this.prefix, c.identity, tag));
    if (keys.length > 1) {
      if (new Set(keys).size !== keys.length) throw new RangeError('checkAll: a key appears twice (same limit name and identity)');
      // A cluster refuses keys in different slots (CROSSSLOT): say so before any round trip.
      if (this.backend.cluster) {
        const slot = keySlot(keys[0]);
        for (let i = 1; i < keys.length; i++) {
          if (keySlot(keys[i]) !== slot) throw new CrossSlotError(keys, keys.map(keySlot));
        }
      }
    }
    const specs = norm.map((c) => {
      const s = [...c.limit.spec];
      if (c.cost !== 1) s.push('COST', String(c.cost));
      if (c.limit.isConcurrency && c.id != null) s.push('ID', String(c.id));
      return s;
    });
    const t0 = this.metrics ? hrNow() : 0n;
    let raw;
    try {
      raw = await this.call(this.backend.all(keys, specs, peek));
    } catch (err) {
      return this.failedAll(norm, keys, err, t0, peek);
    }
    const d = combine(parseAllReply(raw), norm, keys);
    if (this.degraded) this.recovered();
    if (this.metrics) {
      const s = secondsSince(t0);
      // Allowed: every limit's decision; denied: the limits that denied.
      for (const sub of d.allowed ? d.decisions : d.deniedBy) this.metrics.onDecision(sub.name, sub, s);
    }
    return d;
  }

  // Give units back to several limits in one RL.ALL, all or nothing (each
  // spec with REFUND): refunds [[limit, identity, amount], ...] or
  // [{limit, identity, amount}, ...], opts {tag} as checkAll's. As refund():
  // no failure policy (a refund that did not happen must not look done), so
  // errors are raised; never retry it (a refund is not idempotent). Resolves
  // to the combined Decision of the state after it.
  async refundAll(refunds, opts = {}) {
    const { tag } = opts;
    if (!Array.isArray(refunds) || refunds.length === 0) throw new TypeError('refundAll needs a non-empty array of refunds');
    const norm = refunds.map((r) => {
      const [limit, identity, amount] = Array.isArray(r) ? r : [r.limit, r.identity, r.amount];
      checkLimit(limit);
      if (limit.isConcurrency) throw new TypeError('a Concurrency limit has no refund: release the lease');
      return { limit, identity, amount: checkCost(amount, 1), cost: 0 };
    });
    const keys = norm.map((c) => c.limit.keyFor(this.prefix, c.identity, tag));
    if (new Set(keys).size !== keys.length) throw new RangeError('refundAll: a key appears twice (same limit name and identity)');
    if (this.backend.cluster && keys.some((k) => keySlot(k) !== keySlot(keys[0]))) {
      throw new CrossSlotError(keys, keys.map(keySlot));
    }
    const specs = norm.map((c) => [...c.limit.spec, 'REFUND', String(c.amount)]);
    const t0 = this.metrics ? hrNow() : 0n;
    let raw;
    try {
      raw = await this.call(this.backend.all(keys, specs, false));
    } catch (err) {
      if (this.metrics && this.metrics.onError) for (const c of norm) this.metrics.onError(c.limit.name, err);
      throw raised(err);
    }
    const d = combine(parseAllReply(raw), norm, keys);
    if (this.metrics) {
      const s = secondsSince(t0);
      for (const sub of d.decisions) this.metrics.onDecision(sub.name, sub, s);
    }
    return d;
  }

  // --- the failure policy -------------------------------------------------------

  policyOf(limit) {
    return limit.onError ?? this.onError;
  }

  // mode: "consume" (check), "hold" (acquire: a Local slot is held until
  // the Lease is released), "peek" (a Local policy answers open).
  failed(limit, key, cost, err, t0, mode) {
    if (this.metrics && this.metrics.onError) this.metrics.onError(limit.name, err);
    if (!isUnavailable(err)) throw raised(err);
    const d = this.fallbackDecision(limit, key, cost, err, mode);
    this.activated(limit, err, d, t0);
    return d;
  }

  failedAll(checks, keys, err, t0, peek) {
    if (this.metrics && this.metrics.onError) for (const c of checks) this.metrics.onError(c.limit.name, err);
    if (!isUnavailable(err)) throw raised(err);
    // Each limit answers by its own policy; closed beats local beats open.
    const subs = checks.map((c, i) => this.fallbackDecision(c.limit, keys[i], c.cost, err, peek ? 'peek' : 'consume'));
    const closed = subs.find((s) => s.source === 'fail_closed');
    let d;
    if (closed) {
      d = new Decision({ allowed: false, limit: closed.limit, remaining: 0, retryAfterMs: 1000, resetAfterMs: 0 },
        closed.policy, closed.key, closed.cost, 'fail_closed', err);
      d.decisions = subs;
      d.deniedBy = [closed];
    } else {
      const parsed = {
        allowed: subs.every((s) => s.allowed),
        retryAfterMs: subs.some((s) => s.never) ? -1 : Math.max(0, ...subs.filter((s) => !s.allowed).map((s) => s.retryAfterMs)),
        limits: subs,
      };
      d = combine(parsed, checks, keys);
      d.decisions.forEach((x, i) => { x.source = subs[i].source; x.error = err; });
      d.source = subs.some((s) => s.source === 'local') ? 'local' : 'fail_open';
      d.error = err;
    }
    for (let i = 0; i < checks.length; i++) this.activated(checks[i].limit, err, subs[i], t0);
    return d;
  }

  fallbackDecision(limit, key, cost, err, mode) {
    const policy = this.policyOf(limit);
    if (policy === 'closed') {
      return new Decision({ allowed: false, limit: limit.quota, remaining: 0, retryAfterMs: 1000, resetAfterMs: 0 },
        limit, key, cost, 'fail_closed', err);
    }
    if (policy instanceof Local && mode !== 'peek') {
      let perKey = this.locals.get(limit);
      if (!perKey) this.locals.set(limit, (perKey = new Map()));
      let local = perKey.get(key);
      if (!local) {
        if (perKey.size >= LOCAL_MAX_KEYS) perKey.delete(perKey.keys().next().value); // the oldest
        perKey.set(key, (local = limit.localFor(policy.share)));
      }
      const r = limit.isConcurrency ? local.take(cost, limit.leaseMs) : local.take(cost);
      const d = new Decision(r, limit, key, cost, 'local', err);
      if (limit.isConcurrency && r.allowed) {
        // Only a Lease (acquire) gives a local slot back; elsewhere it is not held.
        if (mode === 'hold') d.localSemaphore = local;
        else local.give(cost);
      }
      return d;
    }
    return new Decision({ allowed: true, limit: limit.quota, remaining: 0, retryAfterMs: 0, resetAfterMs: 0 },
      limit, key, cost, 'fail_open', err);
  }

  activated(limit, err, d, t0) {
    const policy = d.source === 'fail_closed' ? 'closed' : d.source === 'local' ? 'local' : 'open';
    this.fallbacks.total++;
    this.fallbacks[policy]++;
    if (!this.degraded) {
      this.degraded = true;
      if (this.logger) this.logger.warn(`redis-rl: Redis unavailable (${err.name}: ${err.message}); limit "${limit.name}" fails ${policy}`);
    }
    if (this.metrics) {
      if (this.metrics.onFallback) this.metrics.onFallback(limit.name, policy, err);
      this.metrics.onDecision(limit.name, d, secondsSince(t0));
    }
    if (this.onFallback) {
      try {
        this.onFallback(limit, err, d);
      } catch (hookErr) {
        if (this.logger) this.logger.error('redis-rl: onFallback hook threw', hookErr);
      }
    }
  }

  recovered() {
    this.degraded = false;
    if (this.logger) this.logger.warn('redis-rl: Redis answers again');
  }

  // --- leases -----------------------------------------------------------------------

  // A Concurrency lease. Resolves to a Lease (a Decision with release()) when
  // allowed, or to the denied Decision (its `lease` null). The lease id is
  // made here (a random UUID) unless `id` is given, so an acquire whose reply
  // is lost to a timeout is released too.
  async acquire(limit, identity, opts = {}) {
    const { cost = 1, renewEveryMs = null, onLost = null } = opts;
    checkLimit(limit);
    if (!limit.isConcurrency) throw new TypeError('acquire needs a Concurrency limit');
    checkCost(cost, 1);
    const id = opts.id ?? randomUUID();
    const key = limit.keyFor(this.prefix, identity, undefined);
    const d = await this.run(limit, key, cost, () => this.backend.check(limit, key, limit.args(cost, id)), 'hold');
    // A timed-out acquire may still have been applied: release its id, once.
    if (d.error instanceof RedisTimeoutError) this.call(this.backend.release(key, id)).catch(() => {});
    if (!d.allowed) return d;
    if (d.source === 'redis') {
      if (d.lease === null) d.lease = String(id);
    } else {
      d.lease = null; // not in Redis: nothing to release there (a local slot is given back)
    }
    return new Lease(this, d, id, { renewEveryMs, onLost });
  }

  // Runs fn(lease) holding a lease, and releases it on every exit path: return,
  // throw, opts.signal aborted, opts.timeoutMs passed, or the lease lost (then
  // fn's promise is abandoned and withLease rejects). fn should honour
  // lease.signal, which aborts in those cases. A denied acquire rejects with
  // RateLimited(decision).
  async withLease(limit, identity, fn, opts = {}) {
    const { signal, timeoutMs } = opts;
    if (signal && signal.aborted) throw signal.reason ?? new Error('aborted');
    const lease = await this.acquire(limit, identity, opts);
    if (!(lease instanceof Lease)) throw new RateLimited(lease);
    const cleanups = [];
    try {
      if (signal && signal.aborted) throw signal.reason ?? new Error('aborted');
      const stop = new Promise((_, reject) => {
        const onAbort = (reason) => { lease.abort(reason); reject(reason); };
        if (signal) {
          const h = () => onAbort(signal.reason ?? new Error('aborted'));
          signal.addEventListener('abort', h, { once: true });
          cleanups.push(() => signal.removeEventListener('abort', h));
        }
        if (timeoutMs) {
          const t = setTimeout(() => onAbort(new DOMException(`withLease: ${timeoutMs} ms passed`, 'TimeoutError')), timeoutMs);
          cleanups.push(() => clearTimeout(t));
        }
        const l = () => onAbort(new LeaseLostError(lease));
        lease.lostHandlers.push(l);
      });
      stop.catch(() => {});
      return await Promise.race([Promise.resolve().then(() => fn(lease)), stop]);
    } finally {
      for (const c of cleanups) c();
      await lease.release();
    }
  }

  // End a lease by id (low level, e.g. for a lease from checkAll: pass its
  // {tag}; Lease.release() does this once for you). true if a live lease ended.
  async release(limit, identity, id, opts) {
    checkLimit(limit);
    const key = limit.keyFor(this.prefix, identity, opts && opts.tag);
    return Number(await this.call(this.backend.release(key, id))) === 1;
  }

  // --- reserve, then settle ----------------------------------------------------------

  // Consume maxCost now; settle(actual) later refunds maxCost - actual, once.
  async reserve(limit, identity, maxCost) {
    checkLimit(limit);
    if (limit.isConcurrency) throw new TypeError('reserve needs a rate limit or quota, not a Concurrency limit');
    checkCost(maxCost, 1);
    const d = await this.check(limit, identity, maxCost);
    return new Reservation(this, limit, identity, maxCost, d);
  }

  // Runs fn(reservation) and settles after it, on every exit path: what fn
  // settled stands; if fn did not settle, maxCost stays consumed (no refund:
  // the work may have used it all). A denied reservation rejects with RateLimited.
  async withReservation(limit, identity, maxCost, fn) {
    const r = await this.reserve(limit, identity, maxCost);
    if (!r.allowed) throw new RateLimited(r.decision);
    try {
      return await fn(r);
    } finally {
      await r.settle(maxCost);
    }
  }
}

class Lease extends Decision {
  constructor(limiter, d, id, { renewEveryMs, onLost }) {
    super(d, d.policy, d.key, d.cost, d.source, d.error);
    this.id = String(id);
    this.lost = false;
    this.released = false;
    this.limiter = limiter;
    this.localSemaphore = d.localSemaphore ?? null;
    this.onLost = onLost;
    this.lostHandlers = [];
    this.controller = new AbortController();
    this.signal = this.controller.signal;
    this.releasing = null;
    this.renewErrorLogged = false;
    this.timer = null;
    if (renewEveryMs && this.source === 'redis') {
      this.timer = setInterval(() => this.renew().catch(() => {}), renewEveryMs);
      if (this.timer.unref) this.timer.unref();
    }
  }

  abort(reason) {
    if (!this.signal.aborted) this.controller.abort(reason);
  }

  // RL.RENEW: true if the lease is still live. Answering 0 marks it lost.
  async renew() {
    if (this.released || this.lost || this.source !== 'redis') return !this.lost && !this.released;
    let ok;
    try {
      ok = Number(await this.limiter.call(this.limiter.backend.renew(this.key, this.id, this.policy.leaseMs))) === 1;
    } catch (err) {
      // Logged once per lease; the renewer keeps trying (a renewal is idempotent).
      if (!this.renewErrorLogged && this.limiter.logger) {
        this.renewErrorLogged = true;
        this.limiter.logger.warn(`redis-rl: renewing lease on "${this.name}" failed: ${err.message}`);
      }
      throw err;
    }
    if (!ok && !this.released) this.markLost();
    return ok;
  }

  markLost() {
    if (this.lost) return;
    this.lost = true;
    this.stopTimer();
    const err = new LeaseLostError(this);
    this.abort(err);
    for (const h of this.lostHandlers) h(err);
    if (this.onLost) {
      try {
        this.onLost(this);
      } catch (e) {
        if (this.limiter.logger) this.limiter.logger.error('redis-rl: onLost threw', e);
      }
    }
  }

  stopTimer() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  // Ends the lease: RL.RELEASE once (idempotent: later calls answer the same
  // promise). Resolves true if a live lease was ended. A release that fails
  // is logged once and not retried (the lease expires by itself).
  release() {
    if (this.releasing) return this.releasing;
    this.released = true;
    this.stopTimer();
    if (this.source !== 'redis') {
      if (this.localSemaphore) this.localSemaphore.give(this.cost);
      this.releasing = Promise.resolve(this.source === 'local');
      return this.releasing;
    }
    const l = this.limiter;
    this.releasing = l.call(l.backend.release(this.key, this.id)).then(
      (n) => Number(n) === 1,
      (err) => {
        if (l.logger) l.logger.warn(`redis-rl: releasing lease on "${this.name}" failed (${err.message}); it expires in at most ${this.policy.leaseMs} ms`);
        return false;
      });
    return this.releasing;
  }
}

class Reservation {
  constructor(limiter, limit, identity, maxCost, decision) {
    Object.assign(this, { limiter, limit, identity, maxCost, decision, settled: null });
  }

  get allowed() {
    return this.decision.allowed;
  }

  // Refunds maxCost - actual, exactly once: later calls answer the first
  // call's promise, whatever their argument. Never retried (a refund is not
  // idempotent): if it fails, the units stay consumed (stricter, never
  // looser) and it is logged. actual > maxCost charges the excess as far as
  // it fits. Resolves to the Decision of the refund (or charge), or null when
  // nothing was sent.
  settle(actual) {
    if (this.settled) return this.settled;
    if (!Number.isSafeInteger(actual) || actual < 0) throw new RangeError('actual must be a non-negative integer');
    const { limiter: l, limit, identity, maxCost, decision } = this;
    if (!decision.allowed || decision.source !== 'redis' || actual === maxCost) {
      this.settled = Promise.resolve(null);
      return this.settled;
    }
    const work = async () => {
      if (actual < maxCost) return l.refund(limit, identity, maxCost - actual);
      const excess = actual - maxCost;
      const d = await l.check(limit, identity, Math.min(excess, limit.quota));
      if (d.allowed || d.source !== 'redis' || d.remaining === 0) return d;
      return l.check(limit, identity, d.remaining); // drain what is left
    };
    this.settled = work().catch((err) => {
      if (l.logger) l.logger.warn(`redis-rl: settling a reservation on "${limit.name}" failed (${err.message}); not retried`);
      return null;
    });
    return this.settled;
  }
}

module.exports = { Limiter, Lease, Reservation, isUnavailable, DEFAULT_TIMEOUT_MS };
