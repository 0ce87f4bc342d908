"""A throwaway redis-server with the module, and a RESP client, for the
scripts that drive one (scripts/fuzz-seeds.py, scripts/memcheck.py). Python
standard library only.

    with Server(module, server_bin, extra_args, wrapper=[...]) as s:
        c = s.client()
        c.call(b"RL.GCRA", b"k", b"10", b"1000")

The server listens on a free loopback port (never 6379), in a temporary
directory, and is stopped at the end (SHUTDOWN NOSAVE, then SIGKILL after a
deadline), also when the block raises. Every read has a socket timeout, so
nothing here can hang.
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time


class ReplyError(Exception):
    pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _b(w):
    if isinstance(w, bytes):
        return w
    return str(w).encode()


class Client:
    def __init__(self, port, timeout=30.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, *words):
        out = [b"*%d\r\n" % len(words)]
        for w in words:
            w = _b(w)
            out.append(b"$%d\r\n%s\r\n" % (len(w), w))
        self.sock.sendall(b"".join(out))

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2 :]
        return data

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest
        if t == b"-":
            return ReplyError(rest.decode(errors="replace"))
        if t in (b":", b"("):
            return int(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if t in (b"*", b"~", b">"):
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        if t == b"%":
            return {self.read(): self.read() for _ in range(int(rest))}
        if t == b"_":
            return None
        if t == b"#":
            return rest == b"t"
        if t == b",":
            return float(rest)
        raise ValueError("unknown RESP type %r" % line)

    def call(self, *words):
        """One command; raises ReplyError on an error reply."""
        self.send(*words)
        r = self.read()
        if isinstance(r, ReplyError):
            raise r
        return r

    def call_any(self, *words):
        """One command; an error reply is returned, not raised."""
        self.send(*words)
        return self.read()


class Server:
    def __init__(self, module, server="redis-server", args=(), wrapper=(), start_deadline=10.0, name="rl",
                 module_args=()):
        self.module = os.path.abspath(module)
        self.module_args = list(module_args)
        self.server = server
        self.args = list(args)
        self.wrapper = list(wrapper)
        self.start_deadline = start_deadline
        self.dir = tempfile.mkdtemp(prefix="redis-rl-%s." % name)
        self.port = free_port()
        self.proc = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        cmd = self.wrapper + [
            self.server,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", self.dir,
            "--save", "",
            "--appendonly", "no",
            "--enable-debug-command", "yes",
            "--logfile", os.path.join(self.dir, "server.log"),
            "--loadmodule", self.module,
        ] + self.module_args + self.args
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(self.dir, "stderr.log"), "wb"))
        deadline = time.monotonic() + self.start_deadline
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited at start-up:\n" + self.log())
            try:
                c = Client(self.port, timeout=5)
                if c.call_any("PING") == b"PONG":
                    c.close()
                    return
                c.close()
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("server not ready within %ss:\n%s" % (self.start_deadline, self.log()))

    def client(self, timeout=30.0):
        return Client(self.port, timeout=timeout)

    def log(self):
        out = []
        for f in ("server.log", "stderr.log"):
            try:
                with open(os.path.join(self.dir, f), errors="replace") as fh:
                    out.append(fh.read()[-4000:])
            except OSError:
                pass
        return "\n".join(out)

    def stop(self, deadline=60.0, keep_dir=False):
        """SHUTDOWN NOSAVE, then SIGKILL if it has not exited by `deadline` s.
        The server's exit status (None if it was killed)."""
        status = None
        if self.proc is not None and self.proc.poll() is None:
            try:
                c = Client(self.port, timeout=5)
                c.send("SHUTDOWN", "NOSAVE")
                c.close()
            except OSError:
                self.proc.send_signal(signal.SIGTERM)
            try:
                status = self.proc.wait(deadline)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        elif self.proc is not None:
            status = self.proc.returncode
        self.proc = None
        if not keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        return status
