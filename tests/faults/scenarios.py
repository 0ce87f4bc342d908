"""The fault scenarios, each returning its figures (the tests assert on them, measure.py tabulates).

failover(lag_ms, strict): a master with the module, one replica behind the lag proxy, three
Sentinels; K threads drive one GCRA budget towards its limit and H holders compete for a lease
set, all through Sentinel discovery (redis-py's Sentinel.master_for) and the client library; the
master is killed with SIGKILL when a third of the budget is spent; Sentinel promotes the replica;
the old master comes back as a replica of the new one; the clients run until the budget is spent
on the new master.
"""

from __future__ import annotations

import os
import shutil
import statistics
import time
from typing import Any, Dict, List, Optional, Tuple

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from redis.sentinel import Sentinel as SentinelClient

from harness import (SENTINEL_NAME, LagProxy, Proc, Server, _LIVE, make_workdir, master_addr, role, start_sentinels,
                     wait_until, digests_equal)
from redis_rl import Concurrency, Gcra, Limiter, Slide
from redis_rl.decision import single
from workload import LeaseHolders, RateClients, durable_call, max_overlap, now

PERIOD_MS = 10**9  # a budget that does not refill during a run (one unit per 333 s at 3,000)
LEASE_MS = 10_000  # longer than a failover, so a lease can survive one


def client_timeout_s() -> float:
    return float(os.environ.get("FAILOVER_CLIENT_TIMEOUT_MS", "200")) / 1000


def sentinel_limiter(sentinel_ports: List[int], timeout_s: float) -> Limiter:
    """The Limiter over a Sentinel-managed client: the Limiter derives its own SentinelConnectionPool
    with timeout_ms as the socket timeouts and no retries (a retried limiter call would consume
    twice); the client is given the same settings, so either way they hold."""
    sent = SentinelClient([("127.0.0.1", p) for p in sentinel_ports],
                          sentinel_kwargs={"socket_timeout": 0.5, "socket_connect_timeout": 0.5})
    client = sent.master_for(SENTINEL_NAME, socket_timeout=timeout_s, socket_connect_timeout=timeout_s,
                             retry=Retry(NoBackoff(), 0))
    return Limiter(client, on_error="closed", timeout_ms=max(1, round(timeout_s * 1000)))


class Run:
    """The processes of one scenario, all stopped by close()."""

    def __init__(self) -> None:
        self.dir = make_workdir()
        self.procs: List[Proc] = []

    def add(self, p: Proc) -> Any:
        self.procs.append(p)
        return p

    def close(self) -> None:
        for p in self.procs:
            try:
                p.stop()
            except Exception:
                pass
            if p in _LIVE:
                _LIVE.remove(p)
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_link_up(replica: Server, master: Server, deadline_s: float = 15) -> None:
    wait_until(lambda: replica.client().info("replication").get("master_link_status") == "up", deadline_s,
               "the replica's link up")
    wait_until(lambda: master.client().wait(1, 100) >= 1, deadline_s, "the replica to acknowledge")


