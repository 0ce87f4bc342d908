#!/usr/bin/env python3
"""Runs every ```redis-cli block of the documentation against a real server
and compares each reply, exactly, with what the block says.

Standard library only. Started by scripts/test-docs.sh, which compiles the
fake-clock shim; run it by hand as

    python3 scripts/docs_examples.py --server redis-server \
        --module /abs/libredis_rl.so --shim /abs/fakeclock.so [FILE.md ...]

(default files: every docs/**/*.md and README.md).

The block format (docs/contributing.md, "Examples are tests", says the same):

    ```redis-cli
    # clock 2026-11-30T10:30:00Z   optional: where the frozen clock starts
    > RL.GCRA user:42 10 1000      a command, as typed into redis-cli
    1) (integer) 1                 its reply, exactly as redis-cli prints it
    ...                            (default, non-raw output)
    # clock +4ms                   moves the frozen clock on (whole ms;
                                   -4ms moves it back: a clock jump)
    # client B                     later commands go on another connection
    > RL.ACQUIRE pool 1 1000 WAIT 5000
    # blocks                       the command must block; its reply follows
                                   the next "# client B" line
    # a comment                    any other line starting with "# "
    ```

Each block runs on a server started for it (so a fresh keyspace, and a node
whose lease-id floor, RL.TOP and INFO rl start from nothing; FLUSHALL and
RL.TOP RESET are sent first all the same) and on connections of its own, with the server's clock frozen at the block's
instant (default 2026-11-30T10:30:00Z) and moved only by "# clock" lines.
`HELLO 3` switches that connection to RESP3; its reply (which names the
server and its version) is written as the single line `...` and is the one
reply not compared. Any mismatch, or any reply that does not arrive within a
real-time bound, fails the run.
"""

import argparse
import calendar
import glob
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

DEFAULT_INSTANT = "2026-11-30T10:30:00Z"
REPLY_TIMEOUT_S = 5.0
RECORD = None  # --record: a list of (line, old reply length, new reply)
BLOCK_CHECK_S = 0.2


# --- RESP client -----------------------------------------------------------

class Err:
    def __init__(self, text):
        self.text = text


class Verbatim:
    def __init__(self, text):
        self.text = text


class Resp:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=REPLY_TIMEOUT_S)
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return ("status", rest.decode("utf-8", "replace"))
        if t == b"-":
            return ("error", rest.decode("utf-8", "replace"))
        if t == b":":
            return ("integer", int(rest))
        if t == b"$":
            n = int(rest)
            return ("nil", None) if n < 0 else ("string", self._exact(n))
        if t == b"_":
            return ("nil", None)
        if t == b"#":
            return ("bool", rest == b"t")
        if t == b",":
            return ("double", rest.decode())
        if t == b"(":
            return ("bignum", rest.decode())
        if t == b"=":
            return ("verbatim", self._exact(int(rest))[4:])
        if t in (b"*", b"~", b">"):
            n = int(rest)
            if n < 0:
                return ("nil", None)
            kind = {b"*": "array", b"~": "set", b">": "push"}[t]
            return (kind, [self.read() for _ in range(n)])
        if t == b"%":
            n = int(rest)
            return ("map", [self.read() for _ in range(2 * n)])
        if t == b"|":  # attributes: skip, then read the reply they annotate
            n = int(rest)
            for _ in range(2 * n):
                self.read()
            return self.read()
        raise ValueError("unknown RESP type %r" % line)

    def call(self, args):
        self.send(args)
        return self.read()


# --- redis-cli's default (TTY) formatting, as cliFormatReplyTTY -------------

def repr_bytes(b):
    out = ['"']
    for c in b:
        ch = chr(c)
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\a":
            out.append("\\a")
        elif ch == "\b":
            out.append("\\b")
        elif 32 <= c < 127:
            out.append(ch)
        else:
            out.append("\\x%02x" % c)
    out.append('"')
    return "".join(out)


def fmt(reply, prefix=""):
    kind, v = reply
    if kind == "error":
        return "(error) %s\n" % v
    if kind == "status":
        return v + "\n"
    if kind == "integer":
        return "(integer) %d\n" % v
    if kind == "double":
        return "(double) %s\n" % v
    if kind == "bignum":
        return "(big number) %s\n" % v
    if kind == "string":
        return repr_bytes(v) + "\n"
    if kind == "verbatim":
        return v.decode("utf-8", "replace") + "\n"
    if kind == "nil":
        return "(nil)\n"
    if kind == "bool":
        return "(true)\n" if v else "(false)\n"
    if kind in ("array", "set", "map", "push"):
        if not v:
            return {"map": "(empty hash)\n", "set": "(empty set)\n"}.get(kind, "(empty array)\n")
        count = len(v) // 2 if kind == "map" else len(v)
        idxlen = len(str(count))
        inner = prefix + " " * (idxlen + 2)
        sep = {"set": "~", "map": "#"}.get(kind, ")")
        out = ""
        step = 2 if kind == "map" else 1
        for n, i in enumerate(range(0, len(v), step)):
            out += "%s%*d%s " % ("" if n == 0 else prefix, idxlen, n + 1, sep)
            out += fmt(v[i], inner)
            if kind == "map":
                val = v[i + 1]
                if val[0] in ("array", "set", "map", "push") and val[1]:
                    # redis-cli starts an aggregate value on a line of its own
                    out = out[:-1] + " => \n" + inner + fmt(val, inner)
                else:
                    out = out[:-1] + " => " + fmt(val, inner)
        return out
    raise ValueError(kind)


