"""A tiny in-process limiter: the fallback while Redis is unreachable.

It answers with the same five fields as the module's commands (allowed,
limit, remaining, retry_after_ms, reset_after_ms), so the service turns its
answer into HTTP headers with the same code as a Redis answer.

It is GCRA in integer microseconds, the same schedule RL.GCRA and
RL.TOKENBUCKET keep: the one stored number is the moment the bucket is full
again. The clock is injectable so tests never sleep.
"""

import threading
import time
from typing import Callable, NamedTuple


class LimitReply(NamedTuple):
    """One limit's answer, as RL.GCRA / RL.TOKENBUCKET / RL.SLIDE reply."""

    allowed: bool
    limit: int
    remaining: int
    retry_after_ms: int  # 0 if allowed, -1 if the cost can never fit
    reset_after_ms: int


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


class LocalBucket:
    """`capacity` units, refilled at `capacity` per `period_ms`."""

    def __init__(self, capacity: int, period_ms: int, clock: Callable[[], int] = time.monotonic_ns):
        if capacity < 1 or period_ms < 1:
            raise ValueError("capacity and period_ms must be at least 1")
        self.capacity = capacity
        self.period_ms = period_ms
        # Rounded up, as the module does, so the bucket never admits faster
        # than configured.
        self._interval_us = max(1, _ceil_div(period_ms * 1000, capacity))
        self._clock = clock  # nanoseconds, monotonic: a wall-clock jump must not refill it
        self._full_at_us = None
        self._lock = threading.Lock()  # ThreadingHTTPServer calls us from many threads

    def take(self, cost: int = 1) -> LimitReply:
        with self._lock:
            now = self._clock() // 1000
            span = self.capacity * self._interval_us  # drained to full
            full_at = max(self._full_at_us or now, now)

            def remaining(at: int) -> int:
                return (span - (at - now)) // self._interval_us

            if cost > self.capacity:
                return LimitReply(False, self.capacity, remaining(full_at), -1, _ceil_div(full_at - now, 1000))
            new_full_at = full_at + cost * self._interval_us
            if new_full_at - now <= span:
                self._full_at_us = new_full_at
                return LimitReply(True, self.capacity, remaining(new_full_at), 0, _ceil_div(new_full_at - now, 1000))
            retry_us = new_full_at - span - now
            return LimitReply(
                False, self.capacity, remaining(full_at), _ceil_div(retry_us, 1000), _ceil_div(full_at - now, 1000)
            )
