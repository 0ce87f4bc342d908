"""In-process token buckets: the `Local(share=...)` failure policy.

GCRA in integer microseconds (the schedule RL.GCRA and RL.TOKENBUCKET keep):
the one stored number is the moment the bucket is full again. Monotonic
clock, injectable for tests. One bucket per Redis key, at most `max_keys`
of them (least recently used dropped first).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Callable, Optional, Tuple

__all__ = ["LocalBucket", "LocalStore"]

Reply = Tuple[bool, int, int, int, int]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


class LocalBucket:
    """`capacity` units, refilled at `capacity` per `period_ms`."""

    __slots__ = ("capacity", "period_ms", "_interval_us", "_full_at_us", "_clock")

    def __init__(self, capacity: int, period_ms: int, clock: Callable[[], int] = time.monotonic_ns) -> None:
        if capacity < 1 or period_ms < 1:
            raise ValueError("capacity and period_ms must be at least 1")
        self.capacity = capacity
        self.period_ms = period_ms
        self._interval_us = max(1, _ceil_div(period_ms * 1000, capacity))  # rounded up: never faster
        self._full_at_us: Optional[int] = None
        self._clock = clock

    def take(self, cost: int = 1, peek: bool = False) -> Reply:
        """(allowed, limit, remaining, retry_after_ms, reset_after_ms), as the module answers."""
        now = self._clock() // 1000
        span = self.capacity * self._interval_us
        full_at = max(self._full_at_us or now, now)

        def remaining(at: int) -> int:
            return max(0, (span - (at - now)) // self._interval_us)

        if cost > self.capacity:
            return False, self.capacity, remaining(full_at), -1, _ceil_div(full_at - now, 1000)
        new_full_at = full_at + cost * self._interval_us
        if new_full_at - now <= span:
            if not peek and cost > 0:
                self._full_at_us = new_full_at
            return True, self.capacity, remaining(new_full_at), 0, _ceil_div(new_full_at - now, 1000)
        retry_us = new_full_at - span - now
        return False, self.capacity, remaining(full_at), _ceil_div(retry_us, 1000), _ceil_div(full_at - now, 1000)

    def refund(self, amount: int) -> None:
        if self._full_at_us is None:
            return
        now = self._clock() // 1000
        self._full_at_us = max(now, self._full_at_us - amount * self._interval_us)


class LocalStore:
    """One LocalBucket per key, bounded."""

    def __init__(self, max_keys: int = 10_000, clock: Callable[[], int] = time.monotonic_ns) -> None:
        self.max_keys = max_keys
        self.clock = clock
        self._buckets: "OrderedDict[Tuple[str, int, int], LocalBucket]" = OrderedDict()
        self._lock = threading.Lock()

    def _bucket(self, key: str, capacity: int, period_ms: int) -> LocalBucket:
        k = (key, capacity, period_ms)
        b = self._buckets.get(k)
        if b is None:
            b = self._buckets[k] = LocalBucket(capacity, period_ms, self.clock)
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(k)
        return b

    def take(self, key: str, capacity: int, period_ms: int, cost: int, peek: bool = False) -> Reply:
        with self._lock:
            return self._bucket(key, capacity, period_ms).take(cost, peek)

    def refund(self, key: str, capacity: int, period_ms: int, amount: int) -> None:
        with self._lock:
            b = self._buckets.get((key, capacity, period_ms))
            if b is not None:
                b.refund(amount)
