// A tiny in-process limiter: the fallback while Redis is unreachable.
//
// It answers with the same five fields as the module's commands (allowed,
// limit, remaining, retryAfterMs, resetAfterMs), so the service turns its
// answer into HTTP headers with the same code as a Redis answer.
//
// It is GCRA in integer microseconds, the schedule RL.GCRA and RL.TOKENBUCKET
// keep: the one stored number is the moment the bucket is full again. The
// clock is injectable so tests never sleep.

const ceilDiv = (a, b) => Math.ceil(a / b); // exact: all values are integers far below 2^53

// Microseconds from a monotonic clock: a wall-clock jump must not refill it.
export const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

export class LocalBucket {
  // `capacity` units, refilled at `capacity` per `periodMs`.
  constructor(capacity, periodMs, clock = monotonicUs) {
    if (!(Number.isSafeInteger(capacity) && capacity >= 1 && Number.isSafeInteger(periodMs) && periodMs >= 1)) {
      throw new RangeError('capacity and periodMs must be integers of at least 1');
    }
    this.capacity = capacity;
    this.periodMs = periodMs;
    // Rounded up, as the module does, so the bucket never admits faster than configured.
    this.intervalUs = Math.max(1, ceilDiv(periodMs * 1000, capacity));
    this.clock = clock;
    this.fullAtUs = null;
  }

  take(cost = 1) {
    const now = this.clock();
    const span = this.capacity * this.intervalUs; // drained to full
    const fullAt = Math.max(this.fullAtUs ?? now, now);
    const remaining = (at) => Math.floor((span - (at - now)) / this.intervalUs);
    const reply = (allowed, at, retryAfterMs) => ({
      allowed,
      limit: this.capacity,
      remaining: remaining(at),
      retryAfterMs,
      resetAfterMs: ceilDiv(at - now, 1000),
    });

    if (cost > this.capacity) return reply(false, fullAt, -1);
    const newFullAt = fullAt + cost * this.intervalUs;
    if (newFullAt - now <= span) {
      this.fullAtUs = newFullAt;
      return reply(true, newFullAt, 0);
    }
    return reply(false, fullAt, ceilDiv(newFullAt - span - now, 1000));
  }
}
