"""Throwaway redis-server processes for the tests (free loopback ports, never 6379).

REDIS_SERVER: the server binary (default: redis-server on PATH).
REDIS_RL_MODULE: the module (default: <repo>/target/release/libredis_rl.so).
Each server is killed by stop(); atexit kills any left over, also when a run dies.
"""

from __future__ import annotations

import atexit
import os
import pathlib
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from typing import Dict, List, Optional

REPO = pathlib.Path(__file__).resolve().parents[3]
DEFAULT_MODULE = REPO / "target" / "release" / "libredis_rl.so"
START_DEADLINE_S = 10.0


def module_path() -> str:
    return os.path.abspath(os.environ.get("REDIS_RL_MODULE") or DEFAULT_MODULE)


def server_binary() -> str:
    return os.environ.get("REDIS_SERVER") or "redis-server"


def free_port(max_port: int = 65535) -> int:
    """A free loopback port, at most max_port (a cluster node's bus is port + 10000: Valkey refuses
    a port above 55535 in cluster mode)."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port <= max_port:
            return port
    for port in random.sample(range(20000, max_port + 1), 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free loopback port up to {max_port}")


class RedisServer:
    def __init__(self, *, module: bool = True, extra: Optional[List[str]] = None, port: Optional[int] = None,
                 env: Optional[Dict[str, str]] = None, max_port: int = 65535) -> None:
        binary = server_binary()
        mod = module_path()
        if module and not os.path.isfile(mod):
            raise RuntimeError(f"module not found: {mod} (set REDIS_RL_MODULE)")
        if shutil.which(binary) is None:
            raise RuntimeError(f"{binary} not found (set REDIS_SERVER)")
        self.dir = tempfile.mkdtemp(prefix="redis-rl-py-")
        self.proc: Optional[subprocess.Popen] = None  # type: ignore[type-arg]
        self.paused = False
        atexit.register(self.stop)
        state = "not started"
        for _ in range(3):
            self.port = port or free_port(max_port)
            self.log = os.path.join(self.dir, f"redis-{self.port}.log")
            args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                    "--dir", self.dir, "--logfile", self.log, *(extra or [])]
            if module:
                args += ["--loadmodule", mod]
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL,
                                         env=None if env is None else {**os.environ, **env})
            state = self._wait_for_pong()
            if state == "ready":
                return
            self.kill()
            if state == "timeout" or port:
                break
        tail = self.log_tail()
        self.stop()
        raise RuntimeError(f"redis-server did not start ({state}); its log:\n{tail}")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def _wait_for_pong(self) -> str:
        deadline = time.monotonic() + START_DEADLINE_S
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                return "exited"
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return "ready"
            except OSError:
                pass
            time.sleep(0.02)  # start-up polling only
        return "timeout"

    def log_tail(self) -> str:
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-20:])
        except OSError:
            return "(no log)"

    def pause(self) -> None:
        """SIGSTOP: connections are accepted by the kernel but nothing answers (a timeout)."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        if self.proc is not None and self.paused:
            os.kill(self.proc.pid, signal.SIGCONT)
            self.paused = False

    def kill(self) -> None:
        """SIGKILL: connections are refused from now on."""
        if self.proc is not None and self.proc.poll() is None:
            self.resume()
            self.proc.kill()
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)
