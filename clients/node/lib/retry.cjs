'use strict';
// Retries on the caller's side: honour Retry-After / retryAfterMs, add full
// jitter (random between 0 and min(cap, base * 2^attempt), AWS "Exponential
// Backoff And Jitter"), and spend a shared RetryBudget so that a fleet
// retries at most about `ratio` of its traffic.

const { TokenBucket } = require('./limits.cjs');
const { RateLimited } = require('./errors.cjs');

// A retry budget shared through Redis: a TOKENBUCKET of `burst` retries where
// each request deposits `ratio` of a retry (REFUND) and each retry spends one
// (COST), counted in 1/scale units so deposits stay integers. A new budget
// starts full; time alone refills it only by a trickle (one unit per refill
// period, the bucket's fill time being 10^12 ms). If Redis cannot be reached,
// trySpend() answers false: no retries while the limiter itself is down.
class RetryBudget {
  constructor(limiter, name = 'retry-budget', opts = {}) {
    if (typeof name === 'object' && name !== null) {
      opts = name;
      name = opts.name ?? 'retry-budget';
    }
    const { ratio = 0.1, burst = 10, scale = 1000, identity = 'fleet' } = opts;
    if (!(ratio > 0 && ratio <= 1)) throw new RangeError('ratio must be in (0, 1]');
    if (!(Number.isSafeInteger(burst) && burst >= 1 && Number.isSafeInteger(scale) && scale >= 1)) {
      throw new RangeError('burst and scale must be integers of at least 1');
    }
    this.limiter = limiter;
    this.name = name;
    this.ratio = ratio;
    this.scale = scale;
    this.identity = identity;
    this.depositUnits = Math.max(1, Math.round(ratio * scale));
    const capacity = burst * scale;
    this.limit = new TokenBucket(capacity, 1, Math.max(1, Math.floor(1e12 / capacity)), { name, onError: 'closed' });
  }

  // One request made: deposit ratio of a retry. Errors are swallowed (a lost
  // deposit only makes the budget stricter).
  async deposit() {
    try {
      await this.limiter.refund(this.limit, this.identity, this.depositUnits);
    } catch {
      /* stricter, never looser */
    }
  }

  // One retry: true if the budget had one (and it is spent).
  async trySpend() {
    try {
      const d = await this.limiter.check(this.limit, this.identity, this.scale);
      return d.allowed && d.source === 'redis';
    } catch {
      return false;
    }
  }

  // Retries banked now (reads, consumes nothing).
  async available() {
    const d = await this.limiter.peek(this.limit, this.identity, 0);
    return d.remaining / this.scale;
  }
}

// Seconds from delta-seconds ("120") or an HTTP-date; null if absent or unreadable.
function parseRetryAfter(value, now = Date.now) {
  if (value === null || value === undefined) return null;
  const v = String(value).trim();
  if (/^\d+$/.test(v)) return Number(v);
  if (!/GMT$/.test(v)) return null;
  const when = Date.parse(v);
  if (Number.isNaN(when)) return null;
  return Math.max(0, (when - now()) / 1000);
}

function header(headers, name) {
  if (!headers) return undefined;
  if (typeof headers.get === 'function') return headers.get(name) ?? undefined;
  const lower = name.toLowerCase();
  for (const k of Object.keys(headers)) if (k.toLowerCase() === lower) return headers[k];
  return undefined;
}

// How long the server asks us to wait, in ms, if `outcome` (a value or an
// error) is worth retrying; null if not. Retried: RateLimited (its
// retryAfterMs, never if -1), a response-like {status: 429 | 503, headers}
// (fetch Response or plain object, Retry-After honoured), an error with a
// numeric retryAfterMs.
function defaultRetryAfter(outcome) {
  const isError = outcome instanceof Error;
  if (outcome instanceof RateLimited) return outcome.retryAfterMs >= 0 ? outcome.retryAfterMs : null;
  if (outcome && typeof outcome === 'object') {
    if (typeof outcome.status === 'number') {
      if (outcome.status !== 429 && outcome.status !== 503) return null;
      const s = parseRetryAfter(header(outcome.headers, 'retry-after'));
      return s === null ? 0 : Math.ceil(s * 1000);
    }
    if (isError && typeof outcome.retryAfterMs === 'number') return outcome.retryAfterMs >= 0 ? outcome.retryAfterMs : null;
  }
  return null;
}

const realSleep = (ms, signal) => new Promise((resolve, reject) => {
  if (signal && signal.aborted) return reject(signal.reason);
  const t = setTimeout(() => { if (signal) signal.removeEventListener('abort', onAbort); resolve(); }, ms);
  const onAbort = () => { clearTimeout(t); reject(signal.reason); };
  if (signal) signal.addEventListener('abort', onAbort, { once: true });
});

// Calls fn(attempt) until it succeeds or is not worth retrying: at most
// maxAttempts calls; no retry when the server asks for more than maxWaitMs,
// or the budget is spent. Resolves to fn's last value; rejects with its last
// error.
async function retry(fn, opts = {}) {
  const {
    budget = null, maxAttempts = 3, baseMs = 100, capMs = 10000, maxWaitMs = 30000, signal,
    rand = Math.random, sleep = realSleep, retryAfter = defaultRetryAfter,
  } = opts;
  if (!(Number.isSafeInteger(maxAttempts) && maxAttempts >= 1)) throw new RangeError('maxAttempts must be at least 1');
  if (budget) await budget.deposit();
  for (let attempt = 0; ; attempt++) {
    let value;
    let error;
    let failed = false;
    try {
      value = await fn(attempt);
    } catch (e) {
      error = e;
      failed = true;
    }
    const outcome = failed ? error : value;
    const floor = attempt + 1 < maxAttempts ? retryAfter(outcome) : null;
    if (floor === null || floor > maxWaitMs || (budget && !(await budget.trySpend()))) {
      if (failed) throw error;
      return value;
    }
    // Retry-After is a floor; jitter goes on top so clients told the same
    // Retry-After do not all wake at once.
    await sleep(floor + Math.floor(rand() * Math.min(capMs, baseMs * 2 ** attempt)), signal);
  }
}

module.exports = { retry, RetryBudget, parseRetryAfter, defaultRetryAfter };
