"""Waiting instead of failing: max_wait_ms bookings (MAXWAIT), pace(), and acquire(wait_ms=) (WAIT).

Bookings run on a server with a frozen fake clock, so every wait_ms is exact;
pace()'s sleep is patched (it records what it would sleep) except where a real
cancel must cut a real sleep. Blocking acquires run on a real-clock server
(the server's own timers end a WAIT), each bounded in real time.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Iterator, List, Optional

import pytest
import redis
import redis.asyncio

import redis_rl.aio
import redis_rl.limiter
from conftest import run
from fake_clock import FakeClock, shim_env
from redis_rl import (AsyncLimiter, Concurrency, Durable, Gcra, Limiter, Log, NotSupportedError, Quota, RateLimited,
                      Slide, TokenBucket, WaitCancelled)
from redis_rl.decision import Decision, combine, parse_fields, parse_reply, single
from redis_server import RedisServer

# one unit every 100 ms, none banked: bookings start exactly 100 ms apart
#: the Limiter's timeout where the timeout is not what a test is about (a loaded machine is slow)
SLOW_MS = 2000
PACED = Gcra(10, 1000, burst=1, name="paced")


# --- parsing (no server) ------------------------------------------------------

def test_wait_ms_parsed_from_every_reply_form() -> None:
    assert parse_reply([1, 1, 0, 0, 300, 200]) == (True, 1, 0, 0, 300, None, 200)
    assert parse_reply([1, 1, 0, 0, 100]) == (True, 1, 0, 0, 100, None, 0)
    assert parse_reply([1, 2, 1, 0, 500, b"lease-1"]) == (True, 2, 1, 0, 500, "lease-1", 0)
    assert parse_reply([0, 2, 0, 40, 500, None]) == (False, 2, 0, 40, 500, None, 0)
    resp3 = {b"allowed": True, b"limit": 1, b"remaining": 0, b"retry_after_ms": 0, b"reset_after_ms": 300,
             b"wait_ms": 200}
    assert parse_reply(resp3)[6] == 200
    assert parse_reply({k.decode(): v for k, v in resp3.items()})[6] == 200
    assert parse_fields([1, 1, 0, 0, 300, 200]) == (True, 1, 0, 0, 300, None)  # the 6-field form keeps its shape
    d = single([1, 1, 0, 0, 300, 200], PACED, "k", 1)
    assert d.wait_ms == 200 and d.booked and d.lease is None and "wait_ms=200" in repr(d)
    assert single([1, 1, 0, 0, 100], PACED, "k", 1).wait_ms == 0
    assert not Decision(False, 1, 0, 50, 50).booked
    subs = [single([1, 1, 0, 0, 300, 200], PACED, "a", 1), single([1, 5, 4, 0, 300, 200], PACED, "b", 1)]
    assert combine(True, 0, subs).wait_ms == 200


def test_usage_errors_before_any_round_trip() -> None:
    # nothing listens on this port: a round trip would answer from the failure policy, not raise
    lim = Limiter(redis.Redis(port=1, socket_connect_timeout=0.2))
    for other in (Slide(3, 1000), Log(3, 1000), Quota(3, "DAY"), Concurrency(3, 1000)):
        with pytest.raises(TypeError, match="max_wait_ms"):
            lim.check(other, "u", max_wait_ms=100)
        with pytest.raises(TypeError, match="max_wait_ms"):
            lim.pace(other, "u", max_wait_ms=100)
        with pytest.raises(TypeError, match="max_wait_ms"):
            lim.check_all([(PACED, "u"), (other, "u")], max_wait_ms=100)
    for bad in (-1, 1_000_001, 1.5, True, "10"):
        with pytest.raises(ValueError, match="max_wait_ms"):
            lim.check(PACED, "u", max_wait_ms=bad)  # type: ignore[arg-type]
    for bad in (0, 600_001, -5, 2.0):
        with pytest.raises(ValueError, match="wait_ms"):
            lim.acquire(Concurrency(1, 1000), "u", wait_ms=bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        lim.acquire(PACED, "u", wait_ms=10)  # type: ignore[arg-type]
    cancelled = threading.Event()
    cancelled.set()
    with pytest.raises(WaitCancelled) as exc:
        lim.pace(PACED, "u", max_wait_ms=100, cancel=cancelled)
    assert exc.value.decision is None and exc.value.refund is None
    assert lim.fallback_count == 0

    alim = AsyncLimiter(redis.asyncio.Redis(port=1, socket_connect_timeout=0.2))

    async def go() -> None:
        with pytest.raises(TypeError, match="max_wait_ms"):
            await alim.pace(Slide(3, 1000), "u", max_wait_ms=100)
        with pytest.raises(ValueError, match="wait_ms"):
            await alim.acquire(Concurrency(1, 1000), "u", wait_ms=0)
    run(go())
    assert alim.fallback_count == 0


# --- bookings on a frozen clock ---------------------------------------------------

@pytest.fixture(scope="module")
def clock_env() -> Iterator[Any]:
    yield shim_env()


@pytest.fixture(scope="module")
def frozen_server(clock_env: Any) -> Iterator[RedisServer]:
    s = RedisServer(env=clock_env[1])
    yield s
    s.stop()


@pytest.fixture
def clock(clock_env: Any) -> FakeClock:
    c: FakeClock = clock_env[0]
    c.set(c.now_us + 3_600_000_000)  # an hour on: every key of an earlier test is idle again
    return c


@pytest.fixture
def fr(frozen_server: RedisServer, clock: FakeClock, protocol: int, decode: bool) -> Iterator[redis.Redis]:
    client = redis.Redis(port=frozen_server.port, protocol=protocol, decode_responses=decode)
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> List[float]:
    """pace()'s sleeps, recorded instead of slept."""
    seen: List[float] = []

    def fake(seconds: float, cancel: Any) -> bool:
        seen.append(seconds)
        return False
    monkeypatch.setattr(redis_rl.limiter, "_pause", fake)
    return seen


