"""No server: limits as values, reply parsing, headers, status, body, keys, cross-slot checks."""

from __future__ import annotations

import json
import re
from typing import Any, List

import pytest
from redis.crc import key_slot

from redis_rl import (Concurrency, CrossSlotError, Decision, Gcra, Limiter, Local, Log, Quota, Slide,
                      TokenBucket)
from redis_rl.backend import ModuleBackend
from redis_rl.decision import combine, parse_all, parse_fields, single

SF_ITEM = re.compile(r'^"[A-Za-z0-9._:/-]+"(;[a-z]+=(\d+|"[A-Za-z0-9._:/-]+"))+$')


def sf_list(value: str) -> List[str]:
    items = value.split(", ")
    for item in items:
        assert SF_ITEM.match(item), item
    return items


class Recorder:
    """A stand-in client that records commands and must never be called by some tests."""

    def __init__(self, reply: Any = None) -> None:
        self.calls: List[Any] = []
        self.reply = reply

    def execute_command(self, *args: Any) -> Any:
        self.calls.append(args)
        return self.reply


def test_limits_validate_and_name() -> None:
    assert Gcra(100, 60_000).name == "gcra-100-per-60000ms"
    assert Gcra(100, 60_000, burst=10).params == (100, 60_000, "BURST", 10)
    assert TokenBucket(10, 1, 1000).window_ms == 10_000
    assert Quota(5, "month", tz="Europe/Berlin").params == (5, "MONTH", "TZ", "Europe/Berlin")
    assert Quota(5, 3_600_000).name == "quota-5-per-3600000ms"
    assert Concurrency(3, 1000).lease_ms == 1000
    for bad in (lambda: Gcra(0, 1000), lambda: Gcra(1, 0), lambda: Gcra(True, 1000), lambda: Log(10_001, 1),
                lambda: Quota(1, "FORTNIGHT"), lambda: Quota(1, 1000, tz="UTC"), lambda: Gcra(1, 1, name='a"b'),
                lambda: Concurrency(100_001, 1), lambda: Gcra(1, 1, on_error="maybe"), lambda: Local(0)):
        with pytest.raises((ValueError, TypeError)):
            bad()
    assert Gcra(1, 1, on_error="local").on_error == Local()
    assert Gcra(5, 1000) == Gcra(5, 1000) and hash(Gcra(5, 1000)) == hash(Gcra(5, 1000))


def test_args_built_per_kind() -> None:
    b = ModuleBackend()
    assert b.check(Gcra(5, 1000), "k", 1) == ["RL.GCRA", "k", 5, 1000]
    assert b.check(Gcra(5, 1000, burst=2), "k", 3) == ["RL.GCRA", "k", 5, 1000, "BURST", 2, "COST", 3]
    assert b.refund(Slide(5, 1000), "k", 2) == ["RL.SLIDE", "k", 5, 1000, "REFUND", 2]
    assert b.peek(TokenBucket(5, 1, 10), "k", 1) == ["RL.PEEK", "TOKENBUCKET", "k", 5, 1, 10]
    assert b.check(Concurrency(2, 500), "k", 1, "id1") == ["RL.ACQUIRE", "k", 2, 500, "ID", "id1"]
    assert b.all(["a", "b"], [(Gcra(1, 10), 1, None), (Quota(3, "DAY", tz="UTC"), 2, None)]) == [
        "RL.ALL", 2, "a", "b", "GCRA", 1, 10, "QUOTA", 3, "DAY", "TZ", "UTC", "COST", 2]
    with pytest.raises(TypeError):
        b.refund(Concurrency(1, 1), "k", 1)


@pytest.mark.parametrize("reply", [
    [0, 5, 0, 1200, 3000],
    {b"allowed": False, b"limit": 5, b"remaining": 0, b"retry_after_ms": 1200, b"reset_after_ms": 3000},
    {"allowed": False, "limit": 5, "remaining": 0, "retry_after_ms": 1200, "reset_after_ms": 3000},
])
def test_parse_single_resp2_resp3(reply: Any) -> None:
    assert parse_fields(reply) == (False, 5, 0, 1200, 3000, None)


