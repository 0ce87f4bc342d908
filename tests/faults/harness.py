"""Processes for the fault tests: redis-server with the module, the lag proxy, Sentinels.

REDIS_SERVER: the server binary (default redis-server on PATH).
REDIS_RL_MODULE: the module (default <repo>/target/release/libredis_rl.so).
REDIS_SENTINEL: a sentinel binary (default: /usr/bin/redis-sentinel next to
/usr/bin/redis-server, else `$REDIS_SERVER <conf> --sentinel`).

Everything listens on 127.0.0.1 on free ports (never 6379); every wait has a
deadline; every process is killed by stop_all() (atexit too).
"""

from __future__ import annotations

import atexit
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional, TypeVar

import redis

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
START_DEADLINE_S = 10.0
SENTINEL_NAME = "mymaster"

T = TypeVar("T")
_LIVE: List["Proc"] = []


def module_path() -> str:
    return os.path.abspath(os.environ.get("REDIS_RL_MODULE") or REPO / "target" / "release" / "libredis_rl.so")


def server_binary() -> str:
    return os.environ.get("REDIS_SERVER") or "redis-server"


def sentinel_command(conf: str) -> List[str]:
    explicit = os.environ.get("REDIS_SENTINEL")
    if explicit:
        return [explicit, conf]
    server = shutil.which(server_binary()) or server_binary()
    debian = "/usr/bin/redis-sentinel"
    if os.path.realpath(server) == os.path.realpath("/usr/bin/redis-server") and os.path.exists(debian):
        return [debian, conf]
    return [server, conf, "--sentinel"]


_USED: set = set()


def free_port() -> int:
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port != 6379 and port not in _USED and port < 55000:
            _USED.add(port)
            return port
    raise RuntimeError("no free loopback port")


def wait_until(pred: Callable[[], Optional[T]], deadline_s: float, what: str, step_s: float = 0.01) -> T:
    """Poll pred until it returns a truthy value; AssertionError after deadline_s."""
    end = time.monotonic() + deadline_s
    last: Optional[BaseException] = None
    while True:
        try:
            v = pred()
            if v:
                return v
        except Exception as exc:  # the thing polled may be down
            last = exc
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {deadline_s}s waiting for {what}" +
                                 (f" (last error: {last!r})" if last else ""))
        time.sleep(step_s)


class Proc:
    def __init__(self, args: List[str], log: str, port: int) -> None:
        self.args = args
        self.log = log
        self.port = port
        self.stopped = False
        self.proc: Optional[subprocess.Popen] = None  # type: ignore[type-arg]
        _LIVE.append(self)

    def spawn(self, stdout: int = subprocess.DEVNULL) -> None:
        self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.DEVNULL)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def sigstop(self) -> None:
        os.kill(self.pid, signal.SIGSTOP)
        self.stopped = True

    def sigcont(self) -> None:
        if self.alive() and self.stopped:
            os.kill(self.pid, signal.SIGCONT)
        self.stopped = False

    def kill9(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.alive():
            self.sigcont()
            self.kill9()

    def log_tail(self, n: int = 30) -> str:
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return "(no log)"


def _pong(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class Server(Proc):
    """redis-server with the module, no persistence, DEBUG allowed (loopback only)."""

    def __init__(self, workdir: str, *, port: Optional[int] = None, replicaof: Optional[int] = None,
                 extra: Optional[List[str]] = None) -> None:
        port = port or free_port()
        self.dir = os.path.join(workdir, f"redis-{port}")
        os.makedirs(self.dir, exist_ok=True)
        mod = module_path()
        if not os.path.isfile(mod):
            raise RuntimeError(f"module not found: {mod} (set REDIS_RL_MODULE)")
        log = os.path.join(self.dir, "redis.log")
        args = [server_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", self.dir, "--logfile", log, "--enable-debug-command", "yes",
                "--repl-backlog-size", "64mb", "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
                "--loadmodule", mod, *(extra or [])]
        if replicaof is not None:
            args += ["--replicaof", "127.0.0.1", str(replicaof)]
        super().__init__(args, log, port)
        self.start()

    def start(self) -> None:
        self.spawn()
        end = time.monotonic() + START_DEADLINE_S
        while not _pong(self.port):
            if not self.alive():
                raise RuntimeError(f"redis-server exited at start; log:\n{self.log_tail()}")
            if time.monotonic() > end:
                self.stop()
                raise RuntimeError(f"redis-server did not answer within {START_DEADLINE_S}s; log:\n{self.log_tail()}")
            time.sleep(0.02)

    def client(self, timeout: float = 5.0) -> "redis.Redis":
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=timeout, socket_connect_timeout=timeout,
                           protocol=2)

    def crashed(self) -> bool:
        text = self.log_tail(100000)
        return any(m in text for m in ("BUG REPORT", "panicked", "Segmentation fault", "crashed by signal"))


class LagProxy(Proc):
    def __init__(self, workdir: str, target: int, delay_ms: float) -> None:
        port = free_port()
        log = os.path.join(workdir, f"proxy-{port}.log")
        super().__init__([sys.executable, str(HERE / "lagproxy.py"), str(port), str(target), str(delay_ms)], log,
                         port)
        self.delay_ms = delay_ms
        self.spawn(stdout=subprocess.PIPE)
        assert self.proc is not None and self.proc.stdout is not None
        # "ready" within the deadline (a select on the pipe, so a hung start cannot hang us)
        import select
        r, _, _ = select.select([self.proc.stdout], [], [], START_DEADLINE_S)
        if not r or not self.proc.stdout.readline().startswith(b"ready"):
            self.stop()
            raise RuntimeError("lag proxy did not start")

    def cut(self) -> None:
        os.kill(self.pid, signal.SIGUSR1)

    def restore(self) -> None:
        os.kill(self.pid, signal.SIGUSR2)


class Sentinel(Proc):
    def __init__(self, workdir: str, master_port: int, myid: str, replica_port: int,
                 down_after_ms: int = 500, failover_timeout_ms: int = 2000) -> None:
        port = free_port()
        d = os.path.join(workdir, f"sentinel-{port}")
        os.makedirs(d, exist_ok=True)
        conf = os.path.join(d, "sentinel.conf")
        log = os.path.join(d, "sentinel.log")
        self.port = port
        self.myid = myid
        self.conf = conf
        self._lines = [
            f"port {port}", "bind 127.0.0.1", f"dir {d}", f"logfile {log}", "daemonize no",
            f"sentinel myid {myid}",
            f"sentinel monitor {SENTINEL_NAME} 127.0.0.1 {master_port} 2",
            f"sentinel down-after-milliseconds {SENTINEL_NAME} {down_after_ms}",
            f"sentinel failover-timeout {SENTINEL_NAME} {failover_timeout_ms}",
            f"sentinel parallel-syncs {SENTINEL_NAME} 1",
            f"sentinel known-replica {SENTINEL_NAME} 127.0.0.1 {replica_port}",
        ]
        super().__init__(sentinel_command(conf), log, port)

    def write_conf(self, ports: Dict[str, int]) -> None:
        lines = list(self._lines)
        for myid, port in ports.items():
            if myid != self.myid:
                lines.append(f"sentinel known-sentinel {SENTINEL_NAME} 127.0.0.1 {port} {myid}")
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def start(self) -> None:
        self.spawn()

    def client(self) -> "redis.Redis":
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1, socket_connect_timeout=1, protocol=2)