def state(client: redis.Redis, key: str, limit: Any = PACED) -> tuple:
    """The limiter's state as it is (COST 0 writes nothing), in one protocol-independent form."""
    return parse_reply(client.execute_command(limit.command, key, *limit.params, "COST", 0))[:5]


def test_bookings_start_one_interval_apart(fr: redis.Redis) -> None:
    lim = Limiter(fr, timeout_ms=SLOW_MS)
    ds = [lim.check(PACED, "u", max_wait_ms=300) for _ in range(4)]
    assert [(d.allowed, d.wait_ms) for d in ds] == [(True, 0), (True, 100), (True, 200), (True, 300)]
    assert [d.booked for d in ds] == [False, True, True, True] and all(d.status == 200 for d in ds)
    late = lim.check(PACED, "u", max_wait_ms=300)  # would start in 400 ms: denied, nothing booked
    assert not late.allowed and late.wait_ms == 0 and late.retry_after_ms == 400 and late.status == 429
    plain = lim.check(PACED, "u")  # a call without MAXWAIT reads the bookings exactly
    assert not plain.allowed and plain.retry_after_ms == 400
    assert lim.peek(PACED, "u", max_wait_ms=400).wait_ms == 400  # peek answers the booking, makes none
    assert lim.check(PACED, "u", max_wait_ms=400).wait_ms == 400
    never = lim.check(PACED, "u", 2, max_wait_ms=1_000_000)  # above the burst: can never fit
    assert not never.allowed and never.never


def test_token_bucket_and_check_all_book_one_start(fr: redis.Redis) -> None:
    lim = Limiter(fr, timeout_ms=SLOW_MS)
    bucket = TokenBucket(2, 1, 50, name="bucket")  # 2 banked, then one every 50 ms
    assert [lim.check(bucket, "u", max_wait_ms=100).wait_ms for _ in range(4)] == [0, 0, 50, 100]
    pair = [(PACED, "t"), (bucket, "t")]
    first = lim.check_all(pair, tag="t", max_wait_ms=1000)
    second = lim.check_all(pair, tag="t", max_wait_ms=1000)
    third = lim.check_all(pair, tag="t", max_wait_ms=1000)
    assert (first.wait_ms, second.wait_ms, third.wait_ms) == (0, 100, 200)
    assert [d.wait_ms for d in third.decisions] == [200, 200]  # every limit books the same start
    assert lim.check_all(pair, tag="t", max_wait_ms=250).allowed is False  # 300 > 250: all or nothing
    assert lim.check_all(pair, tag="t", max_wait_ms=300).wait_ms == 300