def failover(lag_ms: Optional[float], strict: bool = False, limit: Optional[int] = None, k: int = 8,
             holders: int = 6, slots: int = 3) -> Dict[str, Any]:
    """limit: 12,000 (killed at half: about 1.5 s of traffic before the kill, so "the replica was
    at most a second behind" can be checked); strict mode, 3,000 (killed at a third: it admits
    about a sixth as fast)."""
    if limit is None:
        limit = 3000 if strict else 12000
    kill_at = limit // 3 if strict else limit // 2
    run = Run()
    res: Dict[str, Any] = {"lag_ms": lag_ms, "strict": strict, "limit": limit, "k": k, "holders": holders,
                           "slots": slots}
    rc: Optional[RateClients] = None
    lh: Optional[LeaseHolders] = None
    limiter: Optional[Limiter] = None
    try:
        master = run.add(Server(run.dir))
        # lag_ms None: no proxy, the replica on the master itself
        proxy = run.add(LagProxy(run.dir, master.port, lag_ms)) if lag_ms is not None else None
        link = proxy.port if proxy is not None else master.port
        replica = run.add(Server(run.dir, replicaof=link))
        wait_link_up(replica, master)
        sentinels = [run.add(s) for s in start_sentinels(run.dir, master.port, replica.port)]
        limiter = sentinel_limiter([s.port for s in sentinels], client_timeout_s())
        budget = Gcra(limit, PERIOD_MS, name="budget")
        pool = Concurrency(slots, LEASE_MS, name="slots")
        key = limiter.key(budget, "k")
        wait_ms = int(100 + 4 * (lag_ms or 0)) if strict else None
        res["wait_ms"] = wait_ms
        rc = RateClients(limiter, budget, "k", k, wait_ms)
        lh = LeaseHolders(limiter, pool, "pool", holders, strict_wait_ms=wait_ms)
        t_start = now()
        rc.start()
        lh.start()
        wait_until(lambda: rc.admitted_so_far() >= kill_at, 60, f"{kill_at} admitted", step_s=0.005)
        rinfo = replica.client().info("replication")
        # the replica still replicates through the proxy (Sentinel would "fix" that after ~8 s)
        assert int(rinfo["master_port"]) == link and rinfo["master_link_status"] == "up", rinfo
        # how far behind the replica is, in bytes of the replication stream (the master's offset
        # read before and after the replica's, averaged)
        m1 = int(master.client().info("replication")["master_repl_offset"])
        r1 = int(replica.client().info("replication")["slave_repl_offset"])
        m2 = int(master.client().info("replication")["master_repl_offset"])
        res["replica_behind_bytes"] = (m1 + m2) // 2 - r1
        t_kill = now()
        master.kill9()
        t_dead = now()
        res["t_run_before_kill_s"] = t_dead - t_start

        # what the replica holds at the kill: its link down, not yet promoted (INFO and the peek in
        # one MULTI, so the role read is the one the value was read under)
        rep = replica.client()

        def frozen() -> Optional[Any]:
            pipe = rep.pipeline(transaction=True)
            pipe.info("replication")
            pipe.execute_command("RL.PEEK", "GCRA", key, limit, PERIOD_MS, "COST", 0)
            info, peek = pipe.execute()
            if info["role"] == "master":
                return ("promoted",)
            if info.get("master_link_status") == "down":
                return ("frozen", int(peek[2]))
            return None

        state = wait_until(frozen, 10, "the replica's link to go down", step_s=0.002)
        res["replica_remaining_at_kill"] = state[1] if state[0] == "frozen" else None

        wait_until(lambda: master_addr(sentinels) == replica.port, 30, "Sentinel to switch to the replica",
                   step_s=0.01)
        t_switch = now()
        assert role(replica.client()) == "master"
        res["failover_s"] = t_switch - t_dead
        # the old master comes back as a replica of the new one (never as an empty master)
        old = run.add(Server(run.dir, port=master.port, replicaof=replica.port))
        new_master = replica

        def spent() -> bool:
            r = new_master.client().execute_command("RL.PEEK", "GCRA", key, limit, PERIOD_MS, "COST", 0)
            return int(r[2]) == 0

        wait_until(spent, 60, "the budget spent on the new master", step_s=0.01)
        t_spent = now()
        # every lease held at the failover resolved (RENEW answered) before stopping
        wait_until(lambda: not any(r.doubted and r.resolution is None for r in lh.all_records()), 20,
                   "every lease in doubt to get an answer")
        rc.join()
        lh.join()
        res["t_total_s"] = now() - t_start
        # On a loaded machine a stall past down-after-milliseconds can make Sentinel fail over once
        # more, back to the old master (now a replica): compare whichever is the master once the
        # two have settled, master and a linked replica (a WAIT on a replica is refused).
        def settled() -> Optional[Tuple[Server, Server]]:
            by_port = {new_master.port: new_master, old.port: old}
            cur = by_port.get(master_addr(sentinels) or -1)
            if cur is None or role(cur.client()) != "master":
                return None
            other = old if cur is new_master else new_master
            info = other.client().info("replication")
            return (cur, other) if info["role"] == "slave" and info.get("master_link_status") == "up" else None

        cur, other = wait_until(settled, 30, "one master and a linked replica", step_s=0.05)
        res["failed_back"] = cur is not new_master
        res["digest"] = digests_equal(cur, other)
        res["crashed"] = [p.port for p in (new_master, old) if not p.alive() or p.crashed()] + \
            ([master.port] if master.crashed() else [])

        calls = rc.all_calls()
        res["client_errors"] = [repr(e) for e in rc.errors + lh.errors]
        res["sources"] = sorted({c.source for c in calls})
        res["fallbacks"] = sum(1 for c in calls if c.source != "redis")
        res["not_durable"] = sum(1 for c in calls if c.source == "not_durable")
        admitted = rc.admitted()
        a_old = rc.admitted(before=t_dead)  # a call sent after the master died never reached it
        res["admitted"] = admitted
        res["admitted_old_master"] = a_old
        res["over"] = admitted - limit
        res["over_pct"] = 100.0 * (admitted - limit) / limit
        if res["replica_remaining_at_kill"] is not None:
            res["lost_writes"] = a_old - (limit - res["replica_remaining_at_kill"])
        else:
            res["lost_writes"] = None
        res["rate_at_kill"] = rc.rate(t_kill - 0.3, t_kill)
        res["admitted_last_window"] = sum(1 for c in calls if c.allowed and c.source == "redis"
                                          and t_kill - ((lag_ms or 0) / 1000 + 1.0) <= c.t_send < t_dead)
        res["t_spent_s"] = t_spent - t_switch

        recs = lh.all_records()
        at_kill = [r for r in recs if r.acquired < t_kill and r.doubted]
        res["leases_total"] = len(recs)
        res["leases_at_failover"] = len(at_kill)
        res["leases_survived"] = sum(1 for r in at_kill if r.resolution == "survived")
        res["leases_lost"] = sum(1 for r in at_kill if r.resolution == "lost")
        res["leases_unresolved"] = [r.outcome for r in recs if r.doubted and r.resolution is None]
        res["max_live_fenced"] = max_overlap([iv for r in recs for iv in r.fenced])
        res["max_live_optimistic"] = max_overlap([iv for r in recs for iv in r.optimistic])
        return res
    finally:
        for w in (rc, lh):
            if w is not None:
                w.stop.set()
        for w in (rc, lh):
            if w is not None:
                try:
                    w.join(5)
                except AssertionError:
                    pass
        if limiter is not None:
            try:
                limiter.client.close()
            except Exception:
                pass
        run.close()


