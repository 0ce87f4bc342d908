'use strict';
// The entry point: new Limiter(client, {prefix, onError, timeoutMs, metrics, backend}).

const { randomUUID } = require('node:crypto');
const { Decision, parseReply, parseAllReply, combine } = require('./decision.cjs');
const { makeBackend, ModuleBackend, AutoBackend } = require('./backend.cjs');
const { keySlot } = require('./crc16.cjs');
const { Limit, Local, checkPolicy } = require('./limits.cjs');
const {
  RateLimited, CrossSlotError, RedisTimeoutError, LeaseLostError, ModuleNotLoadedError, NotDurableError, ParameterConflictError,
  NotSupportedError,
} = require('./errors.cjs');

const DEFAULT_TIMEOUT_MS = 100;
// How late a server may answer a timed-out WAIT (see callDurable).
const WAIT_SLACK_MS = 100;
const LOCAL_MAX_KEYS = 10000; // in-process stand-ins kept per limit under the Local policy
// At most this many limit names (or key functions) have their parameters remembered per Limiter.
const limits = { MAX_PARAM_NAMES: 10000 };

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

// The Lua library's refusal of WAIT / MAXWAIT ("ERR WAIT is not available in
// the Lua library: a script cannot block").
const LUA_REFUSES = /^ERR (WAIT|MAXWAIT) is not available in the Lua library/;

// What to raise for an error the policy does not answer.
function raised(err) {
  if (isErrorReply(err)) {
    if (UNKNOWN_COMMAND.test(err.message || '')) return new ModuleNotLoadedError(err);
    const m = LUA_REFUSES.exec(err.message || '');
    if (m) return new NotSupportedError(m[1], 'lua', err);
  }
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
// a tick after it was made. The reject function is the one of a promise of
// our own around the call's (wrap), or, for an ioredis command, the
// command's own (add: no promise, no closure per call).
class Deadlines {
  constructor(ms) {
    this.ms = ms;
    this.tickMs = Math.max(1, Math.ceil(ms / 4));
    this.open = [];
    this.due = []; // [at, rejects], oldest first
    this.timer = null;
    this.onTick = () => this.tick();
  }

  // reject(err) is called if the call is not done in time; answers the bucket
  // it went in, at index bucket.length - 1: the caller sets that slot to null
  // once the call is done.
  add(reject) {
    const bucket = this.open;
    bucket.push(reject);
    // Not unref'd: every call settles, and the timer runs only while one is pending.
    if (this.timer === null) this.timer = setInterval(this.onTick, this.tickMs);
    return bucket;
  }

  wrap(promise) {
    return new Promise((resolve, reject) => {
      const bucket = this.add(reject);
      const i = bucket.length - 1;
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

// MAXWAIT: 0 to 10^6 ms, on a Gcra or TokenBucket limit only (checked before any round trip).
const MAX_BOOKING_MS = 1000000;
function checkMaxWait(ms, limits) {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > MAX_BOOKING_MS) {
    throw new RangeError(`maxWaitMs must be an integer from 0 to ${MAX_BOOKING_MS}, got ${ms}`);
  }
  for (const l of limits) {
    if (l.kind !== 'GCRA' && l.kind !== 'TOKENBUCKET') {
      throw new TypeError(`maxWaitMs books a start in a Gcra or TokenBucket limit; "${l.name}" is a ${l.constructor.name} `
        + (l.isConcurrency ? '(wait for a slot with acquire(..., {waitMs}))' : '(it cannot book: check without maxWaitMs)'));
    }
  }
  return ms;
}

// Whether an RL.ACQUIRE reply granted a lease (an unreadable one counts as granted).
function grants(reply) {
  try {
    return parseReply(reply, true).allowed;
  } catch {
    return true;
  }
}

// RL.ACQUIRE ... WAIT: 1 to 600,000 ms (0, null or undefined: no waiting).
const MAX_WAIT_MS = 600000;
function checkWait(ms) {
  if (ms === undefined || ms === null || ms === 0) return 0;
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > MAX_WAIT_MS) {
    throw new RangeError(`waitMs must be an integer from 0 to ${MAX_WAIT_MS}, got ${ms}`);
  }
  return ms;
}

const abortReason = (signal) => signal.reason ?? new DOMException('This operation was aborted', 'AbortError');

// Sleeps ms, rejecting with the signal's reason when it aborts first.
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) { reject(abortReason(signal)); return; }
    let onAbort = null;
    const t = setTimeout(() => {
      if (onAbort) signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (signal) {
      onAbort = () => { clearTimeout(t); reject(abortReason(signal)); };
      signal.addEventListener('abort', onAbort, { once: true });
    }
  });
}

function checkLimit(limit) {
  if (!(limit instanceof Limit)) throw new TypeError('expected a limit (Gcra, TokenBucket, Slide, Log, Quota, Concurrency)');
  return limit;
}

// The durable option: true, {replicas = 1, timeoutMs}, or null/false (off).
// timeoutMs defaults to half the Limiter's timeoutMs (50 ms with none) and
// must be below it: the decision and WAIT share one deadline.
function resolveDurable(value, limiterTimeoutMs) {
  if (value === undefined || value === null || value === false) return null;
  const v = value === true ? {} : value;
  if (typeof v !== 'object') throw new TypeError('durable must be true, false, null or {replicas, timeoutMs}');
  const replicas = v.replicas ?? 1;
  if (!Number.isSafeInteger(replicas) || replicas < 1) throw new RangeError('durable.replicas must be an integer of at least 1');
  let timeoutMs = v.timeoutMs ?? Math.max(1, Math.floor((limiterTimeoutMs || DEFAULT_TIMEOUT_MS) / 2));
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) throw new RangeError('durable.timeoutMs must be a positive integer');
  if (limiterTimeoutMs && timeoutMs >= limiterTimeoutMs) {
    throw new RangeError(`durable.timeoutMs (${timeoutMs}) must be below the Limiter's timeoutMs (${limiterTimeoutMs}): `
      + 'the WAIT would always end as a timeout');
  }
  return Object.freeze({ replicas, timeoutMs });
}