# --- redis-cli's argument splitting (sdssplitargs) ---------------------------

def split_args(line):
    args, i, n = [], 0, len(line)
    while True:
        while i < n and line[i].isspace():
            i += 1
        if i >= n:
            return args
        cur = bytearray()
        if line[i] == '"':
            i += 1
            while True:
                if i >= n:
                    raise ValueError("unbalanced quotes: " + line)
                c = line[i]
                if c == "\\" and i + 1 < n:
                    e = line[i + 1]
                    if e == "x" and re.match(r"[0-9a-fA-F]{2}", line[i + 2:i + 4]):
                        cur.append(int(line[i + 2:i + 4], 16))
                        i += 4
                        continue
                    cur += {"n": b"\n", "r": b"\r", "t": b"\t", "b": b"\b", "a": b"\a"}.get(e, e.encode())
                    i += 2
                    continue
                if c == '"':
                    i += 1
                    break
                cur += c.encode()
                i += 1
        elif line[i] == "'":
            i += 1
            while True:
                if i >= n:
                    raise ValueError("unbalanced quotes: " + line)
                c = line[i]
                if c == "\\" and line[i + 1:i + 2] == "'":
                    cur += b"'"
                    i += 2
                    continue
                if c == "'":
                    i += 1
                    break
                cur += c.encode()
                i += 1
        else:
            while i < n and not line[i].isspace():
                cur += line[i].encode()
                i += 1
        args.append(bytes(cur))


# --- blocks ------------------------------------------------------------------

def parse_instant(text):
    m = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{3}))?Z", text)
    if not m:
        raise ValueError("clock: expected YYYY-MM-DDTHH:MM:SS[.mmm]Z, got %r" % text)
    y, mo, d, h, mi, s = (int(x) for x in m.groups()[:6])
    ms = int(m.group(7) or 0)
    return calendar.timegm((y, mo, d, h, mi, s)) * 1000 + ms


