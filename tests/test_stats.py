"""arena.analysis.stats: Elo tables and variant statistics on hand-built match records,
and the ``arena ratings`` / ``arena stats`` commands."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import synth_records as S
from click.testing import CliRunner

from arena.analysis import commands, stats
from arena.analysis.results import from_records, load
from arena.apps.cli import main
from arena.engine.records import MatchRecord
from arena.errors import RatingError, RunError


def wilson_by_hand(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.fixture()
def hand() -> Any:
    return from_records(S.typed(S.hand_built()), {"variants": {"v1": {}, "v2": {}}})


@pytest.fixture()
def hand_run(tmp_path: Path) -> Path:
    return S.write_run(tmp_path / "run", S.hand_built(), {"v1": {"dice": 2}, "v2": {"dice": 1}})


def _stat(table: pd.DataFrame, variant: str, name: str) -> pd.Series:
    rows = table[(table["variant"] == variant) & (table["statistic"] == name)]
    assert len(rows) == 1, f"{variant}/{name}"
    return rows.iloc[0]


# Worked out by hand from synth_records.hand_built()'s three v1 matches.
V1_EXPECTED = {
    "matches": 3,
    "rounds_per_match": 8 / 3,
    "rounds_p10": 1,
    "rounds_p50": 2,
    "rounds_p90": 5,
    "decisions_per_match": 17 / 3,
    "opener_win_rate": 2 / 3,
    "opener_fair_share": 4 / 9,
    # Per table size, against that size's fair share: B and C are 2-player, A 3-player.
    "fair_share[2p]": 1 / 2,
    "opener_win_rate[2p]": 1.0,
    "seat0_win_rate[2p]": 1 / 2,
    "seat1_win_rate[2p]": 1 / 2,
    "fair_share[3p]": 1 / 3,
    "opener_win_rate[3p]": 0.0,
    "seat0_win_rate[3p]": 0.0,
    "seat1_win_rate[3p]": 0.0,
    "seat2_win_rate[3p]": 1.0,
    "dudo_calls_per_match": 2.0,
    "dudo_right_share": 3 / 6,
    "calza_calls_per_match": 1 / 3,
    "calza_right_share": 1.0,
    # The one calza (A round 2) was called with 1 + 2 + 2 dice in play.
    "calza_right_share[1-5 dice]": 1.0,
    "challenged_bid_true_share": 4 / 7,
    # Every bid judged by the dice _hand deals (seat s holds (s + k) % 6 + 1): of the 10 bids of
    # v1, A's two palifico bids on fives, its 3x4 in round 3 and its palifico 1x6 were false.
    "bid_false_share": 4 / 10,
    "palifico_rounds_per_match": 2 / 3,
    # A's palifico rounds: round 2 the opener (x) lost nothing (a right calza), round 5 the opener (y) lost.
    "palifico_opener_lost_share": 1 / 2,
    "palifico_dudo_right_share": 1.0,
    "dice_lost_per_round": 6 / 7,
    # Held 1 die at a round's start: x and y in A, x in B, x and z in C; x won B and C.
    # Held 2: x, y, z in A (z won), y and x in B (x won).
    "win_rate_holding[1]": 2 / 5,
    "win_rate_holding[2]": 2 / 5,
    "faults_per_match": 1 / 3,
    "faulted_match_share": 1 / 3,
}
V1_N = {
    "matches": 3,
    "seat2_win_rate[3p]": 1,
    "seat0_win_rate[2p]": 2,
    "dudo_right_share": 6,
    "calza_right_share": 1,
    "challenged_bid_true_share": 7,
    "opener_win_rate": 3,
    "bid_false_share": 10,
    "palifico_opener_lost_share": 2,
    "win_rate_holding[1]": 5,
    "fair_share[2p]": 2,
    "fair_share[3p]": 1,
}


def test_variant_statistics_by_hand(hand: Any) -> None:
    table = stats.variant_stats(hand)
    assert list(table.columns) == stats.STAT_COLUMNS
    v1 = table[table["variant"] == "v1"]
    assert [n for n in v1["statistic"] if n in V1_EXPECTED] == list(V1_EXPECTED)
    assert all(stats.definition(n) for n in table["statistic"]), "every statistic has a definition"
    for name, value in V1_EXPECTED.items():
        assert _stat(table, "v1", name)["value"] == pytest.approx(value), name
    for name, n in V1_N.items():
        assert _stat(table, "v1", name)["n"] == n, name
    v2 = table[table["variant"] == "v2"].set_index("statistic")["value"]
    assert v2["matches"] == 1 and v2["opener_win_rate"] == 0 and v2["dudo_right_share"] == 1
    assert v2["faults_per_match"] == 1 and "seat2_win_rate[3p]" not in v2.index
    assert "fair_share[3p]" not in v2.index and v2["fair_share[2p]"] == 0.5


def test_skill_statistics_by_hand(hand: Any) -> None:
    """The best-rated bot at the table won B and C but not A; the spread is the
    standard deviation of the ratings, its interval from the rating samples."""
    elo = {"x": 1600.0, "y": 1500.0, "z": 1400.0}
    samples = pd.DataFrame({"x": [1600.0, 1700.0], "y": [1500.0, 1500.0], "z": [1400.0, 1300.0]})
    rows = {r[1]: r for r in stats._variant_rows("v1", stats.select(hand, "v1"), 0, elo, samples)}
    assert rows["strongest_bot_win_share"][2:4] == pytest.approx((2 / 3, wilson_by_hand(2, 3)[0]))
    assert rows["strongest_bot_win_share"][5] == 3
    sd = float(np.std([1600, 1500, 1400]))
    assert rows["elo_sd"][2] == pytest.approx(sd)
    assert rows["elo_sd"][3] == pytest.approx(sd, rel=0.03) and rows["elo_sd"][4] == pytest.approx(
        float(np.std([1700, 1500, 1300])), rel=0.03
    )


def test_quantile_interval_is_the_order_statistic_interval() -> None:
    # The textbook case: the median of 1..100 lies between the 40th and 61st values with >= 95%.
    assert stats.quantile_interval(np.arange(1, 101), 0.5) == (50.0, 40.0, 61.0, 100)
    value, low, high, n = stats.quantile_interval(np.arange(1, 1001), 0.9)
    assert value == 900 and 880 < low < 900 < high < 920 and n == 1000
    v, lo, hi, n = stats.quantile_interval([4.0], 0.5)
    assert (v, n) == (4.0, 1) and math.isnan(lo) and math.isnan(hi)


def test_seat_fair_share_follows_table_size(tmp_path: Path) -> None:
    """Seat 3 exists only at 4-player tables: its fair share is 1/4 there, whatever the pooled mix."""
    from arena.engine import rules as R

    rules = R.Rules.preset("classic", {})
    recs = [
        S.play(f"m{i}", "classic", rules, ["sharp", "random", "random"] + ["random"] * (i % 2), i) for i in range(12)
    ]
    table = stats.variant_stats(from_records(S.typed(recs)))
    names = set(table["statistic"])
    assert {"fair_share[3p]", "fair_share[4p]", "seat3_win_rate[4p]"} <= names and "seat3_win_rate[3p]" not in names
    assert _stat(table, "classic", "fair_share[4p]")["value"] == 0.25
    assert _stat(table, "classic", "seat3_win_rate[4p]")["n"] == 6


def test_proportions_carry_wilson_intervals(hand: Any) -> None:
    table = stats.variant_stats(hand)
    for name, (k, n) in {
        "dudo_right_share": (3, 6),
        "challenged_bid_true_share": (4, 7),
        "opener_win_rate": (2, 3),
        "calza_right_share": (1, 1),
    }.items():
        row = _stat(table, "v1", name)
        low, high = wilson_by_hand(k, n)
        assert (row["low"], row["high"]) == pytest.approx((low, high), abs=1e-9), name


def test_means_carry_bootstrap_intervals_inside_the_data(hand: Any) -> None:
    table = stats.variant_stats(hand)
    rounds = _stat(table, "v1", "rounds_per_match")  # per match 5, 2, 1
    assert 1 <= rounds["low"] < rounds["value"] < rounds["high"] <= 5
    calza = _stat(table, "v1", "calza_calls_per_match")  # per match 1, 0, 0: never below 0
    assert calza["low"] == 0 and calza["high"] <= 1
    lost = _stat(table, "v1", "dice_lost_per_round")  # ratio over matches: 4/5, 1/1, 1/1
    assert 0.8 <= lost["low"] <= lost["value"] <= lost["high"] <= 1.0
    # One match: no interval; the count "matches" has none either.
    assert math.isnan(_stat(table, "v2", "rounds_per_match")["low"])
    assert math.isnan(_stat(table, "v1", "matches")["low"])
    # Reproducible: the intervals are seeded.
    pd.testing.assert_frame_equal(table, stats.variant_stats(hand))


def test_interval_helpers() -> None:
    assert stats.wilson(0, 0)[0] != stats.wilson(0, 0)[0]  # NaN
    share, low, high = stats.wilson(0, 10)
    assert share == 0 and low == 0 and 0.25 < high < 0.35
    assert stats.mean_interval([3, 3, 3]) == (3.0, 3.0, 3.0, 3)
    value, low, high, n = stats.mean_interval(np.arange(100))
    assert n == 100 and value == 49.5 and 43 < low < 49.5 < high < 56
    v, lo, hi, n = stats.ratio_interval([1, 2, 3], [2, 2, 2])
    assert v == 1.0 and lo < 1.0 < hi and n == 3


def test_dropping_administrative_faults(hand: Any) -> None:
    assert stats.is_admin_fault("arena") and not stats.is_admin_fault("timeout")
    kept = stats.select(hand, drop_admin_faults=True)
    assert kept.matches["match"].tolist() == ["A", "B", "C"]  # D had an "arena" fault
    assert set(kept.faults["kind"]) == {"timeout"}
    table = stats.variant_stats(hand, drop_admin_faults=True)
    assert set(table["variant"]) == {"v1"}


def test_rating_table_by_hand(hand: Any) -> None:
    report = stats.rate_results(hand, resamples=20)
    t = report.table
    assert list(t.columns) == stats.RATING_COLUMNS
    assert list(dict.fromkeys(t["variant"])) == [stats.OVERALL, "v1", "v2"]
    v1 = t[t["variant"] == "v1"].set_index("bot")
    assert v1.loc["x", ["matches", "wins"]].tolist() == [3, 2] and v1.loc["x", "mean_place"] == pytest.approx(5 / 3)
    assert v1.loc["y", ["matches", "wins", "faults"]].tolist() == [2, 0, 1]
    assert v1.loc["y", "fault_kinds"] == "timeout:1" and v1.loc["y", "mean_place"] == 2
    assert v1.loc["z", ["matches", "wins"]].tolist() == [2, 1] and v1.loc["z", "mean_place"] == 1.5
    overall = t[t["variant"] == stats.OVERALL].set_index("bot")
    assert overall.loc["x", ["matches", "wins", "faults"]].tolist() == [4, 2, 1]
    assert overall.loc["x", "fault_kinds"] == "arena:1"
    assert overall["elo"].mean() == pytest.approx(1500.0)
    assert (t["elo_low"] <= t["elo"] + 1e-3).all() and (t["elo"] <= t["elo_high"] + 1e-3).all()
    # Best first within each variant.
    for _, part in t.groupby("variant"):
        assert part["elo"].is_monotonic_decreasing
    # Head to head: x above y once in two meetings; z above y in their one meeting.
    h = report.h2h[report.h2h["variant"] == "v1"].set_index(["bot", "opponent"])
    assert h.loc[("x", "y"), ["above", "met"]].tolist() == [1, 2]
    assert h.loc[("z", "y"), ["above", "met", "share"]].tolist() == [1, 1, 1.0]
    los = report.los["v1"]
    assert np.allclose(los.to_numpy() + los.to_numpy().T, 1.0)
    # With the administrative fault's match dropped, x has played 3.
    dropped = stats.rate_results(hand, resamples=20, drop_admin_faults=True).table
    assert dropped[(dropped["variant"] == stats.OVERALL) & (dropped["bot"] == "x")]["matches"].item() == 3


def test_rating_options(hand: Any) -> None:
    anchored = stats.rate_results(hand, resamples=10, anchor="y", anchor_elo=1000.0, variant="v1").table
    y = anchored[anchored["bot"] == "y"].iloc[0]
    assert y["elo"] == y["elo_low"] == y["elo_high"] == 1000.0
    assert set(anchored["variant"]) == {"v1"}
    # seq. Elo on the fit's anchored scale: the anchor at 1000, the gaps between bots unchanged.
    assert y["elo_seq"] == pytest.approx(1000.0)
    plain = stats.rate_results(hand, resamples=10, variant="v1").table.set_index("bot")["elo_seq"]
    shifted = anchored.set_index("bot")["elo_seq"]
    assert (shifted - plain).to_numpy() == pytest.approx([1000.0 - plain["y"]] * len(plain))
    assert plain.mean() == pytest.approx(1500.0)  # unanchored: the mean, as the fit's
    with pytest.raises(RatingError, match="anchor bot 'z' played no match in 'v2'"):
        stats.rate_results(hand, resamples=10, anchor="z")
    with pytest.raises(RunError, match="no variant 'v9'; the run has v1, v2"):
        stats.rate_results(hand, variant="v9")
    a = stats.rate_results(hand, resamples=10, seed=3).table
    pd.testing.assert_frame_equal(a, stats.rate_results(hand, resamples=10, seed=3).table)


def test_single_variant_overall_is_that_variant(tmp_path: Path) -> None:
    res = from_records(S.typed([r for r in S.hand_built() if r["variant"] == "v1"]))
    t = stats.rate_results(res, resamples=10).table
    overall = t[t["variant"] == stats.OVERALL].drop(columns="variant").reset_index(drop=True)
    v1 = t[t["variant"] == "v1"].drop(columns="variant").reset_index(drop=True)
    pd.testing.assert_frame_equal(overall, v1)


def _orders(variant: str, order: list[str], copies: int) -> list[MatchRecord]:
    """Records without rounds whose finishing order is always ``order``
    (best first), with each pair also meeting once the other way round."""
    recs = []
    for i in range(copies):
        recs.append(
            {
                "match": f"{variant}-{i}",
                "variant": variant,
                "rules": {},
                "seed": i,
                "bots": order,
                "placements": list(range(1, len(order) + 1)),
                "first": 0,
                "rounds": [],
                "rounds_played": 0,
            }
        )
    for j in range(len(order) - 1):
        recs.append(
            {
                "match": f"{variant}-r{j}",
                "variant": variant,
                "rules": {},
                "seed": j,
                "bots": [order[j], order[j + 1]],
                "placements": [2, 1],
                "first": 0,
                "rounds": [],
                "rounds_played": 0,
            }
        )
    return S.typed(recs)


def test_variant_comparison_rank_correlation_and_change() -> None:
    bots = ["a", "b", "c", "d"]
    res = from_records(
        _orders("same1", bots, 8) + _orders("same2", bots, 8) + _orders("flip", bots[::-1], 8),
        {"variants": {"same1": {}, "same2": {}, "flip": {}}},
    )
    report = stats.rate_results(res, resamples=30)
    changes, corr = stats.variant_comparison(report)
    c = corr.set_index("variant")
    assert c.loc["same2", "spearman"] == pytest.approx(1.0) and c.loc["flip", "spearman"] == pytest.approx(-1.0)
    assert (c["baseline"] == "same1").all() and (c["bots"] == 4).all()
    ch = changes.set_index(["variant", "bot"])
    assert ch.loc[("flip", "a"), "change"] < -100 < 100 < ch.loc[("flip", "d"), "change"]
    assert ch.loc[("flip", "a"), "high"] < 0 < ch.loc[("flip", "d"), "low"]
    assert abs(ch.loc[("same2", "a"), "change"]) < 1e-6
    rows = stats.comparison_rows(changes, corr)
    assert "rank_correlation[same1]" in set(rows["statistic"]) and "elo_change[a]" in set(rows["statistic"])
    with pytest.raises(RunError, match="baseline variant 'nope'"):
        stats.variant_comparison(report, "nope")


def test_rankings_follow_places_and_file_order(hand: Any) -> None:
    bots, ranks = stats.rankings(hand.seats, hand.matches)
    assert bots == ["x", "y", "z"]
    assert ranks == [[2, 1, 0], [0, 1], [0, 2], [1, 0]]


# --- the commands -------------------------------------------------------------


def test_arena_ratings_writes_ratings_csv(hand_run: Path) -> None:
    out = CliRunner().invoke(main, ["ratings", str(hand_run), "--resamples", "20", "--h2h"])
    assert out.exit_code == 0, out.output
    assert "Plackett-Luce Elo" in out.output and "likelihood of superiority" in out.output
    csv = pd.read_csv(hand_run / "ratings.csv")
    assert list(csv.columns[:8]) == ["variant", "bot", "elo", "elo_low", "elo_high", "matches", "wins", "mean_place"]
    assert set(csv["variant"]) == {stats.OVERALL, "v1", "v2"}


def test_arena_ratings_json_and_csv(hand_run: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["ratings", str(hand_run), "--resamples", "10", "--json", "--no-write"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert {r["bot"] for r in data["ratings"]} == {"x", "y", "z"}
    assert data["los"]["v1"]["x"]["x"] == 0.5
    assert not (hand_run / "ratings.csv").exists()
    out = runner.invoke(
        main, ["ratings", str(hand_run), "--resamples", "10", "--csv", "--variant", "v1", "--anchor", "x=2000"]
    )
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].startswith("variant,bot,elo") and len(lines) == 4
    assert not (hand_run / "ratings.csv").exists()  # one variant: the run's file is not replaced
    x = [ln for ln in lines if ",x," in ln][0].split(",")
    assert float(x[2]) == 2000.0


def test_arena_stats_writes_variant_stats_csv(hand_run: Path) -> None:
    out = CliRunner().invoke(main, ["stats", str(hand_run), "--resamples", "10"])
    assert out.exit_code == 0, out.output
    assert "dudo_right_share" in out.output
    csv = pd.read_csv(hand_run / "variant_stats.csv")
    assert list(csv.columns) == stats.STAT_COLUMNS
    row = csv[(csv["variant"] == "v1") & (csv["statistic"] == "challenged_bid_true_share")].iloc[0]
    assert row["value"] == pytest.approx(4 / 7, abs=1e-5)
    assert "rank_correlation[v1]" in set(csv["statistic"])
    out = CliRunner().invoke(main, ["stats", str(hand_run), "--json", "--no-write", "--variant", "v2"])
    assert {r["variant"] for r in json.loads(out.output)} == {"v2"}


def test_commands_report_errors_in_one_line(tmp_path: Path) -> None:
    for cmd in ("ratings", "stats"):
        out = CliRunner().invoke(main, [cmd, str(tmp_path / "missing")])
        assert out.exit_code != 0
        assert out.output.strip().startswith("Error:") and "no such run folder" in out.output
        assert len(out.output.strip().splitlines()) == 1
    out = CliRunner().invoke(main, ["ratings", str(tmp_path), "--anchor", "x=abc"])
    assert "--anchor 'x=abc'" in out.output


def test_real_loader_roundtrip(hand_run: Path) -> None:
    # The run folder the tests write loads to the same tables as in memory.
    disk = stats.variant_stats(load(hand_run))
    mem = stats.variant_stats(from_records(S.typed(S.hand_built()), {"variants": {"v1": {}, "v2": {}}}))
    pd.testing.assert_frame_equal(disk, mem)


def test_elo_table_text_for_arena_run(hand_run: Path, tmp_path: Path) -> None:
    text = commands.elo_table_text(hand_run, resamples=10)
    assert text.startswith("all: Plackett-Luce Elo") and (hand_run / "ratings.csv").exists()
    single = S.write_run(tmp_path / "single", S.hand_built()[:3], {"v1": {}})
    one = commands.elo_table_text(single, resamples=10)
    assert one.startswith("v1: Plackett-Luce Elo") and "all:" not in one
    (tmp_path / "fresh").mkdir()
    (tmp_path / "fresh" / "run.json").write_text('{"name": "fresh", "status": "running"}')
    assert (
        commands.elo_table_text(tmp_path / "fresh")
        == f"no Elo table: {tmp_path / 'fresh'}: no finished match to rate yet"
    )


@pytest.mark.slow
def test_default_league_separates_the_strongest_and_weakest_bots(tmp_path: Path) -> None:
    """An acceptance check on a real, shortened default league (300
    matches, the Python bots only, since CI need not have node): the intervals
    of the best and the worst built-in bot do not overlap."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    out = tmp_path / "league"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena",
            "run",
            str(root / "configs" / "league.yaml"),
            "--matches",
            "300",
            "--seed",
            "7",
            "--out",
            str(out),
            "--set",
            "bots=[bots/*.py]",
            "--set",
            "players=[4, 5]",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = stats.rate_results(load(out), resamples=100).table
    classic = table[table["variant"] == "classic"].reset_index(drop=True)
    assert len(classic) >= 4
    best, worst = classic.iloc[0], classic.iloc[-1]
    assert worst["elo_high"] < best["elo_low"], classic.to_string()