def start_sentinels(workdir: str, master_port: int, replica_port: int, n: int = 3) -> List[Sentinel]:
    """n Sentinels that already know each other and the replica (known-sentinel lines), so the
    first failover does not wait for hello messages; returns once each sees the others."""
    ids = [os.urandom(20).hex() for _ in range(n)]
    sentinels = [Sentinel(workdir, master_port, ids[i], replica_port) for i in range(n)]
    ports = {s.myid: s.port for s in sentinels}
    for s in sentinels:
        s.write_conf(ports)
        s.start()
    for s in sentinels:
        wait_until(lambda: _pong(s.port), START_DEADLINE_S, f"sentinel on {s.port}")

    def ready() -> bool:
        for s in sentinels:
            m = s.client().sentinel_master(SENTINEL_NAME)
            if int(m.get("num-other-sentinels", 0)) < n - 1 or int(m.get("num-slaves", 0)) < 1:
                return False
            if "s_down" in m.get("flags", "") or "o_down" in m.get("flags", ""):
                return False
        return True

    wait_until(ready, 15, "sentinels to see each other and the replica", step_s=0.05)
    return sentinels


def master_addr(sentinels: List[Sentinel]) -> Optional[int]:
    """The master port most Sentinels report (None when they disagree or are unreachable)."""
    votes: Dict[int, int] = {}
    for s in sentinels:
        try:
            _, port = s.client().sentinel_get_master_addr_by_name(SENTINEL_NAME)
            votes[int(port)] = votes.get(int(port), 0) + 1
        except Exception:
            pass
    for port, v in votes.items():
        if v * 2 > len(sentinels):
            return port
    return None


def stop_all() -> None:
    for p in list(_LIVE):
        try:
            p.stop()
        except Exception:
            pass
    _LIVE.clear()


atexit.register(stop_all)


def make_workdir() -> str:
    return tempfile.mkdtemp(prefix="redis-rl-faults-")


def role(r: "redis.Redis") -> str:
    return r.info("replication")["role"]


def digests_equal(master: Server, replica: Server, deadline_s: float = 10.0) -> str:
    """After WAIT: DEBUG DIGEST of master and replica equal (polled, since the WAIT ack is for
    the offset the replica processed, and a read of the replica may come just before). Returns it."""
    m = master.client()
    rep = replica.client()
    n = m.wait(1, int(deadline_s * 1000))
    assert n >= 1, f"WAIT 1: no replica acknowledged within {deadline_s}s"

    def same() -> Optional[str]:
        a = m.execute_command("DEBUG", "DIGEST")
        b = rep.execute_command("DEBUG", "DIGEST")
        return a if a == b else None

    try:
        return wait_until(same, deadline_s, "equal DEBUG DIGEST on master and replica", step_s=0.05)
    except AssertionError:
        keys = sorted(m.keys("*"))
        diff = [k for k in keys if m.execute_command("DEBUG", "DIGEST-VALUE", k)
                != rep.execute_command("DEBUG", "DIGEST-VALUE", k)]
        raise AssertionError(f"digests differ; {len(keys)} keys on master, "
                             f"{len(rep.keys('*'))} on replica; differing values: {diff[:10]}")