const hrNow = () => process.hrtime.bigint();
const secondsSince = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;

class Limiter {
  constructor(client, opts = {}) {
    const { prefix = 'rl:', onError = 'closed', timeoutMs = DEFAULT_TIMEOUT_MS, metrics = null, backend, onFallback = null,
      logger = console, durable = null, strictParams = true, blockingClient = null } = opts;
    if (typeof prefix !== 'string') throw new TypeError('prefix must be a string');
    if (timeoutMs !== null && timeoutMs !== 0 && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
      throw new RangeError('timeoutMs must be a positive number (or 0/null: no timeout)');
    }
    this.client = client;
    this.backend = makeBackend(backend, client);
    // Acquires with waitMs go over this client when given (a connection of
    // their own: a blocked call holds its connection); everything else,
    // releases included, over `client`.
    this.blocking = blockingClient ? new ModuleBackend(blockingClient) : null;
    this.prefix = prefix;
    this.onError = checkPolicy(onError) ?? 'closed';
    this.timeoutMs = timeoutMs || 0;
    this.deadlines = this.timeoutMs ? new Deadlines(this.timeoutMs) : null;
    // The backend can start a command whose own promise the timeout rejects
    // (ioredis): check() and checkAll() then use it.
    this.startable = typeof this.backend.start === 'function' && typeof this.backend.startAll === 'function';
    this.metrics = metrics;
    this.onFallback = onFallback;
    this.logger = logger;
    // Counters of the failure policy's activations (also per policy).
    this.fallbacks = { total: 0, open: 0, closed: 0, local: 0 };
    this.degraded = false; // Redis failing now (logged once per outage)
    this.locals = new Map(); // Limit -> Map(key -> local stand-in)
    // The strict mode: after each call that writes, WAIT in the same pipeline.
    this.durable = resolveDurable(durable, this.timeoutMs);
    if (this.durable && !this.backend.waits) throw new TypeError('redis-rl: durable needs a backend that takes `wait` (module, lua, auto)');
    this.durableFailures = 0; // writes too few replicas acknowledged in time
    this.undurable = false; // logged once per streak
    // One name, one set of parameters: true raises ParameterConflictError,
    // false logs a warning once per name.
    this.strictParams = strictParams !== false;
    this.checkedLimits = new Set(); // limits already checked against declared (the hot path: one lookup)
    this.declared = new Map(); // limit name (or its key function) -> the limit whose parameters were sent
    this.warnedNames = new Set();
    this.declaredFull = false;
  }

  // A call's durable option (undefined: the Limiter's) -> {replicas, timeoutMs} or null.
  pickDurable(v) {
    if (v === undefined) return this.durable;
    const d = resolveDurable(v, this.timeoutMs);
    if (d && !this.backend.waits) throw new TypeError('redis-rl: durable needs a backend that takes `wait` (module, lua, auto)');
    return d;
  }

