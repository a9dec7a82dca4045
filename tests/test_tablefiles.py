"""The run folder's analysis tables (tables/*.parquet, arena.running.tablefiles):
what `arena stats` and `arena report` read instead of every record. They must
give exactly the frames and statistics the records give, on real played
folders, after a Ctrl-C and after a resume; and a reader must never trust
tables that no longer match the games file."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synth_records as S  # noqa: E402
from test_run import SLOW_RUN, write_config  # noqa: E402

from arena.analysis.results import Results, from_records, load  # noqa: E402
from arena.analysis.stats import run_stats  # noqa: E402
from arena.engine import rules as R  # noqa: E402
from arena.engine.records import MatchRecord  # noqa: E402
from arena.running.store import RunFolder, read_matches, read_records, read_tables, write_tables  # noqa: E402
from arena.running.tablefiles import NAMES, record_tables  # noqa: E402

ROOT = HERE.parent
ARENA = [sys.executable, "-m", "arena"]
OLD_RUN = HERE / "data" / "run-2026-12-01"


def from_the_records(folder: Path) -> Results:
    """The folder loaded the long way: every record parsed and tabulated."""
    read = read_records(folder)
    return from_records(
        sorted(read.records, key=lambda r: r.match), json.loads((folder / "run.json").read_text()), folder
    )


def assert_same_as_the_records(folder: Path) -> None:
    fast = load(folder)
    assert fast.from_tables, "the folder's tables were not used"
    slow = from_the_records(folder)
    for name in NAMES:
        pd.testing.assert_frame_equal(getattr(fast, name), getattr(slow, name), check_exact=True)
    # ... and so every statistic, to the last bit.
    pd.testing.assert_frame_equal(run_stats(fast, resamples=20), run_stats(slow, resamples=20), check_exact=True)
    # A few records are read alone (the report's notable matches); all of them when asked for.
    some = [r.match for r in slow.records[::7]]
    assert fast.records_of(some) == slow.records_of(some) and set(fast.records_of(some)) == set(some)
    assert list(fast.records) == list(slow.records)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_a_played_run_writes_tables_that_give_the_records_statistics(tmp_path: Path) -> None:
    out = tmp_path / "o"
    done = run_cli("run", str(write_config(tmp_path, seed=23, matches=10)), "--workers", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert all(RunFolder(out).table(name).is_file() for name in NAMES)
    assert_same_as_the_records(out)
    # `arena stats` prints the same from the tables as from the records alone.
    fast = run_cli("stats", str(out), "--no-write", "--csv")
    shutil.rmtree(out / "tables")
    slow = run_cli("stats", str(out), "--no-write", "--csv")
    assert fast.returncode == slow.returncode == 0 and fast.stdout == slow.stdout


def test_the_tables_after_ctrl_c_and_after_the_resume(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, **{**SLOW_RUN, "seed": 23, "matches": 40})  # lasts 4 s at least
    out = tmp_path / "o"
    proc = subprocess.Popen(
        [*ARENA, "run", str(cfg), "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if (out / "games.jsonl").exists() and (out / "games.jsonl").read_bytes().count(b"\n") >= 2:
            break
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    stopped = len(read_records(out).records)
    assert 2 <= stopped < 40
    assert_same_as_the_records(out)  # an interrupted run's tables hold what it recorded
    # Resumed: the earlier matches' tables are those the interrupted run wrote, read back
    # at the start, the new ones' come from the workers.
    done = run_cli("run", str(cfg), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert len(read_records(out).records) == 40
    assert_same_as_the_records(out)


def test_the_committed_real_run_and_a_synthetic_league(tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(OLD_RUN, old)  # records written before records had a type
    write_tables(old)
    assert_same_as_the_records(old)
    league = S.league(tmp_path / "league", matches_per_variant=20)  # faults, void rounds, palifico
    assert_same_as_the_records(league)


def test_tables_that_no_longer_match_the_games_file_are_not_used(tmp_path: Path) -> None:
    folder = S.league(tmp_path / "l", matches_per_variant=8)
    assert load(folder).from_tables
    games = folder / "games.jsonl"
    lines = games.read_bytes().splitlines(keepends=True)
    # A record appended after the tables were written (a run killed with -9 after resuming):
    extra = json.loads(lines[0])
    extra["match"] = "m-999999"
    with open(games, "ab") as fh:
        fh.write(json.dumps(extra).encode() + b"\n")
    assert read_tables(folder) is None
    res = load(folder)
    assert not res.from_tables and "m-999999" in set(res.matches["match"])
    # A torn last line: the tables are not written (the records say what was skipped).
    with open(games, "ab") as fh:
        fh.write(b'{"match": "m-99')
    write_tables(folder)
    assert not RunFolder(folder).table("matches").exists()
    assert load(folder).truncated


def test_a_table_file_damaged_or_of_another_shape_is_not_used(tmp_path: Path) -> None:
    folder = S.league(tmp_path / "l", matches_per_variant=8)
    path = RunFolder(folder).table("actions")
    path.write_bytes(path.read_bytes()[:100])
    assert read_tables(folder) is None and not load(folder).from_tables
    write_tables(folder)
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    pq.write_table(table.drop_columns(["true"]).replace_schema_metadata(table.schema.metadata), path)
    assert read_tables(folder) is None and not load(folder).from_tables


def test_a_record_the_tables_cannot_hold_leaves_no_tables_and_loses_nothing(tmp_path: Path) -> None:
    records = S.hand_built()
    records[0]["seed"] = 2**64 - 1  # beyond int64: the records keep it, a table column cannot
    folder = S.write_run(tmp_path / "h", records, {"v1": {"dice": 2}, "v2": {"dice": 1}})
    assert not RunFolder(folder).table("matches").exists()
    res = load(folder)
    assert not res.from_tables and 2**64 - 1 in set(res.matches["seed"])


def test_hostile_text_in_a_fault_detail_survives_the_tables(tmp_path: Path) -> None:
    records = S.hand_built()
    detail = 'reply "\x1b[2J\u202e$\\frac{a}{b}</td><script>" \x00 \udcff'.encode("utf-8", "surrogateescape")
    text = detail.decode("utf-8", "replace")
    for rec in records:
        for f in rec.get("faults") or []:
            f["detail"] = text
    folder = S.write_run(tmp_path / "h", records, {"v1": {"dice": 2}, "v2": {"dice": 1}})
    res = load(folder)
    assert res.from_tables and text in set(res.faults["detail"])
    assert_same_as_the_records(folder)


def test_read_matches_gives_the_first_record_of_each_match_asked_for(tmp_path: Path) -> None:
    folder = S.league(tmp_path / "l", matches_per_variant=6)
    games = folder / "games.jsonl"
    lines = games.read_bytes().splitlines(keepends=True)
    first = json.loads(lines[2])
    again = dict(first, seconds=(first.get("seconds") or 0) + 99.0)  # a repeat differs only in timing
    with open(games, "ab") as fh:
        fh.write(json.dumps(again).encode() + b"\n")
    every = {r.match: r for r in read_records(folder).records}
    ids = [first["match"], sorted(every)[-1], "m-not-there"]
    got = read_matches(folder, ids)
    assert set(got) == set(ids[:2])
    for mid, rec in got.items():
        assert isinstance(rec, MatchRecord) and rec == every[mid]
    assert got[first["match"]].seconds == first.get("seconds")


def test_every_record_of_a_run_encodes(tmp_path: Path) -> None:
    folder = S.league(tmp_path / "l", matches_per_variant=10)
    assert all(record_tables(r) is not None for r in read_records(folder).records)


@pytest.mark.parametrize("gz", [False, True])
def test_a_compressed_run_keeps_its_tables(tmp_path: Path, gz: bool) -> None:
    records = [
        S.play(f"m-{i:06d}", "classic", R.Rules.preset("classic"), ["random", "cautious", "sharp"], 1000 + i)
        for i in range(12)
    ]
    folder = S.write_run(tmp_path / "c", records, {"classic": R.Rules.preset("classic").to_dict()}, gz=gz)
    assert_same_as_the_records(folder)


def test_a_resume_adds_to_the_tables_it_finds_fresh_without_deriving_them_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.running import store as store_module
    from arena.running.store import RunStore

    rules = R.Rules.preset("classic")
    recs = [
        MatchRecord.from_dict(S.play(f"m-{i:06d}", "classic", rules, ["random", "cautious", "sharp"], 50 + i))
        for i in range(10)
    ]
    fp = {"seed": 1, "bots": [["random", "x"]]}
    run = {"name": "t", "variants": {"classic": rules.to_dict()}}
    folder = tmp_path / "run"
    first = RunStore(folder)
    first.open(run, fp, force=False)
    for r in recs[:6:2] + recs[1:6:2]:  # out of schedule order, as workers finish
        first.append(r)
    first.close("interrupted")
    assert_same_as_the_records(folder)
    # Resumed: the tables of the six earlier matches are read back, not derived from their records.
    again = RunStore(folder)
    again.open(run, fp, force=False)
    made: list[str] = []
    real = store_module.record_tables

    def counted(rec: MatchRecord) -> object:
        made.append(rec.match)
        return real(rec)

    monkeypatch.setattr(store_module, "record_tables", counted)
    for r in reversed(recs[6:]):
        again.append(r)
    again.close("complete")
    assert sorted(made) == [r.match for r in recs[6:]]  # only the new matches' rows were made
    assert_same_as_the_records(folder)
    # A run killed with -9 after that resume leaves tables older than its games file: derived again next time.
    with open(folder / "games.jsonl", "ab") as fh:
        fh.write(recs[0].to_json().replace(b"m-000000", b"m-000010") + b"\n")
    third = RunStore(folder)
    third.open(run, fp, force=False)
    made.clear()
    third.close("complete")
    assert len(made) == 11
    assert_same_as_the_records(folder)
