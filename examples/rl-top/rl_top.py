#!/usr/bin/env python3
"""rl-top: who is being rate limited, live, across one server or a cluster.

Connects to a server with the redis-rl module, or to every master of a Redis
Cluster (found with CLUSTER NODES, with the --url's credentials and TLS),
asks each for RL.TOP DENIED and RL.TOP CONSUMED and INFO rl, merges the
answers (counts and errors summed per key: in a cluster each key lives on one
master) and redraws, every second, like `top`:

- the keys with the most denied calls, with their denials per second and
  their share of all denials RL.TOP tracked;
- the keys with the most consumed units, likewise;
- the histogram of retry_after_ms of denials (INFO rl's rl_retry_after),
  totals and per second.

Two time bases, each labelled where it shows: the lists count since the last
`RL.TOP RESET` (or the server's start), and so do their shares (a share is a
key's count over the sum of every count the node's summary holds, which is
exactly the number of denials, or sampled units, it counted since then); the
header's denials and the histogram are INFO rl's counters, since the server
started (RL.TOP RESET does not clear them). Rates per second are the same for
both: the change between two frames (the first frame of --once samples twice,
--interval apart). A reset seen between two frames is shown in the header.

Error bounds, as RL.TOP states them and never wider than the count:
- DENIED `error`: the true denials lie in [count - error, count] (Space-Saving:
  error <= count always).
- CONSUMED `range`: the true units lie in [max(0, count - error), count +
  error] with about 99.7 % confidence (consumption is sampled, see the README's
  RL.TOP; with top-sample 1 the upper end is the count itself).

Usage:
    rl_top.py [--url redis://[user:password@]host:port] [--count 10] [--interval 1] [--once] [--json]
              (rediss:// for TLS, with redis-py's URL options, e.g. ?ssl_ca_certs=ca.pem)

Needs only redis-py. --once draws one frame and exits; --json prints the
merged data as JSON instead of a table (for scripts and tests).
"""

import argparse
import json
import re
import shutil
import sys
import time

import redis

BUCKETS = ["le_10ms", "le_100ms", "le_1s", "le_10s", "le_1min", "le_1h", "longer", "never"]
LABELS = ["<=10ms", "<=100ms", "<=1s", "<=10s", "<=1min", "<=1h", "longer", "never"]
FETCH = 1024  # RL.TOP entries read per node for the totals (top-capacity's default)


def masters(url):
    """Clients for the server at url, or for every master of its cluster, each
    with the url's credentials, TLS and other options."""
    first = redis.Redis.from_url(url)
    if first.info("cluster").get("cluster_enabled", 0) != 1:
        return [(url_name(first), first)]
    nodes = first.execute_command("CLUSTER", "NODES")
    if isinstance(nodes, bytes):
        nodes = nodes.decode()
    pool = first.connection_pool
    out = []
    for line in nodes.splitlines():
        fields = line.split()
        if len(fields) < 8:
            continue
        flags = fields[2].split(",")
        if "master" not in flags or "fail" in flags or "noaddr" in flags:
            continue
        hostport = fields[1].split("@")[0]
        host, _, port = hostport.rpartition(":")
        host = host or pool.connection_kwargs.get("host", "127.0.0.1")
        out.append((f"{host}:{port}", node_client(pool, host, int(port))))
    return sorted(out, key=lambda nc: nc[0])


def node_client(pool, host, port):
    """A client for host:port like the pool's: same connection class (TLS or
    not), password, user, certificates, timeouts."""
    kwargs = dict(pool.connection_kwargs, host=host, port=port)
    return redis.Redis(connection_pool=redis.ConnectionPool(connection_class=pool.connection_class, **kwargs))


def url_name(client):
    kw = client.connection_pool.connection_kwargs
    return f"{kw.get('host')}:{kw.get('port')}"


def rows(reply):
    """RL.TOP's [[key, count, error], ...] as (key, count, error) tuples."""
    return [(k.decode(errors="backslashreplace"), int(c), int(e)) for k, c, e in reply]


def parse_dict(value):
    """redis-py parses `a=1,b=2` INFO values into dicts; accept both forms."""
    if isinstance(value, dict):
        return {k: int(v) for k, v in value.items()}
    return {k: int(v) for k, v in (kv.split("=") for kv in str(value).split(","))}


