"""The Lua backend (FCALL rl_* on the Functions library) and backend="auto".

A managed service is stood in for by a server started without the module and
with --enable-module-command no. The same calls go to the module (a server
with the module) and to the library, both servers on one frozen fake clock
(tests/common/fakeclock.c), and every Decision must be the same.
"""

from __future__ import annotations

import pathlib
from typing import Any, Iterator, List, Tuple

import pytest
import redis
import redis.asyncio

import redis_rl
from conftest import run
from redis_rl import (AsyncLimiter, Concurrency, Gcra, Limiter, Log, LuaBackend, ModuleBackend, Quota, RateLimited,
                      Slide, TokenBucket)
from redis_rl.backend import eval_source, library_source, library_version
from fake_clock import T0_US, FakeClock, shim_env
from redis_server import REPO, RedisServer

NO_MODULE = ["--enable-module-command", "no"]


@pytest.fixture(scope="module")
def clock_env() -> Iterator[Tuple[FakeClock, dict]]:
    yield shim_env()


@pytest.fixture(scope="module")
def mod_server(clock_env: Any) -> Iterator[RedisServer]:
    s = RedisServer(env=clock_env[1])
    yield s
    s.stop()


@pytest.fixture(scope="module")
def lua_server(clock_env: Any) -> Iterator[RedisServer]:
    s = RedisServer(module=False, extra=NO_MODULE, env=clock_env[1])
    yield s
    s.stop()


@pytest.fixture
def clock(clock_env: Any) -> FakeClock:
    c: FakeClock = clock_env[0]
    c.set(T0_US)
    return c


def client(server: RedisServer, protocol: int = 2, **kw: Any) -> redis.Redis:
    return redis.Redis(port=server.port, protocol=protocol, **kw)


# --- one sequence of calls, its Decisions as plain values ----------------------

def plain(d: Any) -> Tuple[Any, ...]:
    own = (d.name, d.allowed, d.limit, d.remaining, d.retry_after_ms, d.reset_after_ms, d.never,
           d.lease is not None, d.source, d.status, tuple(sorted(d.headers().items())))
    subs = d.decisions
    if len(subs) > 1:
        own += (tuple(plain(s) for s in subs), tuple(s.name for s in d.denied_by))
    return own


KINDS = [Gcra(3, 1000, name="g"), Gcra(2, 1000, burst=2, name="gb"), TokenBucket(3, 1, 300, name="tb"),
         Slide(3, 1000, name="sl"), Log(3, 1000, name="lg"), Quota(3, "DAY", name="qd"),
         Quota(3, "DAY", tz="America/New_York", name="qz"), Quota(3, 1000, name="qf"),
         Concurrency(2, 1000, name="cc")]


