#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus, fuzz/corpus/<target>/, from a real server:

- rdb:   `DUMP key` of a key of every kind (a log and a lease set holding a
         few entries, one with a 128-byte id), and the lease set's RDB aux
         field (the node's id floor) in the same encoding;
- apply: the RL.APPLY payloads the server wrote to its AOF for the same
         calls (each write's change), and those of an AOF rewrite (each
         key's whole state), one file per kind, as `len:u16 LE, payload`
         records;
- args:  one valid argv per command (and RL.ALL with every kind's spec),
         words split by newlines;
- model: a few fixed byte strings per kind (the model target reads any
         bytes as calls).

    REDIS_RL_MODULE=... REDIS_SERVER=... scripts/fuzz-seeds.py

Run it again only when an encoding changes; the corpus is committed.
"""

import glob
import os
import random
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from rlserver import Server  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
MODULE = os.environ.get("REDIS_RL_MODULE", os.path.join(ROOT, "target", "release", "libredis_rl.so"))
SERVER = os.environ.get("REDIS_SERVER", "redis-server")

# Every kind's calls: key, then argvs run on it in order.
CALLS = {
    "gcra": [["RL.GCRA", "gcra", "10", "1000"], ["RL.GCRA", "gcra", "10", "1000", "BURST", "20", "COST", "3"]],
    # Booked states (MAXWAIT): two words, allocated, the RDB word flagged.
    "gcrabooked": [["RL.GCRA", "gcrabooked", "10", "1000", "BURST", "1", "MAXWAIT", "1000"]] * 3,
    "tokenbucket": [["RL.TOKENBUCKET", "tokenbucket", "10", "1", "1000", "COST", "4"]],
    "tokenbucketbooked": [["RL.TOKENBUCKET", "tokenbucketbooked", "2", "1", "1000", "COST", "2", "MAXWAIT", "5000"]] * 2,
    "slide": [["RL.SLIDE", "slide", "10", "60000"], ["RL.SLIDE", "slide", "10", "60000", "COST", "2"]],
    "log": [["RL.LOG", "log", "10", "60000"], ["RL.LOG", "log", "10", "60000", "COST", "3"],
            ["RL.LOG", "log", "10", "60000", "REFUND", "1"]],
    "quota": [["RL.QUOTA", "quota", "100", "DAY", "TZ", "Europe/Paris"], ["RL.QUOTA", "quota", "100", "DAY", "TZ", "Europe/Paris"]],
    "concurrency": [["RL.ACQUIRE", "concurrency", "10", "60000"], ["RL.ACQUIRE", "concurrency", "10", "60000", "ID", "worker-1"],
                    ["RL.ACQUIRE", "concurrency", "10", "60000", "COST", "2", "ID", "x" * 128],
                    ["RL.RENEW", "concurrency", "worker-1", "30000"], ["RL.RELEASE", "concurrency", "worker-1"]],
}

ARGS = [
    ["RL.GCRA", "k", "10", "1000", "BURST", "20", "COST", "2"],
    ["RL.GCRA", "k", "10", "1000", "REFUND", "1"],
    ["RL.TOKENBUCKET", "k", "10", "1", "1000", "PEEK"],
    ["RL.GCRA", "k", "10", "1000", "BURST", "2", "MAXWAIT", "500", "PEEK"],
    ["RL.ALL", "2", "a", "b", "GCRA", "10", "1000", "TOKENBUCKET", "5", "1", "1000", "COST", "2", "MAXWAIT", "1000"],
    ["RL.SLIDE", "k", "10", "60000", "COST", "0"],
    ["RL.LOG", "k", "10", "60000", "REFUND", "2"],
    ["RL.QUOTA", "k", "100", "MONTH", "TZ", "America/New_York", "COST", "5"],
    ["RL.ACQUIRE", "k", "10", "60000", "ID", "worker-1", "WAIT", "100"],
    ["RL.RELEASE", "k", "worker-1"],
    ["RL.RENEW", "k", "worker-1", "30000"],
    ["RL.PEEK", "GCRA", "k", "10", "1000", "BURST", "5"],
    ["RL.PEEK", "CONCURRENCY", "k", "10", "1000", "ID", "a"],
    ["RL.ALL", "6", "a", "b", "c", "d", "e", "f", "GCRA", "10", "1000", "BURST", "5", "TOKENBUCKET", "5", "1", "1000",
     "SLIDE", "3", "60000", "COST", "2", "LOG", "3", "1000", "QUOTA", "10", "DAY", "TZ", "UTC",
     "CONCURRENCY", "4", "60000", "ID", "x", "PEEK"],
    ["RL.ALL", "2", "a", "b", "GCRA", "10", "1000", "REFUND", "1", "SLIDE", "3", "1000"],
    ["CL.THROTTLE", "k", "15", "30", "60", "1"],
    ["RL.TOP", "DENIED", "COUNT", "5"],
    ["MODULE-ARGS", "top-capacity", "100", "top-sample", "8"],
]


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def resp_commands(data):
    """The commands of an AOF file: lists of byte strings."""
    out, i = [], 0
    while i < len(data):
        assert data[i:i + 1] == b"*", data[i:i + 20]
        j = data.index(b"\r\n", i)
        n, i = int(data[i + 1:j]), j + 2
        words = []
        for _ in range(n):
            j = data.index(b"\r\n", i)
            ln, i = int(data[i + 1:j]), j + 2
            words.append(data[i:i + ln])
            i += ln + 2
        out.append(words)
    return out


def payloads(server_dir):
    """RL.APPLY payloads in the server's AOF files, by key, in order."""
    by_key = {}
    for f in sorted(glob.glob(os.path.join(server_dir, "aof", "*.aof"))):
        with open(f, "rb") as fh:
            for words in resp_commands(fh.read()):
                if words[0].upper() == b"RL.APPLY":
                    by_key.setdefault(words[1].decode(), []).append(words[2])
    return by_key


def records(ps):
    return b"".join(struct.pack("<H", len(p)) + p for p in ps)


def rdb_len(v):
    if v < 64:
        return bytes([v])
    if v < 16384:
        return bytes([0x40 | v >> 8, v & 0xFF])
    if v < 2**32:
        return b"\x80" + struct.pack(">I", v)
    return b"\x81" + struct.pack(">Q", v)


def main():
    aof = ["--appendonly", "yes", "--appenddirname", "aof", "--aof-use-rdb-preamble", "no",
           "--appendfsync", "always"]
    with Server(MODULE, SERVER, aof, name="seeds") as s:
        c = s.client()
        for key, calls in CALLS.items():
            for argv in calls:
                c.call(*argv)
        dumps = {key: c.call("DUMP", key) for key in CALLS}
        changes = payloads(s.dir)
        # The rewrite: each key's whole state.
        c.call("BGREWRITEAOF")
        for _ in range(200):
            info = c.call("INFO", "persistence").decode()
            if "aof_rewrite_in_progress:0" in info and "aof_rewrite_scheduled:0" in info:
                break
            __import__("time").sleep(0.05)
        wholes = {k: v[-1:] for k, v in payloads(s.dir).items()}
        c.close()
    for key, dump in dumps.items():
        write("rdb", key, dump)
        write("apply", key, records(changes.get(key, []) + wholes.get(key, [])))
    # The aux field: RDB_OPCODE_MODULE_AUX, the lease type's module id (as
    # its DUMP has it), when = before the keys, one unsigned (the floor).
    lease = dumps["concurrency"]
    at = 1 + (9 if lease[1] == 0x81 else 5)
    write("rdb", "concurrency-aux", b"\xf7" + lease[1:at] + rdb_len(2) + rdb_len(1) + rdb_len(2) + rdb_len(17)
          + rdb_len(0))
    # Numbered by position: clear the old ones first.
    for old in glob.glob(os.path.join(CORPUS, "args", "*")):
        os.remove(old)
    for i, argv in enumerate(ARGS):
        write("args", "%02d-%s" % (i, argv[0].lower()), "\n".join(argv).encode())
    rng = random.Random(31)
    for kind in range(6):
        write("model", "kind%d" % kind, bytes([kind]) + bytes(rng.randrange(256) for _ in range(95)))
    total = sum(os.path.getsize(f) for f in glob.glob(os.path.join(CORPUS, "*", "*")))
    print("fuzz-seeds: wrote %d files, %d bytes, into %s" % (
        len(glob.glob(os.path.join(CORPUS, "*", "*"))), total, CORPUS))


if __name__ == "__main__":
    main()
