#!/usr/bin/env python3
"""rl-top: who is being rate limited, live, across one server or a cluster.

Connects to a server with the redis-rl module, or to every master of a Redis
Cluster (found with CLUSTER NODES), asks each for RL.TOP DENIED and RL.TOP
CONSUMED and INFO rl, merges the answers (counts and errors summed per key:
in a cluster each key lives on one master) and redraws, every second, like
`top`:

- the keys with the most denied calls, with their share of all denials;
- the keys with the most consumed units, with their share of the units
  listed;
- the histogram of retry_after_ms of denials (INFO rl's rl_retry_after).

Usage:
    rl_top.py [--url redis://host:port] [--count 10] [--interval 1] [--once] [--json]

Needs only redis-py. --once draws one frame and exits; --json prints the
merged data as JSON instead of a table (for scripts and tests).
"""

import argparse
import json
import shutil
import sys
import time

import redis

BUCKETS = ["le_10ms", "le_100ms", "le_1s", "le_10s", "le_1min", "le_1h", "longer", "never"]
LABELS = ["<=10ms", "<=100ms", "<=1s", "<=10s", "<=1min", "<=1h", "longer", "never"]


def masters(url):
    """Clients for the server at url, or for every master of its cluster."""
    first = redis.Redis.from_url(url)
    if first.info("cluster").get("cluster_enabled", 0) != 1:
        return [(url_name(first), first)]
    nodes = first.execute_command("CLUSTER", "NODES")
    if isinstance(nodes, bytes):
        nodes = nodes.decode()
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
        host = host or first.connection_pool.connection_kwargs.get("host", "127.0.0.1")
        out.append((f"{host}:{port}", redis.Redis(host=host, port=int(port))))
    return sorted(out)


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


def snapshot(nodes, count):
    """Every node's RL.TOP and INFO rl, merged."""
    denied, consumed = {}, {}
    histogram = dict.fromkeys(BUCKETS, 0)
    total_denied = 0
    per_node = []
    for name, client in nodes:
        d = rows(client.execute_command("RL.TOP", "DENIED", "COUNT", count))
        c = rows(client.execute_command("RL.TOP", "CONSUMED", "COUNT", count))
        per_node.append({"node": name, "denied": d, "consumed": c})
        for merged, listed in ((denied, d), (consumed, c)):
            for key, n, err in listed:
                total = merged.setdefault(key, [0, 0])
                total[0] += n
                total[1] += err
        info = client.info("rl")
        hist = parse_dict(info.get("rl_retry_after", ""))
        for b in BUCKETS:
            histogram[b] += hist.get(b, 0)
        for field, value in info.items():
            if isinstance(value, (dict, str)) and field not in ("rl_retry_after", "rl_version", "rl_clock"):
                try:
                    line = parse_dict(value)
                except ValueError:
                    continue
                total_denied += line.get("denied", 0) + line.get("never", 0)

    def ranked(merged):
        order = sorted(merged.items(), key=lambda kv: (-kv[1][0], kv[0]))
        return [{"key": k, "count": n, "error": e} for k, (n, e) in order[:count]]

    return {
        "nodes": [n for n, _ in nodes],
        "denied": ranked(denied),
        "consumed": ranked(consumed),
        "retry_after": histogram,
        "total_denied": total_denied,
        "per_node": per_node,
    }


def table(title, entries, total, width):
    lines = [f"{title:<{width - 32}} {'count':>12} {'±error':>10} {'share':>7}"]
    for e in entries:
        share = f"{100.0 * e['count'] / total:6.1f}%" if total else "      -"
        key = e["key"] if len(e["key"]) <= width - 33 else e["key"][: width - 36] + "..."
        lines.append(f"{key:<{width - 32}} {e['count']:>12} {e['error']:>10} {share:>7}")
    if not entries:
        lines.append("  (nothing yet)")
    return lines


def render(snap, width):
    width = max(60, min(width, 120))
    when = time.strftime("%H:%M:%S")
    nodes = len(snap["nodes"])
    out = [f"rl-top - {when} - {nodes} node{'s' if nodes != 1 else ''} - {snap['total_denied']} denials", ""]
    out += table("TOP DENIED", snap["denied"], snap["total_denied"], width)
    out.append("")
    listed = sum(e["count"] for e in snap["consumed"])
    out += table("TOP CONSUMED (units, sampled)", snap["consumed"], listed, width)
    out += ["", "RETRY AFTER (denials)"]
    hist = snap["retry_after"]
    most = max(hist.values()) or 1
    bar = width - 30
    for b, label in zip(BUCKETS, LABELS):
        n = hist[b]
        out.append(f"{label:>8} {n:>12} {'#' * (n * bar // most)}")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--url", default="redis://127.0.0.1:6379", help="a server, or any node of a cluster")
    p.add_argument("--count", type=int, default=10, help="keys per list (1 to top-capacity)")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between frames")
    p.add_argument("--once", action="store_true", help="draw one frame and exit")
    p.add_argument("--json", action="store_true", help="print the merged data as JSON")
    args = p.parse_args(argv)
    nodes = masters(args.url)
    try:
        while True:
            snap = snapshot(nodes, args.count)
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
