"""The typed match record: its JSON form round-trips, records written before it
had a type still load, rate and replay, and every end reason comes from a real
match that ends that way."""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from arena.apps.cli import main
from arena.engine.records import EndReason, FaultKind, MatchRecord, MatchSpec, RecordError, derive_seed, record_line
from arena.engine.replay import check
from arena.engine.rules import PRESETS, Rules
from arena.errors import BotFault, RunError
from arena.match.inprocess import InProcessTransport, load_python_bot
from arena.match.referee import play_match
from arena.running.store import RunFolder, RunStore, read_records

pytest.importorskip("hypothesis", reason="the test extra is not installed (pip install -e '.[test]')")
from hypothesis import HealthCheck, given, settings  # noqa: E402  (after the skip above)
from hypothesis import strategies as st  # noqa: E402  (after the skip above)

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "bots"
TEST_BOTS = Path(__file__).resolve().parent / "bots"
OLD_RUN = Path(__file__).resolve().parent / "data" / "run-2026-12-01"
NAMES = ["random", "probabilistic", "cautious", "bluffer", "calza"]
KEY_ORDER = [
    "match",
    "variant",
    "rules",
    "seed",
    "bots",
    "first",
    "rounds",
    "placements",
    "rounds_played",
    "end",
    "faults",
    "think",
    "seconds",
]
BOT_KINDS = [k for k in FaultKind if k.charged_to_bot]


class Faulty:
    """A real bot that fails as ``kind`` says at its ``at``-th turn: the referee
    itself finds an illegal or malformed reply; the other kinds are what the
    bot's process would raise."""

    def __init__(self, inner: InProcessTransport, at: int, kind: FaultKind) -> None:
        self.inner, self.at, self.kind, self.turns = inner, at, kind, 0

    def notify(self, msg: Mapping[str, Any]) -> None:
        self.inner.notify(msg)

    def request(self, msg: Mapping[str, Any]) -> tuple[dict[str, Any], float]:
        self.turns += 1
        if self.turns == self.at:
            if self.kind is FaultKind.ILLEGAL:
                return {"action": "bid", "quantity": msg["legal"]["max_quantity"] + 1, "face": 2}, 0.0
            if self.kind is FaultKind.MALFORMED:
                return {"action": "bid", "quantity": True, "face": 3}, 0.0
            raise BotFault(f"deliberate {self.kind} at turn {self.at}", self.kind)
        return self.inner.request(msg)


def bot(name: str) -> InProcessTransport:
    path = BOTS / f"{name}.py" if (BOTS / f"{name}.py").exists() else TEST_BOTS / f"{name}.py"
    return InProcessTransport(load_python_bot(path), name)


def play(
    rules: Rules, names: list[str], index: int = 0, faulty: Mapping[int, tuple[int, FaultKind]] = {}, variant: str = "v"
) -> MatchRecord:
    players: list[Any] = [bot(n) for n in names]
    for seat, (at, kind) in faulty.items():
        players[seat] = Faulty(players[seat], at, kind)
    spec = MatchSpec(
        index=index,
        match=f"m-{index:06d}",
        variant=variant,
        rules=rules.to_dict(),
        entrants=tuple(range(len(names))),
        seed=derive_seed("rec", index),
        dice_seed=derive_seed("rec-dice", index),
        table=index,
        rotation=0,
    )
    return play_match(spec, players, names, 1000).record


@st.composite
def played(draw: st.DrawFn) -> MatchRecord:
    n = draw(st.integers(2, 6))
    overrides: dict[str, Any] = {
        "dice": draw(st.integers(1, 5)),
        "seating": draw(st.sampled_from(["roll", "fixed"])),
        "max_rounds": draw(st.sampled_from([1000, 1, 2, 5, 9])),
    }
    rules = Rules.preset(draw(st.sampled_from(sorted(PRESETS))), overrides)
    names = draw(st.lists(st.sampled_from(NAMES), min_size=n, max_size=n))
    faulty = draw(
        st.dictionaries(st.integers(0, n - 1), st.tuples(st.integers(1, 6), st.sampled_from(BOT_KINDS)), max_size=n)
    )
    return play(rules, names, draw(st.integers(0, 10**6)), faulty)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(played())
