"""`arena run` end to end, with sandboxed bot processes: determinism across
worker counts, resume after kill -9, duplicate play, and one clear line per
config mistake."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from arena.apps.cli import main
from arena.engine.records import canonical
from arena.running.store import iter_records

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-m", "arena"]


def write_config(folder: Path, **extra: object) -> Path:
    cfg = {
        "name": "t",
        "seed": 17,
        "bots": ["random", "probabilistic", "cautious", "bluffer", "calza"],
        "players": [3, 4],
        "matches": 24,
        "variants": {"classic": {"preset": "classic"}, "lizumo": {"preset": "lizumo"}},
    }
    cfg.update(extra)
    path = folder / "c.yaml"
    path.write_text(json.dumps(cfg))  # JSON is YAML
    return path


def canonical_lines(folder: Path) -> set[str]:
    return {json.dumps(canonical(r), sort_keys=True) for r in iter_records(folder)}


def parquet_sorted(folder: Path) -> pd.DataFrame:
    df = pd.read_parquet(folder / "matches.parquet").drop(columns=["seconds"])
    return df.sort_values(["match", "seat"]).reset_index(drop=True)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_one_worker_and_two_workers_give_identical_records(tmp_path: Path) -> None:
    cfg = write_config(tmp_path)
    for w in (1, 2):
        r = run_cli("run", str(cfg), "--workers", str(w), "--out", str(tmp_path / f"w{w}"))
        assert r.returncode == 0, r.stderr
    one, two = canonical_lines(tmp_path / "w1"), canonical_lines(tmp_path / "w2")
    assert len(one) == 48 and one == two
    pd.testing.assert_frame_equal(parquet_sorted(tmp_path / "w1"), parquet_sorted(tmp_path / "w2"))
    meta = json.loads((tmp_path / "w1" / "run.json").read_text())
    assert meta["status"] == "complete" and meta["seed"] == 17
    assert {b["name"] for b in meta["bots"]} == {"random", "probabilistic", "cautious", "bluffer", "calza"}
    assert all(len(b["sha256"]) == 64 for b in meta["bots"])
    assert meta["variants"]["lizumo"]["dice"] == 3


@pytest.mark.slow
def test_kill_9_at_random_moments_then_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    # Private copies of the bots: their paths mark this test's bot processes,
    # their names (in every cgroup's name) this test's cgroups.
    mine = tmp_path / "bots"
    mine.mkdir()
    mark = f"k{os.getpid()}"
    for name in ("random", "probabilistic", "cautious", "bluffer", "calza"):
        (mine / f"{name}{mark}.py").write_text((ROOT / "bots" / f"{name}.py").read_text())
    cfg = write_config(tmp_path, matches=60, bots=[str(mine / "*.py")], workers=2)
    clean = tmp_path / "clean"
    assert run_cli("run", str(cfg), "--out", str(clean)).returncode == 0
    out = tmp_path / "killed"
    rng = random.Random(4)
    kills = 0
    for attempt in range(5):
        # Every other attempt on the unified mount for all it can do (cgroup v2
        # freezing, cpu.stat, cgroup.kill): a kill -9 must leave no cgroup there either.
        env = {**os.environ, "ARENA_CGROUP_PREFER": "v2" if attempt % 2 == 0 else "auto"}
        before = len(list(iter_records(out))) if (out / "games.jsonl").exists() else 0
        proc = subprocess.Popen(
            [*ARENA, "run", str(cfg), "--out", str(out)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        if attempt % 2 == 0:
            # At a moment of the clock: mostly while the run starts (bots checked,
            # workers forked, bots launched), at times among the first matches.
            time.sleep(rng.uniform(0.3, 1.5))
        else:
            # A moment of the run's progress, on a fast machine too (where the whole
            # run can end before any moment of the clock): once new records are in,
            # with the next batches mid-play.
            deadline = time.monotonic() + 60
            while proc.poll() is None and time.monotonic() < deadline:
                if (out / "games.jsonl").exists() and len(list(iter_records(out))) > before:
                    break
                time.sleep(0.02)
            time.sleep(rng.uniform(0, 0.05))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
    assert kills >= 2
    done = run_cli("run", str(cfg), "--out", str(out))
    assert done.returncode == 0, done.stderr
    ids = [r.match for r in iter_records(out)]
    assert len(ids) == len(set(ids)) == 120  # nothing lost, nothing twice
    assert canonical_lines(out) == canonical_lines(clean)
    pd.testing.assert_frame_equal(parquet_sorted(out), parquet_sorted(clean))
    # no bot process outlives the killed runs
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-f", str(mine)], capture_output=True, text=True).stdout.split()
    assert left == []
    # ... and no cgroup of theirs is left, v1 or v2: the resumed run swept the killed runs' ones.
    from arena.sandbox import available

    m = available()
    parents = [p for _, p in m.cgroups] + ([m.unified.parent] if m.unified and m.unified.parent else [])
    assert [d for p in parents for d in os.listdir(p) if d.startswith("arena-") and d.endswith(mark)] == []


def test_rotate_seating_gives_each_seat_position_the_same_dice(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, seating="rotate", players=4, matches=8, variants={"c": {"preset": "classic"}})
    r = run_cli("run", str(cfg), "--out", str(tmp_path / "rot"))
    assert r.returncode == 0, r.stderr
    recs = list(iter_records(tmp_path / "rot"))
    tables: dict[int, list[dict]] = {}
    for rec in recs:
        tables.setdefault(rec.seed, []).append(rec)
    assert len(tables) == 2 and all(len(g) == 4 for g in tables.values())
    for group in tables.values():
        assert len({rec.bots for rec in group}) == 4  # every rotation once
        first_round = {rec.rounds[0].dice for rec in group}
        assert len(first_round) == 1  # same dice per seat position in round 1
        assert len({rec.first for rec in group}) == 1


def test_resume_refuses_another_config(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, matches=4, variants={"c": {"preset": "classic"}})
    out = tmp_path / "o"
    assert run_cli("run", str(cfg), "--out", str(out)).returncode == 0
    again = run_cli("run", str(cfg), "--out", str(out))
    assert again.returncode == 0 and "already complete" in again.stderr and "elo" in again.stdout
    r = run_cli("run", str(cfg), "--out", str(out), "--seed", "99")
    assert r.returncode != 0
    assert "different config" in r.stderr and "--force" in r.stderr and "Traceback" not in r.stderr


BAD_BOT = "def act(turn):\n    return 'dudo'\nthis is not python\n"


@pytest.mark.parametrize(
    "change,expect",
    [
        ({"colour": "red"}, "colour: unknown key"),
        ({"matches": -3}, "matches: -3 is not allowed"),
        ({"format": "swiss"}, "format: 'swiss' is not allowed; use one of league, round-robin, gauntlet"),
        ({"bots": ["random", "bots/nope.py"]}, "'bots/nope.py': no such bot file"),
        ({"bots": ["random", "bots/*.pyy"]}, "'bots/*.pyy' matches no .py or .yaml bot file"),
        ({"variants": {"x": {"preset": "classic", "dice": 0}}}, "variants.x: rule dice: 0 is not allowed"),
        ({"variants": {"x": {"preset": "klassik"}}}, "variants.x.preset: 'klassik' is not a preset"),
        ({"variants": {"x": {"calsa": False}}}, "variants.x.calsa: unknown rule key"),
        ({"time": {"budget_ms": "fast"}}, "time.budget_ms: 'fast' is not allowed"),
        ({"players": 12}, "players: 12 is not allowed; use an integer from 2 to 10"),
        ({"bad_bot": True}, "failed its handshake"),
    ],
)
def test_config_mistakes_are_one_clear_line(tmp_path: Path, change: dict, expect: str) -> None:
    extra = dict(change)
    if extra.pop("bad_bot", False):
        (tmp_path / "broken.py").write_text(BAD_BOT)
        extra["bots"] = ["random", "cautious", "probabilistic", str(tmp_path / "broken.py")]
    cfg = write_config(tmp_path, **extra)
    old = os.getcwd()
    os.chdir(ROOT)
    try:
        result = CliRunner().invoke(main, ["run", str(cfg), "--out", str(tmp_path / "o")])
    finally:
        os.chdir(old)
    assert result.exit_code != 0
    message = result.output.strip()
    assert expect in message, message
    assert "Traceback" not in message and result.exception is None or isinstance(result.exception, SystemExit)
    assert str(cfg) in message
    assert not (tmp_path / "o" / "games.jsonl").exists() or (tmp_path / "o" / "games.jsonl").read_text() == ""


def test_replay_prints_and_checks_a_recorded_match(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, matches=2, variants={"c": {"preset": "classic"}})
    out = tmp_path / "o"
    assert run_cli("run", str(cfg), "--out", str(out)).returncode == 0
    r = run_cli("replay", str(out), "m-000001")
    assert r.returncode == 0, r.stderr
    assert "round 1" in r.stdout and "placements:" in r.stdout and "every rule checked" in r.stdout
    missing = run_cli("replay", str(out), "m-999999")
    assert missing.returncode != 0 and "no match 'm-999999'" in missing.stderr


# A run that lasts at least 10 s on any machine: each match sleeps 0.2 s at its
# start (tests/bots/leisurely.py, at every table: 3 bots, 3 players), on 2 workers.
SLOW_RUN: dict[str, Any] = {
    "bots": ["probabilistic", "cautious", str(ROOT / "tests" / "bots" / "leisurely.py")],
    "players": [3],
    "matches": 100,
    "workers": 2,
    "variants": {"c": {"preset": "classic"}},
}


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path: Path) -> None:
    # A leisurely bot at every table and a fixed number of workers, so that the
    # Ctrl-C lands mid-run on any machine: 4000 matches of built-in bots once
    # all finished first (on a CI machine with many cores, the default workers).
    cfg = write_config(tmp_path, **SLOW_RUN)
    out = tmp_path / "o"
    proc = subprocess.Popen(
        [*ARENA, "run", str(cfg), "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (out / "games.jsonl").exists() and len(list(iter_records(out))) >= 5:
            break
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert f"Resume with: arena run {cfg}" in err and "Traceback" not in err
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "interrupted"
    assert (out / "matches.parquet").exists()
    n = len(list(iter_records(out)))
    assert 5 <= n < SLOW_RUN["matches"]


def test_sigterm_stops_the_run_as_ctrl_c_does_and_leaves_no_process(tmp_path: Path) -> None:
    """`kill`, `timeout`, systemd and a CI runner's cancel send SIGTERM to the
    parent alone: the run stops cleanly (status, tables, the resume command,
    exit status 128 + 15), its workers and bots with it. (Resuming is the
    Ctrl-C test's: the folder is left as a Ctrl-C leaves it.)"""
    cfg = write_config(tmp_path, **SLOW_RUN)
    out = tmp_path / "o"
    proc = subprocess.Popen(
        [*ARENA, "run", str(cfg), "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (out / "games.jsonl").exists() and len(list(iter_records(out))) >= 5:
            break
        time.sleep(0.1)
    workers = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
    proc.terminate()  # SIGTERM, to the parent only
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "interrupted by SIGTERM" in err and f"Resume with: arena run {cfg}" in err and "Traceback" not in err
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    assert (out / "matches.parquet").exists()
    n = len(list(iter_records(out)))
    assert 5 <= n < SLOW_RUN["matches"]
    # Its worker processes (and so their bots, which they close) are gone.
    assert workers
    gone = time.monotonic() + 10
    while any(Path(f"/proc/{w}").exists() for w in workers) and time.monotonic() < gone:
        time.sleep(0.05)
    assert not [w for w in workers if Path(f"/proc/{w}").exists()]


def test_half_budget_bots_with_twice_as_many_matches_as_cores_never_time_out(tmp_path: Path) -> None:
    cores = len(os.sched_getaffinity(0))
    half = str(ROOT / "tests" / "bots" / "cpu_half.py")
    cfg = write_config(
        tmp_path,
        bots=[half, half, half],
        players=3,
        matches=2 * cores,
        variants={"c": {"preset": "lizumo", "dice": 1}},
        workers=2 * cores,
        time={"budget_ms": 100, "wall_factor": 5},
    )
    r = run_cli("run", str(cfg), "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    recs = list(iter_records(tmp_path / "o"))
    assert len(recs) == 2 * cores
    assert [f for rec in recs for f in rec.faults] == []
    # each decision really used about half the budget: the load was real
    turns = sum(len(r.actions) for rec in recs for r in rec.rounds)
    assert sum(sum(rec.think or ()) for rec in recs) >= 0.04 * turns


def test_a_worker_killed_mid_run_stops_the_run_cleanly_and_resume_completes(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, **{**SLOW_RUN, "matches": 40})
    out = tmp_path / "o"
    proc = subprocess.Popen(
        [*ARENA, "run", str(cfg), "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not ((out / "games.jsonl").exists() and len(list(iter_records(out))) >= 5):
        time.sleep(0.1)
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    # A worker is a child with bots of its own (the Elo table's helper, arena/apps/ahead.py, has none).
    workers = [
        c
        for c in children
        if "arena" in Path(f"/proc/{c}/cmdline").read_bytes().decode(errors="replace")
        and subprocess.run(["pgrep", "-P", c], capture_output=True, text=True).stdout.strip()
    ]
    assert workers
    os.kill(int(workers[0]), signal.SIGKILL)  # e.g. the OOM killer
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "worker process died" in err and "Resume with" in err
    kept = [r.match for r in iter_records(out)]
    assert kept and len(kept) == len(set(kept))
    done = run_cli("run", str(cfg), "--out", str(out))
    assert done.returncode == 0, done.stderr
    ids = [r.match for r in iter_records(out)]
    assert len(ids) == len(set(ids)) == 40


def test_the_callers_work_runs_while_the_bots_are_checked_and_only_when_there_is_play(tmp_path: Path) -> None:
    """run(meanwhile=...) is where arena run imports its end-of-run table's
    modules: once, while the bots' handshakes are under way and before the run
    folder or any worker exists; not at all for a run already complete."""
    from arena.running.config import load_config
    from arena.running.runner import run

    out = tmp_path / "out"
    cfg = load_config(str(write_config(tmp_path, matches=2, players=[3])), (), workers=1, out=str(out))
    seen: list[bool] = []
    result = run(cfg, meanwhile=lambda: seen.append(out.exists()))
    assert result.status == "complete" and result.played == 4
    assert seen == [False]  # once, before the folder was made
    again = run(cfg, meanwhile=lambda: seen.append(True))
    assert again.already and seen == [False]
