"""What Limiter and AsyncLimiter share: keys, argument plans, the failure policy."""

from __future__ import annotations

import logging
import math
import time
import uuid
from collections import Counter
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from redis.crc import key_slot

from .backend import Backend, ModuleBackend, resolve_backend
from .decision import (SOURCE_DURABLE, SOURCE_FAIL_CLOSED, SOURCE_FAIL_OPEN, SOURCE_LOCAL, SOURCE_REDIS, Decision,
                       combine, combine_answered, parse_all, parse_fields, single)
from .errors import CrossSlotError, NotDurableError, ParameterConflictError, classify
from .limits import FAIL_CLOSED, FAIL_OPEN, Concurrency, Limit, Local, OnError, check_policy, describe
from .local import LocalStore
from .metrics import Metrics

log = logging.getLogger("redis_rl")
_new = object.__new__

Identity = Union[str, bytes, int]
Check = Union[Tuple[Limit, Identity], Tuple[Limit, Identity, int]]
#: (rule, key, cost)
Item = Tuple[Limit, str, int]
FallbackHook = Callable[[Limit, BaseException, Decision], None]

DEFAULT_TIMEOUT_MS = 100
#: at most this many limit names (or key functions) have their parameters remembered per Limiter
MAX_PARAM_NAMES = 10_000
FAIL_CLOSED_RETRY_MS = 1000


class Durable:
    """Strict mode: after a decision that wrote, `WAIT replicas timeout_ms` in the same round trip.

    An allowed decision that fewer than `replicas` replicas acknowledged within `timeout_ms` is
    turned into a denial (source "durable", 503). timeout_ms None: half the Limiter's timeout_ms
    (the WAIT must answer before the socket timeout)."""

    __slots__ = ("replicas", "timeout_ms")

    def __init__(self, replicas: int = 1, timeout_ms: Optional[int] = None) -> None:
        if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 1:
            raise ValueError("Durable: replicas must be an int of at least 1")
        if timeout_ms is not None and (isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int)
                                       or timeout_ms < 1):
            raise ValueError("Durable: timeout_ms must be a positive int (0, WAIT's 'for ever', is refused)")
        self.replicas = replicas
        self.timeout_ms = timeout_ms

    def __repr__(self) -> str:
        return f"Durable(replicas={self.replicas}, timeout_ms={self.timeout_ms})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Durable) and (other.replicas, other.timeout_ms) == (self.replicas, self.timeout_ms)

    def __hash__(self) -> int:
        return hash((self.replicas, self.timeout_ms))


DurableOption = Union[None, bool, Durable]


