"""Limits as values: what to check, declared once.

Each limit knows its kind (the module command), its parameters, its name
(for headers, logs and metrics) and how to build its Redis key for an
identity. Parameters are validated here, so a typo fails at import time,
not on the first request.
"""

from __future__ import annotations

import re
from typing import Callable, Optional, Tuple, Union

__all__ = [
    "Limit",
    "Gcra",
    "TokenBucket",
    "Slide",
    "Log",
    "Quota",
    "Concurrency",
    "Local",
    "OnError",
    "FAIL_OPEN",
    "FAIL_CLOSED",
]

MAX_U32 = 2**32 - 1
MAX_MS = 10**12
_NAME = re.compile(r"^[A-Za-z0-9._:/-]{1,128}$")
CALENDAR_PERIODS = {"HOUR": 3_600, "DAY": 86_400, "WEEK": 604_800, "MONTH": 2_592_000, "YEAR": 31_536_000}


class Local:
    """Failure policy: an in-process token bucket holding `share` of the limit.

    `share` is this process's part of the global limit: with N instances
    behind a load balancer, 1/N keeps the fleet near the limit while Redis is
    unreachable. The bucket is kept per Redis key (bounded, least recently
    used dropped first), so per-user limits stay per user.
    """

    __slots__ = ("share",)

    def __init__(self, share: float = 0.1) -> None:
        if not (0 < share <= 1):
            raise ValueError("Local(share=...) must be in (0, 1]")
        self.share = float(share)

    def __repr__(self) -> str:
        return f"Local(share={self.share})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Local) and other.share == self.share

    def __hash__(self) -> int:
        return hash(("Local", self.share))


FAIL_OPEN = "open"
FAIL_CLOSED = "closed"
OnError = Union[str, Local]


def check_policy(policy: Optional[OnError]) -> Optional[OnError]:
    if policy is None or isinstance(policy, Local) or policy in (FAIL_OPEN, FAIL_CLOSED):
        return policy
    if policy == "local":
        return Local()
    raise ValueError(f"on_error must be 'open', 'closed' or Local(share=...), not {policy!r}")


def _int(name: str, value: object, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be {lo} to {hi}, not {value}")
    return value


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


class Limit:
    """Base of every limit. Do not instantiate directly."""

    #: RL.ALL / RL.PEEK keyword, e.g. "GCRA"
    kind: str = ""
    #: the single command, e.g. "RL.GCRA"
    command: str = ""
    #: supports REFUND (reserve/settle)
    refundable: bool = True
    #: supports MAXWAIT: a booking for a later start (max_wait_ms=, pace()): GCRA and token buckets
    bookable: bool = False
    #: names of the leading positional params (for describe())
    _fields: Tuple[str, ...] = ()

    __slots__ = ("name", "on_error", "key", "params", "quota", "window_ms", "refill", "unit")

    def __init__(
        self,
        params: Tuple[Union[int, str], ...],
        default_name: str,
        quota: int,
        window_ms: int,
        refill: Optional[Tuple[int, int]],
        *,
        name: Optional[str],
        on_error: Optional[OnError],
        key: Optional[Callable[[str], str]],
        unit: Optional[str],
    ) -> None:
        name = default_name if name is None else name
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"limit name {name!r}: 1 to 128 of A-Z a-z 0-9 . _ : / - (it goes into headers and keys)")
        if unit is not None and (not isinstance(unit, str) or not _NAME.match(unit)):
            raise ValueError(f"unit {unit!r}: 1 to 128 of A-Z a-z 0-9 . _ : / -")
        self.name: str = name
        self.on_error: Optional[OnError] = check_policy(on_error)
        #: optional callable identity -> full Redis key (used verbatim: no prefix, no tag)
        self.key: Optional[Callable[[str], str]] = key
        #: the command's arguments after the key, without COST/REFUND/PEEK
        self.params: Tuple[Union[int, str], ...] = params
        #: RateLimit-Policy q
        self.quota: int = quota
        #: RateLimit-Policy w, in ms (sent as whole seconds, rounded up)
        self.window_ms: int = window_ms
        #: (period_ms, units) when the limit gives `units` back evenly over period_ms
        self.refill: Optional[Tuple[int, int]] = refill
        #: RateLimit-Policy qu (None: requests)
        self.unit: Optional[str] = unit

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(map(repr, self.params))}, name={self.name!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and (other.params, other.name) == (self.params, self.name)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.params, self.name))


