"""Every ```python block of README.md runs against a test server (REDIS_URL), each in a fresh process."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
from typing import List

import pytest
import redis

from redis_server import RedisServer

HERE = pathlib.Path(__file__).resolve().parent
README = HERE.parent / "README.md"
# The project's own README shows the library too: its blocks run here as well.
TOP_README = HERE.parents[2] / "README.md"


def python_blocks(readme: pathlib.Path = README) -> List[str]:
    return re.findall(r"^```python\n(.*?)^```", readme.read_text(), flags=re.S | re.M)


def run_block(code: str, url: str) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    env = dict(os.environ, REDIS_URL=url, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30)


def test_quick_start_first_block() -> None:
    first = python_blocks()[0]
    assert len(first.rstrip("\n").split("\n")) <= 15
    assert 'os.environ.get("REDIS_URL", "redis://localhost:6379")' in first


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_readme_block_runs(server: RedisServer, index: int) -> None:
    redis.Redis(port=server.port).flushall()
    code = python_blocks()[index]
    out = run_block(code, server.url)
    assert out.returncode == 0, f"block {index} failed:\n{code}\n--- stderr:\n{out.stderr}"
    if index == 0:
        assert quick_start_ok(out.stdout), out.stdout


def quick_start_ok(stdout: str) -> bool:
    """Three allowed, a fourth denied for about 20 s (less the ms the calls took), its headers."""
    lines = stdout.splitlines()
    if lines[:3] != ["1 True 2 0", "2 True 1 0", "3 True 0 0"] or not re.fullmatch(r"4 False 0 19\d\d\d|4 False 0 20000", lines[3]):
        return False
    return lines[4].startswith("429 {") and "'Retry-After': '20'" in lines[4] and \
        '\'RateLimit\': \'"per-user";r=0;t=20\'' in lines[4]


@pytest.mark.parametrize("index", range(len(python_blocks(TOP_README))) if TOP_README.exists() else [])
def test_top_level_readme_block_runs(server: RedisServer, index: int) -> None:
    redis.Redis(port=server.port).flushall()
    code = python_blocks(TOP_README)[index]
    out = run_block(code, server.url)
    assert out.returncode == 0, f"README.md block {index} failed:\n{code}\n--- stderr:\n{out.stderr}"
