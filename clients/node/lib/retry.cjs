'use strict';
// Retries on the caller's side: honour Retry-After / retryAfterMs, add full
// jitter (random between 0 and min(cap, base * 2^attempt), AWS "Exponential
// Backoff And Jitter"), and spend a shared RetryBudget so that a fleet
// retries at most about `ratio` of its traffic.

const { TokenBucket } = require('./limits.cjs');
const { RateLimited } = require('./errors.cjs');

const SCALE = 1000; // budget units per retry: deposits of ratio * 1000 stay integers

// A retry budget shared through Redis: a TOKENBUCKET of `burst` retries where
// each request deposits `ratio` of a retry (REFUND) and each retry spends one
// (COST). It refills by itself only at minPerSecond retries per second.
class RetryBudget {
  constructor(limiter, name, opts = {}) {
    const { ratio = 0.1, burst = 10, minPerSecond = 0 } = opts;
    if (!(ratio > 0 && ratio <= 1)) throw new RangeError('ratio must be in (0, 1]');
    if (!(Number.isSafeInteger(burst) && burst >= 1)) throw new RangeError('burst must be an integer >= 1');
    if (typeof name !== 'string' || !name) throw new TypeError('a RetryBudget needs a name');
    this.limiter = limiter;
    this.name = name;
    this.ratio = ratio;
    this.deposit_ = Math.max(1, Math.round(ratio * SCALE));
    const refill = minPerSecond > 0 ? [Math.max(1, Math.round(minPerSecond * SCALE)), 1000] : [1, 3600000];
    // A failing Redis grants no retry: retrying blind is how storms start.
    this.bucket = new TokenBucket(burst * SCALE, refill[0], refill[1], { name: `retry-budget-${name}`, onError: 'closed' });
  }

  // One request made: deposit ratio of a retry. Errors are swallowed (a lost
  // deposit only makes the budget stricter).
  async deposit() {
    try {
      await this.limiter.refund(this.bucket, this.name, this.deposit_);
    } catch {
      /* stricter, never looser */
    }
  }

  // One retry: true if the budget allowed it (and it was spent).
  async trySpend() {
    try {
      const d = await this.limiter.check(this.bucket, this.name, SCALE);
      return d.allowed && d.source === 'redis';
    } catch {
      return false;
    }
  }

  // Retries available now (a PEEK).
  async available() {
    const d = await this.limiter.peek(this.bucket, this.name, { cost: 0 });
    return d.remaining / SCALE;
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
function defaultRetryAfterMs(outcome, isError) {
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
    random = Math.random, sleep = realSleep, retryAfterMs = defaultRetryAfterMs,
  } = opts;
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
    const floor = attempt + 1 < maxAttempts ? retryAfterMs(outcome, failed) : null;
    if (floor === null || floor > maxWaitMs || (budget && !(await budget.trySpend()))) {
      if (failed) throw error;
      return value;
    }
    // Retry-After is a floor; jitter goes on top so clients told the same
    // Retry-After do not all wake at once.
    await sleep(floor + Math.floor(random() * Math.min(capMs, baseMs * 2 ** attempt)), signal);
  }
}

module.exports = { retry, RetryBudget, parseRetryAfter, defaultRetryAfterMs };