def test_pace_sleeps_exactly_wait_ms(fr: redis.Redis, pauses: List[float]) -> None:
    lim = Limiter(fr, timeout_ms=SLOW_MS)
    got = [lim.pace(PACED, "u", max_wait_ms=1000) for _ in range(3)]
    assert [d.wait_ms for d in got] == [0, 100, 200]
    assert pauses == [0.1, 0.2]  # no sleep for the start at once
    with pytest.raises(RateLimited) as exc:
        lim.pace(PACED, "u", max_wait_ms=250)  # 300 ms out: denied
    assert exc.value.decision.retry_after_ms == 300 and pauses == [0.1, 0.2]
    with pytest.raises(RateLimited) as exc:
        lim.pace(PACED, "u", 5, max_wait_ms=1000)
    assert exc.value.decision.never


def test_concurrent_pacers_start_one_interval_apart(fr: redis.Redis, pauses: List[float]) -> None:
    lim = Limiter(fr, timeout_ms=SLOW_MS)
    out: List[int] = []
    lock = threading.Lock()

    def worker() -> None:
        d = lim.pace(PACED, "shared", max_wait_ms=2000)
        with lock:
            out.append(d.wait_ms)
    threads = [threading.Thread(target=worker) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert not any(t.is_alive() for t in threads)
    assert sorted(out) == [100 * i for i in range(12)]
    assert sorted(pauses) == [i / 10 for i in range(1, 12)]


class _SetDuringWait:
    """A cancel event that is set while pace waits (wait returns True at once)."""

    def __init__(self) -> None:
        self.waited: List[Optional[float]] = []

    def is_set(self) -> bool:
        return bool(self.waited)

    def wait(self, timeout: Optional[float] = None) -> bool:
        self.waited.append(timeout)
        return True


def test_pace_cancel_refunds_the_booking(fr: redis.Redis) -> None:
    lim = Limiter(fr, timeout_ms=SLOW_MS)
    key = lim.key(PACED, "u")
    lim.check(PACED, "u")
    before = state(fr, key)
    cancel = _SetDuringWait()
    with pytest.raises(WaitCancelled) as exc:
        lim.pace(PACED, "u", max_wait_ms=1000, cancel=cancel)
    assert cancel.waited == [0.1]
    err = exc.value
    assert err.decision is not None and err.decision.wait_ms == 100 and err.refund is not None
    assert state(fr, key) == before  # the booking was given back: nothing lost
    # a fresh key: the refund empties it again (full limiters have no key)
    lim.check(PACED, "v")
    with pytest.raises(WaitCancelled):
        lim.pace(PACED, "v", max_wait_ms=1000, cancel=_SetDuringWait())
    assert state(fr, lim.key(PACED, "v")) == state(fr, key)


def test_pace_cancel_cuts_a_real_sleep(fr: redis.Redis) -> None:
    lim = Limiter(fr, timeout_ms=SLOW_MS)
    key = lim.key(PACED, "u")
    for _ in range(50):  # the next start is 5 s out (the clock is frozen: it stays there)
        lim.check(PACED, "u", max_wait_ms=10_000)
    before = state(fr, key)
    cancel = threading.Event()
    timer = threading.Timer(0.05, cancel.set)
    timer.start()
    t = time.monotonic()
    with pytest.raises(WaitCancelled) as exc:
        lim.pace(PACED, "u", max_wait_ms=10_000, cancel=cancel)
    assert time.monotonic() - t < 3.0
    assert exc.value.decision is not None and exc.value.decision.wait_ms == 5000
    assert state(fr, key) == before
    timer.cancel()


class Interrupt(BaseException):
    """Stands in for KeyboardInterrupt (which pytest would take as the user's)."""


def test_pace_interrupted_during_the_sleep_refunds(fr: redis.Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(seconds: float, cancel: Any) -> bool:
        raise Interrupt()
    monkeypatch.setattr(redis_rl.limiter, "_pause", interrupted)
    lim = Limiter(fr, timeout_ms=SLOW_MS)
    lim.check(PACED, "u")
    before = state(fr, lim.key(PACED, "u"))
    with pytest.raises(Interrupt):
        lim.pace(PACED, "u", max_wait_ms=1000)
    assert state(fr, lim.key(PACED, "u")) == before


def test_pace_without_cancel_really_sleeps(fr: redis.Redis) -> None:
    lim = Limiter(fr, timeout_ms=SLOW_MS)
    lim.check(PACED, "u")
    t = time.monotonic()
    d = lim.pace(PACED, "u", max_wait_ms=1000)
    took = time.monotonic() - t
    assert d.wait_ms == 100 and 0.1 <= took < 2.0


def test_async_pace(frozen_server: RedisServer, clock: FakeClock, protocol: int,
                    monkeypatch: pytest.MonkeyPatch) -> None:
    seen: List[float] = []

    async def fake(seconds: float) -> None:
        seen.append(seconds)
    monkeypatch.setattr(redis_rl.aio, "_pause", fake)
    redis.Redis(port=frozen_server.port).flushall()

    async def go() -> None:
        lim = AsyncLimiter(redis.asyncio.Redis(port=frozen_server.port, protocol=protocol), timeout_ms=SLOW_MS)
        ds = await asyncio.gather(*(lim.pace(PACED, "shared", max_wait_ms=2000) for _ in range(12)))
        assert sorted(d.wait_ms for d in ds) == [100 * i for i in range(12)]
        assert sorted(seen) == [i / 10 for i in range(1, 12)]
        with pytest.raises(RateLimited):
            await lim.pace(PACED, "shared", max_wait_ms=1000)
        d = await lim.check_all([(PACED, "x"), (TokenBucket(1, 1, 100), "x")], tag="x", max_wait_ms=500)
        e = await lim.check_all([(PACED, "x"), (TokenBucket(1, 1, 100), "x")], tag="x", max_wait_ms=500)
        assert (d.wait_ms, e.wait_ms) == (0, 100)
        assert (await lim.peek(PACED, "x", tag="x", max_wait_ms=500)).wait_ms == 200
        await lim.aclose()
    run(go())


def test_async_pace_cancelled_refunds(frozen_server: RedisServer, clock: FakeClock, protocol: int,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    raw = redis.Redis(port=frozen_server.port)
    raw.flushall()
    # The first case cancels pace while it sleeps: it waits until pace is in
    # its sleep (a booking seen on the server alone can still be on its way
    # back to the client, which a loaded machine showed: that is the third
    # case, refunded only once the answer arrives).
    sleeping: List[asyncio.Event] = []
    pause = redis_rl.aio._pause

    async def watched_pause(seconds: float) -> None:
        for e in sleeping:
            e.set()
        await pause(seconds)

    monkeypatch.setattr(redis_rl.aio, "_pause", watched_pause)

    async def go() -> None:
        lim = AsyncLimiter(redis.asyncio.Redis(port=frozen_server.port, protocol=protocol), timeout_ms=SLOW_MS)
        key = lim.key(PACED, "u")
        await lim.check(PACED, "u")
        before = state(raw, key)
        # cancelled during the sleep (5 s out on the frozen clock: only the cancel ends it)
        for _ in range(49):
            await lim.check(PACED, "u", max_wait_ms=10_000)
        booked = state(raw, key)
        asleep = asyncio.Event()
        sleeping.append(asleep)
        task = asyncio.ensure_future(lim.pace(PACED, "u", max_wait_ms=10_000))
        await asyncio.wait_for(asleep.wait(), 5)
        sleeping.clear()
        assert state(raw, key) != booked  # it booked and sleeps now
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert state(raw, key) == booked  # refunded before the CancelledError came out
        # asyncio.timeout around pace: the same
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await lim.pace(PACED, "u", max_wait_ms=10_000)
        assert state(raw, key) == booked
        # cancelled while the booking is on its way: refunded when it answers
        task = asyncio.ensure_future(lim.pace(PACED, "u", max_wait_ms=10_000))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(400):
            if not redis_rl.aio._background_tasks:
                break
            await asyncio.sleep(0.005)
        assert state(raw, key) == booked
        assert before != booked
        await lim.aclose()
    run(go())


# --- blocking acquire (real clock) ----------------------------------------------

def units_held(client: redis.Redis, limit: Concurrency, key: str) -> int:
    f = parse_reply(client.execute_command("RL.ACQUIRE", key, *limit.params, "COST", 0))
    return int(f[1]) - int(f[2])


def test_acquire_waits_for_a_release(r: redis.Redis) -> None:
    lim = Limiter(r)  # timeout_ms 100: the wait is far longer, and must not be cut
    slot = Concurrency(1, 30_000, name="slot")
    held = lim.acquire(slot, "db")
    assert held.acquired
    timer = threading.Timer(0.3, held.release)
    timer.start()
    t = time.monotonic()
    got = lim.acquire(slot, "db", wait_ms=5000)
    took = time.monotonic() - t
    timer.join(timeout=5)
    assert got.acquired and got.id is not None and 0.25 <= took < 3.0
    assert got.decision.source == "redis" and lim.fallback_count == 0
    assert units_held(r, slot, got.key) == 1
    # a wait that times out answers the denial of that instant
    t = time.monotonic()
    denied = lim.acquire(slot, "db", wait_ms=200)
    took = time.monotonic() - t
    assert not denied.acquired and denied.decision.retry_after_ms > 0 and 0.18 <= took < 2.0
    with pytest.raises(RateLimited):
        with lim.lease(slot, "db", wait_ms=50):
            pass
    assert got.release()
    with lim.lease(slot, "db", wait_ms=50) as lease:  # free: granted at once
        assert lease.acquired
    assert units_held(r, slot, got.key) == 0


def waiting(client: redis.Redis) -> int:
    """INFO rl's count of clients waiting now (rl_wait:waits=..,grants=..,timeouts=..,waiting=N)."""
    return int(client.info("rl")["rl_wait"]["waiting"])


def test_waiters_are_served_in_order(r: redis.Redis) -> None:
    lim = Limiter(r, timeout_ms=SLOW_MS)
    slot = Concurrency(1, 30_000, name="fifo")
    held = lim.acquire(slot, "q")
    order: List[int] = []
    lock = threading.Lock()

    def waiter(i: int) -> None:
        lease = lim.acquire(slot, "q", wait_ms=5000)
        with lock:
            order.append(i)
        lease.release()
    threads = []
    for i in range(4):
        t = threading.Thread(target=waiter, args=(i,))
        t.start()
        threads.append(t)
        deadline = time.monotonic() + 3
        while waiting(r) < i + 1 and time.monotonic() < deadline:
            time.sleep(0.01)  # until the server has it in line (the next one arrives after)
        assert waiting(r) == i + 1
    held.release()
    for t in threads:
        t.join(timeout=10)
    assert not any(t.is_alive() for t in threads)
    assert order == [0, 1, 2, 3]
    assert units_held(r, slot, held.key) == 0


def test_grant_after_a_long_wait_is_confirmed(r: redis.Redis) -> None:
    lim = Limiter(r, timeout_ms=SLOW_MS)
    short = Concurrency(1, 400, name="short")
    assert lim.acquire(short, "x").acquired  # never released: it expires after 400 ms
    t = time.monotonic()
    lease = lim.acquire(short, "x", wait_ms=3000)  # woken by the server at the expiry
    took = time.monotonic() - t
    assert lease.acquired and 0.3 <= took < 2.5
    # the lease runs from the grant: valid_until is not the acquire's send + 400 ms (nearly gone)
    assert lease.remaining_ms > 100 and not lease.in_doubt  # unconfirmed it would be about 0
    lease.release()


def test_waited_acquire_with_durable(r: redis.Redis) -> None:
    lim = Limiter(r, timeout_ms=SLOW_MS)
    slot = Concurrency(1, 30_000, name="dur")
    lease = lim.acquire(slot, "d", wait_ms=100, durable=Durable(1, 20))  # no replica acknowledges
    assert not lease.acquired and lease.decision.source == "durable", repr(lease.decision.error)
    assert units_held(r, slot, lim.key(slot, "d")) == 0  # its lease was released


def test_sync_wait_interrupted_leaves_no_lease(r: redis.Redis) -> None:
    import signal

    lim = Limiter(r, timeout_ms=SLOW_MS)
    slot = Concurrency(1, 30_000, name="intr")
    held = lim.acquire(slot, "i")

    def alarm(signum: int, frame: Any) -> None:
        raise Interrupt()
    old = signal.signal(signal.SIGALRM, alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(Interrupt):
            lim.acquire(slot, "i", wait_ms=5000)  # blocked in line until the signal
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    deadline = time.monotonic() + 3
    while waiting(r) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert waiting(r) == 0  # its connection was closed: out of the line
    assert held.release()
    assert units_held(r, slot, held.key) == 0  # and no lease of it was left when the slot freed


def test_unanswered_wait_is_bounded(fresh_server: RedisServer) -> None:
    slot = Concurrency(1, 30_000, name="hang")
    holder = Limiter(redis.Redis(port=fresh_server.port), timeout_ms=5000)  # set-up: no timeout under load
    assert holder.acquire(slot, "h").acquired
    lim = Limiter(redis.Redis(port=fresh_server.port), timeout_ms=100)
    for _ in range(50):  # a live connection in its pool (a 100 ms ping can time out on a loaded machine)
        try:
            lim.client.ping()
            break
        except redis.TimeoutError:
            pass
    fresh_server.pause()
    try:
        t = time.monotonic()
        d = lim.acquire(slot, "h", wait_ms=200).decision
        took = time.monotonic() - t
    finally:
        fresh_server.resume()
    assert d.source == "fail_closed" and not d.allowed, repr(d)
    assert 0.25 <= took < 2.5, took  # the wait plus timeout_ms, then the failure policy

    async def go() -> float:
        alim = AsyncLimiter(redis.asyncio.Redis(port=fresh_server.port), timeout_ms=100)
        for _ in range(50):
            try:
                await alim.client.ping()
                break
            except redis.TimeoutError:
                pass
        fresh_server.pause()
        try:
            t = time.monotonic()
            lease = await alim.acquire(slot, "h", wait_ms=200)
            took = time.monotonic() - t
        finally:
            fresh_server.resume()
        assert lease.decision.source == "fail_closed", repr(lease.decision)
        await alim.aclose()
        return took
    took = run(go())
    assert 0.25 <= took < 2.5, took


def test_async_acquire_wait_and_cancel_leaves_no_lease(server: RedisServer, protocol: int) -> None:
    raw = redis.Redis(port=server.port)
    raw.flushall()
    slot = Concurrency(2, 30_000, name="aslot")

    async def go() -> None:
        lim = AsyncLimiter(redis.asyncio.Redis(port=server.port, protocol=protocol), timeout_ms=SLOW_MS)
        key = lim.key(slot, "k")
        a = await lim.acquire(slot, "k", 2)
        waiter = asyncio.ensure_future(lim.acquire(slot, "k", wait_ms=5000))
        await asyncio.sleep(0.2)
        assert not waiter.done()
        await a.release()
        got = await asyncio.wait_for(waiter, 3)
        assert got.acquired and units_held(raw, slot, key) == 1
        await got.release()
        # cancelled while in line, then the slot frees: nothing is left on the key
        for i in range(10):
            held = await lim.acquire(slot, "k", 2)
            task = asyncio.ensure_future(lim.acquire(slot, "k", wait_ms=5000))
            await asyncio.sleep(0.05)
            if i % 2:
                task.cancel()
                await held.release()  # release and cancel race
            else:
                await held.release()
                task.cancel()
            try:
                lease = await task
                await lease.release()  # granted before the cancel arrived
            except asyncio.CancelledError:
                pass
            for _ in range(400):
                if not redis_rl.aio._background_tasks:
                    break
                await asyncio.sleep(0.005)
            assert units_held(raw, slot, key) == 0, f"round {i}: a lease was left behind"
        async with lim.lease(slot, "k", wait_ms=100) as lease:
            assert lease.acquired
        await lim.aclose()
    run(go())


# --- the Lua backend ----------------------------------------------------------

@pytest.fixture(scope="module")
def lua_server() -> Iterator[RedisServer]:
    s = RedisServer(module=False, extra=["--enable-module-command", "no"])
    yield s
    s.stop()


@pytest.mark.parametrize("backend", ["lua", "auto"])
def test_lua_backend_refuses_waits(lua_server: RedisServer, backend: str) -> None:
    client = redis.Redis(port=lua_server.port)
    client.flushall()
    lim = Limiter(client, backend=backend)
    with pytest.raises(NotSupportedError, match="Lua"):
        lim.check(PACED, "u", max_wait_ms=100)
    with pytest.raises(NotSupportedError):
        lim.pace(PACED, "u", max_wait_ms=100)
    with pytest.raises(NotSupportedError):
        lim.check_all([(PACED, "u"), (TokenBucket(2, 1, 100), "u")], max_wait_ms=100)
    with pytest.raises(NotSupportedError):
        lim.peek(PACED, "u", max_wait_ms=100)
    with pytest.raises(NotSupportedError):
        lim.acquire(Concurrency(1, 1000), "u", wait_ms=100)
    with pytest.raises(NotSupportedError):
        with lim.lease(Concurrency(1, 1000), "u", wait_ms=100):
            pass
    assert lim.backend.name == "lua"
    assert lim.check(PACED, "u").allowed  # everything else works
    assert client.keys("*") == [b"rl:paced:u"]  # the refused calls wrote nothing

    async def go() -> None:
        alim = AsyncLimiter(redis.asyncio.Redis(port=lua_server.port), backend=backend)
        with pytest.raises(NotSupportedError):
            await alim.pace(PACED, "w", max_wait_ms=100)
        with pytest.raises(NotSupportedError):
            await alim.acquire(Concurrency(1, 1000), "w", wait_ms=100)
        await alim.aclose()
    run(go())
