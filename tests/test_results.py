"""arena.analysis.results: loading a run folder into DataFrames."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest
import synth_records as S

from arena.analysis import results
from arena.engine.rules import Rules
from arena.errors import RunError


@pytest.fixture()
def hand_run(tmp_path: Path) -> Path:
    return S.write_run(tmp_path / "run", S.hand_built(), {"v1": {"dice": 2}, "v2": {"dice": 1}})


def test_documented_columns(hand_run: Path) -> None:
    res = results.load(hand_run)
    assert tuple(res.matches.columns) == results.MATCH_COLUMNS
    assert tuple(res.seats.columns) == results.SEAT_COLUMNS
    assert tuple(res.rounds.columns) == results.ROUND_COLUMNS
    assert tuple(res.actions.columns) == results.ACTION_COLUMNS
    assert tuple(res.faults.columns) == results.FAULT_COLUMNS
    for col in results.MATCH_COLUMNS + results.SEAT_COLUMNS + results.ROUND_COLUMNS:
        assert col in results.__doc__  # type: ignore[operator]
    assert res.run["name"] == "synthetic" and res.variants == ["v1", "v2"]
    assert not res.truncated


def test_match_rows_by_hand(hand_run: Path) -> None:
    m = results.load(hand_run).matches.set_index("match")
    assert m["players"].tolist() == [3, 2, 2, 2]
    assert m["rounds_played"].tolist() == [5, 2, 1, 1]
    assert m["decisions"].tolist() == [11, 4, 2, 2]
    assert m["palifico_rounds"].tolist() == [2, 0, 0, 0]
    assert m["faults"].tolist() == [0, 1, 0, 1]
    assert m["winner_bot"].tolist() == ["z", "x", "x", "y"]
    assert m["first_bot"].tolist() == ["x", "x", "x", "x"]
    assert m["line"].tolist() == [0, 1, 2, 3]


def test_seat_rows_by_hand(hand_run: Path) -> None:
    s = results.load(hand_run).seats.set_index(["match", "seat"])
    assert s.loc[("A", 0), "dice_left"] == 0 and s.loc[("A", 0), "out_round"] == 3
    assert s.loc[("A", 1), "out_round"] == 5
    # z regained nothing at the cap (delta 0) and kept both dice.
    assert s.loc[("A", 2), "dice_left"] == 2 and pd.isna(s.loc[("A", 2), "out_round"])
    # y timed out in round 2 of B: out, with the fault kind.
    assert s.loc[("B", 0), "fault"] == "timeout" and s.loc[("B", 0), "out_round"] == 2
    assert s.loc[("B", 0), "dice_left"] == 0 and s.loc[("B", 1), "dice_left"] == 1
    assert s.loc[("D", 0), "fault"] == "arena"
    assert s.loc[("A", 2), "seconds"] == 0.75
    assert s.loc[("B", 1), "first"] and not s.loc[("B", 0), "first"]


def test_round_and_action_rows_by_hand(hand_run: Path) -> None:
    res = results.load(hand_run)
    a = res.rounds[res.rounds["match"] == "A"]
    assert a["call"].tolist() == ["dudo", "calza", "dudo", "dudo", "dudo"]
    assert a["call_right"].tolist() == [True, True, False, True, True]
    assert a["bid_true"].tolist() == [False, True, True, False, False]
    assert a["palifico"].tolist() == [False, True, False, False, True]
    assert a["players"].tolist() == [3, 3, 3, 2, 2]
    assert a["dice_in_play"].tolist() == [6, 5, 5, 4, 3]
    assert a["delta"].tolist() == [-1, 0, -1, -1, -1]
    void = res.rounds[(res.rounds["match"] == "B") & (res.rounds["round"] == 2)].iloc[0]
    assert pd.isna(void["call"]) and pd.isna(void["call_right"]) and pd.isna(void["count"])
    assert void["fault_seat"] == 0 and void["fault_kind"] == "timeout"
    acts = res.actions
    assert len(acts) == 11 + 4 + 2 + 2
    first = acts[(acts["match"] == "A") & (acts["round"] == 2)]
    assert first["bot"].tolist() == ["x", "y", "z"]
    assert first["action"].tolist() == ["bid", "bid", "calza"]
    assert first["quantity"].tolist()[:2] == [1, 2] and pd.isna(first["quantity"].tolist()[2])


def test_faults_from_the_list_or_from_rounds(hand_run: Path) -> None:
    f = results.load(hand_run).faults
    assert f[["match", "seat", "bot", "kind"]].values.tolist() == [["B", 0, "y", "timeout"], ["D", 0, "x", "arena"]]
    assert f["round"].tolist()[0] == 2 and pd.isna(f["round"].tolist()[1])
    assert f["detail"].tolist()[0] == "no reply in 1000 ms"


def test_gzip_and_plain_load_the_same(tmp_path: Path) -> None:
    recs = S.hand_built()
    plain = results.load(S.write_run(tmp_path / "p", recs, {}))
    packed = results.load(S.write_run(tmp_path / "g", recs, {}, gz=True))
    for name in ("matches", "seats", "rounds", "actions", "faults"):
        pd.testing.assert_frame_equal(getattr(plain, name), getattr(packed, name))


def test_truncated_last_line_is_skipped(tmp_path: Path) -> None:
    run = S.write_run(tmp_path / "run", S.hand_built(), {}, status="running")
    games = run / "games.jsonl"
    text = games.read_text()
    games.write_text(text[: len(text) - 40])  # kill -9 in the middle of the last record
    res = results.load(run)
    assert res.truncated and res.matches["match"].tolist() == ["A", "B", "C"]


def test_truncated_gzip_is_tolerated(tmp_path: Path) -> None:
    # Enough records for several deflate blocks, so a cut leaves a readable prefix.
    recs = []
    for i in range(40):
        rec = dict(S.hand_built()[i % 4])
        rec["match"] = f"m{i:03d}"
        recs.append(rec)
    run = S.write_run(tmp_path / "run", recs * 1, {}, gz=True)
    raw = (run / "games.jsonl.gz").read_bytes()
    (run / "games.jsonl.gz").write_bytes(raw[: len(raw) * 2 // 3])
    res = results.load(run)
    assert res.truncated
    got = res.matches["match"].tolist()
    assert 0 < len(got) < 40 and got == [f"m{i:03d}" for i in range(len(got))]


def test_a_bad_line_in_the_middle_is_an_error_naming_it(tmp_path: Path) -> None:
    run = S.write_run(tmp_path / "run", S.hand_built(), {})
    lines = (run / "games.jsonl").read_text().splitlines(keepends=True)
    lines[1] = lines[1][:30] + "\n"
    (run / "games.jsonl").write_text("".join(lines))
    with pytest.raises(RunError, match=r"games.jsonl, line 2: not a JSON match record"):
        results.load(run)


def test_a_match_recorded_twice_counts_once(tmp_path: Path) -> None:
    recs = S.hand_built()
    again = dict(recs[0], seconds=9.5, think=[1.0, 2.0, 3.0])  # the same match, timed differently
    run = S.write_run(tmp_path / "run", recs + [again, recs[2]], {})
    res = results.load(run)
    assert res.matches["match"].tolist() == ["A", "B", "C", "D"]
    assert res.matches.set_index("match").loc["A", "seconds"] == 0.5  # the first record is the one kept
    assert [(r.match, r.line, r.first_line) for r in res.repeats] == [("A", 5, 1), ("C", 6, 3)]
    assert len(res.notes) == 1 and "2 record(s) of a match already recorded were left out" in res.notes[0]
    assert "line 5 (A, first on line 1)" in res.notes[0]


def test_two_different_records_of_one_match_are_an_error_naming_both_lines(tmp_path: Path) -> None:
    recs = S.hand_built()
    other = dict(recs[0], placements=[2, 3, 1][::-1])
    run = S.write_run(tmp_path / "run", recs + [other], {})
    with pytest.raises(RunError, match=r"line 5: match 'A' is recorded on line 1 too, and the two records differ"):
        results.load(run)


def test_plain_file_wins_over_an_unfinished_gzip(tmp_path: Path) -> None:
    run = S.write_run(tmp_path / "run", S.hand_built(), {})
    with gzip.open(run / "games.jsonl.gz", "wt") as fh:  # compression stopped after one record
        fh.write(json.dumps(S.hand_built()[0]) + "\n")
    assert len(results.load(run).matches) == 4


def test_missing_or_empty_folders(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="no such run folder"):
        results.load(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunError, match="not a run folder"):
        results.load(tmp_path / "empty")
    (tmp_path / "started").mkdir()
    (tmp_path / "started" / "run.json").write_text('{"name": "x", "status": "running"}')
    res = results.load(tmp_path / "started")
    assert res.matches.empty and tuple(res.seats.columns) == results.SEAT_COLUMNS


def test_record_missing_required_keys(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "games.jsonl").write_text('{"match": "A", "bots": ["x", "y"]}\n{"match": "B"}\n')
    with pytest.raises(
        RunError,
        match="line 1: a match record needs the keys .*; variant, rules, seed, first, rounds, placements missing",
    ):
        results.load(run)


def test_matches_parquet_holds_the_seat_table(tmp_path: Path) -> None:
    """matches.parquet (written by the run store) and the loader's seat table
    come from the one derivation of rows (arena.running.tables): the same
    values, docs/records.md's columns."""
    from arena.running.store import write_matches_parquet

    rules = Rules.preset("classic", {})
    recs = [
        S.play(
            f"m{i}",
            "classic",
            rules,
            ["random", "sharp", "cautious"],
            seed=i,
            fault=(1, 3, "crash") if i % 3 == 0 else None,
        )
        for i in range(12)
    ]
    run = S.write_run(tmp_path / "run", recs, {"classic": rules.to_dict()})
    write_matches_parquet(run)
    disk = pd.read_parquet(run / "matches.parquet")
    ours = results.load(run).seats
    assert list(disk.columns) == [c for c in results.SEAT_COLUMNS if c not in ("first", "held")]
    for col in ("match", "seat", "bot", "place", "players", "rounds", "dice_left", "seconds"):
        assert disk[col].tolist() == ours[col].tolist(), col
    assert [None if pd.isna(x) else int(x) for x in disk["out_round"]] == [
        None if pd.isna(x) else int(x) for x in ours["out_round"]
    ]
    assert [None if pd.isna(x) else x for x in disk["fault"]] == [None if pd.isna(x) else x for x in ours["fault"]]
    assert ours["fault"].notna().sum() == 4 and (ours["dice_left"] == 0).sum() >= 12