def describe(rule: Limit) -> str:
    """The parameters a limit sends, e.g. "Gcra(limit=10, period_ms=1000, burst=20)"."""
    params = rule.params
    fields = rule._fields
    parts = [f"{f}={v!r}" for f, v in zip(fields, params)]
    rest = params[len(fields):]
    parts += [f"{str(rest[i]).lower()}={rest[i + 1]!r}" for i in range(0, len(rest) - 1, 2)]
    return f"{type(rule).__name__}({', '.join(parts)})"


class Gcra(Limit):
    """`limit` requests per `period_ms`, `burst` (default `limit`) back to back from idle (RL.GCRA)."""

    kind = "GCRA"
    command = "RL.GCRA"
    bookable = True
    __slots__ = ()
    _fields = ("limit", "period_ms")

    def __init__(
        self,
        limit: int,
        period_ms: int,
        *,
        burst: Optional[int] = None,
        name: Optional[str] = None,
        on_error: Optional[OnError] = None,
        key: Optional[Callable[[str], str]] = None,
        unit: Optional[str] = None,
    ) -> None:
        _int("limit", limit, 1, MAX_U32)
        _int("period_ms", period_ms, 1, MAX_MS)
        params: Tuple[Union[int, str], ...] = (limit, period_ms)
        default = f"gcra-{limit}-per-{period_ms}ms"
        if burst is not None:
            _int("burst", burst, 1, MAX_U32)
            params += ("BURST", burst)
            default += f"-burst-{burst}"
        super().__init__(params, default, limit, period_ms, (period_ms, limit),
                         name=name, on_error=on_error, key=key, unit=unit)


class TokenBucket(Limit):
    """`capacity` tokens, refilled at `refill_tokens` per `refill_period_ms` (RL.TOKENBUCKET)."""

    kind = "TOKENBUCKET"
    command = "RL.TOKENBUCKET"
    bookable = True
    __slots__ = ()
    _fields = ("capacity", "refill_tokens", "refill_period_ms")

    def __init__(
        self,
        capacity: int,
        refill_tokens: int,
        refill_period_ms: int,
        *,
        name: Optional[str] = None,
        on_error: Optional[OnError] = None,
        key: Optional[Callable[[str], str]] = None,
        unit: Optional[str] = None,
    ) -> None:
        _int("capacity", capacity, 1, MAX_U32)
        _int("refill_tokens", refill_tokens, 1, MAX_U32)
        _int("refill_period_ms", refill_period_ms, 1, MAX_MS)
        fill_ms = _ceil_div(capacity * refill_period_ms, refill_tokens)
        super().__init__(
            (capacity, refill_tokens, refill_period_ms),
            f"tokenbucket-{capacity}-{refill_tokens}-per-{refill_period_ms}ms",
            capacity, fill_ms, (refill_period_ms, refill_tokens),
            name=name, on_error=on_error, key=key, unit=unit,
        )


class Slide(Limit):
    """Sliding window counter: `limit` per trailing `window_ms` (RL.SLIDE)."""

    kind = "SLIDE"
    command = "RL.SLIDE"
    __slots__ = ()
    _fields = ("limit", "window_ms")

    def __init__(
        self,
        limit: int,
        window_ms: int,
        *,
        name: Optional[str] = None,
        on_error: Optional[OnError] = None,
        key: Optional[Callable[[str], str]] = None,
        unit: Optional[str] = None,
    ) -> None:
        _int("limit", limit, 1, MAX_U32)
        _int("window_ms", window_ms, 1, MAX_MS)
        super().__init__((limit, window_ms), f"slide-{limit}-per-{window_ms}ms", limit, window_ms, None,
                         name=name, on_error=on_error, key=key, unit=unit)


