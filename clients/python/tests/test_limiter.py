"""Limiter and AsyncLimiter against a real server, RESP2 and RESP3, bytes and decoded replies."""

from __future__ import annotations

from typing import Any, Callable, List

import pytest
import redis
import redis.asyncio

from conftest import run
from redis_rl import (AsyncLimiter, Concurrency, Gcra, Limiter, Log, Quota, RateLimited, Slide, TokenBucket)

KINDS = [Gcra(3, 60_000), TokenBucket(3, 1, 60_000), Slide(3, 60_000), Log(3, 60_000), Quota(3, "DAY"),
         Quota(3, 60_000), Concurrency(3, 60_000)]


@pytest.mark.parametrize("limit", KINDS, ids=lambda l: l.name)
def test_every_kind_exhausts(r: redis.Redis, limit: Any) -> None:
    lim = Limiter(r)
    ds = [lim.check(limit, "alice") for _ in range(4)]
    assert [d.allowed for d in ds] == [True, True, True, False]
    assert [d.remaining for d in ds[:3]] == [2, 1, 0]
    assert all(d.limit == 3 for d in ds)
    last = ds[-1]
    assert last.retry_after_ms > 0 and last.status == (503 if isinstance(limit, Concurrency) else 429)
    assert int(last.headers()["Retry-After"]) >= 1
    assert last.key == "rl:" + limit.name + ":alice" and last.source == "redis"
    if isinstance(limit, Concurrency):
        assert all(isinstance(d.lease, str) for d in ds[:3]) and last.lease is None
    # another identity is not affected
    assert lim.check(limit, "bob").allowed


def test_cost_and_never(r: redis.Redis) -> None:
    lim = Limiter(r)
    g = Gcra(10, 60_000)
    assert lim.check(g, "u", 7).remaining == 3
    d = lim.check(g, "u", 11)
    assert not d.allowed and d.never and d.status == 413
    assert lim.check(g, "u", 3).remaining == 0


def test_peek_consumes_nothing_and_refund_gives_back(r: redis.Redis) -> None:
    lim = Limiter(r)
    g = Gcra(5, 60_000)
    lim.check(g, "u", 4)
    p = lim.peek(g, "u", 1)
    assert p.allowed and p.remaining == 0
    assert lim.peek(g, "u", 2).allowed is False
    assert lim.peek(g, "u", 0).remaining == 1  # still 1 left: peeks took nothing
    back = lim.refund(g, "u", 3)
    assert back.allowed and back.remaining == 4


def test_check_all_combined(r: redis.Redis) -> None:
    lim = Limiter(r)
    user, tenant = Gcra(100, 60_000, name="user"), Slide(2, 60_000, name="tenant")
    a = lim.check_all([(user, "alice"), (tenant, "acme")], tag="acme")
    b = lim.check_all([(user, "alice"), (tenant, "acme")], tag="acme")
    c = lim.check_all([(user, "alice"), (tenant, "acme")], tag="acme")
    assert (a.allowed, b.allowed, c.allowed) == (True, True, False)
    assert [d.name for d in c.decisions] == ["user", "tenant"]
    assert [d.name for d in c.denied_by] == ["tenant"] and c.name == "tenant"
    assert c.retry_after_ms == c.denied_by[0].retry_after_ms > 0
    assert c.headers()["RateLimit"].startswith('"tenant";r=0')
    # all or nothing: the denied call consumed nothing from "user"
    assert lim.peek(user, "alice", 0, tag="acme").remaining == 98
    # per-check cost, never
    n = lim.check_all([(user, "bob"), (Gcra(5, 1000, name="small"), "bob", 6)], tag="bob")
    assert n.never and n.status == 413 and n.denied_by[0].name == "small"


def test_check_all_with_concurrency_and_release(r: redis.Redis) -> None:
    lim = Limiter(r)
    rate, slots = Gcra(10, 60_000, name="rate"), Concurrency(1, 60_000, name="slots")
    d = lim.check_all([(rate, "u"), (slots, "u")], tag="u")
    assert d.allowed and d.lease is not None and d.decisions[1].lease == d.lease
    e = lim.check_all([(rate, "u"), (slots, "u")], tag="u")
    assert not e.allowed and e.status == 503 and e.denied_by[0].name == "slots"
    assert lim.release(d) == 1
    assert lim.check_all([(rate, "u"), (slots, "u")], tag="u").allowed


def test_lease_context_releases_on_exception(r: redis.Redis) -> None:
    lim = Limiter(r)
    c = Concurrency(1, 60_000)
    with pytest.raises(KeyError):
        with lim.lease(c, "job") as lease:
            assert lease.id and lease.acquired
            with pytest.raises(RateLimited) as denied:
                with lim.lease(c, "job"):
                    pass
            assert denied.value.decision.status == 503
            raise KeyError("boom")
    assert lease.released and not lease.lost
    with lim.lease(c, "job") as again:
        assert again.acquired
    assert lease.release() is False  # idempotent


def test_lease_lost_detection_and_renewer(r: redis.Redis, raw: redis.Redis) -> None:
    lim = Limiter(r)
    c = Concurrency(1, 60_000, name="work")
    lost = []
    with lim.lease(c, "j", on_lost=lost.append) as lease:
        assert lease.renew() is True
        raw.delete("rl:work:j")  # the lease is gone (as after an expiry)
        assert lease.renew() is False and lease.lost and lost == [lease]


