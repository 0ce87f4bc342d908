// Client side: retry 429 and 503 answers politely.
//
// - Retry-After is a floor: retrying sooner is certain to be refused again.
// - On top of it, "full jitter" (AWS Architecture Blog, "Exponential Backoff
//   And Jitter"): sleep = random_between(0, min(cap, base * 2 ** attempt)).
//   We add the jitter to Retry-After instead of taking max(Retry-After,
//   jitter): with max, every client told "Retry-After: 3" would wake at the
//   same instant and collide again.
// - At most maxRetries retries per call, and none when Retry-After is longer
//   than maxWaitS (hand the 429 to the caller instead of blocking it for
//   twenty minutes).
// - A retry budget shared by all calls (like gRPC's retry throttling): each
//   call earns a tenth of a retry, each retry spends one. When the server is
//   overloaded, clients add at most ~10% more load instead of multiplying it.
//
// The random source, the sleep and the clock are parameters, so tests run
// instantly and deterministically.

import { parseRetryAfter, retry } from 'redis-rl';

export { parseRetryAfter }; // seconds from delta-seconds or an HTTP-date; null if absent or unreadable

export const RETRYABLE = new Set([429, 503]);

// A token bucket of retries shared by every call of a client. Each call
// deposits percent/100 of a retry, each retry withdraws one, and at most
// `burst` retries are banked (it starts full). So over time retries stay at
// or under percent% of calls. Counted in hundredths, in integers: ten calls
// at 10% earn exactly one retry (0.1 * 10 is not 1.0 in floats).
export class RetryBudget {
  constructor({ percent = 10, burst = 10 } = {}) {
    this.percent = percent;
    this.max = burst * 100;
    this.credits = this.max;
  }

  onCall() {
    this.credits = Math.min(this.max, this.credits + this.percent);
  }

  trySpend() {
    if (this.credits < 100) return false;
    this.credits -= 100;
    return true;
  }

  get available() {
    return this.credits / 100;
  }
}

const realSleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

// The loop is redis-rl's retry(): Retry-After as the floor, full jitter on
// top (in whole ms), at most maxRetries retries, none past maxWaitS, and the
// budget asked only for a retry that will happen. This client keeps its own
// budget, in process (redis-rl's RetryBudget shares one through Redis).
export class RetryingClient {
  // send(...args) -> Promise<{ status, headers (lower-case names), body }>
  constructor(send, {
    budget = new RetryBudget(),
    maxRetries = 3,
    baseS = 0.1,
    capS = 10,
    maxWaitS = 30,
    rand = Math.random,
    sleep = realSleep,
    now = Date.now,
  } = {}) {
    Object.assign(this, { send, budget, maxRetries, baseS, capS, maxWaitS, rand, sleep, now });
  }

  // send(...args), retried as described above; resolves to the last response.
  call(...args) {
    const { budget } = this;
    return retry(() => this.send(...args), {
      maxAttempts: this.maxRetries + 1,
      baseMs: this.baseS * 1000,
      capMs: this.capS * 1000,
      maxWaitMs: this.maxWaitS * 1000,
      rand: this.rand,
      sleep: (ms) => this.sleep(ms / 1000),
      budget: { deposit: () => budget.onCall(), trySpend: () => budget.trySpend() },
      retryAfter: (r) => (RETRYABLE.has(r.status)
        ? Math.ceil((parseRetryAfter(r.headers['retry-after'], this.now) ?? 0) * 1000) : null),
    });
  }
}

// One HTTP request with fetch; resolves to { status, headers, body } whatever the status.
export async function sendHttp(method, url, headers = {}, body = undefined) {
  const res = await fetch(url, { method, headers, body });
  return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
}
