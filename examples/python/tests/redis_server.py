"""A throwaway redis-server with the redis-rl module, for one test class.

It listens on a free loopback port (never 6379), saves nothing, and is
killed by stop(), which the tests register as a cleanup so that it also runs
when a test fails or set-up breaks half-way.

REDIS_RL_MODULE: the module (default: <repo>/target/release/libredis_rl.so).
REDIS_SERVER: the server binary (default: redis-server on PATH).
EXAMPLES_RL_BACKEND=lua: a managed service stood in for: the server starts
without the module and with --enable-module-command no, so the service's
redis-rl Limiter (backend "auto") finds no module and uses the Lua library.
"""

import atexit
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import redis
from redis_rl.backend import library_source, to_fcall

REPO = pathlib.Path(__file__).resolve().parents[3]
DEFAULT_MODULE = REPO / "target" / "release" / "libredis_rl.so"
START_DEADLINE_S = 10.0
LUA = os.environ.get("EXAMPLES_RL_BACKEND") == "lua"


def rl(client, *args):
    """A redis-rl command (RL.GCRA key ..., RL.ALL ..., RL.PEEK KIND key ...) for the tests' own
    checks: the module's command, or the same call as the Lua library's FCALL."""
    if not LUA:
        return client.execute_command(*args)
    try:
        return client.execute_command(*to_fcall(args))
    except redis.ResponseError as exc:  # before the service's first call loaded the library
        if "Function not found" not in str(exc):
            raise
        client.function_load(library_source(), replace=True)
        return client.execute_command(*to_fcall(args))


def calls(client, module_command, lua_fcalls):
    """How many times the module command ran since CONFIG RESETSTAT, or on the Lua backend how many
    FCALLs did (each function is one FCALL: the test says how many its request makes)."""
    stats = {k.lower(): v for k, v in client.info("commandstats").items()}
    name = "cmdstat_fcall" if LUA else f"cmdstat_{module_command.lower()}"
    return stats.get(name, {}).get("calls", 0), (lua_fcalls if LUA else None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self):
        # Absolute: redis-server changes into --dir before it loads modules.
        module = os.path.abspath(os.environ.get("REDIS_RL_MODULE") or DEFAULT_MODULE)
        binary = os.environ.get("REDIS_SERVER") or "redis-server"
        if not os.path.isfile(module) and not LUA:
            raise RuntimeError(f"module not found: {module} (run `cargo build --release`, or set REDIS_RL_MODULE)")
        if shutil.which(binary) is None:
            raise RuntimeError(f"{binary} not found (apt-get install redis-server, or set REDIS_SERVER)")
        self.dir = tempfile.mkdtemp(prefix="redis-rl-example-")
        self.proc = None
        atexit.register(self.kill)  # even if the test run dies before its cleanups
        # The free port can be taken by someone else before redis binds it:
        # then redis exits at once and we try another port.
        for _ in range(3):
            self.port = free_port()
            self.log = os.path.join(self.dir, f"redis-{self.port}.log")
            self.proc = subprocess.Popen(
                [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", self.dir, "--logfile", self.log,
                 *(["--enable-module-command", "no"] if LUA else ["--loadmodule", module])],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
            state = self._wait_for_pong()
            if state == "ready":
                return
            self.kill()
            if state == "timeout":
                break
        tail = self._log_tail()
        self.stop()
        raise RuntimeError(f"redis-server did not start ({state}); its log:\n{tail}")

    def _wait_for_pong(self) -> str:
        deadline = time.monotonic() + START_DEADLINE_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return "exited"
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return "ready"
            except OSError:
                pass
            time.sleep(0.02)  # polling start-up only; no test waits on a limit's window
        return "timeout"

    def _log_tail(self) -> str:
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-20:])
        except OSError:
            return "(no log)"

    def pause(self) -> None:
        """SIGSTOP: the server still accepts connections but answers nothing (a timeout)."""
        os.kill(self.proc.pid, signal.SIGSTOP)

    def kill(self) -> None:
        """SIGKILL: connections are refused (unreachable)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)