def resolve_durable(value: DurableOption, timeout_ms: Optional[int]) -> Optional[Durable]:
    """durable= as given -> the Durable to use (timeout filled in), or None."""
    if value is None or value is False:
        return None
    if value is True:
        value = Durable()
    if not isinstance(value, Durable):
        raise TypeError("durable must be True, False, None or Durable(replicas=..., timeout_ms=...)")
    t = value.timeout_ms
    if t is None:
        t = max(1, (timeout_ms or DEFAULT_TIMEOUT_MS) // 2)
    if timeout_ms is not None and t >= timeout_ms:
        raise ValueError(f"Durable timeout_ms ({t}) must be below the Limiter's timeout_ms ({timeout_ms}): "
                         "a WAIT that outlasts the socket timeout would always end as a timeout")
    return value if t == value.timeout_ms else Durable(value.replicas, t)


def _not_durable(d: Decision, err: NotDurableError, subs: Optional[List[Decision]] = None) -> Decision:
    return Decision(False, d.limit, 0, FAIL_CLOSED_RETRY_MS, d.reset_after_ms, None, name=d.name, key=d.key,
                    rule=d.rule, cost=d.cost, source=SOURCE_DURABLE, error=err, decisions=subs, denied_by=subs)


def _policy_name(policy: OnError) -> str:
    return "local" if isinstance(policy, Local) else str(policy)


def _is_cluster(client: Any) -> bool:
    mod = type(client).__module__
    return "cluster" in mod.split(".") or hasattr(client, "nodes_manager")


_PLAIN_POOLS = ("ConnectionPool", "BlockingConnectionPool")
_warned_pools: "set[str]" = set()


def _cannot_derive(pool: Any, timeout_ms: int, why: str) -> None:
    """Warn once per pool class: timeout_ms does not apply to this client."""
    name = f"{type(pool).__module__}.{type(pool).__qualname__}"
    if name not in _warned_pools:
        _warned_pools.add(name)
        log.warning("redis_rl: timeout_ms=%s does not apply: cannot derive a pool from %s (%s); the client is "
                    "used as given, with its own socket_timeout and retries", timeout_ms, name, why)


def derive_client(client: Any, timeout_ms: Optional[int], async_: bool) -> Any:
    """A client on the same server with its own pool: socket timeouts of timeout_ms and no retries.

    redis-py (6+) retries a timed-out command by default, which would send a
    limiter call twice (two units consumed for one request) and multiply the
    wait. Handles ConnectionPool, BlockingConnectionPool and Sentinel's
    SentinelConnectionPool (the same Sentinel manager and service name). Cluster
    clients are used as given; any other pool is used as given with a warning
    (logged once per pool class)."""
    if timeout_ms is None or _is_cluster(client):
        return client
    pool = getattr(client, "connection_pool", None)
    kwargs = getattr(pool, "connection_kwargs", None)
    if pool is None or kwargs is None:
        _cannot_derive(client, timeout_ms, "no connection_pool with connection_kwargs")
        return client
    pool_name = type(pool).__name__
    sentinel = pool_name == "SentinelConnectionPool" and hasattr(pool, "sentinel_manager")
    if pool_name not in _PLAIN_POOLS and not sentinel:
        _cannot_derive(pool, timeout_ms, "an unknown pool class")
        return client
    if async_:
        from redis.asyncio.retry import Retry as ARetry
        from redis.backoff import NoBackoff
        retry: Any = ARetry(NoBackoff(), 0)
    else:
        from redis.backoff import NoBackoff
        from redis.retry import Retry
        retry = Retry(NoBackoff(), 0)
    kw = dict(kwargs)
    t = timeout_ms / 1000
    kw["socket_timeout"] = t
    if "host" in kw or sentinel:
        kw["socket_connect_timeout"] = t
    kw["retry"] = retry
    kw.pop("retry_on_timeout", None)
    try:
        if sentinel:
            kw.pop("connection_pool", None)  # the old pool's proxy; the new pool sets its own
            new_pool = type(pool)(pool.service_name, pool.sentinel_manager, connection_class=pool.connection_class,
                                  max_connections=pool.max_connections, is_master=pool.is_master,
                                  check_connection=pool.check_connection, **kw)
        else:
            new_pool = type(pool)(connection_class=pool.connection_class, max_connections=pool.max_connections, **kw)
        return type(client)(connection_pool=new_pool)
    except Exception as exc:  # an unusual pool: use the client as it is
        _cannot_derive(pool, timeout_ms, f"{type(exc).__name__}: {exc}")
        return client


class Core:
    def __init__(
        self,
        client: Any,
        *,
        prefix: str = "rl:",
        on_error: OnError = FAIL_CLOSED,
        timeout_ms: Optional[int] = DEFAULT_TIMEOUT_MS,
        metrics: Optional[Metrics] = None,
        backend: Union[None, str, Backend] = None,
        on_fallback: Optional[FallbackHook] = None,
        cluster: Optional[bool] = None,
        clock: Callable[[], int] = time.monotonic_ns,
        async_: bool = False,
        durable: DurableOption = None,
        strict_params: bool = True,
    ) -> None:
        if not isinstance(prefix, str):
            raise TypeError("prefix must be a str")
        if timeout_ms is not None and (isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int)
                                       or timeout_ms < 1):
            raise ValueError("timeout_ms must be a positive int or None")
        self.given_client = client
        self.client = derive_client(client, timeout_ms, async_)
        self.owns_client = self.client is not client
        self.prefix = prefix
        #: tag -> "<prefix>{tag}:", for tags already checked
        self._tags: Dict[str, str] = {}
        self.on_error: OnError = check_policy(on_error) or FAIL_CLOSED
        self.timeout_ms = timeout_ms
        self.metrics = metrics
        self.backend = resolve_backend(backend)
        self.on_fallback = on_fallback
        self.cluster = _is_cluster(client) if cluster is None else cluster
        #: route each command to its key's node ourselves (cluster clients)
        self.route = _is_cluster(self.client) and callable(getattr(self.client, "get_node_from_key", None))
        self.local = LocalStore(clock=clock)
        self.async_ = async_
        #: the default strict mode (durable=), or None
        self.durable = self.pick(durable, None)
        #: writes (allowed decisions, refunds, renewals) too few replicas acknowledged in time
        self.durable_failures = 0
        self._undurable = False
        #: every activation of the failure policy, counted
        self.fallback_count = 0
        #: activations per (limit name, policy)
        self.fallbacks: "Counter[Tuple[str, str]]" = Counter()
        self._failing = False
        #: True: a limit name used with other parameters raises ParameterConflictError; False: warns once per name
        self.strict_params = bool(strict_params)
        #: id(limit) -> limit, for limits already checked against _declared (the hot path: one lookup)
        self._checked: Dict[int, Limit] = {}
        #: limit name (or its key function) -> the limit whose parameters were sent with it
        self._declared: Dict[Any, Limit] = {}
        self._warned: "set[Any]" = set()
        self._declared_full = False

    # --- keys --------------------------------------------------------------

    def key(self, rule: Limit, identity: Identity, tag: Optional[str] = None) -> str:
        """The Redis key of `identity` under `rule`: <prefix>[{tag}:]<name>:<identity>."""
        if self._checked.get(id(rule)) is not rule:
            self._declare(rule)
        if type(identity) is not str and not isinstance(identity, str):
            identity = _identity_text(identity)
        if rule.key is not None:
            return rule.key(identity)
        if tag is not None:
            head = self._tags.get(tag)
            if head is None:
                head = self._tag_head(tag)
            return f"{head}{rule.name}:{identity}"
        return f"{self.prefix}{rule.name}:{identity}"

    def _declare(self, rule: Limit) -> None:
        """A limit seen for the first time: its name (or key function) must not have been used with
        other parameters through this Limiter (a key is one limiter, with one set of parameters)."""
        if not isinstance(rule, Limit):
            raise TypeError(f"not a limit: {rule!r}")
        ident: Any = rule.name if rule.key is None else rule.key
        declared = self._declared
        prev = declared.get(ident)
        if prev is None:
            if len(declared) >= MAX_PARAM_NAMES:
                if not self._declared_full:
                    self._declared_full = True
                    log.warning("redis_rl: %d limit names seen; parameters of further names are not checked",
                                MAX_PARAM_NAMES)
                return
            declared[ident] = rule
        elif prev.kind != rule.kind or prev.params != rule.params:
            was, now = describe(prev), describe(rule)
            what = f"limit {rule.name!r}" if rule.key is None else f"limit {rule.name!r} (its key function)"
            if self.strict_params:
                raise ParameterConflictError(
                    f"{what} is {now} here but was {was}: one name, one set of parameters (a key is one limiter)")
            if ident not in self._warned:
                if len(self._warned) < MAX_PARAM_NAMES:
                    self._warned.add(ident)
                log.warning("redis_rl: %s is now %s, was %s: the keys of this name change parameters "
                            "(strict_params=False; logged once per name)", what, now, was)
            declared[ident] = rule
        checked = self._checked
        if len(checked) >= MAX_PARAM_NAMES:  # limits made per call: a cache, not a record
            checked.clear()
        checked[id(rule)] = rule

    def _tag_head(self, tag: str) -> str:
        """`<prefix>{tag}:`, the tag checked once and remembered (at most 4,096 tags)."""
        if not isinstance(tag, str):
            raise TypeError("tag must be a str")
        if "{" in tag or "}" in tag or not tag:
            raise ValueError("tag must be non-empty and hold no '{' or '}'")
        if len(self._tags) >= 4096:
            self._tags.clear()
        head = self._tags[tag] = f"{self.prefix}{{{tag}}}:"
        return head

    def plan_all(self, checks: Iterable[Check], cost: int, tag: Optional[str],
                 lease_id: Optional[str] = None, refund: bool = False,
                 max_wait_ms: Optional[int] = None) -> Tuple[List[Item], List[Any]]:
        # The hot path of check_all: key() inlined (the same checks in the same order: the
        # limit, its parameters, the identity, then the tag when a key needs it), the tag's
        # head looked up once per call, and ModuleBackend.all's arguments built here.
        items: List[Item] = []
        keys: List[str] = []
        checked = self._checked
        head = self.prefix if tag is None else None
        rule: Limit
        for check in checks:
            n = len(check)
            if n == 2:
                rule, identity = check  # type: ignore[misc]
                c = cost
            elif n == 3:
                rule, identity, c = check  # type: ignore[misc]
                c = _cost(c)
            else:
                raise TypeError("each check is (limit, identity) or (limit, identity, cost)")
            if checked.get(id(rule)) is not rule:
                if not isinstance(rule, Limit):
                    raise TypeError(f"not a limit: {rule!r}")
                self._declare(rule)
            if type(identity) is not str and not isinstance(identity, str):
                identity = _identity_text(identity)
            if rule.key is not None:
                k = rule.key(identity)
            else:
                if head is None:
                    head = self._tags.get(tag)  # type: ignore[arg-type]
                    if head is None:
                        head = self._tag_head(tag)  # type: ignore[arg-type]
                k = f"{head}{rule.name}:{identity}"
            keys.append(k)
            items.append((rule, k, c))
        n = len(keys)
        if not n:
            raise ValueError("check_all needs at least one (limit, identity)")
        if n > 1:
            if (keys[0] == keys[1]) if n == 2 else len(set(keys)) != n:
                raise ValueError("check_all: a key appears twice (same limit name and identity)")
            if self.cluster:
                slots = {key_slot(k.encode("utf-8", "surrogateescape")) for k in keys}
                if len(slots) > 1:
                    raise CrossSlotError(
                        f"check_all keys map to {len(slots)} cluster slots; pass tag=... (e.g. the tenant id) "
                        "so all keys share one hash tag")
        if refund and any(not 1 <= item[2] <= 2**32 - 1 for item in items):
            raise ValueError("refund amounts must be ints from 1 to 4294967295")
        backend = self.backend
        if max_wait_ms is None and not refund and lease_id is None and type(backend) is ModuleBackend:
            # ModuleBackend.all(keys, specs) without the specs: the same arguments
            args: List[Any] = ["RL.ALL", n, *keys]
            for rule, _, c in items:
                args.append(rule.kind)
                args += rule.params
                if c != 1:
                    args += ("COST", c)
            return items, args
        specs = [(item[0], item[2], lease_id) for item in items]
        if max_wait_ms is None:
            args = backend.all(keys, specs, refund)
        else:
            check_max_wait(max_wait_ms, [item[0] for item in items])
            args = backend.all(keys, specs, refund, max_wait_ms=max_wait_ms)
        return items, args

    # --- durable ------------------------------------------------------------

    def pick(self, durable: DurableOption, default: Optional[Durable]) -> Optional[Durable]:
        """A call's durable= (None: the Limiter's) -> the Durable to use, or None."""
        if durable is None:
            return default
        d = resolve_durable(durable, self.timeout_ms)
        if d is not None and self.async_ and self.route:
            raise TypeError("durable= is not supported on redis.asyncio's RedisCluster (yet): use the sync "
                            "RedisCluster or a non-cluster client")
        return d

    def acked(self, acks: int, dur: Durable, what: str) -> bool:
        """True when enough replicas acknowledged; else counted and logged (once per streak)."""
        if acks >= dur.replicas:
            if self._undurable:
                self._undurable = False
                log.warning("redis_rl: replicas acknowledge writes again")
            return True
        self.durable_failures += 1
        if not self._undurable:
            self._undurable = True
            log.warning("redis_rl: %s: %d of %d replica(s) acknowledged within %d ms; denied (durable)", what,
                        acks, dur.replicas, dur.timeout_ms)
        return False

    def durable_single(self, d: Decision, acks: Optional[int], dur: Optional[Durable]) -> Decision:
        if dur is None or acks is None or not d.allowed or self.acked(acks, dur, d.name):
            return d
        return _not_durable(d, NotDurableError(acks, dur.replicas, d))

    def durable_all(self, d: Decision, acks: Optional[int], dur: Optional[Durable]) -> Decision:
        if dur is None or acks is None or not d.allowed or self.acked(acks, dur, d.name):
            return d
        err = NotDurableError(acks, dur.replicas, d)
        subs = [_not_durable(s, err) for s in d.decisions]
        return _not_durable(d, err, subs)

    # --- replies -----------------------------------------------------------

    def done(self, d: Decision, t0: float) -> Decision:
        if self._failing:
            self._failing = False
            log.warning("redis_rl: Redis answers again; failure policy no longer applied")
        m = self.metrics
        if m is not None:
            m.on_decision(d.name, d, time.perf_counter() - t0)
        return d

    def finish_single(self, reply: Any, rule: Limit, key: str, cost: int, t0: float,
                      acks: Optional[int] = None, dur: Optional[Durable] = None) -> Decision:
        d = single(reply, rule, key, cost)
        if dur is not None:
            d = self.durable_single(d, acks, dur)
        return self.done(d, t0)

    def finish_all(self, reply: Any, items: Sequence[Item], t0: float,
                   acks: Optional[int] = None, dur: Optional[Durable] = None) -> Decision:
        if type(reply) is list:  # RESP2, parse_all inlined
            allowed = bool(reply[0])
            retry = reply[1]
            replies = reply
            first = 2
        else:
            allowed, retry, replies = parse_all(reply)
            first = 0
        if len(replies) - first != len(items):
            raise TypeError(f"RL.ALL answered {len(replies) - first} limits for {len(items)} keys")
        subs: List[Decision] = []
        for i, (rule, key, c) in enumerate(items, first):
            r = replies[i]
            if type(r) is list and len(r) == 5:  # RESP2, a rate limit: single() inlined
                s = _new(Decision)
                s.allowed = bool(r[0])
                s.limit = r[1]
                s.remaining = r[2]
                s.retry_after_ms = r[3]
                s.reset_after_ms = r[4]
                s.lease = None
                s.wait_ms = 0
                s.name = rule.name
                s.key = key
                s.rule = rule
                s.cost = c
                s.source = SOURCE_REDIS
                s.error = None
                s._decisions = None
                s._denied_by = None
            else:
                s = single(r, rule, key, c)
            subs.append(s)
        d = combine_answered(allowed, retry, subs)
        if dur is not None:
            d = self.durable_all(d, acks, dur)
            allowed = d.allowed
        if self._failing:
            self._failing = False
            log.warning("redis_rl: Redis answers again; failure policy no longer applied")
        m = self.metrics
        if m is not None:
            latency = time.perf_counter() - t0
            for s in subs if allowed else d.denied_by:
                m.on_decision(s.name, s, latency)
        return d

    def finish_refund_all(self, reply: Any, items: Sequence[Item]) -> Decision:
        """refund_all's reply (no metrics: a refund is not a decision about a request)."""
        allowed, retry, replies = parse_all(reply)
        if len(replies) != len(items):
            raise TypeError(f"RL.ALL answered {len(replies)} limits for {len(items)} keys")
        return combine(allowed, retry, [single(r, rule, key, 0) for r, (rule, key, _) in zip(replies, items)])

    # --- the failure policy --------------------------------------------------

    def failure(self, exc: BaseException, items: Sequence[Item], t0: float, peek: bool = False) -> Decision:
        """Answer from the failure policy, or raise what no policy may absorb."""
        err = classify(exc)
        m = self.metrics
        if m is not None:
            for rule, _, _ in items:
                m.on_error(rule.name, exc)
        if err is not None:
            if err is exc:
                raise exc
            raise err from exc
        if not self._failing:
            self._failing = True
            log.warning("redis_rl: Redis unavailable (%s: %s); applying the failure policy", type(exc).__name__, exc)
        subs = [self.policy_decision(rule, key, c, exc, peek) for rule, key, c in items]
        if len(subs) == 1:
            d = subs[0]
        else:
            allowed = all(s.allowed for s in subs)
            denied = [s.retry_after_ms for s in subs if not s.allowed]
            retry = 0 if allowed else (-1 if -1 in denied else max(denied))
            d = combine(allowed, retry, subs)
        latency = time.perf_counter() - t0
        for s in subs:
            policy = _policy_name(s.rule.on_error or self.on_error) if s.rule else "?"
            self.fallback_count += 1
            self.fallbacks[(s.name, policy)] += 1
            if m is not None:
                m.on_fallback(s.name, policy)
                m.on_decision(s.name, s, latency)
            if self.on_fallback is not None:
                try:
                    self.on_fallback(s.rule, exc, s)  # type: ignore[arg-type]
                except Exception:  # a hook must not turn a decision into an outage
                    log.exception("redis_rl: on_fallback hook raised")
        return d

    def policy_decision(self, rule: Limit, key: str, cost: int, exc: BaseException, peek: bool) -> Decision:
        policy = rule.on_error or self.on_error
        if isinstance(policy, Local):
            capacity = max(1, math.floor(rule.quota * policy.share))
            a, lim, rem, retry, reset = self.local.take(key, capacity, max(1, rule.window_ms), cost, peek)
            # A local slot taken is a lease too: release(decision) or leases(decision) gives it back.
            lease = uuid.uuid4().hex if a and cost > 0 and not peek and isinstance(rule, Concurrency) else None
            return Decision(a, lim, rem, retry, reset, lease, name=rule.name, key=key, rule=rule, cost=cost,
                            source=SOURCE_LOCAL, error=exc)
        if policy == FAIL_OPEN:
            return Decision(True, rule.quota, 0, 0, 0, name=rule.name, key=key, rule=rule, cost=cost,
                            source=SOURCE_FAIL_OPEN, error=exc)
        return Decision(False, rule.quota, 0, FAIL_CLOSED_RETRY_MS, 0, name=rule.name, key=key, rule=rule, cost=cost,
                        source=SOURCE_FAIL_CLOSED, error=exc)

    def local_refund(self, d: Decision, amount: int) -> None:
        rule = d.rule
        if rule is None or d.source != SOURCE_LOCAL:
            return
        policy = rule.on_error or self.on_error
        if isinstance(policy, Local):
            capacity = max(1, math.floor(rule.quota * policy.share))
            self.local.refund(d.key, capacity, max(1, rule.window_ms), amount)


    @staticmethod
    def held_leases(decision: Decision) -> List[Tuple[Decision, Concurrency, str]]:
        """The per-limit decisions of `decision` that hold a lease (allowed Concurrency limits),
        each with its limit and its lease id."""
        return [(d, d.rule, d.lease) for d in decision.decisions
                if d.lease is not None and d.allowed and isinstance(d.rule, Concurrency)]

    def leases_to_release(self, decision: Decision) -> List[Tuple[str, str]]:
        """The (key, lease id) pairs of `decision` to end on the server. Leases a local fallback
        granted are given back here; fail-open and fail-closed ones hold nothing anywhere."""
        out = []
        for d in decision.decisions:
            if d.lease is None or not isinstance(d.rule, Concurrency):
                continue
            if d.source == SOURCE_LOCAL:
                self.local_refund(d, d.cost)
                d.lease = None  # given back once
            elif d.source == SOURCE_REDIS:
                out.append((d.key, d.lease))
        return out