def test_lease_renewer(server: Any, raw: redis.Redis) -> None:
    import time
    lim = Limiter(redis.Redis(port=server.port))
    short = Concurrency(1, 1000, name="short")  # a 1 s lease renewed every 100 ms outlives its lease_ms
    raw.delete("rl:short:j")
    with lim.lease(short, "j", renew_every_ms=100) as held:
        deadline = time.monotonic() + 1.3
        while time.monotonic() < deadline:
            time.sleep(0.05)
        assert raw.pttl("rl:short:j") > 0
        assert not lim.check(short, "j").allowed  # still held after more than lease_ms
        assert not held.lost
    assert lim.check(short, "j").allowed


def test_reserve_settle_exactly_once(r: redis.Redis) -> None:
    lim = Limiter(r)
    tokens = TokenBucket(1000, 1000, 60_000, name="tokens")
    res = lim.reserve(tokens, "k", 400)
    assert res.allowed and res.decision.remaining == 600
    first = res.settle(100)
    assert first is not None and first.remaining == 900
    assert res.settle(100) is first  # idempotent: no second refund
    assert res.settle(0) is first
    assert lim.peek(tokens, "k", 0).remaining == 900
    with lim.reserve(tokens, "k", 500) as r2:
        pass  # no settle: all 500 stay consumed
    assert r2.settled and r2.settle(0) is None
    assert lim.peek(tokens, "k", 0).remaining == 400
    with pytest.raises(RuntimeError):
        with lim.reserve(tokens, "k", 100) as r3:
            try:
                raise RuntimeError("work failed")
            finally:
                r3.settle(0)  # the work raised: refund all of it, once
    assert r3.settle(0) is r3.refund_decision
    assert lim.peek(tokens, "k", 0).remaining == 400
    with pytest.raises(RateLimited):
        with lim.reserve(tokens, "k", 1001):
            pass
    over = lim.reserve(tokens, "k", 10)
    over.settle(15)  # 5 more than reserved are charged
    assert lim.peek(tokens, "k", 0).remaining == 385


def test_async_limiter(ar: Callable[[], redis.asyncio.Redis]) -> None:
    async def main() -> None:
        client = ar()
        lim = AsyncLimiter(client)
        g = Gcra(2, 60_000)
        ds = [await lim.check(g, "a") for _ in range(3)]
        assert [d.allowed for d in ds] == [True, True, False] and ds[2].status == 429
        assert (await lim.peek(g, "a", 0)).remaining == 0
        assert (await lim.refund(g, "a", 1)).remaining == 1
        user, team = Gcra(10, 60_000, name="user"), Gcra(1, 60_000, name="team")
        assert (await lim.check_all([(user, "a"), (team, "t")], tag="t")).allowed
        d = await lim.check_all([(user, "a"), (team, "t")], tag="t")
        assert not d.allowed and d.denied_by[0].name == "team"
        c = Concurrency(1, 60_000, name="c")
        async with lim.lease(c, "x") as lease:
            assert lease.acquired
            with pytest.raises(RateLimited):
                async with lim.lease(c, "x"):
                    pass
        assert (await lim.check(c, "x")).allowed
        res = await lim.reserve(TokenBucket(100, 100, 60_000, name="tb"), "x", 50)
        assert (await res.settle(20)).remaining == 80  # type: ignore[union-attr]
        assert await res.settle(20) is res.refund_decision
        async with lim.reserve(TokenBucket(100, 100, 60_000, name="tb"), "y", 30) as r2:
            assert r2.decision.remaining == 70
        await lim.aclose()
        await client.aclose()
    run(main())


def test_async_lease_released_on_cancellation(ar: Callable[[], redis.asyncio.Redis]) -> None:
    import asyncio

    async def main() -> None:
        client = ar()
        lim = AsyncLimiter(client)
        c = Concurrency(1, 60_000, name="cancel")
        entered = asyncio.Event()

        async def worker() -> None:
            async with lim.lease(c, "w"):
                entered.set()
                await asyncio.sleep(30)

        task = asyncio.ensure_future(worker())
        await asyncio.wait_for(entered.wait(), 5)
        assert not (await lim.peek(c, "w")).allowed
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await lim.peek(c, "w")).allowed  # released by the cancellation
        await lim.aclose()
        await client.aclose()
    run(main())


def test_own_pool_closed_but_client_untouched(server: Any) -> None:
    client = redis.Redis(port=server.port)
    with Limiter(client) as lim:
        lim.check(Gcra(5, 1000), "u")
        own = lim.client.connection_pool
        assert own is not client.connection_pool and len(own._available_connections) == 1
    assert len(own._available_connections) == 0 or all(c._sock is None for c in own._available_connections)
    assert client.ping()
    shared = Limiter(client, timeout_ms=None)
    assert shared.client is client
    shared.close()
    assert client.ping()


def test_async_renewer_and_lost_lease(server: Any, raw: redis.Redis) -> None:
    import asyncio

    async def main() -> None:
        client = redis.asyncio.Redis(port=server.port)
        lim = AsyncLimiter(client)
        short = Concurrency(1, 1000, name="ashort")
        raw.delete("rl:ashort:j", "rl:alost:j")
        async with lim.lease(short, "j", renew_every_ms=100) as held:
            await asyncio.sleep(1.3)  # longer than lease_ms: only the renewer keeps it
            assert not (await lim.peek(short, "j")).allowed and not held.lost
        assert (await lim.peek(short, "j")).allowed
        lost: List[Any] = []

        async def on_lost(lease: Any) -> None:
            lost.append(lease)

        async with lim.lease(Concurrency(1, 60_000, name="alost"), "j", on_lost=on_lost) as lease:
            raw.delete("rl:alost:j")
            assert await lease.renew() is False and lease.lost
            await asyncio.sleep(0)  # the coroutine callback runs as a task
            await asyncio.sleep(0)
        assert lost == [lease]
        await lim.aclose()
        await client.aclose()
    run(main())