class Node:
    """One node's client and what rl-top learnt about it (RL.TOP's capacity)."""

    def __init__(self, name, client):
        self.name, self.client, self.capacity = name, client, None

    def top(self, board):
        """(every row read, whether that is the whole summary)."""
        want = FETCH + 1 if self.capacity is None else min(self.capacity, FETCH)
        try:
            reply = self.client.execute_command("RL.TOP", board, "COUNT", want)
        except redis.ResponseError as e:
            m = re.search(r"must be 1 to (\d+)", str(e))
            if not m:
                raise
            self.capacity = int(m.group(1))
            want = min(self.capacity, FETCH)
            reply = self.client.execute_command("RL.TOP", board, "COUNT", want)
        else:
            if self.capacity is None:
                self.capacity = float("inf")
        got = rows(reply)
        return got, len(got) < want or want >= self.capacity


def sample(nodes, clock=time.monotonic):
    """Every node's RL.TOP lists (whole) and INFO rl, at one time."""
    out = {"t": clock(), "nodes": []}
    for node in nodes:
        denied, denied_whole = node.top("DENIED")
        consumed, consumed_whole = node.top("CONSUMED")
        info = node.client.info("rl")
        hist = parse_dict(info.get("rl_retry_after", "")) if info.get("rl_retry_after") else {}
        lifetime = 0
        for field, value in info.items():
            if isinstance(value, (dict, str)) and field not in ("rl_retry_after", "rl_version", "rl_clock",
                                                               "rl_tzdata", "rl_retry_after_cumulative"):
                try:
                    line = parse_dict(value)
                except ValueError:
                    continue
                lifetime += line.get("denied", 0) + line.get("never", 0)
        out["nodes"].append({
            "node": node.name, "denied": denied, "consumed": consumed,
            "denied_tracked": sum(c for _, c, _ in denied), "consumed_tracked": sum(c for _, c, _ in consumed),
            "whole": denied_whole and consumed_whole,
            "lifetime_denials": lifetime, "histogram": {b: hist.get(b, 0) for b in BUCKETS},
        })
    return out


def increase(new, old):
    """A counter's increase; a decrease is a reset (RL.TOP RESET, a restart)."""
    return new if new < old else new - old


def merge(now, before, count):
    """The frame: lists merged over the nodes (top `count`), shares of the
    tracked totals, rates against `before` (a sample, or None)."""
    dt = now["t"] - before["t"] if before else 0.0
    old_nodes = {n["node"]: n for n in before["nodes"]} if before else {}
    resets = [n["node"] for n in now["nodes"]
              if n["node"] in old_nodes and n["denied_tracked"] < old_nodes[n["node"]]["denied_tracked"]]

    def board(name):
        merged = {}
        for n in now["nodes"]:
            old = {k: c for k, c, _ in old_nodes[n["node"]][name]} if n["node"] in old_nodes else None
            for key, c, e in n[name]:
                entry = merged.setdefault(key, {"key": key, "count": 0, "error": 0, "per_second": None})
                entry["count"] += c
                entry["error"] += e
                if dt > 0 and old is not None:
                    prev = old.get(key)
                    # A key not listed before was counted from 0 (new) or
                    # from the smallest count (it replaced one): unknown.
                    if prev is not None:
                        entry["per_second"] = (entry["per_second"] or 0.0) + increase(c, prev) / dt
        tracked = sum(n[name + "_tracked"] for n in now["nodes"])
        order = sorted(merged.values(), key=lambda e: (-e["count"], e["key"]))[:count]
        for e in order:
            e["share"] = e["count"] / tracked if tracked else None
            if name == "denied":
                e["error"] = min(e["error"], e["count"])
                e["low"], e["high"] = e["count"] - e["error"], e["count"]
            else:
                e["low"], e["high"] = max(0, e["count"] - e["error"]), e["count"] + e["error"]
        return order, tracked

    denied, denied_tracked = board("denied")
    consumed, consumed_tracked = board("consumed")
    histogram = dict.fromkeys(BUCKETS, 0)
    hist_rate = dict.fromkeys(BUCKETS, None)
    lifetime = 0
    lifetime_rate = 0.0 if dt > 0 else None
    for n in now["nodes"]:
        lifetime += n["lifetime_denials"]
        old = old_nodes.get(n["node"])
        for b in BUCKETS:
            histogram[b] += n["histogram"][b]
            if dt > 0 and old is not None:
                hist_rate[b] = (hist_rate[b] or 0.0) + increase(n["histogram"][b], old["histogram"][b]) / dt
        if dt > 0 and old is not None:
            lifetime_rate += increase(n["lifetime_denials"], old["lifetime_denials"]) / dt
    return {
        "nodes": [n["node"] for n in now["nodes"]],
        "interval_seconds": dt or None,
        # Since RL.TOP RESET (or the start): the lists and their totals.
        "denied": denied, "consumed": consumed,
        "denied_tracked": denied_tracked, "consumed_tracked": consumed_tracked,
        "tracked_exact": all(n["whole"] for n in now["nodes"]),
        "resets_seen": resets,
        # Since the server started (INFO rl): the header's total and the histogram.
        "total_denied": lifetime, "denials_per_second": lifetime_rate,
        "retry_after": histogram, "retry_after_per_second": hist_rate,
        "per_node": [{"node": n["node"], "denied": n["denied"][:count], "consumed": n["consumed"][:count]}
                     for n in now["nodes"]],
    }


