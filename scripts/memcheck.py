#!/usr/bin/env python3
"""Drives a redis-server running under valgrind memcheck with the module
through every command, every data-type callback and the module's events,
then checks valgrind's log. Run by scripts/memcheck.sh, which says what it
needs; standard library only.

    memcheck.py SERVER MODULE VALGRIND_LOG_DIR

What runs (each step's name is printed as it starts):
- every command, with its options, on keys of every kind, and their error
  paths: RL.GCRA, RL.TOKENBUCKET, RL.SLIDE, RL.LOG (grown to 300 entries,
  refunded, shrunk), RL.QUOTA (TZ), RL.ACQUIRE (generated, named and
  128-byte ids; grown to 300 leases, released, narrowed), RL.RELEASE,
  RL.RENEW, RL.PEEK of every kind, RL.ALL of every kind (PEEK, REFUND),
  CL.THROTTLE, RL.TOP DENIED/CONSUMED/RESET/HELP, RL.APPLY from a client
  (refused), COMMAND INFO/DOCS/GETKEYS, WRONGTYPE, MULTI/EXEC, EVAL;
- every type callback: rdb_save / rdb_load and the aux field (DEBUG
  RELOAD), aof_rewrite (BGREWRITEAOF) and RL.APPLY while loading (DEBUG
  LOADAOF, with changes after the rewrite), DUMP / RESTORE (and RESTORE of
  corrupt payloads: every loader's refusal path), COPY, MEMORY USAGE, DEBUG
  DIGEST-VALUE and DEBUG DIGEST, free (DEL, UNLINK, FLUSHALL ASYNC in the
  lazy-free thread, keys expiring), keyspace events to a subscriber, INFO rl;
- blocking: RL.ACQUIRE ... WAIT granted by a release, timed out, ended
  by CLIENT UNBLOCK (TIMEOUT and ERROR), and left by a client that
  disconnects (and one killed by CLIENT KILL) while blocked.
The module's data types have no defrag callback, so active defrag is not
exercised (it would also need jemalloc, which valgrind replaces here).

Then FLUSHALL and SHUTDOWN NOSAVE: a module block still allocated at exit
is then one nothing points to, a definite leak.
"""

import glob
import os
import re
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from rlserver import ReplyError, Server  # noqa: E402

KINDS_ARGS = {
    "gcra": ["RL.GCRA", "10", "1000"],
    "tb": ["RL.TOKENBUCKET", "10", "1", "1000"],
    "slide": ["RL.SLIDE", "10", "60000"],
    "log": ["RL.LOG", "300", "600000"],
    "quota": ["RL.QUOTA", "100", "DAY", "TZ", "Europe/Paris"],
    "lease": ["RL.ACQUIRE", "300", "600000"],
}


def step(name):
    print("memcheck: %s" % name, flush=True)


def expect_error(c, *argv):
    r = c.call_any(*argv)
    if not isinstance(r, ReplyError):
        raise AssertionError("%r answered %r, not an error" % (argv, r))
    return r


def wait_for(c, what, pred, deadline=120.0):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting for %s" % what)


def persistence_idle(c):
    info = c.call("INFO", "persistence").decode()
    return "aof_rewrite_in_progress:0" in info and "aof_rewrite_scheduled:0" in info \
        and "rdb_bgsave_in_progress:0" in info