def strict_cost(lag_ms: float, n: int = 300) -> Dict[str, Any]:
    """Per-call latency on loopback, one client, of a decision alone and of the decision followed by
    WAIT 1 (one pipeline), with the replica behind the proxy at lag_ms. Medians and p99, in ms."""
    run = Run()
    try:
        master = run.add(Server(run.dir))
        proxy = run.add(LagProxy(run.dir, master.port, lag_ms))
        replica = run.add(Server(run.dir, replicaof=proxy.port))
        wait_link_up(replica, master)
        client = redis.Redis(host="127.0.0.1", port=master.port, socket_timeout=5)
        limiter = Limiter(client, timeout_ms=5000)
        g = Gcra(10**9, 1000, name="cost")
        key = limiter.key(g, "u")
        args = limiter.backend.check(g, key, 1)
        wait_ms = int(1000 + 4 * lag_ms)
        plain: List[float] = []
        durable: List[float] = []
        unacked = 0
        for i in range(n):  # interleaved, so both see the same machine
            t0 = time.perf_counter()
            d = limiter.check(g, "u")
            t1 = time.perf_counter()
            assert d.allowed and d.source == "redis"
            reply, acks = durable_call(limiter, g, key, args, wait_ms)
            t2 = time.perf_counter()
            assert single(reply, g, key, 1).allowed
            unacked += acks < 1
            plain.append((t1 - t0) * 1000)
            durable.append((t2 - t1) * 1000)
        limiter.close()
        return {"lag_ms": lag_ms, "n": n, "plain_median_ms": statistics.median(plain),
                "plain_p99_ms": _p99(plain), "durable_median_ms": statistics.median(durable),
                "durable_p99_ms": _p99(durable), "unacked": unacked}
    finally:
        run.close()


def _p99(xs: List[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * 0.99))]


class Pair:
    """A master with the module and one replica behind the proxy (no lag), no Sentinel: the
    partition and pause tests, one fault at a time on the same pair."""

    def __init__(self) -> None:
        self.run = Run()
        try:
            self.master = self.run.add(Server(self.run.dir))
            self.proxy = self.run.add(LagProxy(self.run.dir, self.master.port, 0))
            self.replica = self.run.add(Server(self.run.dir, replicaof=self.proxy.port))
            wait_link_up(self.replica, self.master)
        except BaseException:
            self.run.close()
            raise

    def close(self) -> None:
        self.run.close()

    def sync_stats(self) -> Dict[str, int]:
        s = self.master.client().info("stats")
        return {"sync_full": int(s["sync_full"]), "sync_partial_ok": int(s["sync_partial_ok"]),
                "sync_partial_err": int(s["sync_partial_err"])}