def scenario(lim: Limiter, clock: FakeClock) -> List[Tuple[Any, ...]]:
    out: List[Tuple[Any, ...]] = []
    add = out.append
    for k in KINDS:
        for _ in range(4):
            add(plain(lim.check(k, "alice")))
        add(plain(lim.peek(k, "alice")))
        add(plain(lim.peek(k, "alice", 0)))
        clock.advance(350)
        add(plain(lim.check(k, "alice", 2)))
        if k.refundable:
            add(plain(lim.refund(k, "alice", 1)))
        add(plain(lim.check(k, "alice", 5)))  # never
        add(plain(lim.check(k, "bob", 0)))
    # several limits as one all-or-nothing decision
    user, tenant = Gcra(10, 1000, name="user"), Slide(3, 1000, name="tenant")
    for i in range(5):
        add(plain(lim.check_all([(user, "alice"), (tenant, "acme", 1 + i % 2)], tag="acme")))
    clock.advance(500)
    add(plain(lim.check_all([(user, "alice"), (tenant, "acme")], tag="acme")))
    add(plain(lim.check_all([(user, "alice"), (tenant, "acme", 9)], tag="acme")))
    # a lease inside RL.ALL, released through the decision
    cc = Concurrency(1, 1000, name="slot")
    d = lim.check_all([(user, "bob"), (cc, "bob")], tag="bob")
    add(plain(d))
    add(plain(lim.check_all([(user, "bob"), (cc, "bob")], tag="bob")))
    add(("released", lim.release(d)))
    add(plain(lim.check_all([(user, "bob"), (cc, "bob")], tag="bob")))
    # leases: ids of ours, renew, release, the context manager
    lease_limit = Concurrency(2, 1000, name="work")
    a = lim.acquire(lease_limit, "w", id="lease-a")
    b = lim.acquire(lease_limit, "w", id="lease-b")
    c = lim.acquire(lease_limit, "w", id="lease-c")
    add((a.acquired, a.id, b.acquired, c.acquired, c.id, plain(c.decision)))
    again = lim.acquire(lease_limit, "w", id="lease-a")  # a retried acquire takes no second slot
    add((again.acquired, plain(again.decision)))
    clock.advance(600)
    add(("renew", a.renew()))
    clock.advance(600)  # b has expired, a was renewed
    add(("release", b.release(), b.lost, a.release(), a.released))
    with lim.lease(lease_limit, "w", id="ctx") as held:
        add(plain(lim.peek(lease_limit, "w")))
        add(("held", held.id))
    add(plain(lim.peek(lease_limit, "w")))
    with pytest.raises(RateLimited):
        with lim.lease(Concurrency(1, 1000, name="one"), "x"):
            with lim.lease(Concurrency(1, 1000, name="one"), "x"):
                pass  # pragma: no cover
    # reserve then settle
    bucket = TokenBucket(10, 10, 1000, name="tokens")
    res = lim.reserve(bucket, "t", 8)
    add(plain(res.decision))
    add(plain(lim.peek(bucket, "t")))
    settled = res.settle(3)
    assert settled is not None
    add(plain(settled))
    add(("again", res.settle(3) is settled))
    add(plain(lim.peek(bucket, "t")))
    over = lim.reserve(bucket, "t", 4)
    extra = over.settle(6)  # more than reserved: the excess is charged
    assert extra is not None
    add(plain(extra))
    add(plain(lim.reserve(bucket, "t", 11).decision))
    # several refunds at once, all or nothing; the leases of a check_all one by one
    add(plain(lim.check_all([(user, "r", 4), (bucket, "r", 6)], tag="r")))
    add(plain(lim.refund_all([(user, "r", 3), (bucket, "r", 5)], tag="r")))
    add(plain(lim.peek(bucket, "r", 0)))
    two = lim.check_all([(Concurrency(2, 1000, name="p"), "l"), (Concurrency(1, 1000, name="q"), "l")], tag="l")
    held = lim.leases(two)
    add((len(held), [h.limit.name for h in held]))
    add(plain(lim.check_all([(Concurrency(2, 1000, name="p"), "l"), (Concurrency(1, 1000, name="q"), "l")], tag="l")))
    add(("one by one", held[1].release(), held[1].release(), held[0].release(), held[0].error, held[0].lost))
    add(plain(lim.peek(Concurrency(1, 1000, name="q"), "l")))
    return out


def fresh(r: redis.Redis) -> None:
    r.flushall()  # keys only: a loaded library stays


def test_packaged_library_is_lua_redis_rl_lua() -> None:
    packaged = pathlib.Path(redis_rl.__file__).with_name("redis_rl.lua").read_bytes()
    assert packaged == (REPO / "lua" / "redis_rl.lua").read_bytes(), \
        "clients/python/src/redis_rl/redis_rl.lua differs: cp lua/redis_rl.lua clients/python/src/redis_rl/"
    assert library_source().encode() == packaged
    assert library_version() == "1.0.1"