def test_rating_reads_a_stopped_runs_parquet_and_agrees_with_the_records(tmp_path: Path) -> None:
    """Rating needs only the seat table: from a fresh matches.parquet it is
    read without the match records, and the Elo table is the same; a match
    file appended to after the parquet was written is read in full instead."""
    from arena.analysis import stats
    from arena.running.store import write_matches_parquet

    rules = Rules.preset("classic", {})
    recs = [
        S.play(
            f"m{i:03d}",
            "classic",
            rules,
            ["random", "sharp", "cautious"][: 2 + i % 2],
            seed=i,
            fault=(0, 2, "timeout") if i % 5 == 0 else None,
        )
        for i in range(20)
    ]
    run = S.write_run(tmp_path / "run", recs, {"classic": rules.to_dict()})
    write_matches_parquet(run)
    fast = results.load(run, seats_only=True)
    assert fast.seats_only and fast.records == [] and fast.rounds.empty
    full = results.load(run)
    a = stats.rate_results(fast, resamples=20).table
    b = stats.rate_results(full, resamples=20).table
    pd.testing.assert_frame_equal(a, b)
    # Appended after the parquet: stale, so the records are read (and the new match counts).
    extra = S.play("m999", "classic", rules, ["random", "sharp"], seed=99)
    import json as _json
    import os

    with open(run / "games.jsonl", "a") as fh:
        fh.write(_json.dumps(extra) + "\n")
    later = (run / "matches.parquet").stat().st_mtime_ns + 10**9
    os.utime(run / "games.jsonl", ns=(later, later))
    again = results.load(run, seats_only=True)
    assert not again.seats_only and len(again.matches) == 21
