"""Retries on the caller's side: honour Retry-After, add full jitter, spend a shared budget.

- The server's wait (Retry-After, retry_after_ms) is a floor: retrying
  sooner is certain to be refused again. On top of it, full jitter
  (random between 0 and min(cap, base * 2**attempt)), so clients told the
  same wait do not all come back at one instant.
- A wait longer than max_wait_ms is not waited out: the failure goes back to
  the caller. A "never" (retry_after_ms -1) is never retried.
- RetryBudget: a token bucket in Redis (RL.TOKENBUCKET) shared by a whole
  fleet. Every request deposits `ratio` of a retry (REFUND), every retry
  spends one (COST), so retries stay at most ~ratio of the traffic and a
  spike cannot turn into a retry storm.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from typing import Any, Awaitable, Callable, Mapping, Optional, TypeVar, Union

from .errors import RateLimited
from .limits import FAIL_CLOSED, TokenBucket

__all__ = ["RetryBudget", "retry", "async_retry", "parse_retry_after", "retry_after_ms_of"]

log = logging.getLogger("redis_rl")
T = TypeVar("T")


def parse_retry_after(value: Optional[str], now: Callable[[], float] = time.time) -> Optional[float]:
    """Seconds to wait from a Retry-After value: delta-seconds ("120") or an HTTP-date; None if unreadable."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(int(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - now())


def retry_after_ms_of(outcome: Any) -> Optional[int]:
    """The server's wait for a failed outcome, in ms, or None if it is not retryable.

    Understands RateLimited (and anything with .decision), objects with
    .retry_after_ms, and HTTP responses with .status/.status_code 429 or 503
    and a headers mapping (Retry-After). -1 (never) is not retryable."""
    decision = getattr(outcome, "decision", None)
    if decision is not None and hasattr(decision, "retry_after_ms"):
        ms = int(decision.retry_after_ms)
        return None if ms < 0 or decision.allowed else ms
    ms_attr = getattr(outcome, "retry_after_ms", None)
    if isinstance(ms_attr, int) and not isinstance(ms_attr, bool):
        return None if ms_attr < 0 else ms_attr
    status = getattr(outcome, "status_code", getattr(outcome, "status", None))
    if status in (429, 503):
        headers = getattr(outcome, "headers", None) or {}
        value = _header(headers, "retry-after")
        s = parse_retry_after(value)
        return 0 if s is None else int(s * 1000)
    return None


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    get = getattr(headers, "get", None)
    if get is not None:
        v = get(name) or get(name.title()) or get("Retry-After")
        if v is not None:
            return str(v)
    for k, v in getattr(headers, "items", lambda: [])():
        if str(k).lower() == name:
            return str(v)
    return None