def _identity_text(identity: Any) -> str:
    """An identity that is not a str, as the str its key holds."""
    if isinstance(identity, bytes):
        return identity.decode("utf-8", "surrogateescape")
    return str(identity)


def _cost(cost: object) -> int:
    if isinstance(cost, bool) or not isinstance(cost, int) or cost < 0 or cost > 2**32 - 1:
        raise ValueError(f"cost must be an int from 0 to 4294967295, not {cost!r}")
    return cost


check_cost = _cost

#: MAXWAIT's range (ms): a booking at most this far ahead
MAX_BOOKING_MS = 1_000_000
#: WAIT's range (ms) on RL.ACQUIRE
MAX_ACQUIRE_WAIT_MS = 600_000


def check_max_wait(max_wait_ms: object, rules: Sequence[Limit]) -> int:
    """max_wait_ms= of check/check_all/pace: an int 0..1,000,000 and only GCRA / token bucket limits
    (raised before any round trip)."""
    for rule in rules:
        if not rule.bookable:
            raise TypeError(f"max_wait_ms books a later start in a Gcra or TokenBucket limit; {rule.name!r} is a "
                            f"{type(rule).__name__} (use acquire(wait_ms=) to wait for a Concurrency slot, or "
                            "retry after decision.retry_after_ms)")
    if isinstance(max_wait_ms, bool) or not isinstance(max_wait_ms, int) or not 0 <= max_wait_ms <= MAX_BOOKING_MS:
        raise ValueError(f"max_wait_ms must be an int from 0 to {MAX_BOOKING_MS}, not {max_wait_ms!r}")
    return max_wait_ms


