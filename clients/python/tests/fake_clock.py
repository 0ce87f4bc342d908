"""The fake clock of tests/common/fakeclock.c (an LD_PRELOAD shim) for servers the tests start.

FakeClock writes its control file atomically (tmp + rename): `@N` freezes the
server's wall clock at N microseconds since the epoch. shim_env() compiles the
shim once into a temp dir and gives the environment a server needs.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from typing import Dict, Tuple

from redis_server import REPO

T0_US = 1_772_625_600_000_000  # 2026-03-04 12:00:00 UTC, a whole millisecond


class FakeClock:
    def __init__(self, directory: str) -> None:
        self.path = os.path.join(directory, "clock")
        self.now_us = T0_US
        self.set(T0_US)

    def set(self, us: int) -> None:
        self.now_us = us
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"@{us}\n")
        os.replace(tmp, self.path)

    def advance(self, ms: int) -> None:
        self.set(self.now_us + ms * 1000)


def shim_env() -> Tuple[FakeClock, Dict[str, str]]:
    d = tempfile.mkdtemp(prefix="redis-rl-py-clock-")
    so = os.path.join(d, "fakeclock.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", so, str(REPO / "tests" / "common" / "fakeclock.c"), "-ldl"],
                   check=True, timeout=60)
    clock = FakeClock(d)
    return clock, {"LD_PRELOAD": so, "FAKECLOCK_FILE": clock.path}