def find_blocks(path):
    blocks, lines = [], open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```redis-cli":
            # a block inside a list item is indented: so is every line of it
            indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
            start, body = i + 1, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                line = lines[i]
                body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
                i += 1
            if i >= len(lines):
                raise ValueError("%s:%d: unterminated redis-cli block" % (path, start))
            blocks.append((path, start, body, indent))
        i += 1
    return blocks


class Failure(Exception):
    pass


def set_clock(clock_file, ms):
    tmp = clock_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("@%d\n" % (ms * 1000))
    os.rename(tmp, clock_file)


def run_block(port, clock_file, path, start, body):
    where = lambda k: "%s:%d" % (path, start + k + 1)
    ctl = Resp(port)
    try:
        for cmd in ([b"FLUSHALL"], [b"RL.TOP", b"RESET"]):
            r = ctl.call(cmd)
            if r != ("status", "OK"):
                raise Failure("%s: %s answered %r" % (where(-1), cmd, r))
    finally:
        ctl.close()
    now = parse_instant(DEFAULT_INSTANT)
    k = 0
    if body and body[0].startswith("# clock ") and not body[0][8:].strip().startswith(("+", "-")):
        now = parse_instant(body[0][8:].strip())
        k = 1
    set_clock(clock_file, now)
    time.sleep(0.002)  # Valkey's cached time moves with the next event-loop turn
    clients, pending, current = {}, {}, "A"
    commands = 0

    def client(name):
        if name not in clients:
            clients[name] = Resp(port)
        return clients[name]

    def take_reply(k):
        exp = []
        while k < len(body) and not body[k].startswith("> ") and not body[k].startswith("# "):
            exp.append(body[k])
            k += 1
        return k, exp

    def compare(k0, cmd, got, exp, at=None):
        if exp == ["..."] and cmd.split()[:1] and cmd.split()[0].upper() == "HELLO":
            return
        # trailing blanks are invisible in Markdown (redis-cli leaves one
        # after "=>" before an aggregate value): not compared
        text = [t.rstrip() for t in fmt(got).rstrip("\n").split("\n")]
        exp = [e.rstrip() for e in exp]
        if RECORD is not None:
            RECORD.append((k0 + 1 if at is None else at, len(exp), text))
            return
        if text != exp:
            raise Failure("%s: %s\n  expected:\n    %s\n  got:\n    %s" % (
                where(k0), cmd, "\n    ".join(exp) or "(nothing)", "\n    ".join(text)))

    try:
        while k < len(body):
            line = body[k]
            if line.startswith("# clock "):
                m = re.fullmatch(r"([+-])(\d+)ms", line[8:].strip())
                if not m:
                    raise Failure("%s: only '# clock +Nms' or '-Nms' may follow the first line" % where(k))
                now += int(m.group(2)) * (1 if m.group(1) == "+" else -1)
                set_clock(clock_file, now)
                time.sleep(0.002)
                k += 1
            elif line.startswith("# client "):
                current = line[9:].strip()
                k += 1
                if current in pending:
                    k0, cmd = pending.pop(current)
                    at = k
                    k, exp = take_reply(k)
                    c = client(current)
                    c.sock.settimeout(REPLY_TIMEOUT_S)
                    compare(k0, cmd, c.read(), exp, at)
            elif line.startswith("# ") or line == "#" or line.strip() == "":
                k += 1
            elif line.startswith("> "):
                cmd = line[2:]
                k0 = k
                c = client(current)
                c.send(split_args(cmd))
                commands += 1
                k += 1
                if k < len(body) and body[k].strip() == "# blocks":
                    c.sock.settimeout(BLOCK_CHECK_S)
                    try:
                        c._fill()
                        raise Failure("%s: %s answered at once, but the block says it blocks" % (where(k0), cmd))
                    except socket.timeout:
                        pass
                    pending[current] = (k0, cmd)
                    k += 1
                    continue
                k, exp = take_reply(k)
                compare(k0, cmd, c.read(), exp)
            else:
                raise Failure("%s: a reply line with no command before it: %r" % (where(k), line))
        if pending:
            raise Failure("%s: blocked command(s) never answered in the block: %s" % (
                where(-1), ", ".join(pending)))
    except (socket.timeout, ConnectionError) as e:
        raise Failure("%s: no reply in time (%s)" % (where(k), e))
    finally:
        for c in clients.values():
            c.close()
    return commands


def record(path, start, body, indent, edits):
    lines = open(path, encoding="utf-8").read().split("\n")
    new = list(body)
    for at, n, text in sorted(edits, reverse=True):
        new[at:at + n] = text
    # the block's body is lines[start:start+len(body)]; other blocks' line
    # numbers change, so files are re-read per block by the caller's order
    lines[start:start + len(body)] = [(indent + l) if l else l for l in new]
    open(path, "w", encoding="utf-8").write("\n".join(lines))
    body[:] = new


# --- the server ----------------------------------------------------------------

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_server(server, module, shim, clock_file, workdir):
    port = free_port()
    env = dict(os.environ, LD_PRELOAD=shim, FAKECLOCK_FILE=clock_file)
    log = open(os.path.join(workdir, "server.log"), "w")
    proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", workdir, "--loadmodule", module],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            c = Resp(port)
            r = c.call([b"PING"])
            c.close()
            if r == ("status", "PONG"):
                return proc, port
        except OSError:
            pass
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    log.close()
    sys.stderr.write(open(os.path.join(workdir, "server.log")).read())
    raise SystemExit("docs_examples: %s did not start with the module (log above)" % server)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--module", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--record", action="store_true",
                    help="for writing docs: replace every expected reply by the actual one, in place")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = a.files or sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True)) + [
        os.path.join(root, "README.md")]
    blocks = []
    for f in files:
        blocks += find_blocks(f)
    if not blocks:
        raise SystemExit("docs_examples: no ```redis-cli blocks found")
    t0 = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="rl-docs-")
    clock_file = os.path.join(workdir, "clock")
    set_clock(clock_file, parse_instant(DEFAULT_INSTANT))
    failed, commands, shift = [], 0, {}
    for path, start, body, indent in blocks:
        # A server of its own per block (about 50 ms): besides the keyspace,
        # the node keeps state that FLUSHALL does not clear (the floor of
        # generated lease ids, RL.TOP, INFO rl), so no block depends on another.
        set_clock(clock_file, parse_instant(DEFAULT_INSTANT))
        proc, port = start_server(a.server, os.path.abspath(a.module), os.path.abspath(a.shim), clock_file, workdir)
        try:
            rel = os.path.relpath(path, root)
            global RECORD
            if a.record:
                RECORD = []
            start += shift.get(path, 0)
            try:
                commands += run_block(port, clock_file, rel, start, body)
                if a.record:
                    before = len(body)
                    record(path, start, body, indent, RECORD)
                    shift[path] = shift.get(path, 0) + len(body) - before
            except Failure as e:
                failed.append(str(e))
                print("FAIL " + str(e), flush=True)
        finally:
            proc.kill()
            proc.wait()
    print("docs examples: %d blocks, %d commands, %d passed, %d failed (%.1f s)" % (
        len(blocks), commands, len(blocks) - len(failed), len(failed), time.monotonic() - t0))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