def test_parse_lease_and_all() -> None:
    assert parse_fields([1, 2, 1, 0, 500, b"id-1"])[5] == "id-1"
    assert parse_fields({b"allowed": True, b"limit": 2, b"remaining": 1, b"retry_after_ms": 0,
                         b"reset_after_ms": 5, b"lease": b"x"})[5] == "x"
    resp2 = [0, -1, [1, 1, 0, 0, 1000], [0, 1, 1, -1, 0]]
    resp3 = {b"allowed": False, b"retry_after_ms": -1, b"limits": [
        {b"allowed": True, b"limit": 1, b"remaining": 0, b"retry_after_ms": 0, b"reset_after_ms": 1000},
        {b"allowed": False, b"limit": 1, b"remaining": 1, b"retry_after_ms": -1, b"reset_after_ms": 0}]}
    for reply in (resp2, resp3):
        allowed, retry, subs = parse_all(reply)
        assert (allowed, retry, len(subs)) == (False, -1, 2)
        assert [parse_fields(s)[3] for s in subs] == [0, -1]


def test_headers_syntax_and_t() -> None:
    g = Gcra(10, 60_000, name="api")
    # 4 of 10 left, full in 36 s: one unit per 6 s, so the 5th comes back in 36 - 5*6 = 6 s
    d = single([1, 10, 4, 0, 36_000], g, "k", 1)
    h = d.headers()
    assert h == {"RateLimit-Policy": '"api";q=10;w=60', "RateLimit": '"api";r=4;t=6'}
    assert d.status == 200 and "Retry-After" not in h
    denied = single([0, 10, 0, 2500, 60_000], g, "k", 1)
    h = denied.headers()
    assert h["Retry-After"] == "3" and h["RateLimit"] == '"api";r=0;t=3' and denied.status == 429
    q = single([1, 100, 99, 0, 3_600_000], Quota(100, "HOUR", name="hourly"), "k", 1)
    assert q.headers()["RateLimit"] == '"hourly";r=99;t=3600'
    full = single([1, 10, 10, 0, 0], g, "k", 0)
    assert full.headers()["RateLimit"] == '"api";r=10;t=0'


def test_never_is_413_and_concurrency_503() -> None:
    never = single([0, 10, 10, -1, 0], Gcra(10, 1000), "k", 11)
    assert never.never and never.status == 413 and "Retry-After" not in never.headers()
    assert never.body()["error"] == "request_too_large"
    full = single([0, 2, 0, 700, 900, None], Concurrency(2, 1000, name="upstream"), "k", 1)
    assert full.status == 503 and full.headers() == {"Retry-After": "1"}
    assert full.body()["error"] == "concurrency_limited"


def test_combined_most_restrictive_first() -> None:
    a = single([1, 100, 50, 0, 1000], Gcra(100, 1000, name="per-user"), "rl:per-user:alice", 1)
    b = single([0, 10, 0, 4000, 9000], Slide(10, 10_000, name="per-tenant"), "rl:per-tenant:acme", 1)
    c = single([0, 5, 0, 9000, 9000], Quota(5, 10_000, name="daily"), "rl:daily:acme", 1)
    d = combine(False, 9000, [a, b, c])
    assert [x.name for x in d.denied_by] == ["daily", "per-tenant"]
    assert d.name == "daily" and d.retry_after_ms == 9000 and d.status == 429
    h = d.headers()
    assert [i.split(";")[0] for i in sf_list(h["RateLimit"])] == ['"daily"', '"per-tenant"', '"per-user"']
    sf_list(h["RateLimit-Policy"])
    assert h["Retry-After"] == "9"
    body = json.dumps(d.body())
    assert "alice" not in body and "acme" not in body and '"limit": "daily"' in body
    ok = combine(True, 0, [single([1, 100, 50, 0, 1000], a.rule, "x", 1),  # type: ignore[arg-type]
                           single([1, 10, 3, 0, 1000], b.rule, "y", 1)])  # type: ignore[arg-type]
    assert ok.name == "per-tenant" and ok.remaining == 3 and ok.denied_by == []


def test_fail_sources_headers() -> None:
    d = Decision(False, 5, 0, 1000, 0, name="x", source="fail_closed")
    assert d.status == 503 and d.headers() == {"Retry-After": "1"} and d.body()["error"] == "rate_limiter_unavailable"
    assert Decision(True, 5, 0, 0, 0, source="fail_open").headers() == {}


