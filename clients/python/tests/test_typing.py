"""The package is fully typed: mypy --strict finds nothing (Python 3.10 as the target, redis-py's own types)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import tempfile

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"


def test_mypy_strict() -> None:
    pytest.importorskip("mypy")
    with tempfile.TemporaryDirectory() as cache:
        out = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--python-version", "3.10", "--cache-dir", cache,
             "-p", "redis_rl"],
            cwd=SRC, capture_output=True, text=True, timeout=180,
            env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert out.returncode == 0, out.stdout + out.stderr
    assert (SRC / "redis_rl" / "py.typed").exists()