def rate(x):
    return "-" if x is None else (f"{x:.0f}" if x >= 100 else f"{x:.1f}")


def table(title, entries, total, width, consumed=False):
    bound = "range" if consumed else "error"
    keyw = width - 50
    lines = [f"{title:<{keyw}} {'count':>10} {bound:>15} {'/s':>8} {'share':>7}"]
    for e in entries:
        share = f"{100.0 * e['share']:6.1f}%" if e.get("share") is not None else "      -"
        key = e["key"] if len(e["key"]) <= keyw else e["key"][: keyw - 3] + "..."
        err = f"{e['low']}..{e['high']}" if consumed else str(e["error"])
        lines.append(f"{key:<{keyw}} {e['count']:>10} {err:>15} {rate(e.get('per_second')):>8} {share:>7}")
    if not entries:
        lines.append("  (nothing yet)")
    return lines


def render(snap, width, when=None):
    width = max(72, min(width, 140))
    when = when or time.strftime("%H:%M:%S")
    nodes = len(snap["nodes"])
    out = [f"rl-top - {when} - {nodes} node{'s' if nodes != 1 else ''} - {snap['total_denied']} denials, "
           f"{rate(snap['denials_per_second'])}/s (INFO rl, since the server started)"]
    exact = "" if snap.get("tracked_exact", True) else " (at least: more keys than read)"
    line = (f"lists since RL.TOP RESET (or the start): {snap['denied_tracked']} denials, "
            f"{snap['consumed_tracked']} units tracked{exact}")
    if snap.get("resets_seen"):
        line += f" - RL.TOP RESET seen on {', '.join(snap['resets_seen'])}"
    out += [line, ""]
    out += table("TOP DENIED since RL.TOP RESET", snap["denied"], snap["denied_tracked"], width)
    out.append("")
    out += table("TOP CONSUMED since RL.TOP RESET (units, sampled)", snap["consumed"], snap["consumed_tracked"],
                 width, consumed=True)
    out.append("  error: true denials in [count - error, count]; range: true units, ~99.7 %")
    out += ["", "RETRY AFTER (denials, INFO rl, since the server started)          /s"]
    hist = snap["retry_after"]
    per_s = snap.get("retry_after_per_second") or {}
    most = max(hist.values()) or 1
    bar = width - 40
    for b, label in zip(BUCKETS, LABELS):
        n = hist[b]
        out.append(f"{label:>8} {n:>12} {rate(per_s.get(b)):>8} {'#' * (n * bar // most)}")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--url", default="redis://127.0.0.1:6379",
                   help="a server, or any node of a cluster (redis://user:password@host:port, rediss:// for TLS)")
    p.add_argument("--count", type=int, default=10, help="keys per list (1 to top-capacity)")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between frames (and --once's two samples)")
    p.add_argument("--once", action="store_true", help="draw one frame (rates over --interval) and exit")
    p.add_argument("--json", action="store_true", help="print the merged data as JSON")
    args = p.parse_args(argv)
    nodes = [Node(name, client) for name, client in masters(args.url)]
    try:
        before = sample(nodes)
        if args.once:
            time.sleep(args.interval)
        while True:
            now = sample(nodes)
            snap = merge(now, before, args.count)
            before = now
            if args.json:
                print(json.dumps(snap))
            else:
                frame = render(snap, shutil.get_terminal_size((100, 40)).columns)
                if not args.once:
                    sys.stdout.write("\x1b[H\x1b[2J")  # home, clear: redraw like top
                print(frame, flush=True)
            if args.once:
                return 0
            time.sleep(args.interval)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
