"""The run folder survives hard stops: torn lines are dropped, nothing recorded is lost."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from arena.engine.records import MatchRecord
from arena.errors import RunError
from arena.running.store import GAMES, RunStore, iter_records, read_run_json


def rec(i: int) -> MatchRecord:
    return MatchRecord.from_dict(
        {
            "match": f"m-{i:06d}",
            "variant": "classic",
            "rules": {"dice": 1},
            "seed": i,
            "bots": ["a", "b"],
            "first": 0,
            "rounds": [
                {
                    "round": 1,
                    "opener": 0,
                    "palifico": False,
                    "dice": [[2], [3]],
                    "actions": [[0, "bid", 1, 2], [1, "dudo"]],
                    "count": 1,
                    "change": {"seat": 1, "delta": -1},
                }
            ],
            "placements": [1, 2],
            "rounds_played": 1,
            "faults": [],
            "think": [0.1, 0.2],
            "seconds": 0.5,
        }
    )


FP = {"seed": 1, "bots": [["a", "x"], ["b", "y"]]}


def test_append_close_and_parquet(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    assert store.open({"name": "t"}, FP, force=False) == set()
    for i in range(3):
        store.append(rec(i))
    store.close("complete")
    meta = read_run_json(tmp_path / "run")
    assert meta is not None and meta["status"] == "complete" and meta["ended"]
    df = pd.read_parquet(tmp_path / "run" / "matches.parquet")
    assert list(df.columns) == [
        "match",
        "variant",
        "seat",
        "bot",
        "place",
        "players",
        "rounds",
        "dice_left",
        "out_round",
        "fault",
        "seconds",
    ]
    assert len(df) == 6
    row = df[(df["match"] == "m-000001") & (df["seat"] == 1)].iloc[0]
    assert row["dice_left"] == 0 and row["out_round"] == 1 and row["place"] == 2 and row["seconds"] == 0.2


def test_resume_drops_a_torn_last_line_and_keeps_the_rest(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    store = RunStore(folder)
    store.open({}, FP, force=False)
    store.append(rec(0))
    store.append(rec(1))
    assert store._fh is not None
    store._fh.write(rec(2).to_json()[:40])  # killed mid-write
    store._fh.flush()
    again = RunStore(folder)
    assert again.open({}, FP, force=False) == {"m-000000", "m-000001"}
    again.append(rec(2))
    again.close("complete")
    assert [r.match for r in iter_records(folder)] == ["m-000000", "m-000001", "m-000002"]
    assert (folder / GAMES).read_bytes().count(b"\n") == 3


def test_a_damaged_line_in_the_middle_is_reported(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / GAMES).write_bytes(rec(0).to_json() + b"\nnot json\n" + rec(1).to_json() + b"\n")
    with pytest.raises(RunError, match="line 2"):
        list(iter_records(folder))


def test_another_config_is_refused_unless_forced(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    store = RunStore(folder)
    store.open({}, FP, force=False)
    store.append(rec(0))
    store.close("interrupted")
    other = {**FP, "seed": 2}
    with pytest.raises(RunError, match="different config.*seed"):
        RunStore(folder).open({}, other, force=False)
    assert [r.match for r in iter_records(folder)] == ["m-000000"]  # nothing lost
    assert RunStore(folder).open({}, other, force=True) == set()
    moved = [p for p in tmp_path.iterdir() if p.name.startswith("run.old-")]
    assert len(moved) == 1 and [r.match for r in iter_records(moved[0])] == ["m-000000"]


def test_compressed_run_reads_back(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    store = RunStore(folder)
    store.open({}, FP, force=False)
    store.append(rec(0))
    store.close("complete", compress=True)
    assert not (folder / GAMES).exists() and (folder / "games.jsonl.gz").exists()
    assert [r.match for r in iter_records(folder)] == ["m-000000"]
    assert RunStore(folder).open({}, FP, force=False) == {"m-000000"}


class _CutShort:
    """The run file as append_line sees it, with a Ctrl-C at one point of the
    append: ``before`` the line is written, or just ``after`` it was written
    (the file is unbuffered: a line written is in the file, no flush follows)."""

    def __init__(self, fh, when: str) -> None:  # type: ignore[no-untyped-def]
        self.fh, self.when, self.armed = fh, when, True

    def write(self, data: bytes) -> int:
        if self.armed and self.when == "before":
            self.armed = False
            raise KeyboardInterrupt
        n = int(self.fh.write(data))
        if self.armed and self.when == "after":
            self.armed = False
            raise KeyboardInterrupt
        return n

    def flush(self) -> None:
        self.fh.flush()
        if self.armed and self.when == "after":
            self.armed = False
            raise KeyboardInterrupt

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self.fh, name)


@pytest.mark.parametrize("when", ["before", "after"])
def test_ctrl_c_during_an_append_leaves_the_tables_holding_exactly_the_lines(tmp_path: Path, when: str) -> None:
    """The tables close() writes (matches.parquet, tables/) name the games
    file's size, so a reader trusts them: a Ctrl-C that lands between writing
    a line and counting it must not leave a recorded match out of them (seen
    in CI once, a 1-in-many race in test_tablefiles' Ctrl-C test), nor one
    whose line never reached the file in."""
    folder = tmp_path / "run"
    store = RunStore(folder)
    store.open({}, FP, force=False)
    store.append(rec(0))
    store.append(rec(1))
    store._fh = _CutShort(store._fh, when)  # type: ignore[assignment]
    with pytest.raises(KeyboardInterrupt):
        store.append(rec(2))
    store.close("interrupted")
    recorded = [r.match for r in iter_records(folder)]
    assert recorded == [f"m-{i:06d}" for i in range(3 if when == "after" else 2)]
    assert sorted(set(pd.read_parquet(folder / "matches.parquet")["match"])) == recorded
    from arena.running.store import read_tables

    tables = read_tables(folder)
    assert tables is not None, "the tables were not written, or do not name the games file as it is"
    assert sorted(set(tables["matches"]["match"].to_pylist())) == recorded
