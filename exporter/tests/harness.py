"""Throwaway servers, clusters, exporters and a Prometheus for the tests.

Every process listens on a free loopback port (never 6379), is started with
a deadline and killed at the end (atexit too, so a test that dies half-way
leaves nothing behind). REDIS_SERVER and REDIS_RL_MODULE say what to run.
"""

import atexit
import math
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "exporter"))

import rl_exporter  # noqa: E402

MODULE = os.path.abspath(os.environ.get("REDIS_RL_MODULE") or REPO / "target/release/libredis_rl.so")
SERVER = os.environ.get("REDIS_SERVER") or "redis-server"
PYTHON = sys.executable
DEADLINE_S = 15.0

_procs = []


def _kill_all():
    for p in _procs:
        if p.poll() is None:
            p.kill()
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass


atexit.register(_kill_all)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(argv, log, env=None, cwd=None):
    f = open(log, "ab")
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    f.close()
    _procs.append(p)
    return p


class Gone(Exception):
    """A process that wait_until waits for has exited: stop waiting."""


def cluster_port():
    """A free port below 55536 whose cluster bus port (+10000) is free too."""
    import random
    for _ in range(100):
        p = random.randint(20000, 45000)
        try:
            for q in (p, p + 10000):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", q))
            return p
        except OSError:
            continue
    raise RuntimeError("no free port pair for a cluster node")


