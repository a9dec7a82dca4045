"""The ``arena`` command's process runs numpy's BLAS on one thread unless the
user set how many: OpenBLAS starts a spinning thread per core at import, on the
cores an ``arena run`` starts its bots on (docs/performance.md)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
import arena.apps.cli, numpy
from threadpoolctl import threadpool_info
print(sorted({p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}))
"""


@pytest.mark.parametrize(("given", "threads"), [(None, "[1]"), ("2", "[2]")])
def test_the_commands_blas_threads(given: str | None, threads: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == threads