  // true when enough replicas acknowledged; else counted and logged (once per streak).
  acked(acks, dur, name) {
    if (acks >= dur.replicas) {
      if (this.undurable) {
        this.undurable = false;
        if (this.logger) this.logger.warn('redis-rl: replicas acknowledge writes again');
      }
      return true;
    }
    this.durableFailures++;
    if (!this.undurable) {
      this.undurable = true;
      if (this.logger) this.logger.warn(`redis-rl: "${name}": ${acks} of ${dur.replicas} replica(s) acknowledged within ${dur.timeoutMs} ms; denied (durable)`);
    }
    return false;
  }

  // An allowed decision whose write was not acknowledged: a denial (503,
  // Retry-After 1), source "durable", error NotDurableError (its .decision:
  // the server's answer). The units stay consumed on the master.
  notDurable(d, acks, dur) {
    const err = new NotDurableError(acks, dur.replicas, d);
    const mk = (x) => new Decision({ allowed: false, limit: x.limit, remaining: 0, retryAfterMs: 1000, resetAfterMs: x.resetAfterMs },
      x.policy, x.key, x.cost, 'durable', err);
    const out = mk(d);
    if (d.decisions) {
      out.decisions = d.decisions.map(mk);
      out.deniedBy = out.decisions;
    }
    // Leases the write took: released, best effort, once, without WAIT.
    for (const x of d.decisions || [d]) {
      if (x.lease != null && x.policy && x.policy.isConcurrency) {
        this.call(this.backend.release(x.key, x.lease)).catch(() => {});
      }
    }
    return out;
  }

  key(limit, identity, tag) {
    return this.keyOf(limit, identity, tag);
  }

  // The key, once the limit's parameters are known to agree with its name's.
  keyOf(limit, identity, tag) {
    if (!this.checkedLimits.has(limit)) this.declare(limit);
    return limit.keyFor(this.prefix, identity, tag);
  }

  declare(limit) {
    checkLimit(limit);
    const ident = limit.keyFn ?? limit.name;
    const prev = this.declared.get(ident);
    const max = limits.MAX_PARAM_NAMES;
    if (prev === undefined) {
      if (this.declared.size >= max) {
        if (!this.declaredFull) {
          this.declaredFull = true;
          if (this.logger) this.logger.warn(`redis-rl: ${max} limit names seen; parameters of further names are not checked`);
        }
        return;
      }
      this.declared.set(ident, limit);
    } else if (prev.kind !== limit.kind || prev.base.length !== limit.base.length
      || prev.base.some((v, i) => v !== limit.base[i])) {
      const err = new ParameterConflictError(limit, prev);
      if (this.strictParams) throw err;
      if (!this.warnedNames.has(ident)) {
        if (this.warnedNames.size < max) this.warnedNames.add(ident);
        const what = limit.keyFn ? `limit "${limit.name}" (its key function)` : `limit "${limit.name}"`;
        if (this.logger) {
          this.logger.warn(`redis-rl: ${what} is now ${limit.describe()}, was ${prev.describe()}: `
            + 'the keys of this name change parameters (strictParams: false; logged once per name)');
        }
      }
      this.declared.set(ident, limit);
    }
    if (this.checkedLimits.size >= max) this.checkedLimits.clear(); // limits made per call: a cache, not a record
    this.checkedLimits.add(limit);
  }

  // A Redis call under the Limiter's timeout.
  call(promise) {
    return this.deadlines === null ? promise : this.deadlines.wrap(promise);
  }

  // A durable call: the command and WAIT replicas timeoutMs, whose answer may
  // come WAIT_SLACK_MS after its own timeout (Redis before 7.2 ends a WAIT's
  // timeout in its cron, every 100 ms at the default hz): the Limiter's
  // timeout runs on past it, so a WAIT that times out on the server is read as
  // too few acknowledgements (a durable denial), not as a lost call.
  callDurable(promise, dur) {
    return this.callWithin(promise, dur.timeoutMs + WAIT_SLACK_MS);
  }