def wait_until(what, check, timeout=DEADLINE_S, interval=0.05):
    """Polls check() (truthy = done) until timeout; raises with what."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            v = check()
            if v:
                return v
        except Gone:
            raise
        except Exception as e:  # noqa: BLE001 - polling start-up
            last = e
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last error: {last!r})")


_tls_support = None


def tls_supported():
    """Whether REDIS_SERVER was built with TLS (Redis 8 and Valkey here may not be)."""
    global _tls_support
    if _tls_support is None:
        certs = Certs()
        try:
            s = RedisServer(tls=certs)
            s.stop()
            _tls_support = True
        except RuntimeError:
            _tls_support = False
    return _tls_support


class Certs:
    """A self-signed certificate for 127.0.0.1 (CA = itself)."""

    _dir = None

    def __init__(self):
        if Certs._dir is None:
            d = tempfile.mkdtemp(prefix="rl-exporter-tls-")
            atexit.register(shutil.rmtree, d, True)
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{d}/key.pem",
                            "-out", f"{d}/cert.pem", "-days", "2", "-subj", "/CN=127.0.0.1",
                            "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=30)
            Certs._dir = d
        self.cert = f"{Certs._dir}/cert.pem"
        self.key = f"{Certs._dir}/key.pem"


class RedisServer:
    """redis-server with the module, on a free port; restartable in place."""

    def __init__(self, module_args=(), password=None, users=(), tls=None, cluster=False, port=None, extra=(),
                 login=None):
        if not os.path.isfile(MODULE):
            raise RuntimeError(f"module not found: {MODULE} (set REDIS_RL_MODULE)")
        self.dir = tempfile.mkdtemp(prefix="rl-exporter-redis-")
        self.module_args, self.password, self.users, self.tls = list(module_args), password, list(users), tls
        self.cluster, self.extra = cluster, list(extra)
        self.login = login or (None, password)  # (user, password) the tests' own connections use
        self.port = port or (cluster_port() if cluster else free_port())
        self.proc = None
        self.start()

    def argv(self):
        a = [SERVER, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", self.dir,
             "--logfile", f"{self.dir}/redis.log", "--loadmodule", MODULE, *self.module_args]
        if self.tls:
            a += ["--port", "0", "--tls-port", str(self.port), "--tls-cert-file", self.tls.cert,
                  "--tls-key-file", self.tls.key, "--tls-ca-cert-file", self.tls.cert, "--tls-auth-clients", "no"]
            if self.cluster:
                a += ["--tls-cluster", "yes", "--tls-replication", "yes"]
        else:
            a += ["--port", str(self.port)]
        if self.password:
            a += ["--requirepass", self.password]
            if self.cluster:
                a += ["--masterauth", self.password]
        for u in self.users:
            a += ["--user", *u.split()]
        if self.cluster:
            a += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                  "--cluster-node-timeout", "3000", "--cluster-require-full-coverage", "no"]
        return a + self.extra

    def start(self):
        self.proc = spawn(self.argv(), f"{self.dir}/stdout.log")
        try:
            wait_until(f"redis-server on {self.port}", lambda: self._ping(), timeout=DEADLINE_S)
        except (AssertionError, Gone):
            tail = self.log_tail()
            self.stop()
            raise RuntimeError(f"redis-server did not start; its log:\n{tail}")

    def _ping(self):
        if self.proc.poll() is not None:
            raise Gone("exited")
        c = self.conn()
        try:
            return c.call("PING") == b"PONG"
        finally:
            c.close()

    def conn(self, timeout=5.0):
        ctx = None
        if self.tls:
            import ssl
            ctx = ssl.create_default_context(cafile=self.tls.cert)
        return rl_exporter.Connection("127.0.0.1", self.port, self.login[0], self.login[1], ctx, None, timeout)

    def call(self, *args):
        c = self.conn()
        try:
            return c.call(*args)
        finally:
            c.close()

    def pipeline(self, commands):
        c = self.conn()
        try:
            return c.pipeline(commands)
        finally:
            c.close()

    @property
    def url(self):
        return f"{'rediss' if self.tls else 'redis'}://127.0.0.1:{self.port}"

    @property
    def name(self):
        return f"127.0.0.1:{self.port}"

    def log_tail(self):
        try:
            with open(f"{self.dir}/redis.log", errors="replace") as f:
                return "".join(f.readlines()[-20:])
        except OSError:
            return "(no log)"

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def restart(self):
        self.kill()
        self.start()

    def stop(self):
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class Cluster:
    """Three masters, no replicas, all slots assigned (redis-cli --cluster create)."""

    def __init__(self, password=None, tls=None, users=()):
        self.nodes = []
        try:
            for _ in range(3):
                self.nodes.append(RedisServer(password=password, tls=tls, cluster=True, users=users))
            cli = ["redis-cli"]
            if tls:
                cli += ["--tls", "--cacert", tls.cert]
            if password:
                cli += ["-a", password, "--no-auth-warning"]
            cli += ["--cluster", "create", *[n.name for n in self.nodes], "--cluster-yes"]
            out = subprocess.run(cli, capture_output=True, text=True, timeout=60)
            if out.returncode != 0:
                raise RuntimeError(f"redis-cli --cluster create failed:\n{out.stdout}\n{out.stderr}")

            def ok():
                for n in self.nodes:
                    info = rl_exporter.parse_info(n.call("CLUSTER", "INFO").decode())
                    if info.get("cluster_state") != "ok" or info.get("cluster_known_nodes") != "3":
                        return False
                return True

            wait_until("cluster_state:ok on all three nodes", ok, timeout=30, interval=0.1)
            self.refresh()
        except BaseException:
            self.stop()
            raise

    def refresh(self):
        """The slot map (from CLUSTER SLOTS), retried while it settles."""
        def slots():
            table = [None] * 16384
            for start, end, master, *_ in self.nodes[0].call("CLUSTER", "SLOTS"):
                port = int(master[1])
                node = next(n for n in self.nodes if n.port == port)
                for s in range(start, end + 1):
                    table[s] = node
            return table if all(t is not None for t in table) else None

        self.slots = wait_until("a full slot map", slots, timeout=20, interval=0.1)

    def owner(self, key):
        return self.slots[key_slot(key.encode() if isinstance(key, str) else key)]

    def stop(self):
        for n in self.nodes:
            n.stop()


def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_slot(key):
    s = key.find(b"{")
    if s >= 0:
        e = key.find(b"}", s + 1)
        if e > s + 1:
            key = key[s + 1:e]
    return crc16(key) % 16384


class Exporter:
    """scripts/rl-exporter on a free port, with the given flags."""

    def __init__(self, *flags):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="rl-exporter-")
        self.log = f"{self.dir}/exporter.log"
        self.proc = spawn([str(REPO / "scripts/rl-exporter"), *flags, "--listen", f"127.0.0.1:{self.port}"],
                          self.log, env=dict(os.environ, PYTHON=PYTHON))
        wait_until("rl-exporter's /healthz", lambda: self.get("/healthz") == "ok\n" or self._dead())

    def _dead(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"rl-exporter exited: {open(self.log).read()}")
        return False

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def get(self, path, timeout=10):
        with urllib.request.urlopen(self.url + path, timeout=timeout) as r:
            return r.read().decode()

    def metrics(self):
        text = self.get("/metrics")
        return text, parse_metrics(text)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


def parse_metrics(text):
    """{(name, frozenset(labels.items())): value} of a text exposition
    (enough of the format for our own output: no timestamps)."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if "{" in line:
            name, rest = line.split("{", 1)
            labels_text, value = rest.rsplit("} ", 1)
            labels = {}
            i = 0
            while i < len(labels_text):
                eq = labels_text.index("=", i)
                k = labels_text[i:eq]
                j = eq + 2
                v = []
                while labels_text[j] != '"':
                    if labels_text[j] == "\\":
                        j += 1
                        v.append({"n": "\n"}.get(labels_text[j], labels_text[j]))
                    else:
                        v.append(labels_text[j])
                    j += 1
                labels[k] = "".join(v)
                i = j + 2  # past '",'
        else:
            name, value = line.split(" ", 1)
            labels = {}
        out[(name, frozenset(labels.items()))] = float(value) if value not in ("+Inf", "-Inf") else math.copysign(
            math.inf, 1 if value == "+Inf" else -1)
    return out


def sample(metrics, name, **labels):
    """The value of one series (None if absent)."""
    return metrics.get((name, frozenset(labels.items())))


def series(metrics, name, **labels):
    """[(labels dict, value)] of every series of name matching labels."""
    want = set(labels.items())
    return [(dict(k[1]), v) for k, v in metrics.items() if k[0] == name and want <= set(k[1])]


def promtool_check(text):
    """promtool check metrics's verdict: (ok, output)."""
    p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    return p.returncode == 0, (p.stdout + p.stderr).strip()


class Prometheus:
    """Debian's prometheus on a free port, scraping the given targets every second."""

    def __init__(self, targets, interval="1s"):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="rl-exporter-prometheus-")
        cfg = (f"global:\n  scrape_interval: {interval}\n  evaluation_interval: {interval}\n"
               f"scrape_configs:\n  - job_name: redis-rl\n    scrape_timeout: {interval}\n"
               f"    static_configs:\n      - targets: [{', '.join(repr(t) for t in targets)}]\n")
        with open(f"{self.dir}/prometheus.yml", "w") as f:
            f.write(cfg)
        self.proc = spawn(["prometheus", f"--config.file={self.dir}/prometheus.yml",
                           f"--storage.tsdb.path={self.dir}/data", f"--web.listen-address=127.0.0.1:{self.port}",
                           "--web.enable-lifecycle"], f"{self.dir}/prometheus.log")
        wait_until("prometheus /-/ready", lambda: self._ready(), timeout=60, interval=0.2)

    def _ready(self):
        if self.proc.poll() is not None:
            raise AssertionError("prometheus exited: " + open(f"{self.dir}/prometheus.log").read()[-3000:])
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as r:
            return r.status == 200

    def query(self, expr, at=None):
        import json
        import urllib.parse
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                body = json.load(r)
        except urllib.error.HTTPError as e:
            body = json.load(e)
        if body.get("status") != "success":
            raise AssertionError(f"PromQL {expr!r}: {body.get('errorType')}: {body.get('error')}")
        return body["data"]

    def log_tail(self):
        return open(f"{self.dir}/prometheus.log", errors="replace").read()[-3000:]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class Generator(threading.Thread):
    """Drives traffic on a cluster in ticks: each tick, per node, one pipeline
    of the commands for the keys it owns. Records each denial's kind,
    node, retry_after_ms and time, from the replies."""

    def __init__(self, cluster, commands_per_tick, tick=0.1):
        super().__init__(daemon=True)
        self.cluster, self.tick = cluster, tick
        self.commands = commands_per_tick  # [(kind, (args...))]
        self.stop_event = threading.Event()
        self.events = []  # (monotonic, time, kind, node name, retry_after_ms)
        self.errors = []
        self.lock = threading.Lock()
        self.tick_lock = threading.Lock()  # held during a tick's pipelines
        self.paused = threading.Event()

    def pause(self):
        with self.tick_lock:
            self.paused.set()

    def resume(self):
        self.paused.clear()

    def run(self):
        conns = {}
        by_node = {}
        for kind, args in self.commands:
            by_node.setdefault(self.cluster.owner(args[1]).name, []).append((kind, args))
        nodes = {n.name: n for n in self.cluster.nodes}
        next_tick = time.monotonic()
        while not self.stop_event.is_set():
            with self.tick_lock:
                self.tick_once(by_node, nodes, conns)
            next_tick += self.tick
            self.stop_event.wait(max(0.0, next_tick - time.monotonic()))
        for c in conns.values():
            c.close()

    def tick_once(self, by_node, nodes, conns):
        if not self.paused.is_set():
            for name, cmds in by_node.items():
                try:
                    c = conns.get(name) or conns.setdefault(name, nodes[name].conn())
                    replies = c.pipeline([a for _, a in cmds])
                except (OSError, EOFError) as e:
                    conns.pop(name, None)
                    self.errors.append((name, repr(e)))
                    continue
                now, wall = time.monotonic(), time.time()
                with self.lock:
                    for (kind, _), r in zip(cmds, replies):
                        if isinstance(r, rl_exporter.RespError):
                            self.errors.append((name, str(r)))
                        elif r[0] == 0:
                            self.events.append((now, wall, kind, name, r[3]))

    def stop(self):
        self.stop_event.set()
        self.join(timeout=10)

    def denials(self, since=0.0, until=math.inf, **match):
        with self.lock:
            return [e for e in self.events if since <= e[1] < until and
                    all(e[{"kind": 2, "node": 3}[k]] == v for k, v in match.items())]