def test_a_played_record_round_trips_and_replays(rec: MatchRecord) -> None:
    line = record_line(rec)
    assert line == rec.to_json() + b"\n" and b"\n" not in rec.to_json()
    assert MatchRecord.from_json(line) == rec
    assert pickle.loads(pickle.dumps(rec)) == rec  # what the Ray and local backends would send
    data = orjson.loads(line)
    assert list(data) == KEY_ORDER
    assert data["end"] == rec.end and all(f["kind"] in set(FaultKind) for f in data["faults"])
    check(rec)  # every rule, every die and the end reason, from the record alone
    # The end reason says what the record shows.
    survivors = sum(1 for d in rec.outcome().dice_left if d)
    if rec.end is EndReason.MAX_ROUNDS:
        assert survivors > 1 and rec.rounds_played == rec.rules.max_rounds
    else:
        assert survivors == 1
        assert (rec.rounds[-1].fault is not None) == (rec.end is EndReason.FORFEIT)
    # A record written before records had a type (no end, faults, think or
    # seconds) infers the same end and faults.
    old = {k: v for k, v in data.items() if k not in ("end", "faults", "think", "seconds")}
    legacy = MatchRecord.from_dict(old)
    assert legacy.end is rec.end and legacy.faults == rec.faults
    assert legacy.think is None and legacy.seconds is None


# --- each end reason from a real match ----------------------------------------


def test_a_match_played_out_ends_by_elimination() -> None:
    rec = play(Rules.preset("classic"), ["probabilistic", "cautious", "bluffer", "calza"])
    assert rec.end is EndReason.ELIMINATION and rec.faults == () and rec.rounds[-1].change is not None
    check(rec)


def test_a_match_stopped_by_the_rules_cap_ends_by_max_rounds() -> None:
    rules = Rules.preset("classic", {"max_rounds": 3})
    rec = play(rules, ["probabilistic", "cautious", "bluffer", "calza"])
    assert rec.end is EndReason.MAX_ROUNDS and rec.rounds_played == 3
    left = rec.outcome().dice_left
    assert sum(1 for d in left if d) == 4
    # Placed by dice left: more dice, better place.
    assert all(left[a] >= left[b] for a in range(4) for b in range(4) if rec.placements[a] < rec.placements[b])
    check(rec)
    assert orjson.loads(rec.to_json())["end"] == "max_rounds"


def test_a_match_whose_other_players_all_fault_ends_by_forfeit() -> None:
    rec = play(Rules.preset("classic", {"seating": "fixed", "first": "seat0"}), ["crash_mid", "crash_mid", "random"])
    assert rec.end is EndReason.FORFEIT
    assert [(f.seat, f.kind) for f in sorted(rec.faults, key=lambda f: f.seat)] == [(0, "crash"), (1, "crash")]
    assert rec.placements[2] == 1 and rec.rounds[-1].fault is not None
    check(rec)


def test_the_last_opponent_faulting_is_a_forfeit_too() -> None:
    rec = play(
        Rules.preset("classic", {"seating": "fixed"}), ["cautious", "probabilistic"], faulty={1: (5, FaultKind.TIMEOUT)}
    )
    assert rec.end is EndReason.FORFEIT and [f.kind for f in rec.faults] == [FaultKind.TIMEOUT]
    assert rec.placements == (1, 2)
    check(rec)