def test_same_decisions_from_module_and_library(mod_server: RedisServer, lua_server: RedisServer, clock: FakeClock,
                                                protocol: int) -> None:
    runs = {}
    for label, server, backend in [("module", mod_server, "module"), ("lua", lua_server, "lua"),
                                   ("auto-lua", lua_server, "auto"), ("auto-module", mod_server, "auto"),
                                   ("evalsha", lua_server, LuaBackend(eval=True))]:
        r = client(server, protocol)
        fresh(r)
        clock.set(T0_US)
        lim = Limiter(r, backend=backend)
        runs[label] = scenario(lim, clock)
        want = ModuleBackend if server is mod_server else LuaBackend
        assert type(lim.backend) is want, label
        r.close()
    ref = runs["module"]
    assert len(ref) > 100
    assert all(t[8] == "redis" for t in ref if isinstance(t[0], str) and len(t) > 8 and isinstance(t[1], bool))
    assert any(t[1] is False for t in ref if len(t) > 8) and any(t[6] is True for t in ref if len(t) > 8)
    for label in ("lua", "auto-lua", "auto-module", "evalsha"):
        for i, (a, b) in enumerate(zip(ref, runs[label])):
            assert a == b, f"{label}: call {i} differs:\nmodule {a}\n{label} {b}"
        assert len(runs[label]) == len(ref)


def test_async_same_decisions(mod_server: RedisServer, lua_server: RedisServer, clock: FakeClock) -> None:
    async def go(server: RedisServer, backend: str) -> Tuple[List[Any], str]:
        r = redis.asyncio.Redis(port=server.port, protocol=3)
        await r.flushall()
        lim = AsyncLimiter(r, backend=backend)
        g, cc, tb = Gcra(2, 1000, name="g"), Concurrency(1, 1000, name="c"), TokenBucket(5, 5, 1000, name="t")
        out: List[Any] = [plain(await lim.check(g, "a")) for _ in range(3)]
        out.append(plain(await lim.peek(g, "a")))
        out.append(plain(await lim.check_all([(g, "b"), (tb, "b", 2)], tag="b")))
        async with lim.lease(cc, "a", id="x") as lease:
            out.append((lease.id, plain(await lim.peek(cc, "a"))))
        out.append(plain(await lim.peek(cc, "a")))
        res = await lim.reserve(tb, "r", 4)
        out.append(plain(res.decision))
        settled = await res.settle(1)
        out.append(plain(settled) if settled is not None else None)
        out.append(plain(await lim.refund(tb, "r", 1)))
        name = type(lim.backend).__name__
        await lim.aclose()
        await r.aclose()
        return out, name

    mod, mod_name = run(go(mod_server, "auto"))
    clock.set(T0_US)
    lua, lua_name = run(go(lua_server, "auto"))
    assert (mod_name, lua_name) == ("ModuleBackend", "LuaBackend")
    assert mod == lua
    assert mod[2][1] is False and mod[-3][3] == 1 and mod[-2][3] == 4  # denied once; settle gave 3 back


def versioned(version: str) -> str:
    src = library_source()
    assert "local LIB_VERSION = '1.0.1'" in src
    return src.replace("local LIB_VERSION = '1.0.1'", f"local LIB_VERSION = '{version}'", 1)


def library_version_on(r: redis.Redis) -> str:
    v = r.execute_command("FCALL_RO", "rl_version", 0)
    return v.decode() if isinstance(v, bytes) else str(v)


def test_library_loaded_when_missing(lua_server: RedisServer) -> None:
    r = client(lua_server)
    r.function_flush()
    fresh(r)
    lim = Limiter(r, backend="lua")
    assert not lim.backend.ready
    d = lim.check(Gcra(2, 60_000), "u")
    assert d.allowed and d.remaining == 1 and d.source == "redis"
    b = lim.backend
    assert isinstance(b, LuaBackend) and b.loaded and b.found_version == "" and b.ready
    assert library_version_on(r) == library_version()
    # a second Limiter finds the current library and loads nothing
    lim2 = Limiter(r, backend="lua")
    assert lim2.check(Gcra(2, 60_000), "u").remaining == 0
    assert isinstance(lim2.backend, LuaBackend) and not lim2.backend.loaded
    assert lim2.backend.found_version == library_version()


