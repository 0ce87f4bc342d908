"""pip install ./clients/python into a fresh venv (redis-py from PyPI), then run the README quick start.

Needs PyPI; SKIP_PACKAGING=1 skips it."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import tempfile

import pytest
import redis

from redis_server import RedisServer
from test_readme import python_blocks, quick_start_ok

PKG = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.skipif(os.environ.get("SKIP_PACKAGING") == "1", reason="SKIP_PACKAGING=1")
def test_fresh_venv_install_and_quick_start(server: RedisServer) -> None:
    redis.Redis(port=server.port).flushall()
    with tempfile.TemporaryDirectory(prefix="redis-rl-venv-") as tmp:
        venv = pathlib.Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
        py = str(venv / "bin" / "python")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        # a copy of the package: the build must not write into the work tree
        src = pathlib.Path(tmp) / "pkg"
        subprocess.run(["cp", "-r", str(PKG), str(src)], check=True)
        subprocess.run(["rm", "-rf", str(src / ".deps"), str(src / "tests"), str(src / "bench")], check=True)
        out = subprocess.run([py, "-m", "pip", "install", "--quiet", "--no-input", str(src)], env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        check = ("import importlib.metadata as m, pathlib, redis_rl; "
                 "print(m.version('redis-rl'), redis_rl.__version__, "
                 "(pathlib.Path(redis_rl.__file__).parent / 'py.typed').exists(), "
                 "int(m.version('redis').split('.')[0]) >= 5, "
                 "redis_rl.backend.library_version(), len(redis_rl.backend.library_source()))")
        meta = subprocess.run([py, "-c", check], env=env, capture_output=True, text=True, timeout=60, cwd=tmp)
        from redis_rl.backend import library_source, library_version
        assert meta.stdout.split() == ["0.2.0", "0.2.0", "True", "True", library_version(),
                                       str(len(library_source()))], meta.stderr  # the library is shipped
        quick = pathlib.Path(tmp) / "quickstart.py"
        quick.write_text(python_blocks()[0])
        run = subprocess.run([py, str(quick)], env=dict(env, REDIS_URL=server.url), capture_output=True, text=True,
                             timeout=60, cwd=tmp)
        assert run.returncode == 0, run.stderr
        assert quick_start_ok(run.stdout), run.stdout
