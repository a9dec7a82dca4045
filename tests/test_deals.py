"""Paired deals nobody can exploit: a bot process never plays a deal it has
already seen revealed (issue: memory of paired deals).

Paired experiments deal the same dice to several matches (every variant of a
table, every rotation under ``seating: rotate``) and ``round_end`` reveals
every hand. ``tests/bots/memory.py`` remembers every revealed table and
looks each new round up; these tests run it as an entrant would and assert it
never predicts a single hand, and first show that it does when it is given
the chance (so the zero means something)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.botfile.spec import load_bot
from arena.engine.records import MatchSpec, derive_seed
from arena.engine.rules import Rules
from arena.match.process import BotProcess, TimeControl
from arena.match.referee import play_match
from arena.running.worker import Worker, deal_slots
from arena.sandbox import SandboxLimits

ROOT = Path(__file__).resolve().parent.parent
MEMORY = ROOT / "tests" / "bots" / "memory.py"
FAST = TimeControl(budget_ms=500, wall_factor=4.0, hello_ms=10000, grace_ms=200)
LIMITS = SandboxLimits(memory_mb=256)


def _spec(i: int, dice_seed: int, repeat: int = 0, entrants: tuple[int, ...] = (0, 1, 2, 3)) -> MatchSpec:
    rules = Rules.preset("classic", {"seating": "fixed", "first": "seat0"}).to_dict()
    return MatchSpec(index=i, match=f"m-{i:06d}", variant="classic", rules=rules, entrants=entrants,
                     seed=derive_seed("deals", i), dice_seed=dice_seed, table=0, rotation=0, repeat=repeat)


def _summaries(text: str) -> list[dict[str, int]]:
    out = []
    for line in text.splitlines():
        if line.startswith("SUMMARY "):
            out.append({k: int(v) for k, v in (kv.split("=") for kv in line.split()[1:])})
    return out


def test_the_memory_bot_predicts_every_hand_when_one_process_replays_a_deal() -> None:
    """The control: the same process, the same deal twice (what used to happen)."""
    spec = load_bot(MEMORY)
    others = [load_bot(ROOT / "bots" / f"{n}.py") for n in ("probabilistic", "cautious", "calza")]
    procs = [BotProcess(s, LIMITS, FAST) for s in [spec, *others]]
    try:
        for p in procs:
            p.start()
        names = ["memory", "probabilistic", "cautious", "calza"]
        for i in range(2):
            play_match(_spec(i, dice_seed=12345), procs, names, FAST.budget_ms)
        tail = procs[0].stderr_tail()
    finally:
        for p in procs:
            p.close()
    assert "CORRECT m-000001 1" in tail  # the replayed deal's first round, every hand right


def test_the_worker_gives_a_repeated_deal_to_a_fresh_process() -> None:
    entrants = [(n, load_bot(ROOT / "bots" / f"{n}.py")) for n in ("random", "probabilistic", "cautious")]
    entrants.insert(0, ("memory", load_bot(MEMORY)))
    worker = Worker(entrants, LIMITS, FAST, slots=2)
    try:
        pids = []
        for i, (seed, repeat) in enumerate([(1, 0), (1, 1), (2, 0), (2, 1), (1, 0), (1, 2)]):
            result = worker.play(_spec(i, seed, repeat))
            assert "line" in result, result.get("error")
            pids.append(worker.procs[(0, repeat % 2)].pid)
        # repetitions 0 and 1 of a deal: different processes (slots); deal 2 reuses them;
        # deal 1 again in slot 0 (a replay), then its repetition 2 in slot 0 (2 % 2): fresh processes.
        assert pids[0] != pids[1] and pids[2] == pids[0] and pids[3] == pids[1]
        assert pids[4] != pids[0] and pids[5] != pids[4]
    finally:
        worker.close()


def test_slots_are_capped_per_worker() -> None:
    assert deal_slots(1, 6) == 1 and deal_slots(11, 6) == 10 and deal_slots(5, 4) == 5
    assert deal_slots(50, 100) == 1


def _run(tmp_path: Path, name: str, **config: object) -> Path:
    bots = tmp_path / f"bots-{name}"
    bots.mkdir()
    (bots / "memory.py").write_text(MEMORY.read_text())
    cfg = {"name": name, "seed": 99, "bots": [str(bots / "memory.py"), "probabilistic", "cautious", "calza"],
           "players": 4, "matches": 12, "workers": 2, "time": {"budget_ms": 1000}, **config}
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps(cfg))
    out = tmp_path / name
    r = subprocess.run([sys.executable, "-m", "arena", "run", str(path), "--out", str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return out


def _stderr(out: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted((out / "bots").rglob("*")) if p.is_file())


@pytest.mark.slow
@pytest.mark.parametrize("case", ["variants", "rotate", "rotate-fresh"])
def test_the_memory_bot_never_predicts_a_hand(tmp_path: Path, case: str) -> None:
    if case == "variants":
        config: dict[str, object] = {"variants": {"classic": {"preset": "classic"},
                                                  "bidder-loses": {"preset": "classic",
                                                                   "calza_reward": "bidder_loses"}}}
    else:
        config = {"seating": "rotate", "fresh_process": case == "rotate-fresh"}
    out = _run(tmp_path, case, **config)
    text = _stderr(out)
    assert not re.search(r"^CORRECT ", text, re.M), text[:2000]
    summaries = _summaries(text)
    assert summaries, "the memory bot never reported: the attack did not run"
    assert max(s["stored"] for s in summaries) > 0 and max(s["lookups"] for s in summaries) > 0
    assert all(s["correct"] == 0 for s in summaries)
    # Nothing outlives a process: not the keyring, not /tmp, not /dev/shm.
    assert all(s["keyring_reads"] == 0 for s in summaries)