def test_library_replaced_when_older_kept_when_newer(lua_server: RedisServer) -> None:
    r = client(lua_server, decode_responses=True)
    r.function_load(versioned("0.9.0"), replace=True)
    assert library_version_on(r) == "0.9.0"
    lim = Limiter(r, backend="auto")
    assert lim.check(Gcra(5, 60_000), "older").remaining == 4
    assert isinstance(lim.backend, LuaBackend) and lim.backend.loaded and lim.backend.found_version == "0.9.0"
    assert library_version_on(r) == library_version()

    r.function_load(versioned("9.9.0"), replace=True)  # a newer client loaded its own: never downgraded
    lim = Limiter(r, backend="lua")
    assert lim.check(Gcra(5, 60_000), "older").remaining == 3
    assert not lim.backend.loaded and lim.backend.found_version == "9.9.0"
    assert library_version_on(r) == "9.9.0"
    r.function_load(library_source(), replace=True)
    r.close()


def test_library_flushed_under_a_ready_limiter_is_loaded_again(lua_server: RedisServer) -> None:
    r = client(lua_server)
    fresh(r)
    lim = Limiter(r, backend="lua")
    g = Gcra(3, 60_000)
    assert lim.check(g, "u").remaining == 2
    r.function_flush()
    d = lim.check(g, "u")  # "Function not found": loaded again, sent once more, charged once
    assert d.allowed and d.remaining == 1
    assert lim.peek(g, "u", 0).remaining == 1  # charged once: 2 of 3 taken

    async def go() -> int:
        ar = redis.asyncio.Redis(port=lua_server.port)
        alim = AsyncLimiter(ar, backend="lua")
        await alim.check(g, "v")
        await ar.function_flush()
        d = await alim.check(g, "v")
        await alim.aclose()
        await ar.aclose()
        return d.remaining
    assert run(go()) == 1


def test_auto_with_an_acl_user_without_module(lua_server: RedisServer) -> None:
    admin = client(lua_server, decode_responses=True)
    admin.function_flush()
    admin.execute_command("ACL", "SETUSER", "app", "on", ">pw", "~*", "&*", "+@all", "-module")
    try:
        r = redis.Redis(port=lua_server.port, username="app", password="pw")
        with pytest.raises(redis.exceptions.ResponseError):
            r.execute_command("MODULE", "LIST")
        lim = Limiter(r, backend="auto")
        assert lim.prepare() is lim.backend and isinstance(lim.backend, LuaBackend) and lim.backend.loaded
        assert lim.check(Gcra(1, 60_000), "acl").allowed
        assert not lim.check(Gcra(1, 60_000), "acl").allowed
        r.close()
    finally:
        admin.execute_command("ACL", "DELUSER", "app")
        admin.close()


def test_auto_on_the_module_loads_no_library(mod_server: RedisServer) -> None:
    r = client(mod_server)
    r.function_flush()
    lim = Limiter(r, backend="auto")
    assert lim.check(Gcra(2, 60_000), "m").allowed
    assert type(lim.backend) is ModuleBackend
    assert r.function_list() == []


def test_lua_backend_errors_are_the_modules(mod_server: RedisServer, lua_server: RedisServer) -> None:
    texts = []
    for server in (mod_server, lua_server):
        r = client(server)
        fresh(r)
        r.set("rl:g:str", "x")
        lim = Limiter(r, backend="auto", on_error="open")
        with pytest.raises(redis.exceptions.ResponseError) as err:  # a usage error, never absorbed
            lim.check(Gcra(2, 60_000, name="g"), "str")
        texts.append(str(err.value))
        r.close()
    assert texts[0] == texts[1] and texts[0].startswith("WRONGTYPE")


def test_lua_backend_fails_over_to_the_policy(clock_env: Any) -> None:
    s = RedisServer(module=False, extra=NO_MODULE)
    try:
        r = client(s)
        lim = Limiter(r, backend="auto", on_error="open")
        s.kill()  # before the probe: the policy answers, the probe is tried again on the next call
        d = lim.check(Gcra(1, 60_000), "u")
        assert d.allowed and d.source == "fail_open" and not lim.backend.ready
    finally:
        s.stop()


