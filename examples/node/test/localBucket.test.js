// The fail-open fallback limiter, on a fake clock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LocalBucket } from 'redis-rl'; // the library's, behind this service's fail-open fallback

function fakeClock() {
  let us = 5_000_000; // any start: the bucket only looks at differences
  const clock = () => us;
  clock.advanceMs = (ms) => { us += ms * 1000; };
  return clock;
}
const r = (allowed, limit, remaining, retryAfterMs, resetAfterMs) => ({
  allowed, limit, remaining, retryAfterMs, resetAfterMs, lease: null,
});

describe('LocalBucket', () => {
  it('admits a burst, then answers an exact retry and reset', () => {
    const clock = fakeClock();
    const bucket = new LocalBucket(3, 3000, clock); // 3 per 3 s: one unit per second
    assert.deepEqual(bucket.take(), r(true, 3, 2, 0, 1000));
    assert.deepEqual(bucket.take(), r(true, 3, 1, 0, 2000));
    assert.deepEqual(bucket.take(), r(true, 3, 0, 0, 3000));
    assert.deepEqual(bucket.take(), r(false, 3, 0, 1000, 3000));
    clock.advanceMs(999);
    assert.deepEqual(bucket.take(), r(false, 3, 0, 1, 2001));
    clock.advanceMs(1);
    assert.deepEqual(bucket.take(), r(true, 3, 0, 0, 3000));
  });

  it('refills to its capacity only', () => {
    const clock = fakeClock();
    const bucket = new LocalBucket(2, 1000, clock);
    bucket.take(2);
    clock.advanceMs(60_000);
    assert.deepEqual(bucket.take(), r(true, 2, 1, 0, 500));
  });

  it('answers -1 to a cost larger than its capacity', () => {
    const bucket = new LocalBucket(3, 3000, fakeClock());
    assert.deepEqual(bucket.take(4), r(false, 3, 3, -1, 0));
    assert.deepEqual(bucket.take(3), r(true, 3, 0, 0, 3000));
  });

  it('rounds the interval up, so it never admits faster than configured', () => {
    const clock = fakeClock();
    const bucket = new LocalBucket(3, 1000, clock); // 333.334 ms per unit, not 333.333
    for (let n = 0; n < 3; n++) bucket.take();
    clock.advanceMs(1000); // 3 * 333.334 ms = 1000.002 ms: not yet full
    assert.deepEqual(bucket.take(3), r(false, 3, 2, 1, 1));
  });

  it('rejects nonsense', () => {
    assert.throws(() => new LocalBucket(0, 1000), RangeError);
    assert.throws(() => new LocalBucket(1, 0), RangeError);
    assert.throws(() => new LocalBucket(1.5, 1000), RangeError);
  });
});
