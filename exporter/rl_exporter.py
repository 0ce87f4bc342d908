#!/usr/bin/env python3
"""rl-exporter: the redis-rl module's INFO rl and RL.TOP as Prometheus metrics.

Scrapes one server, a list of servers, or every master of a Redis Cluster
(found from any node with CLUSTER NODES, again on every scrape), and serves:

  /metrics    Prometheus text format (see docs/observability.md for the list)
  /           a live page: top denied keys, denials per second, retry-after
  /api/live   the live page's data as JSON
  /healthz    "ok" (the exporter runs; says nothing about the servers)

Usage (from a checkout):
  scripts/rl-exporter --redis redis://127.0.0.1:6379 --listen 127.0.0.1:9786
  scripts/rl-exporter --redis redis://:pw@10.0.0.5:7000 --cluster --listen :9786
  scripts/rl-exporter --redis redis://a:6379 --redis redis://b:6379 --top 20 --hash-keys

Standard library only (Python 3.8+): nothing to install. It speaks RESP2
itself (AUTH, INFO, CLUSTER NODES, RL.TOP, MODULE LIST are all it sends) and
writes the exposition format itself; the tests check it with promtool.
"""

import argparse
import collections
import concurrent.futures
import hashlib
import hmac
import http.server
import json
import math
import os
import re
import socket
import ssl
import sys
import threading
import time
import urllib.parse

VERSION = "0.2.0"
HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------- RESP2 ----


class RespError(Exception):
    """An error reply (-ERR ...) from the server."""