def test_keys_tags_and_cross_slot_before_any_round_trip() -> None:
    rec = Recorder()
    lim = Limiter(rec, prefix="app:", cluster=True, timeout_ms=None)
    user, tenant = Gcra(10, 1000, name="user"), Slide(100, 1000, name="tenant")
    assert lim.key(user, "alice") == "app:user:alice"
    assert lim.key(user, "alice", tag="acme") == "app:{acme}:user:alice"
    assert key_slot(b"app:user:alice") != key_slot(b"app:tenant:alice")
    with pytest.raises(CrossSlotError):
        lim.check_all([(user, "alice"), (tenant, "alice")])
    assert rec.calls == []  # raised before any round trip
    rec.reply = [1, 0, [1, 10, 9, 0, 100], [1, 100, 99, 0, 10]]
    d = lim.check_all([(user, "alice"), (tenant, "acme", 3)], tag="acme")
    assert d.allowed and rec.calls[0][:4] == ("RL.ALL", 2, "app:{acme}:user:alice", "app:{acme}:tenant:acme")
    assert rec.calls[0][-2:] == ("COST", 3)
    custom = Gcra(1, 1, name="c", key=lambda ident: f"custom:{ident}")
    assert lim.key(custom, "z") == "custom:z"
    with pytest.raises(ValueError):
        lim.check_all([(user, "a"), (user, "a")], tag="t")


def test_tags_are_checked_every_time_and_their_cache_stays_bounded() -> None:
    lim = Limiter(Recorder(), prefix="p:", timeout_ms=None)
    user = Gcra(10, 1000, name="user")
    for bad in ("", "a{b", "a}b", "{", "}"):
        for _ in range(2):  # refused again: a bad tag is never remembered
            with pytest.raises(ValueError):
                lim.key(user, "x", tag=bad)
    with pytest.raises(TypeError):
        lim.key(user, "x", tag=7)  # type: ignore[arg-type]
    for n in range(10_000):
        assert lim.key(user, n, tag=f"t{n}") == f"p:{{t{n}}}:user:{n}"
    assert len(lim._core._tags) <= 4096
    assert lim.key(user, b"caf\xc3\xa9", tag="t1") == "p:{t1}:user:caf\u00e9"


def test_local_decision_t_is_the_next_unit_of_its_even_refill() -> None:
    from redis_rl.decision import SOURCE_LOCAL
    rule = Gcra(30, 3_600_000, name="fallback")
    # a local bucket of 3 per hour: one unit per 1200 s, whatever is left
    for remaining, reset_ms in ((2, 1_200_000), (1, 2_400_000), (0, 3_600_000)):
        d = Decision(True, 3, remaining, 0, reset_ms, name="fallback", rule=rule, source=SOURCE_LOCAL)
        assert d.headers() == {"RateLimit-Policy": '"fallback";q=3;w=3600', "RateLimit": f'"fallback";r={remaining};t=1200'}


def test_refund_all_arguments() -> None:
    b = ModuleBackend()
    g, t = Gcra(10, 1000), TokenBucket(5, 1, 100)
    assert b.all(["a", "b"], [(g, 3, None), (t, 1, None)], refund=True) == \
        ["RL.ALL", 2, "a", "b", "GCRA", 10, 1000, "REFUND", 3, "TOKENBUCKET", 5, 1, 100, "REFUND", 1]
    with pytest.raises(TypeError):
        b.all(["a"], [(Concurrency(1, 10), 1, None)], refund=True)


def test_check_all_sends_what_module_backend_all_builds() -> None:
    """check_all builds RL.ALL's arguments itself (the hot path): the same as ModuleBackend.all."""
    g, s, c = Gcra(10, 1000, burst=20, name="g"), Slide(5, 60_000, name="s"), Concurrency(3, 10_000, name="c")
    custom = TokenBucket(5, 1, 100, name="k", key=lambda ident: f"own:{ident}")
    reply = [1, 0] + [[1, 10, 9, 0, 100]] * 3
    cases: List[Any] = [
        ([(g, "u"), (s, "u")], 1, None),
        ([(g, "u"), (s, "u", 3)], 2, "t"),
        ([(g, b"caf\xc3\xa9"), (c, 7), (custom, "x")], 1, "acme"),
        ([(s, "only", 0)], 1, None),
    ]
    for checks, cost, tag in cases:
        rec = Recorder(reply[:2 + len(checks)])
        lim = Limiter(rec, prefix="p:", timeout_ms=None)
        lim.check_all(checks, cost, tag=tag)
        keys = [lim.key(ch[0], ch[1], tag) for ch in checks]
        specs = [(ch[0], ch[2] if len(ch) == 3 else cost, None) for ch in checks]
        assert list(rec.calls[0]) == ModuleBackend().all(keys, specs)


