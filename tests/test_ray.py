"""The Ray backend on a local Ray instance (loopback, 2 CPUs): the same records
as the local backend, and an interrupted Ray run resumes without loss or duplicates."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.engine.records import canonical
from arena.running.store import iter_records

pytest.importorskip("ray", reason="the Ray extra is not installed (pip install -e '.[ray]')")

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-m", "arena"]
ENV = {**os.environ, "RAY_ADDRESS": "", "RAY_USAGE_STATS_ENABLED": "0"}


def config(folder: Path, matches: int) -> Path:
    # The leisurely bot (0.2 s asleep at each match's start, at about half the
    # tables) makes a run last seconds on any machine: the Ctrl-C below lands mid-run.
    cfg = {
        "name": "ray",
        "seed": 23,
        "bots": [
            "random",
            "probabilistic",
            "cautious",
            "bluffer",
            "calza",
            str(ROOT / "tests" / "bots" / "leisurely.py"),
        ],
        "players": [3, 4],
        "matches": matches,
        "workers": 2,
        "variants": {"classic": {"preset": "classic"}, "neller": {"preset": "neller"}},
    }
    path = folder / "ray.yaml"
    path.write_text(json.dumps(cfg))
    return path


def recorded(folder: Path) -> int:
    return len(list(iter_records(folder))) if (folder / "games.jsonl").exists() else 0


def lines(folder: Path) -> set[str]:
    return {json.dumps(canonical(r), sort_keys=True) for r in iter_records(folder)}


@pytest.mark.slow
def test_ray_backend_matches_local_and_resumes(tmp_path: Path) -> None:
    cfg = config(tmp_path, 40)

    def run(*a: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*ARENA, "run", str(cfg), *a], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600
        )

    local = run("--out", str(tmp_path / "local"))
    assert local.returncode == 0, local.stderr
    ray_full = run("--out", str(tmp_path / "ray"), "--backend", "ray")
    assert ray_full.returncode == 0, ray_full.stderr
    assert len(lines(tmp_path / "local")) == 80
    assert lines(tmp_path / "ray") == lines(tmp_path / "local")

    # Interrupt a Ray run part-way (Ctrl-C), then resume it.
    out = tmp_path / "ray-int"
    proc = subprocess.Popen(
        [*ARENA, "run", str(cfg), "--out", str(out), "--backend", "ray"],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while recorded(out) < 10 and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    partial = [r.match for r in iter_records(out)]
    assert proc.returncode == 130, err
    assert "Resume with: arena run" in err
    assert 0 < len(partial) < 80
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "interrupted"
    resumed = run("--out", str(out), "--backend", "ray")
    assert resumed.returncode == 0, resumed.stderr
    ids = [r.match for r in iter_records(out)]
    assert len(ids) == len(set(ids)) == 80
    assert lines(out) == lines(tmp_path / "local")


@pytest.mark.slow
def test_links_in_a_data_folder_arrive_dangling_on_a_ray_worker(tmp_path: Path) -> None:
    """The Ray backend used to copy a link's target (a run's run.json,
    /etc/hostname) as a plain file into the bot's folder on the worker."""
    from test_fileview import leaky_project, no_faults, plays, probe_report

    proj, own = leaky_project(tmp_path)
    records, kept = plays(proj, "--backend", "ray", RAY_ADDRESS="", RAY_USAGE_STATS_ENABLED="0")
    no_faults(records)
    report = probe_report(kept)
    assert report["read"] == ["leaky/own.txt"]
    assert set(report["seen"]) == set(own)  # the worker's copy: its own files; the project is not there
