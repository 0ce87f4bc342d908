"""durable=: the decision and WAIT in one pipeline; unacknowledged writes denied (fail closed).
Leases in doubt: valid_until, in_doubt, on_lost when the deadline passes unconfirmed."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Iterator, List, Tuple

import pytest
import redis
import redis.asyncio

from conftest import run
from redis_rl import (AsyncLimiter, Concurrency, Durable, Gcra, Limiter, NotDurableError, RateLimited)
from redis_server import RedisServer


def wait_until(cond: Any, timeout: float = 5.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


@pytest.fixture(scope="module")
def pair() -> Iterator[Tuple[RedisServer, RedisServer]]:
    master = RedisServer()
    replica = RedisServer(extra=["--replicaof", "127.0.0.1", str(master.port)])
    try:
        rc = redis.Redis(port=replica.port, decode_responses=True)
        wait_until(lambda: rc.info("replication").get("master_link_status") == "up", 10, "the replica link")
        rc.close()
        yield master, replica
    finally:
        replica.stop()
        master.stop()


@pytest.fixture
def m(pair: Tuple[RedisServer, RedisServer], protocol: int) -> Iterator[redis.Redis]:
    client = redis.Redis(port=pair[0].port, protocol=protocol)
    client.flushall()
    client.config_resetstat()
    yield client
    pair[1].resume()
    client.close()


def waits(client: redis.Redis) -> int:
    return int(client.info("commandstats").get("cmdstat_wait", {}).get("calls", 0))


class Paused:
    """The replica stopped (SIGSTOP) for the block: WAIT gets no acknowledgement."""

    def __init__(self, server: RedisServer) -> None:
        self.server = server

    def __enter__(self) -> None:
        self.server.pause()

    def __exit__(self, *exc: Any) -> None:
        self.server.resume()


def test_options_are_checked() -> None:
    c = redis.Redis(port=1)
    assert Limiter(c).durable is None
    assert Limiter(c, durable=True).durable == Durable(1, 50)  # half the default timeout_ms
    assert Limiter(c, timeout_ms=300, durable=Durable(2)).durable == Durable(2, 150)
    assert Limiter(c, timeout_ms=None, durable=True).durable == Durable(1, 50)
    with pytest.raises(ValueError):
        Limiter(c, timeout_ms=100, durable=Durable(timeout_ms=100))  # WAIT would outlast the socket timeout
    with pytest.raises(ValueError):
        Durable(0)
    with pytest.raises(ValueError):
        Durable(1, 0)
    with pytest.raises(TypeError):
        Limiter(c, durable="yes")  # type: ignore[arg-type]


def test_acknowledged_check_sends_wait(m: redis.Redis) -> None:
    lim = Limiter(m, durable=True)
    g = Gcra(2, 60_000, name="g")
    d = lim.check(g, "u")
    assert (d.allowed, d.source) == (True, "redis") and waits(m) == 1
    assert lim.check(g, "u").allowed
    denied = lim.check(g, "u")
    assert (denied.allowed, denied.source, denied.status) == (False, "redis", 429)  # a real denial stays one
    assert lim.peek(g, "u").source == "redis" and waits(m) == 3  # peek: no WAIT
    assert lim.check(g, "u", 0).source == "redis" and waits(m) == 3  # COST 0: no WAIT
    assert lim.check(g, "v", durable=False).allowed and waits(m) == 3  # per call: off
    assert Limiter(m).check(g, "w", durable=True).allowed and waits(m) == 4  # per call: on
    assert lim.durable_failures == 0


def test_unacknowledged_check_is_denied(m: redis.Redis, pair: Tuple[RedisServer, RedisServer]) -> None:
    lim = Limiter(m, durable=Durable(1, 30), timeout_ms=500)
    g = Gcra(5, 60_000, name="g")
    with Paused(pair[1]):
        t0 = time.monotonic()
        d = lim.check(g, "u")
        assert time.monotonic() - t0 < 0.4
    assert (d.allowed, d.source, d.status) == (False, "durable", 503)
    assert d.headers() == {"Retry-After": "1"} and d.body()["error"] == "rate_limiter_unavailable"
    assert isinstance(d.error, NotDurableError) and d.error.acks == 0 and d.error.decision.allowed
    assert lim.durable_failures == 1
    # the unit stays consumed on the master (stricter, never looser)
    assert lim.peek(g, "u").remaining == 3
    # once the replica answers again, decisions are admitted
    wait_until(lambda: lim.check(g, "x").allowed, 5, "an acknowledged decision")


def test_a_wait_that_times_out_on_the_server_late_is_still_a_durable_denial(
        m: redis.Redis, pair: Tuple[RedisServer, RedisServer], protocol: int) -> None:
    # timeout_ms 100 and WAIT 90 ms (the default WAIT is half the timeout). Redis 7.0 ends a
    # WAIT's timeout in its cron, up to 100 ms late: its answer came after the 100 ms socket
    # timeout, and a durable denial was read as a lost connection (source fail_closed, the
    # failure policy's hook fired).
    fallbacks: List[Any] = []
    lim = Limiter(m, timeout_ms=100, durable=Durable(1, 90), on_fallback=lambda *a: fallbacks.append(a))
    g = Gcra(5, 60_000, name="slack")
    with Paused(pair[1]):
        d = lim.check(g, "u")
    assert (d.allowed, d.source, d.status) == (False, "durable", 503), d
    assert fallbacks == [] and lim.durable_failures == 1

    async def go() -> Any:
        am = redis.asyncio.Redis(port=pair[0].port, protocol=protocol)
        try:
            alim = AsyncLimiter(am, timeout_ms=100, durable=Durable(1, 90))
            with Paused(pair[1]):
                return await alim.check(g, "v")
        finally:
            await am.aclose()
    d = run(go())
    assert (d.allowed, d.source) == (False, "durable"), d


def test_check_all_and_refund(m: redis.Redis, pair: Tuple[RedisServer, RedisServer]) -> None:
    lim = Limiter(m, durable=Durable(1, 30), timeout_ms=500)
    a, b = Gcra(5, 60_000, name="a"), Gcra(5, 60_000, name="b")
    assert lim.check_all([(a, "u"), (b, "u")], tag="t").allowed and waits(m) == 1
    assert lim.refund(a, "u", 1, tag="t").source == "redis" and waits(m) == 2
    with Paused(pair[1]):
        d = lim.check_all([(a, "u"), (b, "u")], tag="t")
        assert (d.allowed, d.source, d.status) == (False, "durable", 503)
        assert [s.source for s in d.decisions] == ["durable", "durable"] and len(d.denied_by) == 2
        with pytest.raises(NotDurableError) as e:
            lim.refund(b, "u", 1, tag="t")
        assert e.value.decision is not None and e.value.decision.allowed
    assert lim.peek(b, "u", tag="t").remaining == 3  # 5 - 2 + 1 (refund done on the master) - the peek's 1


def test_acquire_unacknowledged_is_released(m: redis.Redis, pair: Tuple[RedisServer, RedisServer]) -> None:
    lim = Limiter(m, durable=Durable(1, 30), timeout_ms=500)
    c = Concurrency(1, 60_000, name="c")
    with lim.lease(c, "job") as lease:
        assert lease.durable == Durable(1, 30) and waits(m) == 1
        assert lease.renew() and waits(m) == 2
    assert waits(m) == 3  # the release waited too
    with Paused(pair[1]):
        lease = lim.acquire(c, "job")
        assert (lease.acquired, lease.decision.source, lease.id) == (False, "durable", None)
        with pytest.raises(RateLimited):
            with lim.lease(c, "job"):
                pass
    # the slot taken on the master was given back: the next acquire gets it
    wait_until(lambda: lim.acquire(c, "job").release(), 5, "a free slot")


def test_renew_unacknowledged_is_in_doubt(m: redis.Redis, pair: Tuple[RedisServer, RedisServer]) -> None:
    lim = Limiter(m, durable=Durable(1, 30), timeout_ms=500)
    lease = lim.acquire(Concurrency(1, 60_000, name="c"), "job")
    assert lease.acquired and not lease.in_doubt
    before = lease.valid_until
    with Paused(pair[1]):
        with pytest.raises(NotDurableError):
            lease.renew()
        assert lease.in_doubt and lease.valid_until == before and not lease.lost
    wait_until(lambda: lease.renew(), 5, "a confirmed renewal")
    assert not lease.in_doubt and lease.valid_until > before
    lease.release()


def test_lua_backend_durable(m: redis.Redis, pair: Tuple[RedisServer, RedisServer]) -> None:
    lim = Limiter(m, backend="lua", durable=Durable(1, 30), timeout_ms=500)
    g = Gcra(5, 60_000, name="lua")
    assert lim.check(g, "u").allowed and waits(m) == 1
    with Paused(pair[1]):
        assert lim.check(g, "u").source == "durable"


def test_async_durable(pair: Tuple[RedisServer, RedisServer], protocol: int) -> None:
    redis.Redis(port=pair[0].port).flushall()

    async def main() -> None:
        lim = AsyncLimiter(redis.asyncio.Redis(port=pair[0].port, protocol=protocol), durable=Durable(1, 30),
                           timeout_ms=500)
        g = Gcra(5, 60_000, name="g")
        c = Concurrency(1, 60_000, name="c")
        assert (await lim.check(g, "u")).allowed
        assert (await lim.check_all([(g, "v")])).allowed
        async with lim.lease(c, "job") as lease:
            assert await lease.renew() and lease.durable is not None
        pair[1].pause()
        try:
            d = await lim.check(g, "u")
            assert (d.allowed, d.source) == (False, "durable")
            assert (await lim.check_all([(g, "v")])).source == "durable"
            assert (await lim.acquire(c, "job")).decision.source == "durable"
            with pytest.raises(NotDurableError):
                await lim.refund(g, "u", 1)
        finally:
            pair[1].resume()
        assert lim.durable_failures == 4  # 3 denials and the refund
        await lim.aclose()

    run(main())


# --- leases in doubt -----------------------------------------------------------


def test_lease_deadline_fires_when_the_server_stops(fresh_server: RedisServer) -> None:
    lim = Limiter(redis.Redis(port=fresh_server.port), timeout_ms=100)
    lost = threading.Event()
    seen: List[bool] = []
    with lim.lease(Concurrency(1, 400, name="c"), "job", renew_every_ms=50,
                   on_lost=lambda lease: (seen.append(lease.in_doubt), lost.set())) as lease:
        time.sleep(0.12)  # a few confirmed renewals
        assert not lease.in_doubt and not lease.lost and lease.remaining_ms > 250
        fresh_server.pause()
        t_stop = time.monotonic()
        wait_until(lambda: lease.in_doubt, 2, "in doubt")
        assert lost.wait(2), "on_lost did not fire"
        # at the deadline: no later than lease_ms after the last confirmed renewal (+ a margin for the machine)
        assert time.monotonic() - t_stop < 0.4 + 0.3
        assert lease.lost and seen == [False]  # lost, no longer "in doubt": stop for good
        assert not lease.renew()  # past the deadline a lease stays lost
        fresh_server.resume()
    assert lease.released


def test_lease_in_doubt_then_confirmed(fresh_server: RedisServer) -> None:
    client = redis.Redis(port=fresh_server.port)
    lim = Limiter(client, timeout_ms=50)
    with lim.lease(Concurrency(1, 5_000, name="c"), "job", renew_every_ms=20) as lease:
        client.execute_command("CLIENT", "PAUSE", 300, "ALL")
        wait_until(lambda: lease.in_doubt, 2, "in doubt during the pause")
        assert not lease.lost
        wait_until(lambda: not lease.in_doubt, 3, "a confirmed renewal after the pause")
        assert not lease.lost and lease.remaining_ms > 4_000


def test_lease_without_renewer_has_a_deadline(fresh_server: RedisServer) -> None:
    lim = Limiter(redis.Redis(port=fresh_server.port))
    t0 = time.monotonic()
    lease = lim.acquire(Concurrency(1, 200, name="c"), "job")
    assert t0 <= lease.valid_until - 0.2 <= time.monotonic() and not lease.in_doubt
    wait_until(lambda: lease.in_doubt, 2, "the deadline")
    assert lease.remaining_ms == 0
    lease.release()


def test_async_lease_deadline(fresh_server: RedisServer) -> None:
    async def main() -> None:
        lim = AsyncLimiter(redis.asyncio.Redis(port=fresh_server.port), timeout_ms=100)
        lost = asyncio.Event()
        async with lim.lease(Concurrency(1, 400, name="c"), "job", renew_every_ms=50,
                             on_lost=lambda lease: lost.set()) as lease:
            await asyncio.sleep(0.12)
            assert not lease.in_doubt
            fresh_server.pause()
            t_stop = time.monotonic()
            await asyncio.wait_for(lost.wait(), 2)
            assert time.monotonic() - t_stop < 0.7 and lease.lost
            fresh_server.resume()
        await lim.aclose()

    run(main())


def test_check_on_concurrency_unacknowledged_releases(m: redis.Redis, pair: Tuple[RedisServer, RedisServer]) -> None:
    """check()/check_all() on a Concurrency limit acquire too: an unacknowledged one gives the slot back."""
    lim = Limiter(m, durable=Durable(1, 30), timeout_ms=500)
    c = Concurrency(1, 60_000, name="cc")
    with Paused(pair[1]):
        d = lim.check(c, "job")
        assert (d.allowed, d.source, d.lease) == (False, "durable", None)
        assert d.error.decision.lease is not None  # the server had granted it
        assert lim.check_all([(c, "job")]).source == "durable"
    got: List[Any] = []  # both slots taken above were released: the next acknowledged acquire gets one
    wait_until(lambda: got.append(lim.check(c, "job")) or got[-1].allowed, 5, "an acknowledged acquire")
    assert got[-1].source == "redis" and lim.release(got[-1]) == 1