class Connection:
    """One blocking RESP2 connection, TLS optional, authenticated on connect."""

    def __init__(self, host, port, user=None, password=None, tls=None, server_hostname=None, timeout=2.0):
        self.host, self.port = host, int(port)
        self.user, self.password = user, password
        self.tls, self.server_hostname = tls, server_hostname
        self.timeout = timeout
        self.sock = self.file = None

    def connect(self):
        sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.tls is not None:
                sock = self.tls.wrap_socket(sock, server_hostname=self.server_hostname or self.host)
            self.sock, self.file = sock, sock.makefile("rb")
            if self.password is not None:
                auth = ["AUTH", self.user, self.password] if self.user else ["AUTH", self.password]
                self._check(self._call(auth))
        except BaseException:
            self.close()
            raise

    def close(self):
        for thing in (self.file, self.sock):
            try:
                if thing is not None:
                    thing.close()
            except OSError:
                pass
        self.sock = self.file = None

    def pipeline(self, commands):
        """Sends every command, then reads every reply (errors as RespError
        values, not raised). Reconnects first if not connected; any I/O
        error closes the connection and is raised."""
        if self.sock is None:
            self.connect()
        try:
            self.sock.sendall(b"".join(encode(c) for c in commands))
            return [self._read() for _ in commands]
        except (OSError, EOFError, ValueError):
            self.close()
            raise

    def call(self, *args):
        return self._check(self.pipeline([args])[0])

    def _call(self, args):
        self.sock.sendall(encode(args))
        return self._read()

    @staticmethod
    def _check(reply):
        if isinstance(reply, RespError):
            raise reply
        return reply

    def _read(self):
        line = self.file.readline()
        if not line.endswith(b"\r\n"):
            raise EOFError("connection closed by the server")
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest
        if kind == b"-":
            return RespError(rest.decode(errors="replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.file.read(n + 2)
            if len(data) != n + 2:
                raise EOFError("connection closed by the server")
            return data[:-2]
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise ValueError(f"unexpected reply {line[:40]!r}")


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


# ------------------------------------------------------------- targets ----


class Target:
    """Where and how to connect: host, port, credentials, TLS."""

    def __init__(self, host, port, user=None, password=None, tls=None, server_hostname=None):
        self.host, self.port = host, int(port)
        self.user, self.password, self.tls, self.server_hostname = user, password, tls, server_hostname

    @property
    def name(self):
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def at(self, host, port):
        """The same credentials and TLS for another node (a cluster's)."""
        return Target(host, port, self.user, self.password, self.tls, self.server_hostname)

    def connection(self, timeout):
        return Connection(self.host, self.port, self.user, self.password, self.tls, self.server_hostname, timeout)


def tls_context(args, verify=True):
    ctx = ssl.create_default_context(cafile=args.tls_ca_cert)
    if args.tls_cert:
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
    if args.tls_insecure or not verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


def parse_target(url, args):
    """redis://[user[:password]@]host[:port] or rediss:// (TLS); the flags
    --user/--password/--tls give what the URL leaves out."""
    if "://" not in url:
        url = "redis://" + url
    u = urllib.parse.urlsplit(url)
    if u.scheme not in ("redis", "rediss"):
        raise SystemExit(f"rl-exporter: {url}: the scheme must be redis:// or rediss://")
    user = urllib.parse.unquote(u.username) if u.username else None
    password = urllib.parse.unquote(u.password) if u.password is not None else None
    if password is None and user and args.password is None and not os.environ.get("REDIS_PASSWORD"):
        # redis://pw@host (no colon) and no --password: a password, as
        # redis-py reads redis://:pw@host; with --password it is the user.
        password, user = user, None
    if password is None:
        password = args.password if args.password is not None else os.environ.get("REDIS_PASSWORD")
    if user in (None, ""):
        user = args.user or None
    tls = tls_context(args) if (u.scheme == "rediss" or args.tls) else None
    return Target(u.hostname or "127.0.0.1", u.port or 6379, user, password, tls, args.tls_server_name)


# ------------------------------------------------------------ scraping ----

KIND_COUNTERS = ["calls", "allowed", "denied", "never", "refunds", "errors"]
MODULE_COUNTERS = {
    "effects_propagated": "Writes handed to replicas and the AOF as RL.APPLY.",
    "keys_created": "Limiter keys created (a write to a key that did not exist).",
    "repairs": "States rewritten without consuming (a backward clock jump, a tightened limit).",
    "panics": "Bugs caught at an entry point and answered with an error (should stay 0).",
}
BUCKET_UNITS = {"ms": 0.001, "s": 1.0, "min": 60.0, "h": 3600.0}
BUCKET_RE = re.compile(r"^le_(\d+)(ms|s|min|h)$")


def parse_info(text):
    """INFO's text as {field: str | {subfield: int}} (dict lines: a=1,b=2)."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#") or ":" not in line:
            continue
        field, value = line.split(":", 1)
        if "=" in value:
            d = {}
            for part in value.split(","):
                k, _, v = part.partition("=")
                try:
                    d[k] = int(v)
                except ValueError:
                    try:
                        d[k] = float(v)
                    except ValueError:
                        pass
            out[field] = d
        else:
            out[field] = value
    return out


def bucket_bound(name):
    """le_10ms -> 0.01 (seconds); None if not a bound."""
    m = BUCKET_RE.match(name)
    return int(m.group(1)) * BUCKET_UNITS[m.group(2)] if m else None


def retry_histogram(info):
    """The retry-after histogram as (cumulative [(bound_s, count)] ending
    with +Inf, sum_s or None, never). Reads rl_retry_after_cumulative when
    the module has it, else sums INFO rl's non-cumulative rl_retry_after."""
    cum = info.get("rl_retry_after_cumulative")
    if isinstance(cum, dict):
        bounds = sorted((b, v) for b, v in ((bucket_bound(k), v) for k, v in cum.items()) if b is not None)
        inf = cum.get("le_inf", cum.get("count"))
        if inf is None:
            inf = bounds[-1][1] if bounds else 0
        buckets = bounds + [(math.inf, inf)]
        sum_ms = cum.get("sum_ms")
        never = cum.get("never", info.get("rl_retry_after", {}).get("never", 0) if isinstance(info.get("rl_retry_after"), dict) else 0)
        return buckets, (sum_ms / 1000.0 if sum_ms is not None else None), never
    raw = info.get("rl_retry_after")
    if not isinstance(raw, dict):
        return None
    bounds = sorted((b, v) for b, v in ((bucket_bound(k), v) for k, v in raw.items()) if b is not None)
    buckets, running = [], 0
    for bound, n in bounds:
        running += n
        buckets.append((bound, running))
    running += raw.get("longer", 0)
    buckets.append((math.inf, running))
    sum_ms = raw.get("sum_ms")
    return buckets, (sum_ms / 1000.0 if sum_ms is not None else None), raw.get("never", 0)


CAPACITY_RE = re.compile(r"must be 1 to (\d+)")


class NodeScraper:
    """One node: a persistent connection, its RL.TOP capacity, its counters."""

    def __init__(self, target, timeout, top_fetch):
        self.target = target
        self.timeout = timeout
        self.top_fetch = top_fetch
        self.conn = target.connection(timeout)
        self.capacity = None  # RL.TOP's top-capacity, learnt from its error
        self.scrape_errors = 0
        self.last_error = None
        self.lock = threading.Lock()

    def scrape(self):
        with self.lock:
            start = time.monotonic()
            try:
                result = self._scrape()
                result["up"] = 1
                self.last_error = None
            except (OSError, EOFError, ValueError, RespError, ssl.SSLError) as e:
                self.conn.close()
                self.scrape_errors += 1
                self.last_error = f"{type(e).__name__}: {e}"
                result = {"up": 0, "error": self.last_error}
            result["node"] = self.target.name
            result["duration"] = time.monotonic() - start
            result["scrape_errors"] = self.scrape_errors
            return result

    def _top_count(self):
        # Unknown capacity: ask for one more than --top-fetch; the error
        # ("must be 1 to N") tells a smaller capacity, success a larger one.
        if self.capacity is None:
            return self.top_fetch + 1
        return min(self.capacity, self.top_fetch)

    def _scrape(self):
        count = self._top_count()
        replies = self.conn.pipeline([
            ("INFO", "server"), ("INFO", "rl"),
            ("RL.TOP", "DENIED", "COUNT", count), ("RL.TOP", "CONSUMED", "COUNT", count),
        ])
        if self.capacity is None:
            m = CAPACITY_RE.search(str(replies[2])) if isinstance(replies[2], RespError) else None
            if m:
                self.capacity = int(m.group(1))
                count = self._top_count()
                replies[2:] = self.conn.pipeline([
                    ("RL.TOP", "DENIED", "COUNT", count), ("RL.TOP", "CONSUMED", "COUNT", count)])
            elif not isinstance(replies[2], RespError):
                self.capacity = math.inf
        elif isinstance(replies[2], RespError) and CAPACITY_RE.search(str(replies[2])):
            self.capacity = None  # the server restarted with a smaller top-capacity: probe again
        for r in replies[:2]:
            if isinstance(r, RespError):
                raise r
        server = parse_info(replies[0].decode(errors="replace"))
        info = parse_info(replies[1].decode(errors="replace"))
        if "rl_version" not in info:
            raise RespError("INFO rl has no rl_version: is the redis-rl module loaded?")
        out = {"info": info, "server": server, "time": time.time()}
        for board, reply in (("denied", replies[2]), ("consumed", replies[3])):
            if isinstance(reply, RespError):
                out[board] = None  # top-capacity 0, or RL.TOP denied by ACL
                out[board + "_error"] = str(reply)
                continue
            rows = [(k.decode("utf-8", errors="backslashreplace"), int(c), int(e)) for k, c, e in reply]
            out[board] = rows
            # Space-Saving: the counts held add up to every increment since
            # the last RL.TOP RESET, when the whole summary was read.
            complete = len(rows) < count or (self.capacity is not None and count >= self.capacity)
            out[board + "_tracked"] = sum(c for _, c, _ in rows) if complete else None
        return out


class Redactor:
    """What a key label shows: the key, a keyed hash of it, or a prefix."""

    def __init__(self, hash_keys=False, salt="", truncate=0):
        self.hash_keys, self.salt, self.truncate = hash_keys, salt.encode(), truncate

    def __call__(self, key):
        if self.hash_keys:
            return "h:" + hmac.new(self.salt, key.encode("utf-8", "surrogateescape"), hashlib.sha256).hexdigest()[:16]
        if self.truncate and len(key) > self.truncate:
            return key[: self.truncate] + "..."
        return key


class Exporter:
    def __init__(self, args):
        self.args = args
        self.seeds = [parse_target(u, args) for u in args.redis]
        self.cluster = args.cluster
        self.redact = Redactor(args.hash_keys, args.hash_salt or os.environ.get("RL_EXPORTER_HASH_SALT", ""),
                               args.truncate_keys)
        self.nodes = {}  # name -> NodeScraper
        self.discovery_errors = 0
        self.discovery_error = None
        self.scrapes = 0
        self.lock = threading.Lock()
        self.last = None  # (monotonic, snapshot)
        self.history = collections.deque(maxlen=max(2, args.history))
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=16)

    def _node(self, target):
        n = self.nodes.get(target.name)
        if n is None:
            n = self.nodes[target.name] = NodeScraper(target, self.args.timeout, self.args.top_fetch)
        return n

    def discover(self):
        """The nodes to scrape now: the seeds, or every master of the cluster
        as the first seed (or known node) that answers CLUSTER NODES sees it."""
        if not self.cluster:
            return [self._node(t) for t in self.seeds]
        candidates = list(self.seeds) + [n.target for n in self.nodes.values()]
        err = None
        for t in candidates:
            conn = t.connection(self.args.timeout)
            try:
                text = conn.call("CLUSTER", "NODES").decode(errors="replace")
            except (OSError, EOFError, ValueError, RespError, ssl.SSLError) as e:
                err = f"{t.name}: {type(e).__name__}: {e}"
                continue
            finally:
                conn.close()
            masters = []
            for line in text.splitlines():
                f = line.split()
                if len(f) < 8:
                    continue
                flags = f[2].split(",")
                if "master" not in flags or "noaddr" in flags:
                    continue
                hostport = f[1].split("@")[0]
                host, _, port = hostport.rpartition(":")
                if not host or port in ("", "0"):
                    continue
                host = host.strip("[]") or t.host
                masters.append(self._node(t.at(host, int(port))))
            self.discovery_error = None
            return sorted(masters, key=lambda n: n.target.name)
        self.discovery_errors += 1
        self.discovery_error = err
        # Nobody answered: report every node known as down.
        known = [self._node(t) for t in self.seeds] + list(self.nodes.values())
        return sorted({n.target.name: n for n in known}.values(), key=lambda n: n.target.name)

    def snapshot(self, max_age=0.0):
        """Scrapes every node (in parallel), at most once per max_age seconds."""
        with self.lock:
            now = time.monotonic()
            if self.last is not None and now - self.last[0] < max_age:
                return self.last[1]
            start = time.monotonic()
            nodes = self.discover()
            results = list(self.pool.map(lambda n: n.scrape(), nodes))
            snap = {"nodes": results, "mono": time.monotonic(), "time": time.time(),
                    "duration": time.monotonic() - start}
            self.scrapes += 1
            self.last = (snap["mono"], snap)
            self.history.append(self._trimmed(snap))
            return snap

    def _trimmed(self, snap):
        """What the live page's history keeps of a snapshot: the counters and
        each node's first rows (for per-key rates), not 1024 rows a board."""
        keep = max(2 * self.args.top, 20)
        nodes = []
        for r in snap["nodes"]:
            r = dict(r)
            for board in ("denied", "consumed"):
                if r.get(board):
                    r[board] = r[board][:keep]
            r.pop("server", None)
            nodes.append(r)
        return dict(snap, nodes=nodes)

    # ---------------------------------------------------- the metrics ----

    def top_rows(self, snap, board):
        """The top N (node, label, count, error) over every node, labels redacted
        (rows whose labels coincide after redaction are summed)."""
        merged = {}
        for r in snap["nodes"]:
            for key, count, error in r.get(board) or []:
                entry = merged.setdefault((r["node"], self.redact(key)), [0, 0])
                entry[0] += count
                entry[1] += error
        order = sorted(merged.items(), key=lambda kv: (-kv[1][0], kv[0][1], kv[0][0]))
        return [(node, label, c, e) for (node, label), (c, e) in order[: self.args.top]]

    def metrics(self, snap):
        m = Metrics()
        up = [r for r in snap["nodes"] if r["up"]]
        fam = m.family
        fam("redis_rl_up", "gauge", "1 if the last scrape of the node succeeded (INFO rl read), else 0.")
        fam("redis_rl_scrape_duration_seconds", "gauge", "How long the last scrape of the node took.")
        fam("redis_rl_scrape_errors_total", "counter", "Failed scrapes of the node since the exporter started.")
        for r in snap["nodes"]:
            lab = {"node": r["node"]}
            m.add("redis_rl_up", lab, r["up"])
            m.add("redis_rl_scrape_duration_seconds", lab, r["duration"])
            m.add("redis_rl_scrape_errors_total", lab, r["scrape_errors"])
        fam("redis_rl_module_info", "gauge", "The module's version, clock and compiled-in tzdata release (always 1).")
        fam("redis_rl_server_start_time_seconds", "gauge",
            "When the server started (Unix time): its INFO rl counters start from 0 then.")
        for r in up:
            info = r["info"]
            m.add("redis_rl_module_info", {"node": r["node"], "version": info.get("rl_version", ""),
                                          "tzdata": info.get("rl_tzdata", ""), "clock": info.get("rl_clock", ""),
                                          "server_version": r["server"].get("redis_version", "")}, 1)
            uptime = r["server"].get("uptime_in_seconds")
            if uptime is not None and str(uptime).isdigit():
                m.add("redis_rl_server_start_time_seconds", {"node": r["node"]}, int(r["time"] - int(uptime)))

        help_of = {
            "calls": "Calls of the command (every outcome).",
            "allowed": "Calls answered allowed (PEEK and COST 0 included; RELEASE/RENEW answered 1).",
            "denied": "Calls answered denied that could succeed later (retry_after_ms >= 0).",
            "never": "Calls denied that can never succeed (cost above the limit, retry -1).",
            "refunds": "Refunds answered (REFUND n; RL.ALL: refund specs of allowed calls).",
            "errors": "Calls answered with an error (bad arguments, WRONGTYPE).",
        }
        kinds = []
        for r in up:
            for field, value in r["info"].items():
                if field.startswith("rl_") and isinstance(value, dict) and "calls" in value:
                    kinds.append((r["node"], field[3:], value))
        for c in KIND_COUNTERS:
            name = f"redis_rl_{c}_total"
            rows = [(n, k, v[c]) for n, k, v in kinds if c in v]
            fam(name, "counter", help_of[c] + " From INFO rl, per command (kind) and node.")
            for n, k, v in rows:
                m.add(name, {"node": n, "kind": k}, v)
        # RL.ACQUIRE ... WAIT: INFO rl's rl_wait line (the server's own).
        waits = [(r["node"], r["info"]["rl_wait"]) for r in up if isinstance(r["info"].get("rl_wait"), dict)]
        for field, name, kind, text in (
            ("waits", "redis_rl_waits_total", "counter", "Calls that blocked in RL.ACQUIRE ... WAIT."),
            ("grants", "redis_rl_wait_grants_total", "counter", "Waiters granted a lease after waiting."),
            ("timeouts", "redis_rl_wait_timeouts_total", "counter", "Waiters whose timeout passed."),
            ("waiting", "redis_rl_waiting_clients", "gauge", "Clients waiting in RL.ACQUIRE ... WAIT now."),
        ):
            rows = [(n, w[field]) for n, w in waits if field in w]
            if rows:
                fam(name, kind, text + " From INFO rl's rl_wait, per node.")
                for n, v in rows:
                    m.add(name, {"node": n}, v)
        for field, text in MODULE_COUNTERS.items():
            name = f"redis_rl_{field}_total"
            fam(name, "counter", text)
            for r in up:
                v = r["info"].get("rl_" + field)
                if v is not None and str(v).isdigit():
                    m.add(name, {"node": r["node"]}, int(v))

        hist_name = "redis_rl_retry_after_seconds"
        fam(hist_name, "histogram",
            "retry_after of denials that can succeed later, every command (PEEK included; an RL.ALL once, "
            "with its combined retry). From INFO rl's rl_retry_after.")
        fam("redis_rl_retry_after_never_total", "counter",
            "Denials that can never succeed (retry -1), counted apart from the histogram.")
        for r in up:
            h = retry_histogram(r["info"])
            if h is None:
                continue
            buckets, total, never = h
            lab = {"node": r["node"]}
            for bound, n in buckets:
                m.add(hist_name + "_bucket", dict(lab, le=fmt_le(bound)), n)
            if total is not None:
                m.add(hist_name + "_sum", lab, total)
            m.add(hist_name + "_count", lab, buckets[-1][1])
            m.add("redis_rl_retry_after_never_total", lab, never)

        n = self.args.top
        for board, unit, what in (("denied", "calls", "Denied calls"), ("consumed", "units", "Consumed units (sampled)")):
            name = f"redis_rl_top_{board}_{unit}"
            fam(name, "gauge", f"{what} of the top {n} keys over all nodes, since the node's last RL.TOP RESET "
                               f"(restarts from 0 then; not a counter).")
            fam(name + "_error", "gauge", f"RL.TOP's error of {name}: " + (
                "the true count is within [count - error, count]." if board == "denied" else
                "the true units are within count +- error (about 99.7 %)."))
            for node, label, c, e in self.top_rows(snap, board):
                m.add(name, {"node": node, "key": label}, c)
                m.add(name + "_error", {"node": node, "key": label}, e)
            fam(f"redis_rl_top_{board}_tracked_{unit}", "gauge",
                f"{what} of every key RL.TOP holds on the node since its last RL.TOP RESET "
                f"(the sum of its Space-Saving counts; for shares).")
            for r in up:
                t = r.get(board + "_tracked")
                if t is not None:
                    m.add(f"redis_rl_top_{board}_tracked_{unit}", {"node": r["node"]}, t)

        fam("redis_rl_exporter_scrape_duration_seconds", "gauge", "How long the last scrape of all nodes took.")
        m.add("redis_rl_exporter_scrape_duration_seconds", {}, snap["duration"])
        fam("redis_rl_exporter_nodes", "gauge", "Nodes scraped (the list given, or the cluster's masters).")
        m.add("redis_rl_exporter_nodes", {}, len(snap["nodes"]))
        fam("redis_rl_exporter_discovery_errors_total", "counter", "Cluster discoveries no seed node answered.")
        m.add("redis_rl_exporter_discovery_errors_total", {}, self.discovery_errors)
        fam("redis_rl_exporter_build_info", "gauge", "The exporter's version (always 1).")
        m.add("redis_rl_exporter_build_info", {"version": VERSION}, 1)
        return m.text()

    # --------------------------------------------------- the live page ----

    def live(self, window):
        """The live page's data: the newest snapshot, rates against the
        newest snapshot at least `window` seconds older (or the oldest)."""
        snap = self.snapshot(max_age=0.5)
        hist = list(self.history)
        base = None
        for old in reversed(hist[:-1]):
            base = old
            if snap["mono"] - old["mono"] >= window:
                break
        dt = snap["mono"] - base["mono"] if base else 0

        def counters(s):
            out = {}
            for r in s["nodes"]:
                if not r["up"]:
                    continue
                for field, value in r["info"].items():
                    if field.startswith("rl_") and isinstance(value, dict) and "calls" in value:
                        out[(r["node"], field[3:])] = value.get("denied", 0) + value.get("never", 0)
            return out

        def increase(new, old):
            return new if new < old else new - old  # a counter reset: the server restarted

        now_c = counters(snap)
        by_kind, total_rate = {}, None
        if base and dt > 0:
            old_c = counters(base)
            total_rate = 0.0
            for (node, kind), v in now_c.items():
                if (node, kind) in old_c:
                    rate = increase(v, old_c[(node, kind)]) / dt
                    by_kind[kind] = by_kind.get(kind, 0.0) + rate
                    total_rate += rate
        # Denials per second between scrapes at least a second apart (the
        # page's and Prometheus's scrapes interleave; closer ones are noise).
        series, a = [], hist[0] if hist else None
        for b in hist[1:]:
            d = b["mono"] - a["mono"]
            if d >= 1.0:
                ca, cb = counters(a), counters(b)
                series.append([round(b["time"], 3), sum(increase(v, ca[k]) for k, v in cb.items() if k in ca) / d])
                a = b

        def board(name):
            rows = self.top_rows(snap, name)
            tracked = [r.get(name + "_tracked") for r in snap["nodes"] if r["up"]]
            total = sum(t for t in tracked if t is not None) if tracked and None not in tracked else None
            base_total = total if total else sum(c for _, _, c, _ in rows)
            old = {}
            if base and dt > 0:
                for node, label, c, _ in self._all_rows(base, name):
                    old[(node, label)] = c
            out = []
            for node, label, c, e in rows:
                rate = None
                if (node, label) in old:
                    rate = increase(c, old[(node, label)]) / dt
                out.append({"node": node, "key": label, "count": c, "error": min(e, c),
                            "share": (c / base_total) if base_total else None, "per_second": rate})
            return {"rows": out, "tracked": total}

        hist_now = self._histogram(snap)
        hist_old = self._histogram(base) if base and dt > 0 else None
        buckets = []
        for i, (bound, lifetime) in enumerate(hist_now["buckets"]):
            prev = hist_now["buckets"][i - 1][1] if i else 0
            item = {"le": fmt_bound(bound), "count": lifetime - prev}
            if hist_old is not None:
                ob = hist_old["buckets"]
                oprev = ob[i - 1][1] if i else 0
                item["recent"] = increase(lifetime - prev, ob[i][1] - oprev) if i < len(ob) else None
            buckets.append(item)
        return {
            "time": snap["time"], "window_seconds": round(dt, 3) if base else None,
            "nodes": [{"node": r["node"], "up": r["up"], "error": r.get("error")} for r in snap["nodes"]],
            "version": next((r["info"].get("rl_version") for r in snap["nodes"] if r["up"]), None),
            "denials_per_second": total_rate, "denials_per_second_by_kind": by_kind,
            "denials_total": sum(now_c.values()), "series": series[-150:],
            "top_denied": board("denied"), "top_consumed": board("consumed"),
            "retry_after": {"buckets": buckets, "never": hist_now["never"],
                            "never_recent": increase(hist_now["never"], hist_old["never"]) if hist_old else None},
        }

    def _all_rows(self, snap, board):
        merged = {}
        for r in snap["nodes"]:
            for key, count, _ in r.get(board) or []:
                k = (r["node"], self.redact(key))
                merged[k] = merged.get(k, 0) + count
        return [(n, l, c, 0) for (n, l), c in merged.items()]

    @staticmethod
    def _histogram(snap):
        total, never = None, 0
        for r in snap["nodes"]:
            if not r["up"]:
                continue
            h = retry_histogram(r["info"])
            if h is None:
                continue
            buckets, _, nv = h
            never += nv
            if total is None:
                total = [list(b) for b in buckets]
            else:
                for t, (bound, n) in zip(total, buckets):
                    t[1] += n
        return {"buckets": [tuple(b) for b in total or []], "never": never}


def fmt_le(bound):
    if bound == math.inf:
        return "+Inf"
    return repr(float(bound)) if bound != int(bound) else f"{bound:.1f}"


def fmt_bound(bound):
    if bound == math.inf:
        return "longer"
    if bound < 1:
        return f"{round(bound * 1000)}ms"
    if bound < 60:
        return f"{round(bound)}s"
    if bound < 3600:
        return f"{round(bound / 60)}min"
    return f"{round(bound / 3600)}h"


class Metrics:
    """Prometheus text exposition format 0.0.4, family by family."""

    def __init__(self):
        self.families = collections.OrderedDict()

    def family(self, name, kind, text):
        self.families[name] = (kind, text, [])

    def add(self, sample, labels, value):
        for name in (sample, sample.rsplit("_", 1)[0]):
            if name in self.families:
                self.families[name][2].append((sample, labels, value))
                return
        raise KeyError(sample)

    def text(self):
        out = []
        for name, (kind, text, samples) in self.families.items():
            out.append(f"# HELP {name} {escape_help(text)}")
            out.append(f"# TYPE {name} {kind}")
            for sample, labels, value in samples:
                lab = ",".join(f'{k}="{escape_label(str(v))}"' for k, v in labels.items())
                out.append(f"{sample}{{{lab}}} {fmt_value(value)}" if lab else f"{sample} {fmt_value(value)}")
        return "\n".join(out) + "\n"


def escape_help(s):
    return s.replace("\\", "\\\\").replace("\n", "\\n")


def escape_label(s):
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def fmt_value(v):
    if isinstance(v, float):
        if math.isinf(v):
            return "+Inf" if v > 0 else "-Inf"
        return repr(v)
    return str(int(v))


# ---------------------------------------------------------------- HTTP ----


class Handler(http.server.BaseHTTPRequestHandler):
    exporter = None
    server_version = "rl-exporter/" + VERSION

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        try:
            if path == "/metrics":
                body = self.exporter.metrics(self.exporter.snapshot()).encode()
                self.reply(200, "text/plain; version=0.0.4; charset=utf-8", body)
            elif path == "/api/live":
                body = json.dumps(self.exporter.live(self.exporter.args.rate_window)).encode()
                self.reply(200, "application/json", body)
            elif path in ("/", "/index.html"):
                with open(os.path.join(HERE, "live.html"), "rb") as f:
                    self.reply(200, "text/html; charset=utf-8", f.read())
            elif path == "/healthz":
                self.reply(200, "text/plain", b"ok\n")
            else:
                self.reply(404, "text/plain", b"not found: try /metrics or /\n")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def reply(self, code, ctype, body):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *a):
        if self.exporter.args.verbose:
            sys.stderr.write("rl-exporter: %s %s\n" % (self.address_string(), fmt % a))


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr, handler):
        host = addr[0]
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        super().__init__(addr, handler)