@pytest.mark.sandbox
def test_a_run_records_each_end_reason(tmp_path: Path) -> None:
    """`arena run` with sandboxed bot processes: a bot that crashes mid-match
    forfeits its two-player matches, a variant capped at 2 rounds stops at the
    cap, the rest are played out; every line says which, and replays."""
    cfg = {
        "name": "ends",
        "seed": 5,
        "bots": [str(TEST_BOTS / "crash_mid.py"), "random", "cautious"],
        "players": [2],
        "matches": 6,
        "variants": {"classic": {"preset": "classic"}, "short": {"preset": "classic", "max_rounds": 2}},
    }
    path = tmp_path / "c.yaml"
    path.write_text(json.dumps(cfg))
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [orjson.loads(x) for x in (out / "games.jsonl").read_bytes().splitlines()]
    assert len(lines) == 12 and all(line["end"] in set(EndReason) for line in lines)
    ends = {(line["variant"], "crash_mid" in line["bots"]): line["end"] for line in lines}
    assert ends[("classic", True)] == "forfeit" and ends[("classic", False)] == "elimination"
    assert ends[("short", False)] == "max_rounds"
    for rec in read_records(out).records:
        check(rec)
        if rec.end is EndReason.FORFEIT:
            assert [f.kind for f in rec.faults] == [FaultKind.CRASH] and "crash_mid" in rec.bots
    res = CliRunner().invoke(main, ["ratings", str(out), "--no-write", "--resamples", "20"])
    assert res.exit_code == 0 and "crash:" in res.stdout


# --- records written before the record had a type ----------------------------


@pytest.fixture()
def old_run(tmp_path: Path) -> Path:
    folder = tmp_path / "old"
    shutil.copytree(OLD_RUN, folder)
    return folder


def test_an_old_run_folder_loads_and_replays_every_rule_and_die(old_run: Path) -> None:
    read = read_records(old_run)
    assert len(read.records) == 24 and not read.truncated and not read.repeats
    raw = (old_run / "games.jsonl").read_bytes().splitlines()
    for rec, line in zip(read.records, raw):
        assert rec.end is EndReason.ELIMINATION  # inferred: one player left, the last round called
        check(rec)
        # Every key the old line had comes back unchanged; the end reason is added.
        again = orjson.loads(record_line(rec))
        assert again.pop("end") == "elimination" and again == orjson.loads(line)
        assert record_line(rec).replace(b',"end":"elimination"', b"") == line + b"\n"


def test_an_old_run_folder_rates_replays_and_reports_from_the_command_line(old_run: Path) -> None:
    runner = CliRunner()
    rated = runner.invoke(main, ["ratings", str(old_run)])
    assert rated.exit_code == 0 and "calza" in rated.stdout and RunFolder(old_run).ratings.exists()
    for rec in read_records(old_run).records:
        shown = runner.invoke(main, ["replay", str(old_run), rec.match])
        assert shown.exit_code == 0, shown.output
        assert shown.stdout.rstrip().endswith("every rule checked: the record agrees with the rules")
        assert "ended: elimination" in shown.stdout
    assert runner.invoke(main, ["stats", str(old_run)]).exit_code == 0
    report = runner.invoke(main, ["report", str(old_run)])
    assert report.exit_code == 0, report.output
    assert "m-000" in RunFolder(old_run).report.read_text()


def test_the_kept_old_run_is_untouched_by_the_tests() -> None:
    """The folder under tests/data is read only through copies; git knows its bytes."""
    status = subprocess.run(
        ["git", "status", "--porcelain", "--", str(OLD_RUN)], cwd=ROOT, capture_output=True, text=True
    )
    if status.returncode != 0:
        pytest.skip("not a git checkout")
    assert status.stdout == ""


# --- what is not a record -------------------------------------------------------