class MixedTraffic:
    """Threads on two Limiters with timeout_ms on the master: `open` ones fail open, `closed` ones
    fail closed. Each call a GCRA check, a sliding window check, and a lease acquire and release,
    all on long-lived keys (nothing expires while the digests are compared)."""

    def __init__(self, port: int, timeout_ms: int = 100, per_policy: int = 2) -> None:
        import threading
        self.limiters = {policy: Limiter(redis.Redis(host="127.0.0.1", port=port), on_error=policy,
                                         timeout_ms=timeout_ms) for policy in ("open", "closed")}
        self.rate = Gcra(10**7, 3_600_000, name="mixed-gcra")
        self.slide = Slide(10**7, 3_600_000, name="mixed-slide")
        self.pool = Concurrency(1000, 60_000, name="mixed-pool")
        self.stop = threading.Event()
        self.calls: Dict[str, List[Any]] = {"open": [], "closed": []}
        self.errors: List[BaseException] = []
        self.threads = [threading.Thread(target=self.loop, args=(policy, i), daemon=True)
                        for policy in ("open", "closed") for i in range(per_policy)]
        for t in self.threads:
            t.start()

    def loop(self, policy: str, i: int) -> None:
        lim = self.limiters[policy]
        out = self.calls[policy]
        who = f"{policy}-{i}"
        try:
            while not self.stop.is_set():
                for fn in (lambda: lim.check(self.rate, who), lambda: lim.check(self.slide, who)):
                    t0 = now()
                    d = fn()
                    out.append((t0, now(), d.source, d.allowed))
                t0 = now()
                lease = lim.acquire(self.pool, who)
                out.append((t0, now(), lease.decision.source, lease.acquired))
                lease.release()
                if out[-1][2] != "redis":
                    time.sleep(0.002)
        except BaseException as exc:
            self.errors.append(exc)

    def close(self, deadline_s: float = 10) -> None:
        self.stop.set()
        end = now() + deadline_s
        for t in self.threads:
            t.join(max(0.0, end - now()))
        for lim in self.limiters.values():
            lim.close()
        assert not any(t.is_alive() for t in self.threads), "a traffic thread did not stop"

    def window(self, policy: str, t0: float, t1: float) -> List[Any]:
        return [c for c in list(self.calls[policy]) if t0 <= c[0] < t1]

    def served_after(self, policy: str, t: float) -> bool:
        return any(c[0] >= t and c[2] == "redis" for c in list(self.calls[policy])[-50:])


FAULTS = ["client-pause-write", "client-pause-all", "debug-sleep", "sigstop-master", "sigstop-replica",
          "replica-cut-off"]
#: the faults that stop the master answering (the others concern the replica only)
MASTER_FAULTS = {"client-pause-write", "client-pause-all", "debug-sleep", "sigstop-master"}