class Log(Limit):
    """Exact sliding log: at most `limit` (1 to 10,000) in any `window_ms` (RL.LOG)."""

    kind = "LOG"
    command = "RL.LOG"
    __slots__ = ()
    _fields = ("limit", "window_ms")

    def __init__(
        self,
        limit: int,
        window_ms: int,
        *,
        name: Optional[str] = None,
        on_error: Optional[OnError] = None,
        key: Optional[Callable[[str], str]] = None,
        unit: Optional[str] = None,
    ) -> None:
        _int("limit", limit, 1, 10_000)
        _int("window_ms", window_ms, 1, MAX_MS)
        super().__init__((limit, window_ms), f"log-{limit}-per-{window_ms}ms", limit, window_ms, None,
                         name=name, on_error=on_error, key=key, unit=unit)


class Quota(Limit):
    """`limit` per calendar `period` ("HOUR", "DAY", "WEEK", "MONTH", "YEAR", in `tz`) or per fixed ms window (RL.QUOTA).

    For headers, a calendar period's window is its nominal length (a month
    is 30 days); `reset_after_ms` in each reply is exact.
    """

    kind = "QUOTA"
    command = "RL.QUOTA"
    __slots__ = ()
    _fields = ("limit", "period")

    def __init__(
        self,
        limit: int,
        period: Union[str, int],
        *,
        tz: Optional[str] = None,
        name: Optional[str] = None,
        on_error: Optional[OnError] = None,
        key: Optional[Callable[[str], str]] = None,
        unit: Optional[str] = None,
    ) -> None:
        _int("limit", limit, 1, MAX_U32)
        params: Tuple[Union[int, str], ...]
        if isinstance(period, str):
            p = period.upper()
            if p not in CALENDAR_PERIODS:
                raise ValueError(f"period must be one of {', '.join(CALENDAR_PERIODS)} or an int of ms, not {period!r}")
            window_ms = CALENDAR_PERIODS[p] * 1000
            params = (limit, p)
            default = f"quota-{limit}-per-{p.lower()}"
            if tz is not None:
                if not isinstance(tz, str) or not tz or " " in tz:
                    raise ValueError(f"tz must be an IANA zone name, not {tz!r}")
                params += ("TZ", tz)
        else:
            _int("period", period, 1, MAX_MS)
            if tz is not None:
                raise ValueError("tz applies to calendar periods only, not to a period in ms")
            window_ms = period
            params = (limit, period)
            default = f"quota-{limit}-per-{period}ms"
        super().__init__(params, default, limit, window_ms, None, name=name, on_error=on_error, key=key, unit=unit)


class Concurrency(Limit):
    """At most `limit` units held at once, each lease living `lease_ms` unless renewed (RL.ACQUIRE).

    Used with `Limiter.lease()` (or `check()`, which acquires a lease and
    returns its id in `decision.lease`). A slot is not a quota over a
    window, so a concurrency limit sends no RateLimit fields, only
    Retry-After (and 503) when full.
    """

    kind = "CONCURRENCY"
    command = "RL.ACQUIRE"
    refundable = False
    __slots__ = ()
    _fields = ("limit", "lease_ms")

    def __init__(
        self,
        limit: int,
        lease_ms: int,
        *,
        name: Optional[str] = None,
        on_error: Optional[OnError] = None,
        key: Optional[Callable[[str], str]] = None,
        unit: Optional[str] = None,
    ) -> None:
        _int("limit", limit, 1, 100_000)
        _int("lease_ms", lease_ms, 1, MAX_MS)
        super().__init__((limit, lease_ms), f"concurrency-{limit}-lease-{lease_ms}ms", limit, lease_ms, None,
                         name=name, on_error=on_error, key=key, unit=unit or None)

    @property
    def lease_ms(self) -> int:
        return int(self.params[1])