class RetryBudget:
    """A fleet-wide retry budget: a TOKENBUCKET in Redis where each request deposits `ratio` of a
    retry and each retry spends one. At most `burst` retries are banked (a new budget starts full).

    Works with Limiter (deposit / try_spend) and AsyncLimiter (adeposit / atry_spend). If Redis
    cannot be reached, try_spend answers False: no retries while the limiter itself is down."""

    def __init__(self, limiter: Any, name: str = "retry-budget", *, ratio: float = 0.1, burst: int = 10,
                 scale: int = 1000, identity: str = "fleet") -> None:
        if not 0 < ratio <= 1:
            raise ValueError("ratio must be in (0, 1]")
        if burst < 1 or scale < 1:
            raise ValueError("burst and scale must be at least 1")
        self.limiter = limiter
        self.ratio = ratio
        self.scale = scale
        self.identity = identity
        self.deposit_units = max(1, round(ratio * scale))
        capacity = burst * scale
        # Deposits fill it; time only trickles (one unit per refill period, fill time 10^12 ms).
        self.limit = TokenBucket(capacity, 1, max(1, 10**12 // capacity), name=name, on_error=FAIL_CLOSED)

    def deposit(self) -> None:
        """One request: bank `ratio` of a retry. Failures are ignored (logged at debug)."""
        try:
            self.limiter.refund(self.limit, self.identity, self.deposit_units)
        except Exception as exc:
            log.debug("redis_rl: retry budget deposit failed: %s", exc)

    def try_spend(self) -> bool:
        """One retry: True if the budget had one (and it is spent)."""
        return bool(self.limiter.check(self.limit, self.identity, self.scale).allowed)

    def available(self) -> float:
        """Retries banked now (reads, consumes nothing)."""
        return float(self.limiter.peek(self.limit, self.identity, 0).remaining) / self.scale

    async def adeposit(self) -> None:
        try:
            await self.limiter.refund(self.limit, self.identity, self.deposit_units)
        except Exception as exc:
            log.debug("redis_rl: retry budget deposit failed: %s", exc)

    async def atry_spend(self) -> bool:
        return bool((await self.limiter.check(self.limit, self.identity, self.scale)).allowed)

    async def aavailable(self) -> float:
        return float((await self.limiter.peek(self.limit, self.identity, 0)).remaining) / self.scale


def _delay_ms(floor_ms: int, attempt: int, base_ms: int, cap_ms: int, rand: Callable[[], float]) -> float:
    return float(floor_ms + rand() * min(cap_ms, base_ms * 2**attempt))


def retry(
    fn: Callable[[], T],
    *,
    budget: Optional[RetryBudget] = None,
    max_attempts: int = 3,
    base_ms: int = 100,
    cap_ms: int = 10_000,
    max_wait_ms: int = 30_000,
    retry_after: Callable[[Any], Optional[int]] = retry_after_ms_of,
    sleep: Callable[[float], Any] = time.sleep,
    rand: Callable[[], float] = random.random,
) -> T:
    """Call fn(); while it raises (or returns) something retryable, wait and call again.

    retryable: retry_after(outcome) gives a wait in ms (default: RateLimited, .retry_after_ms,
    HTTP 429/503 responses). At most max_attempts calls in all; each retry spends one unit of
    `budget` and none is made when the budget is empty."""
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    if budget is not None:
        budget.deposit()
    attempt = 0
    while True:
        error: Optional[BaseException] = None
        result: Any = None
        try:
            result = fn()
            outcome: Any = result
        except Exception as exc:
            error = exc
            outcome = exc
        floor = retry_after(outcome)
        give_up = (floor is None or attempt + 1 >= max_attempts or floor > max_wait_ms
                   or (budget is not None and not budget.try_spend()))
        if give_up:
            if error is not None:
                raise error
            return result  # type: ignore[no-any-return]
        sleep(_delay_ms(floor or 0, attempt, base_ms, cap_ms, rand) / 1000)
        attempt += 1


async def async_retry(
    fn: Callable[[], Awaitable[T]],
    *,
    budget: Optional[RetryBudget] = None,
    max_attempts: int = 3,
    base_ms: int = 100,
    cap_ms: int = 10_000,
    max_wait_ms: int = 30_000,
    retry_after: Callable[[Any], Optional[int]] = retry_after_ms_of,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    rand: Callable[[], float] = random.random,
) -> T:
    """retry() for coroutines; the budget must be on an AsyncLimiter."""
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    if budget is not None:
        await budget.adeposit()
    attempt = 0
    while True:
        error: Optional[BaseException] = None
        result: Any = None
        try:
            result = await fn()
            outcome: Any = result
        except Exception as exc:
            error = exc
            outcome = exc
        floor = retry_after(outcome)
        give_up = (floor is None or attempt + 1 >= max_attempts or floor > max_wait_ms
                   or (budget is not None and not await budget.atry_spend()))
        if give_up:
            if error is not None:
                raise error
            return result  # type: ignore[no-any-return]
        await sleep(_delay_ms(floor or 0, attempt, base_ms, cap_ms, rand) / 1000)
        attempt += 1


_ = (RateLimited, Union)  # re-exported names used in docs
