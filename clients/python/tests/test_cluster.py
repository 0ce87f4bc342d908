"""A 3-master cluster (three servers on loopback, slots assigned with CLUSTER ADDSLOTSRANGE/MEET):
RedisCluster and redis.asyncio RedisCluster, keys routed by slot, hash tags, CrossSlotError."""

from __future__ import annotations

import asyncio
import time
from typing import Iterator, List

import pytest
import redis
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import RedisCluster
from redis.crc import key_slot

from conftest import run
from redis_rl import AsyncLimiter, Concurrency, CrossSlotError, Durable, Gcra, Limiter, Slide, TokenBucket
from redis_rl.backend import library_version
from redis_server import RedisServer

CLUSTER_DEADLINE_S = 30.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[List[RedisServer]]:
    nodes: List[RedisServer] = []
    try:
        for _ in range(3):
            nodes.append(RedisServer(extra=["--cluster-enabled", "yes", "--cluster-node-timeout", "5000"],
                                     max_port=55535))  # the cluster bus is port + 10000
        clients = [redis.Redis(port=n.port, decode_responses=True) for n in nodes]
        ranges = [(0, 5460), (5461, 10922), (10923, 16383)]
        for c, (lo, hi) in zip(clients, ranges):
            c.execute_command("CLUSTER", "ADDSLOTSRANGE", lo, hi)
        for n in nodes[1:]:
            clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", n.port)
        deadline = time.monotonic() + CLUSTER_DEADLINE_S
        while True:
            infos = [c.execute_command("CLUSTER", "INFO") for c in clients]
            text = [i if isinstance(i, str) else str(i) for i in infos]
            if all("cluster_state:ok" in t and "cluster_known_nodes:3" in t for t in text):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"cluster did not form: {text}")
            time.sleep(0.1)
        for c in clients:
            c.close()
        yield nodes
    finally:
        for n in nodes:
            n.stop()


