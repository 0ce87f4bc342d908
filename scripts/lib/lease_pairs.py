#!/usr/bin/env python3
"""Drives RL.ACQUIRE + RL.RELEASE pairs for scripts/profile.sh: its other
rows send a stream of one command line (resp_stream.py), and a release
needs the id its acquire took. (scripts/bench.sh times throughput, so it sends its pairs
from a RESP file through redis-cli --pipe instead: no Python in the timing.)

    lease_pairs.py PORT setup HELD      # HELD leases held for the run (ids held-0..)
    lease_pairs.py PORT pairs N         # N pairs on a key holding them: acquire ID p-i, release p-i
    lease_pairs.py PORT fill KEYS HELD PEAK
        # keys pool:000000000000.. (redis-benchmark's __rand_int__ names),
        # each given PEAK leases with generated ids, then PEAK - HELD of them
        # released: each holds HELD leases in the block a PEAK made

Pipelined 16 pairs at a time over one connection, RESP written by hand (no
dependency). Exits non-zero if any acquire is refused or any release
answers 0, so a profile never measures the wrong path.
"""
import socket
import sys

KEY, LIMIT, LEASE_MS = b"pool", b"1000", b"600000"


def resp(*words):
    out = [b"*%d\r\n" % len(words)]
    for w in words:
        out.append(b"$%d\r\n%s\r\n" % (len(w), w))
    return b"".join(out)


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise SystemExit("lease_pairs: connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        """One reply, as nested Python values (enough for these commands)."""
        line = self.line()
        kind, rest = line[:1], line[1:]
        if kind == b":":
            return int(rest)
        if kind == b"-":
            raise SystemExit("lease_pairs: " + rest.decode())
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(65536)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        raise SystemExit("lease_pairs: unexpected reply %r" % line)


def main():
    port, mode, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    c = Conn(port)
    if mode == "setup":
        c.s.sendall(b"".join(resp(b"RL.ACQUIRE", KEY, LIMIT, LEASE_MS, b"ID", b"held-%d" % i) for i in range(n)))
        for _ in range(n):
            if c.reply()[0] != 1:
                raise SystemExit("lease_pairs: a setup acquire was refused")
        return
    if mode == "fill":
        held, peak = int(sys.argv[4]), int(sys.argv[5])
        for k in range(n):
            key = b"pool:%012d" % k
            c.s.sendall(b"".join(resp(b"RL.ACQUIRE", key, LIMIT, LEASE_MS) for _ in range(peak)))
            ids = []
            for _ in range(peak):
                r = c.reply()
                if r[0] != 1:
                    raise SystemExit("lease_pairs: a fill acquire was refused")
                ids.append(r[5])
            c.s.sendall(b"".join(resp(b"RL.RELEASE", key, i) for i in ids[held:]))
            for _ in ids[held:]:
                if c.reply() != 1:
                    raise SystemExit("lease_pairs: a fill release answered 0")
        return
    batch = 16
    for start in range(0, n, batch):
        ids = [b"p-%d" % i for i in range(start, min(n, start + batch))]
        c.s.sendall(b"".join(resp(b"RL.ACQUIRE", KEY, LIMIT, LEASE_MS, b"ID", i) + resp(b"RL.RELEASE", KEY, i) for i in ids))
        for _ in ids:
            if c.reply()[0] != 1 or c.reply() != 1:
                raise SystemExit("lease_pairs: a pair did not acquire and release")


if __name__ == "__main__":
    main()
