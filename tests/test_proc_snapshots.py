"""The frozen /proc files a sandbox is shown are written to a folder in /tmp
per process; a process that ends without its exit hook (a pool's worker ends
by ``os._exit``) must not leave its folder there for good."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from arena.sandbox import mounts


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_folders_of_gone_processes_are_swept_and_live_ones_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = tmp_path / f"arena-proc-{dead_pid()}-x1"
    live = tmp_path / f"arena-proc-{os.getpid()}-x2"
    other = tmp_path / "arena-proc-notes"  # not a maker's: no process number
    for folder in (gone, live, other):
        folder.mkdir()
        (folder / "loadavg").write_text("0 0 0")
    mounts._sweep_snapshots()
    assert not gone.exists()
    assert live.exists() and other.exists()


def test_a_process_that_ends_by_os_exit_leaves_nothing_after_the_next_start(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    make = "from arena.sandbox import mounts; mounts._proc_snapshots(); import os; os._exit(0)"
    subprocess.run([sys.executable, "-c", make], env=env, check=True)
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith("arena-proc-")]
    assert len(left) == 1  # the exit hook did not run
    subprocess.run([sys.executable, "-c", make.replace("os._exit(0)", "pass")], env=env, check=True)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("arena-proc-")] == []