@pytest.mark.parametrize("protocol", [2, 3])
def test_cluster_sync(cluster: List[RedisServer], protocol: int) -> None:
    rc = RedisCluster(host="127.0.0.1", port=cluster[0].port, protocol=protocol)
    rc.flushall()
    for n in cluster:
        redis.Redis(port=n.port).config_resetstat()
    lim = Limiter(rc)
    assert lim.client is rc  # a cluster client is used as given
    g = Gcra(2, 60_000, name="g")
    idents = [f"user{i}" for i in range(12)]
    slots = {key_slot(lim.key(g, i).encode()) * 3 // 16384 for i in idents}
    assert len(slots) == 3  # the keys spread over all three masters
    for ident in idents:
        assert [lim.check(g, ident).allowed for _ in range(3)] == [True, True, False]
        assert lim.peek(g, ident, 0).remaining == 0
        assert lim.refund(g, ident, 1).remaining == 1
    user, tenant = Gcra(10, 60_000, name="user"), Slide(1, 60_000, name="tenant")
    with pytest.raises(CrossSlotError):
        lim.check_all([(user, "alice"), (tenant, "acme")])
    a = lim.check_all([(user, "alice"), (tenant, "acme")], tag="acme")
    b = lim.check_all([(user, "alice"), (tenant, "acme")], tag="acme")
    assert a.allowed and not b.allowed and b.denied_by[0].name == "tenant"
    with lim.lease(Concurrency(1, 60_000, name="c"), "job", tag="job") as lease:
        assert lease.acquired and rc.exists("rl:{job}:c:job") == 1
    assert rc.exists("rl:{job}:c:job") == 0
    res = lim.reserve(TokenBucket(100, 100, 60_000, name="tb"), "x", 60)
    assert res.settle(10).remaining == 90  # type: ignore[union-attr]
    # each command went straight to its key's node: no COMMAND GETKEYS round trip before an RL.ALL
    stats = [redis.Redis(port=n.port, decode_responses=True).info("commandstats") for n in cluster]
    calls = {k.lower(): v["calls"] for s in stats for k, v in s.items()}
    assert sum(v["calls"] for s in stats for k, v in s.items() if k.lower() == "cmdstat_rl.all") == 2
    assert "cmdstat_command|getkeys" not in calls, calls
    rc.close()


def test_cluster_async(cluster: List[RedisServer]) -> None:
    async def main() -> None:
        rc = AsyncRedisCluster(host="127.0.0.1", port=cluster[0].port)
        lim = AsyncLimiter(rc)
        g = Gcra(1, 60_000, name="ag")
        for i in range(6):
            assert (await lim.check(g, f"u{i}")).allowed
            assert not (await lim.check(g, f"u{i}")).allowed
        with pytest.raises(CrossSlotError):
            await lim.check_all([(g, "a"), (Slide(1, 1000, name="s"), "b")])
        d = await lim.check_all([(g, "a"), (Slide(1, 1000, name="s"), "b")], tag="t")
        assert d.allowed
        async with lim.lease(Concurrency(1, 60_000, name="ac"), "j", tag="j") as lease:
            assert lease.acquired
        assert (await lim.peek(Concurrency(1, 60_000, name="ac"), "j", tag="j")).allowed
        await rc.aclose()
    run(main())


@pytest.mark.parametrize("protocol", [2, 3])
def test_cluster_lua_backend(cluster: List[RedisServer], protocol: int) -> None:
    """The Lua library on a cluster: loaded on every primary, each FCALL sent to its key's node."""
    for n in cluster:
        r = redis.Redis(port=n.port)
        r.function_flush()
        r.config_resetstat()
        r.close()
    rc = RedisCluster(host="127.0.0.1", port=cluster[0].port, protocol=protocol)
    rc.flushall()
    lim = Limiter(rc, backend="lua")
    g = Gcra(2, 60_000, name="lg")
    idents = [f"user{i}" for i in range(12)]
    assert len({key_slot(lim.key(g, i).encode()) * 3 // 16384 for i in idents}) == 3
    for ident in idents:
        assert [lim.check(g, ident).allowed for _ in range(3)] == [True, True, False]
        assert lim.peek(g, ident, 0).remaining == 0
        assert lim.refund(g, ident, 1).remaining == 1
    assert lim.backend.name == "lua" and lim.backend.loaded
    user, tenant = Gcra(10, 60_000, name="luser"), Slide(1, 60_000, name="ltenant")
    with pytest.raises(CrossSlotError):
        lim.check_all([(user, "alice"), (tenant, "acme")])
    a = lim.check_all([(user, "alice"), (tenant, "acme")], tag="acme")
    b = lim.check_all([(user, "alice"), (tenant, "acme")], tag="acme")
    assert a.allowed and not b.allowed and b.denied_by[0].name == "ltenant"
    with lim.lease(Concurrency(1, 60_000, name="lc"), "job", tag="job") as lease:
        assert lease.acquired and rc.exists("rl:{job}:lc:job") == 1
    assert rc.exists("rl:{job}:lc:job") == 0
    res = lim.reserve(TokenBucket(100, 100, 60_000, name="ltb"), "x", 60)
    assert res.settle(10).remaining == 90  # type: ignore[union-attr]
    stats = []
    for n in cluster:
        r = redis.Redis(port=n.port, decode_responses=True)
        assert r.execute_command("FCALL_RO", "rl_version", 0) == library_version()  # on every primary
        stats.append({k.lower(): v["calls"] for k, v in r.info("commandstats").items()})
        r.close()
    assert all(s.get("cmdstat_fcall", 0) > 0 for s in stats)  # the keys' own nodes answered
    assert not any("cmdstat_command|getkeys" in s for s in stats)
    assert Limiter(rc, backend="auto").prepare().name == "module"  # this cluster has the module
    rc.close()


def test_cluster_lua_backend_async(cluster: List[RedisServer]) -> None:
    async def main() -> None:
        for n in cluster:
            redis.Redis(port=n.port).function_flush()
        rc = AsyncRedisCluster(host="127.0.0.1", port=cluster[0].port)
        lim = AsyncLimiter(rc, backend="lua")
        g = Gcra(1, 60_000, name="alg")
        for i in range(6):
            assert (await lim.check(g, f"u{i}")).allowed
            assert not (await lim.check(g, f"u{i}")).allowed
        d = await lim.check_all([(g, "a"), (Slide(1, 1000, name="als"), "b")], tag="t")
        assert d.allowed
        async with lim.lease(Concurrency(1, 60_000, name="alc"), "j", tag="j") as lease:
            assert lease.acquired
        assert (await lim.peek(Concurrency(1, 60_000, name="alc"), "j", tag="j")).allowed
        assert lim.backend.name == "lua"
        await rc.aclose()
    run(main())
    for n in cluster:
        assert redis.Redis(port=n.port).function_list() != []


def test_cluster_durable_waits_on_the_keys_node(cluster: List[RedisServer]) -> None:
    """durable= on RedisCluster: the decision and WAIT go to the key's node in one pipeline.
    No node has a replica here: WAIT answers 0, so allowed decisions turn into durable denials."""
    rc = RedisCluster(host="127.0.0.1", port=cluster[0].port)
    rc.flushall()
    nodes = [redis.Redis(port=n.port, decode_responses=True) for n in cluster]
    for c in nodes:
        c.config_resetstat()
    lim = Limiter(rc, durable=Durable(1, 10))
    g = Gcra(10, 60_000, name="g")
    keys = {}
    for who in ("a", "b", "c", "d", "e", "f"):
        d = lim.check(g, who)
        assert (d.allowed, d.source) == (False, "durable")
        keys[who] = lim.key(g, who)
    for c in nodes:
        wait = int(c.info("commandstats").get("cmdstat_wait", {}).get("calls", 0))
        owned = [k for k in keys.values() if c.execute_command("CLUSTER", "KEYSLOT", k) in
                 _slots_of(c)]
        assert wait == len(owned)  # every WAIT on the node that ran the decision
    assert lim.check_all([(g, "x"), (Slide(5, 1_000, name="s"), "x")], tag="x").source == "durable"
    assert Limiter(rc, durable=Durable(1, 10)).check(g, "x", durable=False).allowed
    for c in nodes:
        c.close()
    rc.close()


def _slots_of(c: redis.Redis) -> range:
    me = [line for line in c.execute_command("CLUSTER", "NODES").splitlines() if "myself" in line][0]
    lo, hi = me.split()[8].split("-")
    return range(int(lo), int(hi) + 1)


def test_async_cluster_durable_is_refused(cluster: List[RedisServer]) -> None:
    async def main() -> None:
        rc = AsyncRedisCluster(host="127.0.0.1", port=cluster[0].port)
        with pytest.raises(TypeError):
            AsyncLimiter(rc, durable=True)
        await rc.aclose()

    run(main())


def test_cluster_waits(cluster: List[RedisServer]) -> None:
    """acquire(wait_ms=) to the key's node, with a read timeout of the wait plus the node's own
    socket timeout (shorter than the wait here), and MAXWAIT bookings on every node."""
    import threading

    rc = RedisCluster(host="127.0.0.1", port=cluster[0].port, socket_timeout=0.1)
    lim = Limiter(rc)
    paced = Gcra(10, 1000, burst=1, name="cpaced")
    for i in range(6):  # keys on every node
        a = lim.check(paced, f"w{i}", max_wait_ms=1000)
        b = lim.check(paced, f"w{i}", max_wait_ms=1000)
        assert a.allowed and b.allowed and a.wait_ms == 0 and 50 <= b.wait_ms <= 100
    d = lim.check_all([(paced, "a"), (TokenBucket(1, 1, 100, name="cb"), "b")], tag="t", max_wait_ms=500)
    assert d.allowed
    slot = Concurrency(1, 30_000, name="cslot")
    for who in ("x", "y", "z"):
        held = lim.acquire(slot, who)
        timer = threading.Timer(0.3, held.release)
        timer.start()
        t = time.monotonic()
        got = lim.acquire(slot, who, wait_ms=3000)
        timer.join(timeout=5)
        assert got.acquired and 0.25 <= time.monotonic() - t < 2.5
        assert got.release()
    rc.close()


def test_async_cluster_waits(cluster: List[RedisServer]) -> None:
    slot = Concurrency(1, 30_000, name="acslot")

    async def main() -> None:
        short = AsyncRedisCluster(host="127.0.0.1", port=cluster[0].port, socket_timeout=0.1)
        with pytest.raises(ValueError, match="socket_timeout"):
            await AsyncLimiter(short).acquire(slot, "q", wait_ms=1000)
        await short.aclose()
        rc = AsyncRedisCluster(host="127.0.0.1", port=cluster[0].port, socket_timeout=5)
        lim = AsyncLimiter(rc)
        held = await lim.acquire(slot, "q")
        waiter = asyncio.ensure_future(lim.acquire(slot, "q", wait_ms=3000))
        await asyncio.sleep(0.2)
        assert not waiter.done()
        await held.release()
        got = await asyncio.wait_for(waiter, 3)
        assert got.acquired and await got.release()
        assert (await lim.check(Gcra(1, 1000, name="acp"), "p", max_wait_ms=0)).allowed
        await rc.aclose()

    run(main())
