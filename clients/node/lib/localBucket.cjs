'use strict';
// In-process limiters for the "local" failure policy: used only while Redis
// is unreachable. GCRA in integer microseconds on a monotonic clock (the
// schedule RL.GCRA keeps), and a counting semaphore for Concurrency.

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

class LocalBucket {
  // `capacity` units, refilled evenly: all of them over `fillMs`.
  constructor(capacity, fillMs, clock = monotonicUs) {
    if (!(Number.isSafeInteger(capacity) && capacity >= 1)) throw new RangeError('capacity must be an integer >= 1');
    if (!(Number.isSafeInteger(fillMs) && fillMs >= 1)) throw new RangeError('fillMs must be an integer >= 1');
    this.capacity = capacity;
    this.intervalUs = Math.max(1, Math.ceil((fillMs * 1000) / capacity));
    this.clock = clock;
    this.fullAtUs = null;
  }

  take(cost = 1) {
    const now = this.clock();
    const span = this.capacity * this.intervalUs;
    const fullAt = Math.max(this.fullAtUs ?? now, now);
    const reply = (allowed, at, retryAfterMs) => ({
      allowed,
      limit: this.capacity,
      remaining: Math.floor((span - (at - now)) / this.intervalUs),
      retryAfterMs,
      resetAfterMs: Math.ceil((at - now) / 1000),
      lease: null,
    });
    if (cost > this.capacity) return reply(false, fullAt, -1);
    const newFullAt = fullAt + cost * this.intervalUs;
    if (newFullAt - now <= span) {
      this.fullAtUs = newFullAt;
      return reply(true, newFullAt, 0);
    }
    return reply(false, fullAt, Math.ceil((newFullAt - span - now) / 1000));
  }
}

class LocalSemaphore {
  constructor(capacity) {
    this.capacity = capacity;
    this.held = 0;
  }

  take(cost, leaseMs) {
    const fits = this.held + cost <= this.capacity;
    if (fits) this.held += cost;
    return {
      allowed: fits,
      limit: this.capacity,
      remaining: this.capacity - this.held,
      retryAfterMs: cost > this.capacity ? -1 : fits ? 0 : leaseMs,
      resetAfterMs: this.held > 0 ? leaseMs : 0,
      lease: null,
    };
  }

  give(cost) {
    this.held = Math.max(0, this.held - cost);
  }
}

module.exports = { LocalBucket, LocalSemaphore, monotonicUs };
