"""Hostile bots in whole matches, through the worker `arena run` uses: each is
contained, its fault is recorded with the right kind, the match finishes and
its record replays cleanly, and no process is left behind."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from arena.botfile.spec import load_bot
from arena.engine.records import MatchRecord, MatchSpec, derive_seed
from arena.engine.replay import check
from arena.engine.rules import Rules
from arena.match.process import TimeControl
from arena.running.worker import Worker
from arena.sandbox import SandboxLimits

pytestmark = pytest.mark.sandbox  # run as root and as an unprivileged user in CI

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "bots"
OWNER = f"{os.getpid()}-matches"

FAST = TimeControl(budget_ms=200, wall_factor=3.0, hello_ms=2000, grace_ms=200)
ROOMY = TimeControl(budget_ms=5000, wall_factor=3.0, hello_ms=2000, grace_ms=200)
LIMITS = SandboxLimits(memory_mb=128, processes=16, output_bytes=1 << 20)


def entrant(path: Path) -> tuple[str, object]:
    spec = load_bot(path)
    return spec.name, dataclasses.replace(spec, env={**spec.env, "ARENA_TEST_OWNER": OWNER})


def leftovers() -> list[str]:
    mark = f"ARENA_TEST_OWNER={OWNER}".encode()
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                env = Path(f"/proc/{d}/environ").read_bytes()
                state = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if mark in env and state != "Z":
                found.append(d)
    return found


# (bot file, fault kind, how many turns it plays before it misbehaves at the latest)
CASES = [
    ("hang.py", "timeout"),
    ("spin.py", "timeout"),
    ("sleeper.py", "timeout"),
    ("crash_mid.py", "crash"),
    ("garbage.yaml", "malformed"),
    ("unasked.yaml", "unasked"),
    ("flood_stdout.yaml", "malformed"),
    ("flood_stderr.py", "crash"),
    ("alloc.py", "crash"),
    ("forker.py", None),
    ("signaller.py", None),
    ("bad_quantity.py", "malformed"),
    ("slow_start.py", "timeout"),
    ("quitter.yaml", "crash"),
]


@pytest.mark.parametrize("bot,kind", CASES, ids=[c[0] for c in CASES])
def test_hostile_bot_in_a_match(bot: str, kind: str | None) -> None:
    entrants = [
        entrant(HOSTILE / bot),
        entrant(ROOT / "bots" / "probabilistic.py"),
        entrant(ROOT / "bots" / "cautious.py"),
    ]
    # The allocator zero-fills 128 MB before the limit stops it: on a slow or
    # loaded machine that took over 200 ms of CPU, a timeout before the crash.
    worker = Worker(entrants, LIMITS, ROOMY if bot == "alloc.py" else FAST)
    try:
        rules = Rules.preset("classic", {"seating": "fixed", "first": "seat0"}).to_dict()
        for i in range(2):  # a second match restarts the faulted bot
            spec = MatchSpec(
                index=i,
                match=f"m-{i:06d}",
                variant="classic",
                rules=rules,
                entrants=(0, 1, 2),
                seed=derive_seed("h", i),
                dice_seed=derive_seed("hd", i),
                table=i,
                rotation=0,
            )
            result = worker.play(spec)
            assert "line" in result, result.get("error")
            rec = MatchRecord.from_json(result["line"])
            check(rec)  # the match finished and every rule holds
            faults = [f for f in rec.faults if f.seat == 0]
            if kind is None:
                # forker/signaller answer after misbehaving: contained, or faulted; never a crash of the run
                assert all(f.kind in ("timeout", "crash") for f in faults)
            else:
                assert faults and faults[0].kind == kind, rec.faults
                assert rec.placements[0] == 3
            assert not [f for f in rec.faults if f.seat != 0]  # the healthy bots never fault
    finally:
        worker.close()
    assert leftovers() == []


def test_replies_of_the_wrong_type_are_faults_of_the_bot_not_errors_of_the_referee() -> None:
    """The referee's parser and rules are compiled (arena/compiled.py), and
    compiled code checks the type of every value it takes as annotated: a
    bot's value that reached a typed function unchecked would raise TypeError
    in the worker. Each reply of tests/bots/type_confusion/type_confusion.py (a float face, a
    string quantity, a list for the action, a 100-bit quantity, a bare string,
    nesting past the limit, ...) must be this bot's fault, of the right kind,
    in a match that finishes."""
    import runpy

    replies = runpy.run_path(str(HOSTILE / "type_confusion" / "type_confusion.py"), run_name="not_main")["REPLIES"]
    illegal = {
        i
        for i, r in enumerate(replies)
        if b"123456789012345678901234567890" in r or b"-5" in r or b"calza" in r or b"18446744073709551617" in r
    }
    entrants = [
        entrant(HOSTILE / "type_confusion.yaml"),
        entrant(ROOT / "bots" / "probabilistic.py"),
        entrant(ROOT / "bots" / "cautious.py"),
    ]
    worker = Worker(entrants, LIMITS, FAST)
    try:
        rules = Rules.preset("classic", {"seating": "fixed", "first": "seat0"}).to_dict()
        for i in range(len(replies)):
            spec = MatchSpec(
                index=i,
                match=f"m-{i:06d}",
                variant="classic",
                rules=rules,
                entrants=(0, 1, 2),
                seed=derive_seed("t", i),
                dice_seed=derive_seed("td", i),
                table=i,
                rotation=0,
            )
            result = worker.play(spec)
            assert "line" in result, (replies[i], result.get("error"))
            rec = MatchRecord.from_json(result["line"])
            check(rec)
            assert [(f.seat, f.round, f.kind) for f in rec.faults] == [
                (0, 1, "illegal" if i in illegal else "malformed")
            ], (replies[i], rec.faults)
    finally:
        worker.close()
    assert leftovers() == []