def test_check_all_refuses_bad_checks_before_any_round_trip() -> None:
    g, s = Gcra(10, 1000, name="g"), Slide(5, 60_000, name="s")
    rec = Recorder([1, 0, [1, 1, 0, 0, 1000]])
    lim = Limiter(rec, timeout_ms=None)
    with pytest.raises(ValueError, match="at least one"):
        lim.check_all([], tag="{bad}")  # no check: the tag is never looked at
    with pytest.raises(TypeError, match="not a limit"):
        lim.check_all([(g, "u"), ("g", "u")])
    with pytest.raises(TypeError, match="each check is"):
        lim.check_all([(g,)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="appears twice"):
        lim.check_all([(g, "u"), (g, "u")])
    with pytest.raises(ValueError, match="appears twice"):
        lim.check_all([(g, "u"), (s, "u"), (g, "u")])
    with pytest.raises(ValueError):
        lim.check_all([(g, "u"), (s, "u", -1)])
    with pytest.raises(ValueError):
        lim.check_all([(g, "u")], True)  # a bool is no cost
    with pytest.raises(ValueError):
        lim.check_all([(g, "u")], tag="a{b")
    own = Gcra(1, 1000, name="own", key=lambda ident: f"own:{ident}")
    lim.check_all([(own, "u")], tag="a{b")  # a key function ignores the tag, as key() does
    assert rec.calls == [("RL.ALL", 1, "own:u", "GCRA", 1, 1000)]


def test_check_all_combines_as_combine_does() -> None:
    """check_all's own combination of RL.ALL's answers (one pass) picks what combine() picks."""
    g, s, t = Gcra(10, 1000, name="g"), Slide(10, 1000, name="s"), TokenBucket(10, 1, 100, name="t")
    replies = [
        [1, 0, [1, 10, 5, 0, 100], [1, 10, 5, 0, 300], [1, 10, 2, 0, 50]],  # the least room
        [1, 0, [1, 10, 5, 0, 100], [1, 10, 5, 0, 300], [1, 10, 5, 0, 300]],  # ties: longest reset, then first
        [0, 70, [1, 10, 5, 0, 100], [0, 10, 0, 70, 300], [0, 10, 0, 20, 50]],  # denied: the longest wait
        [0, -1, [0, 10, 0, 5, 100], [0, 10, 0, -1, 300], [1, 10, 9, 0, 50]],  # never beats any wait
        [0, 0, [1, 10, 5, 0, 100], [1, 10, 3, 0, 300], [1, 10, 4, 0, 50]],  # denied with no denying limit
    ]
    for reply in replies:
        for resp3 in (False, True):
            names = ("allowed", "limit", "remaining", "retry_after_ms", "reset_after_ms")
            sent: Any = reply
            if resp3:
                sent = {b"allowed": bool(reply[0]), b"retry_after_ms": reply[1],
                        b"limits": [{n.encode(): v for n, v in zip(names, r)} for r in reply[2:]]}
            lim = Limiter(Recorder(sent), timeout_ms=None)
            d = lim.check_all([(g, "u", 2), (s, "u"), (t, "u")])
            subs = [single(r, rule, lim.key(rule, "u"), cost) for r, rule, cost in zip(reply[2:], (g, s, t), (2, 1, 1))]
            want = combine(bool(reply[0]), reply[1], subs)
            for field in ("allowed", "limit", "remaining", "retry_after_ms", "reset_after_ms", "name", "key", "cost",
                          "source", "lease", "wait_ms"):
                assert getattr(d, field) == getattr(want, field), (reply, resp3, field)
            assert [x.name for x in d.denied_by] == [x.name for x in want.denied_by]
            assert [(x.name, x.remaining, x.reset_after_ms) for x in d.decisions] == \
                [(x.name, x.remaining, x.reset_after_ms) for x in want.decisions]
