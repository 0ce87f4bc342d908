"""Client side: retry 429 and 503 answers politely.

- Retry-After is a floor: retrying sooner is certain to be refused again.
- On top of it, "full jitter" (AWS Architecture Blog, "Exponential Backoff
  And Jitter"): sleep = random_between(0, min(cap, base * 2 ** attempt)).
  We add the jitter to Retry-After instead of taking max(Retry-After,
  jitter): with max, every client told "Retry-After: 3" would wake at the
  same instant and collide again.
- At most `max_retries` retries per call, and none when Retry-After is
  longer than `max_wait_s` (hand the 429 to the caller instead of blocking
  it for twenty minutes).
- A retry budget shared by all calls (like gRPC's retry throttling): each
  call earns a tenth of a retry, each retry spends one. When the server is
  overloaded, clients add at most ~10% more load instead of multiplying it.

The random source, the sleep and the clock are parameters, so tests run
instantly and deterministically.
"""

import random
import threading
import time
import urllib.error
import urllib.request
from typing import Callable, Mapping, NamedTuple, Optional

from redis_rl import parse_retry_after  # delta-seconds or an HTTP-date; None if absent or unreadable

RETRYABLE = frozenset({429, 503})


class Response(NamedTuple):
    status: int
    headers: Mapping[str, str]  # lower-case names
    body: bytes


class RetryBudget:
    """A token bucket of retries shared by every call of a client.

    Each call deposits `percent`/100 of a retry, each retry withdraws one, and
    at most `burst` retries are banked (it starts full). So over time retries
    stay at or under `percent`% of calls. Counted in hundredths, in integers:
    ten calls at 10% earn exactly one retry (0.1 * 10 is not 1.0 in floats).
    """

    def __init__(self, percent: int = 10, burst: int = 10):
        self._percent = percent
        self._max = burst * 100
        self._credits = self._max
        self._lock = threading.Lock()

    def on_call(self) -> None:
        with self._lock:
            self._credits = min(self._max, self._credits + self._percent)

    def try_spend(self) -> bool:
        with self._lock:
            if self._credits < 100:
                return False
            self._credits -= 100
            return True

    @property
    def available(self) -> float:
        return self._credits / 100


class RetryingClient:
    def __init__(
        self,
        send: Callable[..., Response],
        *,
        budget: Optional[RetryBudget] = None,
        max_retries: int = 3,
        base_s: float = 0.1,
        cap_s: float = 10.0,
        max_wait_s: float = 30.0,
        rand: Callable[[], float] = random.random,
        sleep: Callable[[float], None] = time.sleep,
        now: Callable[[], float] = time.time,
    ):
        self.send = send
        self.budget = budget if budget is not None else RetryBudget()
        self.max_retries = max_retries
        self.base_s, self.cap_s, self.max_wait_s = base_s, cap_s, max_wait_s
        self.rand, self.sleep, self.now = rand, sleep, now

    def call(self, *args, **kwargs) -> Response:
        """send(*args, **kwargs), retried as described above; returns the last response."""
        self.budget.on_call()
        attempt = 0
        while True:
            response = self.send(*args, **kwargs)
            delay = self.delay_before_retry(response, attempt)
            if delay is None:
                return response
            self.sleep(delay)
            attempt += 1

    def delay_before_retry(self, response: Response, attempt: int) -> Optional[float]:
        """Seconds to sleep before retry number attempt+1, or None: do not retry."""
        if response.status not in RETRYABLE or attempt >= self.max_retries:
            return None
        floor = parse_retry_after(response.headers.get("retry-after"), self.now) or 0.0
        if floor > self.max_wait_s:
            return None
        if not self.budget.try_spend():  # last: only a retry that will happen spends budget
            return None
        return floor + self.rand() * min(self.cap_s, self.base_s * 2 ** attempt)


def send_http(method: str, url: str, headers: Optional[Mapping[str, str]] = None, body: Optional[bytes] = None,
              timeout: float = 10.0) -> Response:
    """One HTTP request with urllib; an error status is a Response, not an exception."""
    request = urllib.request.Request(url, data=body, method=method, headers=dict(headers or {}))
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return Response(r.status, {k.lower(): v for k, v in r.headers.items()}, r.read())
    except urllib.error.HTTPError as e:
        with e:
            return Response(e.code, {k.lower(): v for k, v in e.headers.items()}, e.read())