def parse_listen(text):
    host, _, port = text.rpartition(":")
    return (host.strip("[]") or "0.0.0.0", int(port))


def parser():
    p = argparse.ArgumentParser(prog="rl-exporter", description="Prometheus exporter for the redis-rl module.")
    p.add_argument("--redis", action="append", metavar="URL",
                   help="redis://[user[:password]@]host:port or rediss:// (TLS); repeat for a list. "
                        "Default redis://127.0.0.1:6379")
    p.add_argument("--cluster", action="store_true",
                   help="scrape every master of the cluster (found from any --redis node, on every scrape)")
    p.add_argument("--listen", default="127.0.0.1:9786", metavar="HOST:PORT",
                   help="where to serve /metrics and the live page (default 127.0.0.1:9786)")
    p.add_argument("--user", help="ACL user (when the URL has none)")
    p.add_argument("--password", help="password (when the URL has none; also $REDIS_PASSWORD)")
    p.add_argument("--tls", action="store_true", help="TLS for redis:// URLs too")
    p.add_argument("--tls-ca-cert", help="CA certificate file to verify the servers (default: the system's)")
    p.add_argument("--tls-cert", help="client certificate file (servers with tls-auth-clients)")
    p.add_argument("--tls-key", help="client key file")
    p.add_argument("--tls-server-name", help="the name to verify in the servers' certificates (default: the host)")
    p.add_argument("--tls-insecure", action="store_true", help="do not verify the servers' certificates")
    p.add_argument("--top", type=int, default=10, metavar="N",
                   help="top denied and top consuming keys exported, over all nodes (default 10; 0: none)")
    p.add_argument("--hash-keys", action="store_true",
                   help="label keys by a keyed hash (h:<16 hex>) instead of their names")
    p.add_argument("--hash-salt", help="the hash's secret (also $RL_EXPORTER_HASH_SALT); without one, a "
                                       "low-entropy key (an IP) can be found by trying them all")
    p.add_argument("--truncate-keys", type=int, default=0, metavar="N",
                   help="label keys by their first N characters (and ...)")
    p.add_argument("--top-fetch", type=int, default=1024, metavar="N",
                   help="RL.TOP entries read per node (default 1024, RL.TOP's default capacity: then the "
                        "tracked totals are exact)")
    p.add_argument("--timeout", type=float, default=2.0, help="seconds per node connection and reply (default 2)")
    p.add_argument("--rate-window", type=float, default=10.0, help="the live page's rate window in seconds")
    p.add_argument("--history", type=int, default=300, help="scrapes kept for the live page (default 300)")
    p.add_argument("--verbose", action="store_true", help="log every HTTP request")
    p.add_argument("--version", action="version", version=f"rl-exporter {VERSION}")
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    args.redis = args.redis or ["redis://127.0.0.1:6379"]
    if args.top < 0 or args.top_fetch < 1 or args.truncate_keys < 0:
        raise SystemExit("rl-exporter: --top, --top-fetch and --truncate-keys must be positive")
    args.top_fetch = max(args.top_fetch, args.top)
    exporter = Exporter(args)
    Handler.exporter = exporter
    httpd = Server(parse_listen(args.listen), Handler)
    host, port = httpd.server_address[:2]
    sys.stderr.write(f"rl-exporter {VERSION}: http://{host}:{port}/metrics, live page http://{host}:{port}/ "
                     f"({'cluster via ' if args.cluster else ''}{', '.join(t.name for t in exporter.seeds)})\n")
    sys.stderr.flush()
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