def test_fcall_forms() -> None:
    b = LuaBackend()
    g, cc = Gcra(10, 1000, burst=3), Concurrency(2, 5000)
    assert b.check(g, "k", 2) == ["FCALL", "rl_gcra", 1, "k", 10, 1000, "BURST", 3, "COST", 2]
    assert b.refund(g, "k", 4) == ["FCALL", "rl_gcra", 1, "k", 10, 1000, "BURST", 3, "REFUND", 4]
    assert b.peek(g, "k", 1) == ["FCALL_RO", "rl_peek", 1, "k", "GCRA", 10, 1000, "BURST", 3]
    assert b.check(cc, "c", 1, "id1") == ["FCALL", "rl_acquire", 1, "c", 2, 5000, "ID", "id1"]
    assert b.all(["a", "c"], [(g, 1, None), (cc, 1, "x")]) == \
        ["FCALL", "rl_all", 2, "a", "c", "GCRA", 10, 1000, "BURST", 3, "CONCURRENCY", 2, 5000, "ID", "x"]
    assert b.release("c", "x") == ["FCALL", "rl_release", 1, "c", "x"]
    assert b.renew("c", "x", 900) == ["FCALL", "rl_renew", 1, "c", "x", 900]





def test_function_refused_uses_the_eval_form(lua_server: RedisServer) -> None:
    """A user who may not run FUNCTION, and no library loaded: SCRIPT LOAD and EVALSHA instead."""
    admin = client(lua_server, decode_responses=True)
    admin.function_flush()
    admin.script_flush()
    fresh(admin)
    admin.execute_command("ACL", "SETUSER", "nofn", "on", ">pw", "~*", "&*", "+@all", "-function", "-module")
    try:
        r = redis.Redis(port=lua_server.port, username="nofn", password="pw")
        with pytest.raises(redis.exceptions.ResponseError):
            r.function_load(library_source(), replace=True)
        lim = Limiter(r, backend="auto")
        g = Gcra(2, 60_000, name="ev")
        assert lim.check(g, "u").remaining == 1
        b = lim.backend
        assert isinstance(b, LuaBackend) and b.sha is not None and b.loaded
        assert admin.script_exists(b.sha) == [True] and admin.function_list() == []
        admin.config_resetstat()
        assert lim.peek(g, "u", 0).remaining == 1  # EVALSHA_RO
        with lim.lease(Concurrency(1, 60_000, name="evc"), "j") as lease:
            assert lease.acquired
        admin.script_flush()  # the script cache is not persisted: NOSCRIPT loads it again, sent once more
        d = lim.check(g, "u")
        assert d.allowed and d.remaining == 0
        assert not lim.check(g, "u").allowed
        stats = {k.lower() for k in admin.info("commandstats")}
        assert "cmdstat_evalsha" in stats and "cmdstat_evalsha_ro" in stats and "cmdstat_fcall" not in stats
        r.close()
    finally:
        admin.execute_command("ACL", "DELUSER", "nofn")
        admin.close()


def test_eval_forms() -> None:
    b = LuaBackend(eval=True)
    b.sha = "f" * 40
    g = Gcra(10, 1000)
    assert b.check(g, "k", 2) == ["EVALSHA", "f" * 40, 1, "k", "rl_gcra", 10, 1000, "COST", 2]
    assert b.peek(g, "k", 1) == ["EVALSHA_RO", "f" * 40, 1, "k", "rl_peek", "GCRA", 10, 1000]
    assert b.all(["a", "b"], [(g, 1, None), (g, 1, None)])[:6] == ["EVALSHA", "f" * 40, 2, "a", "b", "rl_all"]
    assert b.release("c", "x") == ["EVALSHA", "f" * 40, 1, "c", "rl_release", "x"]
    src = eval_source()
    assert src.startswith("\n") and src[1:] == library_source().split("\n", 1)[1]