  // A call that may block on the server extraMs: timeoutMs + extraMs, on a
  // timer of its own (rare calls; the coarse Deadlines serve the rest).
  callWithin(promise, extraMs) {
    if (!this.timeoutMs) return promise;
    const ms = this.timeoutMs + extraMs;
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new RedisTimeoutError(ms)), ms);
      promise.then((v) => { clearTimeout(t); resolve(v); }, (e) => { clearTimeout(t); reject(e); });
    });
  }

  // --- single limits ------------------------------------------------------------

  // The limit's own command with COST `cost`; a Concurrency limit acquires a
  // lease (see acquire() for one that is released for you).
  // opts: a cost, or {cost, tag, id, maxWaitMs}; tag places the hash tag as
  // checkAll does. maxWaitMs (Gcra, TokenBucket): MAXWAIT, book a start up to
  // that many ms ahead; allowed with waitMs > 0 means "start in waitMs"
  // (pace() sleeps it for you).
  check(limit, identity, opts) {
    if (this.durable === null && (opts === undefined || typeof opts === 'number')) {
      return this.checkPlain(limit, identity, opts === undefined ? 1 : opts);
    }
    return this.checkWith(limit, identity, opts);
  }

  // check(limit, identity[, cost]) without durable: the hot path, the same
  // steps as checkWith on the call's own promise, without an async function
  // (whose frame and extra promise cost about as much as the rest of it).
  checkPlain(limit, identity, cost) {
    let key;
    let args;
    try {
      if (!(limit instanceof Limit)) checkLimit(limit);
      if (cost !== 1) checkCost(cost);
      key = this.keyOf(limit, identity, undefined);
      args = limit.isConcurrency ? limit.args(cost, undefined) : limit.args(cost);
    } catch (err) {
      return Promise.reject(err);
    }
    const t0 = this.metrics ? hrNow() : 0n;
    let p;
    try {
      let cmd;
      if (this.deadlines !== null && this.startable && (cmd = this.backend.start(limit, key, args)) !== null) {
        // A started command: the timeout rejects its own promise (no promise of ours).
        const bucket = this.deadlines.add(cmd.reject);
        const i = bucket.length - 1;
        return cmd.promise.then((raw) => {
          bucket[i] = null;
          return this.decided(raw, limit, key, cost, t0);
        }, (err) => {
          bucket[i] = null;
          return this.failed(limit, key, cost, err, t0, 'consume');
        });
      }
      p = this.call(this.backend.check(limit, key, args));
    } catch (err) {
      // failed() answers (the policy) or throws (raised): the promise does the same.
      return new Promise((resolve) => { resolve(this.failed(limit, key, cost, err, t0, 'consume')); });
    }
    return p.then((raw) => this.decided(raw, limit, key, cost, t0), (err) => this.failed(limit, key, cost, err, t0, 'consume'));
  }

  // A reply read into the Decision, and what follows every answered call.
  decided(raw, limit, key, cost, t0) {
    const d = Decision.fromReply(raw, limit, key, cost);
    if (this.degraded) this.recovered();
    if (this.metrics) this.metrics.onDecision(limit.name, d, secondsSince(t0));
    return d;
  }

  async checkWith(limit, identity, opts) {
    let cost = 1;
    let tag;
    let id;
    let durable;
    let mode;
    let maxWaitMs;
    if (opts !== undefined) {
      if (typeof opts === 'number') cost = opts;
      else ({ cost = 1, tag, id, durable, mode, maxWaitMs } = opts);
    }
    if (!(limit instanceof Limit)) checkLimit(limit);
    if (cost !== 1) checkCost(cost);
    if (maxWaitMs !== undefined && maxWaitMs !== null) this.checkBooking(maxWaitMs, [limit]);
    const key = this.keyOf(limit, identity, tag);
    let args = limit.isConcurrency ? limit.args(cost, id) : limit.args(cost);
    if (maxWaitMs !== undefined && maxWaitMs !== null) args = [...args, 'MAXWAIT', String(maxWaitMs)];
    const dur = durable === undefined ? this.durable : this.pickDurable(durable);
    const t0 = this.metrics ? hrNow() : 0n;
    let raw;
    let acks = 0;
    let cmd = null;
    try {
      if (dur && cost > 0) [raw, acks] = await this.callDurable(this.backend.check(limit, key, args, dur), dur);
      else if (this.deadlines !== null && this.startable && (cmd = this.backend.start(limit, key, args)) !== null) {
        // A started command: the timeout rejects its own promise (no promise of ours).
        const bucket = this.deadlines.add(cmd.reject);
        const i = bucket.length - 1;
        try {
          raw = await cmd.promise;
        } finally {
          bucket[i] = null;
        }
      } else raw = await this.call(this.backend.check(limit, key, args));
    } catch (err) {
      return this.failed(limit, key, cost, err, t0, mode || 'consume');
    }
    let d = Decision.fromReply(raw, limit, key, cost);
    if (dur && cost > 0 && d.allowed && !this.acked(acks, dur, limit.name)) d = this.notDurable(d, acks, dur);
    if (this.degraded) this.recovered();
    if (this.metrics) this.metrics.onDecision(limit.name, d, secondsSince(t0));
    return d;
  }

  // What check() would answer, without consuming or writing anything (RL.PEEK;
  // works on read-only replicas). {maxWaitMs}: the booking a check would make.
  async peek(limit, identity, opts) {
    const cost = opts === undefined ? 1 : typeof opts === 'number' ? opts : opts.cost ?? 1;
    const maxWaitMs = typeof opts === 'object' && opts !== null ? opts.maxWaitMs : undefined;
    checkLimit(limit);
    checkCost(cost);
    const booking = maxWaitMs !== undefined && maxWaitMs !== null;
    if (booking) this.checkBooking(maxWaitMs, [limit]);
    const key = this.keyOf(limit, identity, typeof opts === 'object' ? opts.tag : undefined);
    const args = booking ? [...limit.args(cost), 'MAXWAIT', String(maxWaitMs)] : limit.args(cost);
    return this.run(limit, key, cost, () => this.backend.peek(limit, key, args), 'peek');
  }

  // maxWaitMs on these limits: its range and kinds, and a backend that books.
  checkBooking(maxWaitMs, limitList) {
    checkMaxWait(maxWaitMs, limitList);
    if (this.backend.name === 'lua') throw new NotSupportedError('MAXWAIT', 'lua');
  }

  // Books `cost` units of a Gcra or TokenBucket limit for the earliest start
  // within opts.maxWaitMs (MAXWAIT), sleeps until that start and resolves to
  // the Decision (its waitMs: how long it slept). Beyond maxWaitMs, or never
  // (cost above the burst), it books nothing and rejects with
  // RateLimited(decision); so does a fail-closed decision. opts.signal
  // aborting while it sleeps gives the booked units back (REFUND, once, best
  // effort) and rejects with the signal's reason. opts: {cost, maxWaitMs
  // (required), signal, tag}.
  async pace(limit, identity, opts = {}) {
    const { cost = 1, maxWaitMs, signal, tag } = opts;
    checkLimit(limit);
    if (maxWaitMs === undefined || maxWaitMs === null) {
      throw new TypeError('pace needs maxWaitMs: the longest it may wait for a start (0 to 1000000 ms)');
    }
    checkCost(cost, 1);
    this.checkBooking(maxWaitMs, [limit]);
    if (signal && signal.aborted) throw abortReason(signal);
    const d = await this.check(limit, identity, { cost, maxWaitMs, tag });
    if (!d.allowed) throw new RateLimited(d);
    try {
      if (signal && signal.aborted) throw abortReason(signal);
      if (d.waitMs > 0) await this.sleep(d.waitMs, signal);
    } catch (err) {
      if (d.source === 'redis') await this.unbook(limit, identity, cost, tag);
      throw err;
    }
    return d;
  }

  // The booked units back, once; a failed refund is logged (the booking then
  // stands: stricter, never looser).
  async unbook(limit, identity, cost, tag) {
    try {
      await this.refund(limit, identity, cost, tag === undefined ? undefined : { tag });
    } catch (err) {
      if (this.logger) this.logger.warn(`redis-rl: giving back a booking on "${limit.name}" failed (${err.message}); not retried`);
    }
  }

  // How pace() waits: sleep(ms, signal) -> a promise that rejects with the
  // signal's reason when it aborts. Replace it (on an instance) to drive time in tests.
  sleep(ms, signal) {
    return sleep(ms, signal);
  }

  // Give `amount` units back (REFUND): the state after the refund, allowed.
  async refund(limit, identity, amount, opts) {
    checkLimit(limit);
    if (limit.isConcurrency) throw new TypeError('a Concurrency limit has no refund: release the lease');
    checkCost(amount, 1);
    const key = this.keyOf(limit, identity, opts && opts.tag);
    const dur = this.pickDurable(opts ? opts.durable : undefined);
    const t0 = this.metrics ? hrNow() : 0n;
    let raw;
    let acks = 0;
    try {
      const args = [...limit.base, 'REFUND', String(amount)];
      if (dur) [raw, acks] = await this.callDurable(this.backend.check(limit, key, args, dur), dur);
      else raw = await this.call(this.backend.check(limit, key, args));
    } catch (err) {
      // No failure policy: a refund that did not happen must not look done.
      if (this.metrics && this.metrics.onError) this.metrics.onError(limit.name, err);
      throw raised(err);
    }
    const d = Decision.fromReply(raw, limit, key, 0);
    // Done on the master, not acknowledged: a failover may undo it (stricter, never looser).
    if (dur && !this.acked(acks, dur, limit.name)) throw new NotDurableError(acks, dur.replicas, d);
    if (this.metrics) this.metrics.onDecision(limit.name, d, secondsSince(t0));
    return d;
  }

  // extraMs: the call may take that much longer than timeoutMs (a wait).
  async run(limit, key, cost, send, mode, extraMs = 0) {
    const t0 = this.metrics ? hrNow() : 0n;
    let raw;
    try {
      raw = await (extraMs ? this.callWithin(send(), extraMs) : this.call(send()));
    } catch (err) {
      return this.failed(limit, key, cost, err, t0, mode);
    }
    return this.decided(raw, limit, key, cost, t0);
  }

  // --- several limits, one decision ---------------------------------------------

  // checks: [[limit, identity], [limit, identity, cost], ...] or
  // [{limit, identity, cost}, ...]. One RL.ALL: all or nothing.
  async checkAll(checks, opts = {}) {
    const { cost = 1, tag, peek = false, durable, maxWaitMs } = opts;
    if (!Array.isArray(checks) || checks.length === 0) throw new TypeError('checkAll needs a non-empty array of checks');
    const booking = maxWaitMs !== undefined && maxWaitMs !== null;
    if (tag !== undefined && (typeof tag !== 'string' || !tag || /[{}]/.test(tag))) {
      throw new TypeError('tag must be a non-empty string without { or }');
    }
    const norm = checks.map((c) => {
      const [limit, identity, c2, id] = Array.isArray(c) ? c : [c.limit, c.identity, c.cost, c.id];
      checkLimit(limit);
      return { limit, identity, cost: checkCost(c2 ?? cost), id };
    });
    if (booking) this.checkBooking(maxWaitMs, norm.map((c) => c.limit));
    const keys = norm.map((c) => this.keyOf(c.limit, c.identity, tag));
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
    // RL.ALL's MAXWAIT follows the last spec (before PEEK): one start for every key.
    if (booking) specs[specs.length - 1].push('MAXWAIT', String(maxWaitMs));
    const dur = peek || !norm.some((c) => c.cost > 0) ? null : this.pickDurable(durable);
    const t0 = this.metrics ? hrNow() : 0n;
    let raw;
    let acks = 0;
    let cmd = null;
    try {
      if (dur) [raw, acks] = await this.callDurable(this.backend.all(keys, specs, false, dur), dur);
      else if (!peek && this.deadlines !== null && this.startable && (cmd = this.backend.startAll(keys, specs)) !== null) {
        // A started command: the timeout rejects its own promise (no promise of ours).
        const bucket = this.deadlines.add(cmd.reject);
        const i = bucket.length - 1;
        try {
          raw = await cmd.promise;
        } finally {
          bucket[i] = null;
        }
      } else raw = await this.call(this.backend.all(keys, specs, peek));
    } catch (err) {
      return this.failedAll(norm, keys, err, t0, peek);
    }
    let d = combine(parseAllReply(raw, norm.map((c) => c.limit.isConcurrency)), norm, keys);
    if (dur && d.allowed && !this.acked(acks, dur, d.name)) d = this.notDurable(d, acks, dur);
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
    const keys = norm.map((c) => this.keyOf(c.limit, c.identity, tag));
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
  // waitMs (1 to 600000; 0/undefined: no waiting): RL.ACQUIRE ... WAIT, the
  // server queues the call (first in, first out per key) until the cost fits
  // (then a Lease) or waitMs passes (then the denial of that instant). The
  // connection is blocked meanwhile, as on BLPOP: give waiting acquires a
  // client of their own. The Limiter's timeoutMs is extended by waitMs.
  // signal: aborting rejects at once with its reason; a lease the server
  // grants afterwards (the blocked call still runs) is released, once.
  async acquire(limit, identity, opts = {}) {
    const { cost = 1, renewEveryMs = null, onLost = null, signal } = opts;
    checkLimit(limit);
    if (!limit.isConcurrency) throw new TypeError('acquire needs a Concurrency limit');
    checkCost(cost, 1);
    const waitMs = checkWait(opts.waitMs);
    const dur = this.pickDurable(opts.durable);
    if (waitMs) this.checkBlocking(waitMs, dur);
    if (signal && signal.aborted) throw abortReason(signal);
    const id = opts.id ?? randomUUID();
    const key = this.keyOf(limit, identity, undefined);
    const sent = performance.now();
    let pending;
    let raw = null; // the server's answer, when it is sent from here (not durable)
    if (dur) {
      pending = this.check(limit, identity, { cost, id, durable: dur, mode: 'hold' }).then((d) => {
        if (d.source === 'redis' && d.allowed && d.lease === null) d.lease = String(id);
        return d;
      });
    } else {
      if (waitMs && this.blocking && this.backend instanceof AutoBackend && !this.backend.chosen) {
        await this.backend.detect(key); // auto: the Lua library cannot wait (NotSupportedError below)
        if (this.backend.name === 'lua') throw new NotSupportedError('WAIT', 'lua');
      }
      const via = waitMs && this.blocking ? this.blocking : this.backend;
      const args = waitMs ? [...limit.args(cost, id), 'WAIT', String(waitMs)] : limit.args(cost, id);
      pending = this.run(limit, key, cost, () => {
        raw = via.check(limit, key, args, undefined, waitMs || undefined);
        return raw;
      }, 'hold', waitMs);
    }
    let d;
    if (signal) {
      let onAbort;
      const aborted = new Promise((_, reject) => {
        onAbort = () => reject(abortReason(signal));
        signal.addEventListener('abort', onAbort, { once: true });
      });
      try {
        d = await Promise.race([pending, aborted]);
      } catch (err) {
        if (!signal.aborted) throw err;
        // Abandoned: once the server has answered (a blocked call still runs
        // there), the id is released, so a lease granted after the abort is
        // given back; a local slot is given back.
        const release = () => this.call(this.backend.release(key, id)).catch((e) => {
          if (this.logger) this.logger.warn(`redis-rl: releasing an abandoned lease on "${limit.name}" failed (${e.message}); it expires by itself`);
        });
        if (raw) raw.then((r) => { if (grants(r)) release(); }, release);
        pending.then((late) => { if (raw === null) this.abandon(late, key, id); else if (late.localSemaphore && late.allowed) late.localSemaphore.give(late.cost); },
          () => {});
        throw err;
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    } else {
      d = await pending;
    }
    // A timed-out acquire may still have been applied: release its id, once
    // (a waiting one when the server has answered it: it may be granted later).
    if (d.error instanceof RedisTimeoutError) {
      const release = () => this.call(this.backend.release(key, id)).catch(() => {});
      if (waitMs && raw) raw.then((r) => { if (grants(r)) release(); }, release);
      else release();
    }
    if (!d.allowed) return d;
    if (d.source === 'redis') {
      if (d.lease === null) d.lease = String(id);
    } else {
      d.lease = null; // not in Redis: nothing to release there (a local slot is given back)
    }
    // A lease that waited runs from its grant, somewhere between sending and
    // now; its validUntil counts from the earliest the grant can have been,
    // taking the reply's way back as at most timeoutMs (stricter, never looser).
    const from = waitMs ? Math.max(sent, performance.now() - (this.timeoutMs || DEFAULT_TIMEOUT_MS)) : sent;
    return new Lease(this, d, id, { renewEveryMs, onLost, durable: dur, sent: from });
  }

  // The answer of an acquire whose caller left (aborted): a granted lease is
  // released, a local slot given back, a lost reply's id released.
  abandon(d, key, id) {
    if (d.allowed && d.source === 'redis') {
      this.call(this.backend.release(key, d.lease ?? id)).catch((err) => {
        if (this.logger) this.logger.warn(`redis-rl: releasing an abandoned lease on "${d.name}" failed (${err.message}); it expires by itself`);
      });
    } else if (d.error instanceof RedisTimeoutError) {
      this.call(this.backend.release(key, id)).catch(() => {});
    } else if (d.allowed && d.localSemaphore) {
      d.localSemaphore.give(d.cost);
    }
  }

  // Before a waiting acquire: a backend that can block, and client timeouts
  // that do not cut the wait.
  checkBlocking(waitMs, dur) {
    if (this.backend.name === 'lua') throw new NotSupportedError('WAIT', 'lua');
    if (dur) throw new TypeError('waitMs and durable do not go together: acquire with waitMs, or durable without it');
    const adapter = (this.blocking || this.backend).adapter;
    const problem = adapter && typeof adapter.blockingProblem === 'function'
      ? adapter.blockingProblem(waitMs + (this.timeoutMs || DEFAULT_TIMEOUT_MS)) : null;
    if (problem) throw new RangeError(`redis-rl: ${problem}`);
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
    const key = limit.keyFor(this.prefix, identity, opts && opts.tag); // no parameters sent
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

// A held lease. validUntil (performance.now() ms): when the acquire or the
// last confirmed renewal was sent, plus leaseMs: the lease cannot be live past
// it unless a renewal confirms it. inDoubt: a renewal failed (an error, or too
// few replicas acknowledged with durable) and none confirmed since, or
// validUntil passed: the slot may be someone else's now; stop the guarded
// work until inDoubt is false again. With the renewer on, passing validUntil
// without a confirmed renewal marks the lease lost (onLost, lease.signal
// aborts) at that moment, even while a renewal hangs.
class Lease extends Decision {
  constructor(limiter, d, id, { renewEveryMs, onLost, durable = null, sent = performance.now() }) {
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
    this.deadline = null;
    this.durable = durable; // {replicas, timeoutMs} of the acquire, renewals and release, or null
    this.validUntil = sent + this.policy.leaseMs;
    this.doubt = false;
    if (renewEveryMs && this.source === 'redis') {
      this.timer = setInterval(() => this.renew().catch(() => {}), renewEveryMs);
      if (this.timer.unref) this.timer.unref();
      this.armDeadline();
    }
  }

  get inDoubt() {
    if (this.lost || this.released || this.source !== 'redis') return false;
    return this.doubt || performance.now() >= this.validUntil;
  }

  get remainingMs() {
    return Math.max(0, Math.floor(this.validUntil - performance.now()));
  }

  armDeadline() {
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = setTimeout(() => {
      this.deadline = null;
      if (this.released || this.lost) return;
      if (performance.now() >= this.validUntil) this.markLost('validUntil passed without a confirmed renewal');
      else this.armDeadline();
    }, Math.max(0, this.validUntil - performance.now()) + 1);
    if (this.deadline.unref) this.deadline.unref();
  }

  abort(reason) {
    if (!this.signal.aborted) this.controller.abort(reason);
  }

  // RL.RENEW: true if the lease is still live. Answering 0 marks it lost, and
  // so does a renewal after validUntil (a lease past its deadline stays lost).
  // An error (with durable, too few acknowledgements: NotDurableError) rejects
  // and leaves the lease in doubt.
  async renew() {
    if (this.released || this.lost || this.source !== 'redis') return !this.lost && !this.released;
    const sent = performance.now();
    if (sent >= this.validUntil) {
      this.markLost('validUntil passed without a confirmed renewal');
      return false;
    }
    const l = this.limiter;
    const dur = this.durable;
    let ok;
    try {
      if (dur) {
        const [n, acks] = await l.callDurable(l.backend.renew(this.key, this.id, this.policy.leaseMs, dur), dur);
        ok = Number(n) === 1;
        if (ok && !l.acked(acks, dur, this.name)) throw new NotDurableError(acks, dur.replicas);
      } else {
        ok = Number(await l.call(l.backend.renew(this.key, this.id, this.policy.leaseMs))) === 1;
      }
    } catch (err) {
      this.doubt = true;
      // Logged once per lease; the renewer keeps trying (a renewal is idempotent).
      if (!this.renewErrorLogged && l.logger) {
        this.renewErrorLogged = true;
        l.logger.warn(`redis-rl: renewing lease on "${this.name}" failed: ${err.message}; in doubt until a renewal confirms it`);
      }
      throw err;
    }
    if (ok) {
      if (this.lost) return false;
      this.validUntil = Math.max(this.validUntil, sent + this.policy.leaseMs);
      this.doubt = false;
      if (this.deadline) this.armDeadline();
    } else if (!this.released) {
      this.markLost();
    }
    return ok;
  }

  markLost(why = 'RL.RENEW answered 0') {
    if (this.lost) return;
    this.lost = true;
    this.stopTimer();
    if (this.limiter.logger) this.limiter.logger.warn(`redis-rl: lease on "${this.name}" lost (${why})`);
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
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = null;
  }

  // Ends the lease: RL.RELEASE once (idempotent: later calls answer the same
  // promise). Resolves true if a live lease was ended. A release that fails
  // is logged once and not retried (the lease expires by itself). With
  // durable, WAIT follows; a release not acknowledged only leaves a ghost
  // lease (fewer holders, never more), so it still counts as done.
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
    const p = this.durable
      ? l.callDurable(l.backend.release(this.key, this.id, this.durable), this.durable).then(([n]) => n)
      : l.call(l.backend.release(this.key, this.id));
    this.releasing = p.then(
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
      if (err instanceof NotDurableError) { // done on the master, not acknowledged: never retried
        if (l.logger) l.logger.warn(`redis-rl: settling a reservation on "${limit.name}": ${err.message}`);
        return err.decision;
      }
      if (l.logger) l.logger.warn(`redis-rl: settling a reservation on "${limit.name}" failed (${err.message}); not retried`);
      return null;
    });
    return this.settled;
  }
}

module.exports = { paramLimits: limits, Limiter, Lease, Reservation, isUnavailable, resolveDurable, DEFAULT_TIMEOUT_MS };
