"""The fail-open fallback limiter (redis_rl's in-process bucket, which the service uses), on a fake clock."""

import unittest
from typing import NamedTuple

from redis_rl.local import LocalBucket


class LimitReply(NamedTuple):  # the bucket answers the module's five fields, as a tuple
    allowed: bool
    limit: int
    remaining: int
    retry_after_ms: int
    reset_after_ms: int


class Clock:
    def __init__(self):
        self.ns = 5_000_000_000  # any start: the bucket only looks at differences

    def __call__(self):
        return self.ns

    def advance_ms(self, ms):
        self.ns += ms * 1_000_000


class LocalBucketTest(unittest.TestCase):
    def test_burst_then_exact_retry_and_reset(self):
        clock = Clock()
        bucket = LocalBucket(3, 3000, clock=clock)  # 3 per 3 s: one unit per second
        self.assertEqual(bucket.take(), LimitReply(True, 3, 2, 0, 1000))
        self.assertEqual(bucket.take(), LimitReply(True, 3, 1, 0, 2000))
        self.assertEqual(bucket.take(), LimitReply(True, 3, 0, 0, 3000))
        self.assertEqual(bucket.take(), LimitReply(False, 3, 0, 1000, 3000))
        clock.advance_ms(999)
        self.assertEqual(bucket.take(), LimitReply(False, 3, 0, 1, 2001))
        clock.advance_ms(1)
        self.assertEqual(bucket.take(), LimitReply(True, 3, 0, 0, 3000))

    def test_idle_refills_to_capacity_only(self):
        clock = Clock()
        bucket = LocalBucket(2, 1000, clock=clock)
        bucket.take(2)
        clock.advance_ms(60_000)
        self.assertEqual(bucket.take(), LimitReply(True, 2, 1, 0, 500))

    def test_cost_larger_than_capacity_can_never_fit(self):
        bucket = LocalBucket(3, 3000, clock=Clock())
        self.assertEqual(bucket.take(4), LimitReply(False, 3, 3, -1, 0))
        self.assertEqual(bucket.take(3), LimitReply(True, 3, 0, 0, 3000))

    def test_interval_rounds_up_so_it_never_admits_faster(self):
        clock = Clock()
        bucket = LocalBucket(3, 1000, clock=clock)  # 333.334 ms per unit, not 333.333
        for _ in range(3):
            bucket.take()
        clock.advance_ms(1000)  # 3 * 333.334 ms = 1000.002 ms: not yet full
        self.assertEqual(bucket.take(3), LimitReply(False, 3, 2, 1, 1))

    def test_rejects_nonsense(self):
        with self.assertRaises(ValueError):
            LocalBucket(0, 1000)
        with self.assertRaises(ValueError):
            LocalBucket(1, 0)


if __name__ == "__main__":
    unittest.main()