def fault(pair: Pair, name: str, duration_s: float = 1.0, timeout_ms: int = 100) -> Dict[str, Any]:
    """Traffic on the pair, the fault for duration_s, traffic again until both policies are served
    by Redis; then the traffic stops and the state is compared. Returns the figures."""
    import threading
    m, rep = pair.master, pair.replica
    before = pair.sync_stats()
    traffic = MixedTraffic(m.port, timeout_ms)
    res: Dict[str, Any] = {"fault": name}
    try:
        wait_until(lambda: all(traffic.served_after(p, 0) for p in ("open", "closed")), 10, "traffic to start")
        time.sleep(0.2)  # traffic before the fault
        admin = m.client(timeout=10)
        sleeper: Optional[threading.Thread] = None
        t0 = now()
        if name == "client-pause-write":
            admin.execute_command("CLIENT", "PAUSE", int(duration_s * 1000), "WRITE")
        elif name == "client-pause-all":
            admin.execute_command("CLIENT", "PAUSE", int(duration_s * 1000), "ALL")
        elif name == "debug-sleep":
            sleeper = threading.Thread(target=lambda: admin.execute_command("DEBUG", "SLEEP", duration_s),
                                       daemon=True)
            sleeper.start()
        elif name == "sigstop-master":
            m.sigstop()
        elif name == "sigstop-replica":
            rep.sigstop()
        elif name == "replica-cut-off":
            pair.proxy.cut()
            wait_until(lambda: rep.client().info("replication")["master_link_status"] == "down", 10,
                       "the replica to see its link down")
        else:
            raise ValueError(name)
        end = t0 + duration_s
        while now() < end:
            time.sleep(min(0.05, max(0.0, end - now())))
        if name == "sigstop-master":
            m.sigcont()
        elif name == "sigstop-replica":
            rep.sigcont()
        elif name == "replica-cut-off":
            pair.proxy.restore()
        if sleeper is not None:
            sleeper.join(10)
            assert not sleeper.is_alive(), "DEBUG SLEEP did not return"
        t1 = now()
        wait_until(lambda: all(traffic.served_after(p, t1) for p in ("open", "closed")), 10,
                   "both policies served by Redis after the fault")
        if name == "replica-cut-off":
            wait_until(lambda: rep.client().info("replication")["master_link_status"] == "up", 15,
                       "the replica's link up again")
        time.sleep(0.2)  # traffic after the fault
    finally:
        traffic.close()
    res["errors"] = [repr(e) for e in traffic.errors]
    for policy in ("open", "closed"):
        during = traffic.window(policy, t0, t1)
        res[f"{policy}_calls_during"] = len(during)
        res[f"{policy}_fallback_sources"] = sorted({c[2] for c in during if c[2] != "redis"})
        res[f"{policy}_fallbacks_during"] = sum(1 for c in during if c[2] != "redis")
        res[f"{policy}_denied_fallbacks"] = sum(1 for c in during if c[2] != "redis" and not c[3])
        res[f"{policy}_calls_total"] = len(traffic.calls[policy])
        res[f"{policy}_fallbacks_total"] = sum(1 for c in traffic.calls[policy] if c[2] != "redis")
    res["digest"] = digests_equal(m, rep)
    res["keys"] = m.client().dbsize()
    res["alive"] = m.alive() and rep.alive()
    res["crashed"] = m.crashed() or rep.crashed()
    after = pair.sync_stats()
    res["sync"] = {k: after[k] - before[k] for k in after}
    return res


def min_replicas(pair: Pair, timeout_ms: int = 100) -> Dict[str, Any]:
    """min-replicas-to-write 1, min-replicas-max-lag 2 on the master (1 would flap: the lag is whole
    seconds since the last acknowledgement, which a healthy replica sends once a second); the replica stopped (SIGSTOP):
    once its last acknowledgement is over 2 s old the master refuses every write command
    (NOREPLICAS), RL.* included; the library answers with the configured policy; a peek (read-only)
    is still served. SIGCONT: writes are accepted again; state equal."""
    m, rep = pair.master, pair.replica
    admin = m.client()
    g = Gcra(10**7, 3_600_000, name="minrep")
    res: Dict[str, Any] = {}
    lims = {p: Limiter(redis.Redis(host="127.0.0.1", port=m.port), on_error=p, timeout_ms=timeout_ms)
            for p in ("open", "closed")}
    admin.config_set("min-replicas-max-lag", 2)
    admin.config_set("min-replicas-to-write", 1)
    try:
        # a replica is there: accepted
        wait_until(lambda: lims["closed"].check(g, "u").source == "redis", 10, "writes accepted")
        rep.sigstop()
        t0 = now()

        def refused() -> bool:
            try:
                admin.execute_command("RL.GCRA", "rl:minrep:raw", 10, 1000)
            except redis.ResponseError as exc:
                res["error"] = str(exc)
                return str(exc).startswith("NOREPLICAS")
            return False

        wait_until(refused, 10, "the master to refuse writes (NOREPLICAS)", step_s=0.05)
        res["refused_after_s"] = now() - t0
        d_open, d_closed = lims["open"].check(g, "u"), lims["closed"].check(g, "u")
        res["open"] = (d_open.source, d_open.allowed, type(d_open.error).__name__, str(d_open.error))
        res["closed"] = (d_closed.source, d_closed.allowed, type(d_closed.error).__name__)
        peek = lims["closed"].peek(g, "u")
        res["peek"] = (peek.source, peek.allowed)
        rep.sigcont()
        wait_until(lambda: lims["closed"].check(g, "u").source == "redis", 10, "writes accepted again")
        res["recovered_after_s"] = now() - t0
    finally:
        rep.sigcont()
        admin.config_set("min-replicas-to-write", 0)
        for lim in lims.values():
            lim.close()
    res["digest"] = digests_equal(m, rep)
    res["crashed"] = m.crashed() or rep.crashed()
    return res