def drive(s):
    c = s.client(timeout=120)
    step("every command, every kind")
    c.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
    sub = s.client(timeout=120)
    sub.send("PSUBSCRIBE", "__keyevent@0__:*")
    assert sub.read()[0] == b"psubscribe"
    for key, argv in KINDS_ARGS.items():
        cmd, params = argv[0], argv[1:]
        c.call(cmd, key, *params)
        c.call(cmd, key, *params, "COST", "2")
        c.call(cmd, key, *params, "PEEK")
        c.call(cmd, key, *params, "COST", "0")
        if cmd not in ("RL.ACQUIRE",):
            c.call(cmd, key, *params, "REFUND", "1")
        expect_error(c, cmd, key, "x", *params[1:])
        expect_error(c, cmd, key)
        c.call("RL.PEEK", {"RL.GCRA": "GCRA", "RL.TOKENBUCKET": "TOKENBUCKET", "RL.SLIDE": "SLIDE",
                           "RL.LOG": "LOG", "RL.QUOTA": "QUOTA", "RL.ACQUIRE": "CONCURRENCY"}[cmd], key, *params)
    c.call("RL.GCRA", "gcra", "10", "1000", "BURST", "20", "COST", "3")
    expect_error(c, "RL.GCRA", "gcra", "10", "1000", "REFUND", "1", "PEEK")
    expect_error(c, "RL.PEEK", "LEAKY", "k", "1", "1")
    expect_error(c, "RL.QUOTA", "q2", "10", "DAY", "TZ", "Nowhere/City")
    # The log: grown, refunded, shrunk (its block doubles and halves).
    for i in range(300):
        c.call("RL.LOG", "log2", "300", "600000")
    for i in range(290):
        c.call("RL.LOG", "log2", "300", "600000", "REFUND", "1")
    # The lease set: generated, named and 128-byte ids; grown, released, narrowed.
    ids = []
    for i in range(150):
        ids.append(c.call("RL.ACQUIRE", "lease2", "300", "600000")[5])
    for i in range(150):
        name = "worker-%d" % i
        c.call("RL.ACQUIRE", "lease2", "300", "600000", "ID", name)
        ids.append(name.encode())
    long_id = "x" * 128
    c.call("RL.ACQUIRE", "lease3", "10", "600000", "ID", long_id)
    c.call("RL.ACQUIRE", "lease3", "10", "600000", "ID", "short")
    assert c.call("RL.RENEW", "lease3", long_id, "300000") == 1
    assert c.call("RL.RELEASE", "lease3", long_id) == 1
    assert c.call("RL.RELEASE", "lease3", long_id) == 0
    expect_error(c, "RL.RELEASE", "lease3", "y" * 129)
    for lease_id in ids[:280]:
        assert c.call("RL.RELEASE", "lease2", lease_id) == 1
    for lease_id in ids[280:290]:
        assert c.call("RL.RENEW", "lease2", lease_id, "1000") == 1
    # RL.ALL, every kind.
    spec = ["GCRA", "10", "1000", "BURST", "5", "TOKENBUCKET", "5", "1", "1000", "SLIDE", "3", "60000",
            "LOG", "3", "1000", "QUOTA", "10", "DAY", "TZ", "UTC", "CONCURRENCY", "4", "60000", "ID", "x"]
    keys = ["all:a", "all:b", "all:c", "all:d", "all:e", "all:f"]
    c.call("RL.ALL", "6", *keys, *spec)
    c.call("RL.ALL", "6", *keys, *spec, "PEEK")
    c.call("RL.ALL", "2", "all:a", "all:c", "GCRA", "10", "1000", "REFUND", "1", "SLIDE", "3", "60000", "REFUND", "1")
    expect_error(c, "RL.ALL", "2", "all:a", "all:a", "GCRA", "1", "1", "GCRA", "1", "1")
    expect_error(c, "RL.ALL", "1", "log2", "SLIDE", "1", "1")  # WRONGTYPE (log2 lives 10 minutes)
    c.call("CL.THROTTLE", "cell", "15", "30", "60")
    c.call("CL.THROTTLE", "cell", "15", "30", "60", "3")
    expect_error(c, "CL.THROTTLE", "cell", "15", "30")
    expect_error(c, "RL.GCRA", "lease2", "10", "1000")  # WRONGTYPE
    expect_error(c, "RL.APPLY", "gcra", "g" + "\0" * 16)
    c.call("RL.TOP", "DENIED")
    c.call("RL.TOP", "CONSUMED", "COUNT", "5")
    c.call("RL.TOP", "HELP")
    expect_error(c, "RL.TOP", "DENIED", "COUNT", "0")
    c.call("RL.TOP", "RESET")
    c.call("COMMAND", "INFO", "RL.GCRA", "RL.ALL", "RL.ACQUIRE", "RL.TOP")
    c.call("COMMAND", "DOCS", "RL.ALL", "RL.QUOTA")
    c.call("COMMAND", "GETKEYS", "RL.ALL", "2", "a", "b", "GCRA", "1", "1", "SLIDE", "1", "1")
    c.call("MULTI")
    c.call("RL.GCRA", "gcra", "10", "1000")
    c.call("RL.ACQUIRE", "lease", "300", "600000")
    c.call("EXEC")
    c.call("EVAL", "return redis.call('RL.GCRA', KEYS[1], 10, 1000)", "1", "gcra")
    c.call("EVAL", "return redis.call('RL.ALL', 1, KEYS[1], 'LOG', 10, 1000)", "1", "log3")
    c.call("INFO", "rl")
    c.call("INFO", "everything")

    step("type callbacks: COPY, MEMORY USAGE, DIGEST, DUMP/RESTORE (and corrupt payloads)")
    all_keys = sorted(k.decode() for k in c.call("KEYS", "*"))
    for k in all_keys:
        c.call("COPY", k, k + ":copy")
        c.call("MEMORY", "USAGE", k)
        c.call("DEBUG", "DIGEST-VALUE", k)
        dump = c.call("DUMP", k)
        if dump is None:  # expired meanwhile (valgrind is slow)
            continue
        c.call("RESTORE", k + ":restored", "0", dump)
        c.call("RESTORE", k, "0", dump, "REPLACE")
    c.call("DEBUG", "DIGEST")
    corrupt(c, all_keys)
    c.call("DEL", *[k + ":copy" for k in all_keys])
    c.call("UNLINK", *[k + ":restored" for k in all_keys])

    step("RDB save and load with the aux field (DEBUG RELOAD)")
    digest = long_lived_digest(c)
    c.call("DEBUG", "RELOAD")
    assert long_lived_digest(c) == digest, "DEBUG RELOAD changed the dataset"

    step("AOF rewrite, then RL.APPLY while loading (DEBUG LOADAOF)")
    # No RDB preamble: the rewrite then calls each type's aof_rewrite (a
    # preamble would call rdb_save again).
    c.call("CONFIG", "SET", "aof-use-rdb-preamble", "no")
    c.call("CONFIG", "SET", "appendonly", "yes")
    wait_for(c, "the AOF to be created", lambda: persistence_idle(c))
    c.call("BGREWRITEAOF")
    wait_for(c, "the AOF rewrite", lambda: persistence_idle(c))
    for key, argv in KINDS_ARGS.items():
        c.call(argv[0], key, *argv[1:])
    c.call("RL.RELEASE", "lease2", ids[285])
    c.call("RL.RENEW", "lease2", ids[286], "5000")
    c.call("RL.LOG", "log2", "300", "600000", "REFUND", "1")
    aof = glob.glob(os.path.join(s.dir, "appendonlydir", "*.base.aof")) + \
        glob.glob(os.path.join(s.dir, "*.aof"))
    assert any(b"RL.APPLY" in open(f, "rb").read() for f in aof), "the rewrite wrote no RL.APPLY: %r" % aof
    digest = long_lived_digest(c)
    c.call("DEBUG", "LOADAOF")
    assert long_lived_digest(c) == digest, "DEBUG LOADAOF changed the dataset"
    c.call("CONFIG", "SET", "appendonly", "no")

    step("blocking: RL.ACQUIRE ... WAIT granted, timed out, unblocked, disconnected, killed")
    c.call("RL.ACQUIRE", "pool", "1", "600000", "ID", "holder")
    granted = s.client(timeout=120)
    granted.send("RL.ACQUIRE", "pool", "1", "600000", "ID", "waiter", "WAIT", "60000")
    gone = s.client(timeout=120)
    gone.send("RL.ACQUIRE", "pool", "1", "600000", "WAIT", "60000")
    killed = s.client(timeout=120)
    killed.send("CLIENT", "SETNAME", "killme")
    killed.read()
    killed.send("RL.ACQUIRE", "pool", "1", "600000", "WAIT", "60000")
    wait_for(c, "three blocked clients", lambda: b"blocked_clients:3" in c.call("INFO", "clients"))
    gone.sock.shutdown(socket.SHUT_RDWR)
    gone.close()
    c.call("CLIENT", "KILL", "SKIPME", "yes", "ID", str(client_id(c, "killme")))
    wait_for(c, "one blocked client", lambda: b"blocked_clients:1" in c.call("INFO", "clients"))
    assert c.call("RL.RELEASE", "pool", "holder") == 1
    r = granted.read()
    assert isinstance(r, list) and r[0] == 1, r
    granted.close()
    timed = s.client(timeout=120)
    timed.send("RL.ACQUIRE", "pool", "1", "600000", "WAIT", "50")
    r = timed.read()
    assert isinstance(r, list) and r[0] == 0, r
    # CLIENT UNBLOCK: as a timeout, and with an error.
    for how, want in (("TIMEOUT", list), ("ERROR", ReplyError)):
        timed.send("CLIENT", "ID")
        me = timed.read()
        timed.send("RL.ACQUIRE", "pool", "1", "600000", "WAIT", "60000")
        wait_for(c, "a blocked client", lambda: b"blocked_clients:1" in c.call("INFO", "clients"))
        assert c.call("CLIENT", "UNBLOCK", str(me), how) == 1
        r = timed.read()
        assert isinstance(r, want), (how, r)
    timed.close()
    killed.close()

    step("keyspace events, expiry, FLUSHALL ASYNC")
    dbsize = c.call("DBSIZE")
    events = 0
    sub.sock.settimeout(5)
    try:
        while events < 50:
            sub.read()
            events += 1
    except (socket.timeout, TimeoutError):
        pass
    assert events > 0, "no keyspace event reached the subscriber"
    sub.close()
    c.call("RL.ACQUIRE", "lease-expiring", "5", "1")
    c.call("RL.LOG", "log-expiring", "5", "1")
    c.call("RL.GCRA", "gcra-expiring", "5", "1")
    wait_for(c, "the 1 ms keys to expire (active expiry frees them)",
             lambda: b"expired_keys:0" not in c.call("INFO", "stats")
             and c.call("DBSIZE") < dbsize + 3)
    c.call("FLUSHALL", "ASYNC")
    wait_for(c, "the lazy free", lambda: b"lazyfree_pending_objects:0" in c.call("INFO", "memory"))
    # Something to free at exit, freed: FLUSHALL (sync) below.
    for key, argv in KINDS_ARGS.items():
        c.call(argv[0], key, *argv[1:])
    c.call("FLUSHALL")
    c.close()


