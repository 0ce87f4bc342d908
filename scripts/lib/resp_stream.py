#!/usr/bin/env python3
"""Writes a seeded request stream for scripts/profile.sh, in RESP, to stdout:

    resp_stream.py TEMPLATE COUNT R SEED | redis-cli -p PORT --pipe

TEMPLATE is one command line, its words separated by spaces (as
profile.sh's rows pass it to redis-benchmark); COUNT requests of it are
written. With R > 0 every __rand_int__ in every request is replaced by its
own draw from random.Random(SEED) in 0..R-1, written as redis-benchmark -r R
writes it (twelve digits, zero-padded: k:__rand_int__ -> k:000000004711);
with R = 0 it stays literal, as redis-benchmark leaves it without -r. SEED
is an integer or any string (random.Random seeds a string through SHA-512,
so it does not depend on PYTHONHASHSEED): one SEED gives one byte-identical
stream, run after run. redis-benchmark draws from an unseeded random(), so
its streams differ between runs, and with them the instruction counts.

Plain Python 3, no dependency; 120,000 requests take well under a second.
"""
import random
import sys

PLACEHOLDER = "__rand_int__"  # 12 characters, replaced by 12 digits


def stream(template, count, keyspace, seed):
    """The RESP bytes of COUNT requests of TEMPLATE (see the module doc)."""
    words = template.split()
    if not words:
        raise ValueError("empty template")
    # One %-format per request: the words' lengths do not change (the
    # placeholder and its number are both 12 characters), only the digits.
    parts = ["*%d\r\n" % len(words)]
    slots = 0
    for w in words:
        parts.append("$%d\r\n" % len(w.encode()))
        w = w.replace("%", "%%")
        if keyspace > 0:
            slots += w.count(PLACEHOLDER)
            w = w.replace(PLACEHOLDER, "%012d")
        parts.append(w + "\r\n")
    fmt = "".join(parts)
    if slots == 0:
        return (fmt.replace("%%", "%") * count).encode()
    rng = random.Random(seed)
    draw = rng.randrange
    if slots == 1:
        out = [fmt % draw(keyspace) for _ in range(count)]
    else:
        span = range(slots)
        out = [fmt % tuple([draw(keyspace) for _ in span]) for _ in range(count)]
    return "".join(out).encode()


def main(argv):
    if len(argv) != 5:
        sys.exit("usage: resp_stream.py TEMPLATE COUNT R SEED")
    template, count, keyspace, seed = argv[1], int(argv[2]), int(argv[3]), argv[4]
    # redis-benchmark writes 12 digits, so R stops at 10**12.
    if count < 0 or not 0 <= keyspace <= 10**12:
        sys.exit("resp_stream.py: COUNT must be >= 0 and R in 0..10**12")
    if not template.split():
        sys.exit("resp_stream.py: empty TEMPLATE")
    try:
        seed = int(seed)
    except ValueError:
        pass
    sys.stdout.buffer.write(stream(template, count, keyspace, seed))


if __name__ == "__main__":
    main(sys.argv)