def check_wait_ms(wait_ms: object) -> int:
    """wait_ms= of acquire/lease: an int 1..600,000 (WAIT's range)."""
    if isinstance(wait_ms, bool) or not isinstance(wait_ms, int) or not 1 <= wait_ms <= MAX_ACQUIRE_WAIT_MS:
        raise ValueError(f"wait_ms must be an int from 1 to {MAX_ACQUIRE_WAIT_MS}, not {wait_ms!r}")
    return wait_ms


#: How late a server may answer a timed-out WAIT: Redis before 7.2 ends blocked clients'
#: timeouts in its cron, every 1000/hz ms (100 ms at the default hz 10), so `WAIT 1 50` there
#: answers up to about 150 ms after it was sent.
WAIT_SLACK_MS = 100


def wait_timeout(socket_timeout: Optional[float], dur: "Durable") -> Optional[float]:
    """The read timeout (s) of the WAIT replicas answer: its own timeout, the server's slack and
    the connection's socket timeout, so a WAIT that times out on the server is read as its answer
    (acks too few: a durable denial), never as a lost connection (the failure policy)."""
    return blocking_timeout(socket_timeout, (dur.timeout_ms or 0) + WAIT_SLACK_MS)


def blocking_timeout(socket_timeout: Optional[float], wait_ms: int) -> Optional[float]:
    """The read timeout (s) of an acquire that may block wait_ms on the server: the wait plus the
    connection's own socket timeout (the Limiter's timeout_ms when it made the pool), so the
    socket timeout never cuts a legitimate wait and a server that does not answer is still
    bounded; None (no bound) when the connection has no socket timeout."""
    if socket_timeout is None:
        return None
    return wait_ms / 1000 + float(socket_timeout)


def parse_int_reply(reply: Any) -> int:
    if isinstance(reply, bool):
        return int(reply)
    return int(reply)


__all__ = ["Core", "Check", "Durable", "Identity", "parse_fields", "Dict"]
