"""Test helpers for the Lua library: a minimal RESP2 client (pipelined, exact
error texts, no dependencies) and a redis-server / valkey-server launcher
with an optional module and the fake-clock shim.

Every server is started on a free loopback port, with a start-up deadline,
and killed at the end (also on failure): use `with Server(...) as s:`.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIBRARY = os.path.join(ROOT, "lua", "redis_rl.lua")


class Err(str):
    """An error reply, its full text (e.g. 'ERR COST is not an integer')."""

    def __repr__(self):
        return "Err(%s)" % str.__repr__(self)


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self, port, timeout=30.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.pos = 0

    def close(self):
        self.sock.close()

    def _fill(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError("server closed the connection")
        if self.pos:
            self.buf = self.buf[self.pos:]
            self.pos = 0
        self.buf += data

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = self.buf[self.pos:i]
                self.pos = i + 2
                return line
            self._fill()

    def _read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            return Err(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) - self.pos < n + 2:
                self._fill()
            data = self.buf[self.pos:self.pos + n]
            self.pos += n + 2
            return data.decode("utf-8", "surrogateescape")
        if t == b"*":
            n = int(rest)
            if n < 0:
                return None
            return [self._read() for _ in range(n)]
        if t == b"_":
            return None
        if t == b"#":
            return rest == b"t"
        if t == b"%":
            n = int(rest)
            return {self._read(): self._read() for _ in range(n)}
        raise ValueError("unexpected reply %r" % line)

    def pipeline(self, cmds):
        self.sock.sendall(b"".join(encode(c) for c in cmds))
        return [self._read() for _ in cmds]

    def call(self, *args):
        return self.pipeline([args])[0]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fakeclock_lib():
    """Compiles tests/common/fakeclock.c once into lua/.build (gitignored)."""
    out_dir = os.path.join(ROOT, "lua", ".build")
    os.makedirs(out_dir, exist_ok=True)
    src = os.path.join(ROOT, "tests", "common", "fakeclock.c")
    so = os.path.join(out_dir, "fakeclock.so")
    if not os.path.exists(so) or os.path.getmtime(so) < os.path.getmtime(src):
        subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", so + ".tmp", src, "-ldl"], check=True)
        os.replace(so + ".tmp", so)
    return so


class FakeClock:
    def __init__(self, path):
        self.path = path
        self.us = None

    def freeze(self, us):
        self.us = int(us)
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            f.write("@%d\n" % self.us)
        os.replace(tmp, self.path)


class Server:
    """A server on a free port. module: path or None; fake_clock: use the
    shim (then .clock is a FakeClock); extra: more server arguments."""

    def __init__(self, module=None, fake_clock=False, extra=(), start_us=None, name="rl", clock=None, dir=None,
                 keep_dir=False):
        self.binary = os.environ.get("REDIS_SERVER") or "redis-server"
        self.module = module
        self.fake_clock = fake_clock
        self.extra = list(extra)
        self.start_us = start_us
        self.name = name
        self.proc = None
        self.dir = dir
        self.keep_dir = keep_dir or dir is not None
        self.clock = clock

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        if self.dir is None:
            self.dir = tempfile.mkdtemp(prefix="rl-lua-%s-" % self.name)
        env = dict(os.environ)
        if self.fake_clock and self.clock is None:
            self.clock = FakeClock(os.path.join(self.dir, "clock"))
            self.clock.freeze(self.start_us or 1_800_000_000_000_000)
        if self.clock is not None:
            env["LD_PRELOAD"] = fakeclock_lib()
            env["FAKECLOCK_FILE"] = self.clock.path
        self.port = free_port()
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                "--save", "", "--logfile", os.path.join(self.dir, "log")]
        if "--appendonly" not in self.extra:
            args += ["--appendonly", "no"]
        if self.module:
            args += ["--loadmodule", os.path.abspath(self.module)]
        args += self.extra
        self.proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited at start-up: %s\n%s" % (" ".join(args), self.log()))
            try:
                c = Conn(self.port)
                if c.call("PING") == "PONG":
                    self.conn = c
                    return
                c.close()
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("server did not start within 20 s")
            time.sleep(0.05)

    def log(self):
        try:
            with open(os.path.join(self.dir, "log")) as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def connect(self):
        return Conn(self.port)

    def stop(self):
        if getattr(self, "conn", None):
            self.conn.close()
            self.conn = None
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        if self.dir and not self.keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def load_library(self, conn=None):
        with open(LIBRARY) as f:
            code = f.read()
        r = (conn or self.conn).call("FUNCTION", "LOAD", "REPLACE", code)
        if r != "redis_rl":
            raise RuntimeError("FUNCTION LOAD: %r" % (r,))
        return code


def eval_source():
    """The EVAL form of the library: the file with its first line emptied."""
    with open(LIBRARY) as f:
        code = f.read()
    first, rest = code.split("\n", 1)
    assert first.startswith("#!lua")
    return "\n" + rest