# Keys that live for minutes: their digests are compared across a reload
# (shorter-lived ones may expire meanwhile under valgrind).
LONG_LIVED = ["log2", "lease2", "lease3", "quota", "lease", "log"]


def long_lived_digest(c):
    return [c.call("DEBUG", "DIGEST-VALUE", k) for k in LONG_LIVED]


def client_id(c, name):
    for line in c.call("CLIENT", "LIST").decode().splitlines():
        if " name=%s " % name in " " + line + " ":
            return int(re.search(r"\bid=(\d+)", line).group(1))
    raise AssertionError("no client named %s" % name)


def crc64(data):
    """Redis's CRC-64 (Jones polynomial, reflected), as DUMP payloads carry."""
    poly, crc = 0x95AC9329AC4BC9B5, 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
    return crc


def with_crc(body):
    return body + struct.pack("<Q", crc64(body))


def corrupt(c, keys):
    """RESTOREs of damaged DUMP payloads (with a valid checksum, so each
    reaches its type's rdb_load): each byte of the values' body in turn set
    to 0xff and to 0x00, and the body cut short. Most are refused; whatever
    is accepted is deleted again."""
    n = 0
    for k in keys:
        dump = c.call("DUMP", k)
        if dump is None:
            continue
        body = dump[:-10]  # without the RDB version (2 bytes) and the CRC
        tail = dump[-10:-8]
        # Every byte of a small value; 40 spread over a large one.
        at = range(9, len(body)) if len(body) < 200 else range(9, len(body), max(1, (len(body) - 9) // 40))
        for i in at:
            for v in (0xFF, 0x00):
                bad = body[:i] + bytes([v]) + body[i + 1:]
                r = c.call_any("RESTORE", "corrupt", "0", with_crc(bad + tail), "REPLACE")
                n += 1
                if not isinstance(r, ReplyError):
                    c.call("DEL", "corrupt")
        for cut in (len(body) - 1, len(body) // 2, 10):
            r = c.call_any("RESTORE", "corrupt", "0", with_crc(body[:cut] + tail), "REPLACE")
            n += 1
            if not isinstance(r, ReplyError):
                c.call("DEL", "corrupt")
    print("memcheck: %d corrupt RESTOREs" % n, flush=True)


FINDING = re.compile(r"(Invalid (read|write|free)|Mismatched free|Conditional jump|Use of uninitialised"
                     r"|Syscall param|Source and destination overlap|Argument '[a-z]+' of function)")
MODULE_FRAME = re.compile(r"libredis_rl|redis_rl::|redis_module::")


def check_log(paths):
    """Every error valgrind reported (any process: the server and its fork
    children, which run rdb_save and aof_rewrite), and every definite leak
    involving the module; (problems, summary lines)."""
    problems, summaries = [], []
    prefix = re.compile(r"^==\d+== ?")
    for path in paths:
        record, records = [], []
        for line in open(path, errors="replace"):
            line = line.rstrip("\n")
            if prefix.match(line):
                line = prefix.sub("", line)
                if not line.strip():
                    records.append("\n".join(record))
                    record = []
                    continue
            record.append(line)
            if "definitely lost:" in line or "ERROR SUMMARY" in line:
                summaries.append("%s: %s" % (os.path.basename(path), line.strip()))
        records.append("\n".join(record))
        for body in records:
            if FINDING.search(body) or ("definitely lost in" in body and MODULE_FRAME.search(body)):
                problems.append("%s:\n%s" % (path, body.strip()))
    return problems, summaries


def main():
    server, module, logdir = sys.argv[1:4]
    supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "memcheck.supp")
    valgrind = [
        "valgrind", "--tool=memcheck", "--leak-check=full", "--errors-for-leak-kinds=definite",
        "--show-leak-kinds=definite", "--error-exitcode=99", "--track-origins=no",
        # Fork children (BGREWRITEAOF's runs aof_rewrite) report too.
        "--trace-children=no", "--child-silent-after-fork=no",
        # Debian's redis-server allocates with the system jemalloc: replace
        # it too, so the server's allocator (RedisModule_Alloc) is checked.
        "--soname-synonyms=somalloc=*jemalloc*",
        "--suppressions=" + supp,
        "--log-file=" + os.path.join(logdir, "valgrind.%p.log"),
    ]
    start = time.monotonic()
    s = Server(module, server, wrapper=valgrind, start_deadline=120.0, name="memcheck",
               module_args=["top-capacity", "100", "top-sample", "1"])
    s.start()
    status = None
    try:
        drive(s)
    finally:
        status = s.stop(deadline=180.0)
    logs = sorted(glob.glob(os.path.join(logdir, "valgrind.*.log")))
    problems, summaries = check_log(logs)
    for line in summaries:
        print("memcheck: valgrind: " + line)
    elapsed = time.monotonic() - start
    if status is None:
        problems.append("the server did not exit by itself after SHUTDOWN NOSAVE (killed)")
    elif status not in (0, 99):
        problems.append("the server exited with status %s" % status)
    if problems:
        for p in problems:
            print("\nmemcheck: FOUND\n" + p, file=sys.stderr)
        print("memcheck: FAILED: %d problem(s) in %.0f s; logs in %s" % (len(problems), elapsed, logdir))
        return 1
    print("memcheck: ok: no invalid access, no definite leak from the module (valgrind exit status %s), %.0f s"
          % (status, elapsed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
