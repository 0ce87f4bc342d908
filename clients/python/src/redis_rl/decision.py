"""Decisions: the module's replies read into one type, and their HTTP form.

Parses RESP2 arrays and RESP3 maps (bytes or str keys, as redis-py gives
them with or without decode_responses), and the Lua library's arrays.

HTTP fields follow draft-ietf-httpapi-ratelimit-headers-11: both
RateLimit-Policy and RateLimit are Structured Field Lists (RFC 9651) of
Items whose value is the policy's name, a String, with parameters:

    RateLimit-Policy: "gcra-5-per-60000ms";q=5;w=60
    RateLimit: "gcra-5-per-60000ms";r=0;t=12

q is the limit's quota, w its window in seconds (rounded up), r the
remaining quota (the reply's `remaining`), t the seconds until more than r
is available again (not the time until full: a GCRA or token bucket gives
the next unit back long before that). A denial's t equals Retry-After (the
draft, section 6, forbids a Retry-After earlier than the effective window).
No pk (partition key) is sent: it would expose the identity.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from .limits import Concurrency, Limit

__all__ = ["Decision", "SOURCE_REDIS", "SOURCE_FAIL_OPEN", "SOURCE_FAIL_CLOSED", "SOURCE_LOCAL", "SOURCE_DURABLE"]

SOURCE_REDIS = "redis"
SOURCE_FAIL_OPEN = "fail_open"
SOURCE_FAIL_CLOSED = "fail_closed"
SOURCE_LOCAL = "local"
#: an allowed decision whose write too few replicas acknowledged in time (durable=): denied
SOURCE_DURABLE = "durable"
_CLOSED = (SOURCE_FAIL_CLOSED, SOURCE_DURABLE)


def ceil_s(ms: int) -> int:
    """Whole seconds, rounded up: waiting the advertised time is always enough."""
    return -(-ms // 1000)


class Decision:
    """One answer: a single limit's, or the combination of several (check_all)."""

    __slots__ = (
        "allowed", "limit", "remaining", "retry_after_ms", "reset_after_ms", "lease",
        "name", "key", "rule", "cost", "source", "error", "_decisions", "_denied_by", "wait_ms",
    )

    def __init__(
        self,
        allowed: bool,
        limit: int,
        remaining: int,
        retry_after_ms: int,
        reset_after_ms: int,
        lease: Optional[str] = None,
        *,
        name: str = "",
        key: str = "",
        rule: Optional[Limit] = None,
        cost: int = 1,
        source: str = SOURCE_REDIS,
        error: Optional[BaseException] = None,
        decisions: Optional[List["Decision"]] = None,
        denied_by: Optional[List["Decision"]] = None,
        wait_ms: int = 0,
    ) -> None:
        self.allowed = allowed
        self.limit = limit
        self.remaining = remaining
        self.retry_after_ms = retry_after_ms
        self.reset_after_ms = reset_after_ms
        self.lease = lease
        self.name = name
        self.key = key
        #: the Limit value this decision is about (None for a combined one)
        self.rule = rule
        self.cost = cost
        #: "redis" | "fail_open" | "fail_closed" | "local" | "durable"
        self.source = source
        #: the error that made the failure policy decide, if any
        self.error = error
        self._decisions = decisions
        self._denied_by = denied_by
        #: a booking (max_wait_ms=): start at now + wait_ms (0: at once, and for every other call)
        self.wait_ms = wait_ms

    @property
    def decisions(self) -> List["Decision"]:
        """check_all: each check's own Decision, in order (a single check: [self])."""
        d = self._decisions
        return [self] if d is None else d

    @property
    def denied_by(self) -> List["Decision"]:
        """The Decision(s) that denied, most restrictive first (empty when allowed)."""
        d = self._denied_by
        if d is None:
            return [] if self.allowed else [self]
        return d

    # --- derived -----------------------------------------------------------

    @property
    def never(self) -> bool:
        """The cost can never be admitted (it is above the limit): retry_after_ms == -1."""
        return self.retry_after_ms == -1

    @property
    def booked(self) -> bool:
        """Allowed for a later start (max_wait_ms=): the units are taken, start after wait_ms."""
        return self.allowed and self.wait_ms > 0

    @property
    def fail_open(self) -> bool:
        return self.source == SOURCE_FAIL_OPEN

    def __bool__(self) -> bool:
        return self.allowed

    def __repr__(self) -> str:
        extra = f", lease={self.lease!r}" if self.lease is not None else ""
        if self.wait_ms:
            extra += f", wait_ms={self.wait_ms}"
        if self.source != SOURCE_REDIS:
            extra += f", source={self.source!r}"
        if len(self.decisions) > 1:
            extra += f", decisions={len(self.decisions)}"
        return (f"Decision(allowed={self.allowed}, name={self.name!r}, limit={self.limit}, "
                f"remaining={self.remaining}, retry_after_ms={self.retry_after_ms}, "
                f"reset_after_ms={self.reset_after_ms}{extra})")

    # --- HTTP --------------------------------------------------------------

    @property
    def status(self) -> int:
        """200 allowed; 413 when the cost can never fit; 503 for a full concurrency limit
        or a fail-closed decision; else 429."""
        if self.allowed:
            return 200
        if self.source in _CLOSED:
            return 503
        first = self.denied_by[0] if self.denied_by else self
        if first.never or self.never:
            return 413
        if isinstance(first.rule, Concurrency):
            return 503
        return 429

    def ordered(self) -> List["Decision"]:
        """This decision's limits, most restrictive first: deniers by longest wait ("never" first),
        then the rest by fewest further requests of this cost, ties to the longest to refill."""
        subs = self.decisions
        if len(subs) == 1:
            return list(subs)
        denied = [d for d in subs if not d.allowed]
        denied.sort(key=_wait_key, reverse=True)
        rest = [d for d in subs if d.allowed]
        rest.sort(key=lambda d: (d.remaining // max(1, d.cost), -d.reset_after_ms))
        return denied + rest

    def headers(self) -> Dict[str, str]:
        """RateLimit-Policy, RateLimit (rate limits only, most restrictive first) and, when denied, Retry-After."""
        out: Dict[str, str] = {}
        if self.source == SOURCE_FAIL_OPEN:
            return out
        if self.source in _CLOSED:
            out["Retry-After"] = str(max(1, ceil_s(self.retry_after_ms)))
            return out
        policies: List[str] = []
        items: List[str] = []
        for d in self.ordered():
            rule = d.rule
            if rule is None or isinstance(rule, Concurrency):
                continue
            quota = rule.quota
            window_ms = rule.window_ms
            if d.source == SOURCE_LOCAL:
                quota, window_ms = d.limit, window_ms
            unit = f';qu="{rule.unit}"' if rule.unit else ""
            policies.append(f'"{rule.name}";q={quota}{unit};w={max(1, ceil_s(window_ms))}')
            items.append(f'"{rule.name}";r={d.remaining};t={ceil_s(effective_window_ms(d))}')
        if policies:
            out["RateLimit-Policy"] = ", ".join(policies)
            out["RateLimit"] = ", ".join(items)
        if not self.allowed and self.retry_after_ms >= 0:
            out["Retry-After"] = str(ceil_s(self.retry_after_ms))
        return out

    def body(self) -> Dict[str, Any]:
        """A JSON-serialisable error body naming the limit that denied (never the identity or key)."""
        if self.allowed:
            return {"allowed": True}
        if self.source in _CLOSED:
            return {"error": "rate_limiter_unavailable", "limit": self.name, "scope": self.name,
                    "retry_after_ms": self.retry_after_ms}
        first = self.denied_by[0] if self.denied_by else self
        rule = first.rule
        status = self.status
        error = {413: "request_too_large", 503: "concurrency_limited"}.get(status, "rate_limited")
        body: Dict[str, Any] = {"error": error, "limit": first.name, "scope": first.name}
        if rule is not None:
            body["quota"] = rule.quota
            body["window_ms"] = rule.window_ms
            if rule.unit:
                body["unit"] = rule.unit
        body["cost"] = first.cost
        body["retry_after_ms"] = self.retry_after_ms
        if self.retry_after_ms >= 0:
            body["retry_after_s"] = ceil_s(self.retry_after_ms)
        return body


def _wait_key(d: Decision) -> float:
    return float("inf") if d.retry_after_ms < 0 else float(d.retry_after_ms)


def effective_window_ms(d: Decision) -> int:
    """Until the limit admits more than `remaining` (the draft's t, section 4.1.2)."""
    if not d.allowed and d.retry_after_ms >= 0:
        return d.retry_after_ms
    if d.remaining >= d.limit:
        return 0
    rule = d.rule
    refill = rule.refill if rule is not None and d.source == SOURCE_REDIS else None
    if d.source == SOURCE_LOCAL and rule is not None and not isinstance(rule, Concurrency):
        refill = (max(1, rule.window_ms), d.limit)  # the local bucket: d.limit per window, evenly
    if refill is None:
        # quotas and windows: nothing is given back before reset (an upper bound for a sliding window)
        return d.reset_after_ms
    period_ms, units = refill
    before_full = (d.limit - d.remaining - 1) * period_ms
    return max(0, -(-(d.reset_after_ms * units - before_full) // units))


# --- parsing ----------------------------------------------------------------

Fields = Tuple[bool, int, int, int, int, Optional[str]]
Reply = Tuple[bool, int, int, int, int, Optional[str], int]


def _text(value: Any) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def parse_fields(reply: Any) -> Fields:
    """One limiter reply (RESP2 array, RESP3 map) -> (allowed, limit, remaining, retry, reset, lease)."""
    return parse_reply(reply)[:6]


def parse_reply(reply: Any) -> Reply:
    """One limiter reply -> (allowed, limit, remaining, retry, reset, lease, wait_ms).

    A sixth RESP2 field is the lease id (RL.ACQUIRE: a bulk string or nil) or, after MAXWAIT,
    the integer wait_ms; RESP3 maps name them `lease` and `wait_ms`."""
    if type(reply) is list:
        if len(reply) > 5:
            sixth = reply[5]
            if type(sixth) is int:
                return bool(reply[0]), reply[1], reply[2], reply[3], reply[4], None, sixth
            return bool(reply[0]), reply[1], reply[2], reply[3], reply[4], _text(sixth), 0
        return bool(reply[0]), reply[1], reply[2], reply[3], reply[4], None, 0
    if isinstance(reply, dict):
        if b"allowed" in reply:
            return (bool(reply[b"allowed"]), reply[b"limit"], reply[b"remaining"], reply[b"retry_after_ms"],
                    reply[b"reset_after_ms"], _text(reply.get(b"lease")), reply.get(b"wait_ms") or 0)
        return (bool(reply["allowed"]), reply["limit"], reply["remaining"], reply["retry_after_ms"],
                reply["reset_after_ms"], _text(reply.get("lease")), reply.get("wait_ms") or 0)
    if isinstance(reply, (tuple, list)):
        return parse_reply(list(reply))
    raise TypeError(f"unexpected limiter reply: {reply!r}")


def parse_all(reply: Any) -> Tuple[bool, int, List[Any]]:
    """RL.ALL's reply -> (allowed, combined retry_after_ms, per-key replies)."""
    if type(reply) is list:
        return bool(reply[0]), reply[1], reply[2:]
    if isinstance(reply, tuple):
        return bool(reply[0]), reply[1], list(reply[2:])
    if isinstance(reply, dict):
        if b"allowed" in reply:
            return bool(reply[b"allowed"]), reply[b"retry_after_ms"], reply[b"limits"]
        return bool(reply["allowed"]), reply["retry_after_ms"], reply["limits"]
    raise TypeError(f"unexpected RL.ALL reply: {reply!r}")


_new = object.__new__


def single(reply: Any, rule: Limit, key: str, cost: int) -> Decision:
    """A limiter reply as a Decision (the hot path: no keyword-argument call)."""
    d: Decision = _new(Decision)
    if type(reply) is list and len(reply) == 5:  # RESP2, a rate limit: the common case, inline
        d.allowed = bool(reply[0])
        d.limit = reply[1]
        d.remaining = reply[2]
        d.retry_after_ms = reply[3]
        d.reset_after_ms = reply[4]
        d.lease = None
        d.wait_ms = 0
    elif type(reply) is dict and len(reply) == 5 and b"allowed" in reply:  # RESP3, the same, inline
        d.allowed = bool(reply[b"allowed"])
        d.limit = reply[b"limit"]
        d.remaining = reply[b"remaining"]
        d.retry_after_ms = reply[b"retry_after_ms"]
        d.reset_after_ms = reply[b"reset_after_ms"]
        d.lease = None
        d.wait_ms = 0
    else:
        (d.allowed, d.limit, d.remaining, d.retry_after_ms, d.reset_after_ms, d.lease,
         d.wait_ms) = parse_reply(reply)
    d.name = rule.name
    d.key = key
    d.rule = rule
    d.cost = cost
    d.source = SOURCE_REDIS
    d.error = None
    d._decisions = None
    d._denied_by = None
    return d



def _most_restrictive(allowed: bool, subs: Sequence[Decision]) -> Decision:
    if not allowed:
        denied = [d for d in subs if not d.allowed]
        if denied:
            return max(denied, key=_wait_key)  # first of equals: key order
    return min(subs, key=lambda d: (d.remaining // (d.cost or 1), -d.reset_after_ms))


def combine_answered(allowed: bool, retry_after_ms: int, subs: List[Decision]) -> Decision:
    """combine() for limits that Redis answered, every one (RL.ALL's reply): the source is
    Redis and there is no error, so only the lease is looked for (check_all's hot path)."""
    # One pass: the first lease, the booking, the denials, and the one with the least room
    # (remaining // cost, then the longest reset: min() of _room_key, first of equals).
    lease = None
    wait = 0
    first = subs[0]
    room = first.remaining // (first.cost or 1)
    reset = first.reset_after_ms
    denied_by: List[Decision] = []
    for d in subs:
        if lease is None and d.lease is not None:
            lease = d.lease
        if d.wait_ms > wait:  # a booking: every limit books the same start
            wait = d.wait_ms
        if not d.allowed:
            denied_by.append(d)
        r = d.remaining // (d.cost or 1)
        if r < room or (r == room and d.reset_after_ms > reset):
            first, room, reset = d, r, d.reset_after_ms
    if allowed:
        denied_by = []
    elif denied_by:
        denied_by.sort(key=_wait_key, reverse=True)
        first = denied_by[0]
    out: Decision = _new(Decision)
    out.allowed = allowed
    out.limit = first.limit
    out.remaining = first.remaining
    out.retry_after_ms = retry_after_ms
    out.reset_after_ms = first.reset_after_ms
    out.lease = lease
    out.name = first.name
    out.key = first.key
    out.rule = None
    out.cost = first.cost
    out.source = SOURCE_REDIS
    out.error = None
    out._decisions = subs
    out._denied_by = denied_by
    out.wait_ms = wait
    return out


def _room_key(d: Decision) -> Tuple[int, int]:
    return (d.remaining // (d.cost or 1), -d.reset_after_ms)


def combine(allowed: bool, retry_after_ms: int, subs: Sequence[Decision]) -> Decision:
    """The combined decision of check_all from each limit's own."""
    first = _most_restrictive(allowed, subs)
    denied_by: List[Decision] = []
    if not allowed:
        denied_by = [d for d in subs if not d.allowed]
        denied_by.sort(key=_wait_key, reverse=True)
    lease = None
    source = SOURCE_REDIS
    error = None
    wait = 0
    for d in subs:
        if lease is None and d.lease is not None:
            lease = d.lease
        if d.wait_ms > wait:
            wait = d.wait_ms
        if d.source != SOURCE_REDIS:
            if error is None:
                error = d.error
            if d.source == SOURCE_FAIL_CLOSED:
                source = SOURCE_FAIL_CLOSED
            elif d.source == SOURCE_LOCAL and source != SOURCE_FAIL_CLOSED:
                source = SOURCE_LOCAL
            elif d.source == SOURCE_FAIL_OPEN and source == SOURCE_REDIS:
                source = SOURCE_FAIL_OPEN
    out: Decision = _new(Decision)
    out.allowed = allowed
    out.limit = first.limit
    out.remaining = first.remaining
    out.retry_after_ms = retry_after_ms
    out.reset_after_ms = first.reset_after_ms
    out.lease = lease
    out.name = first.name
    out.key = first.key
    out.rule = None
    out.cost = first.cost
    out.source = source
    out.error = error
    out._decisions = subs if isinstance(subs, list) else list(subs)
    out._denied_by = denied_by
    out.wait_ms = wait
    return out