def _line(**changes: Any) -> dict[str, Any]:
    data = orjson.loads((OLD_RUN / "games.jsonl").read_bytes().splitlines()[0])
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"end": "resigned"}, "end: 'resigned' is not one of elimination, forfeit, max_rounds"),
        (
            {"faults": [{"round": 2, "seat": 0, "kind": "tired", "detail": ""}]},
            "fault kind 'tired' is not one of timeout, crash, malformed, illegal, unasked, arena",
        ),
        ({"first": 7}, "first: 7 is not a seat of the table"),
        ({"placements": [1, 2]}, "2 placements for 3 bots"),
        ({"rules": {"dice": 0}}, "rules: rule dice: 0 is not allowed"),
        ({"seed": "42"}, "seed: '42' is not an integer"),
        ({"variant": None, "match": "m-1"}, "needs the keys .*variant missing"),
        (
            {
                "rounds": [
                    {
                        "round": 1,
                        "opener": 0,
                        "palifico": False,
                        "dice": [[1], [2], [3]],
                        "actions": [[0, "raise", 2, 3]],
                        "count": 1,
                        "change": {"seat": 0, "delta": -1},
                    }
                ]
            },
            r"round 1: action \[0, 'raise', 2, 3\] is not",
        ),
    ],
)
def test_a_record_that_is_not_one_is_refused_naming_what(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(RecordError, match=message):
        MatchRecord.from_dict(_line(**changes))


def test_the_run_folder_names_the_line_of_a_bad_record(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    lines = (OLD_RUN / "games.jsonl").read_bytes().splitlines(keepends=True)
    bad = json.dumps(_line(end="resigned")).encode() + b"\n"
    (folder / "games.jsonl").write_bytes(lines[0] + bad + lines[2])
    with pytest.raises(RunError, match=r"games.jsonl, line 2: match m-000004: end: 'resigned'"):
        read_records(folder)


# --- the one reader: torn lines and repeats, on resume and for analysis -------

FP = {"seed": 1}  # the run.json fingerprint a resume is checked against


def test_a_resume_keeps_each_match_once_as_written_and_drops_a_torn_line(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    lines = (OLD_RUN / "games.jsonl").read_bytes().splitlines(keepends=True)
    timed = orjson.loads(lines[1])
    timed["seconds"] = 99.0  # the same match again, timed differently
    data = lines[0] + lines[1] + lines[2] + orjson.dumps(timed) + b"\n" + lines[0] + lines[3][:50]
    (folder / "games.jsonl").write_bytes(data)
    (folder / "run.json").write_text(json.dumps({"fingerprint": FP}))
    read = read_records(folder)
    assert [r.match for r in read.records] == ["m-000004", "m-000005", "m-000006"] and read.truncated
    assert [(r.match, r.line, r.first_line) for r in read.repeats] == [("m-000005", 4, 2), ("m-000004", 5, 1)]
    store = RunStore(folder)
    done = store.open({}, FP, force=False)
    store.close("interrupted")
    assert done == {"m-000004", "m-000005", "m-000006"}
    # The lines kept are the bytes first written (no key added, nothing reformatted).
    assert (folder / "games.jsonl").read_bytes() == lines[0] + lines[1] + lines[2]


def test_a_repeat_that_differs_stops_a_resume_naming_both_lines(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    lines = (OLD_RUN / "games.jsonl").read_bytes().splitlines(keepends=True)
    other = orjson.loads(lines[0])
    other["placements"] = other["placements"][::-1]
    (folder / "games.jsonl").write_bytes(lines[0] + lines[1] + orjson.dumps(other) + b"\n")
    (folder / "run.json").write_text(json.dumps({"fingerprint": FP}))
    before = (folder / "games.jsonl").read_bytes()
    with pytest.raises(
        RunError,
        match="line 3: match 'm-000004' is recorded on line 1 too, and the two records "
        "differ in more than their timing",
    ):
        RunStore(folder).open({}, FP, force=False)
    assert (folder / "games.jsonl").read_bytes() == before  # nothing recorded is lost


def test_analysis_counts_a_repeated_match_once_and_says_so(old_run: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    clean = runner.invoke(main, ["ratings", str(old_run), "--no-write"])
    games = old_run / "games.jsonl"
    lines = games.read_bytes().splitlines(keepends=True)
    games.write_bytes(b"".join(lines) + lines[3] + lines[7])
    again = runner.invoke(main, ["ratings", str(old_run), "--no-write"])
    assert again.exit_code == 0 and again.stdout == clean.stdout  # the same table
    assert "2 record(s) of a match already recorded were left out" in again.stderr
    assert "line 25 (m-000007, first on line 4)" in again.stderr
