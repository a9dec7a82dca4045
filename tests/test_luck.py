"""The luck-reduced heads-up score (arena/analysis/luck.py; docs/ratings.md, Luck).

First exactly: every round's luck averages to zero over every deal of small
counts, whatever the model's weights. Then by simulation, in-process with
the real referee: a bot against itself centres on a share of 1/2, a bot
made weaker by a known amount (tests/bots/concede.py) on its known share,
and a bot that quits the rounds the deal spoiled (tests/bots/luck_quitter.py)
cannot make its luck sum to anything but zero.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from arena.analysis import luck
from arena.engine.records import MatchRecord, derive_seed
from arena.engine.rules import Rules
from arena.match.inprocess import play_record
from arena.protocol.loader import BotFactory, load_python_bot

ROOT = Path(__file__).resolve().parent.parent
CLASSIC = Rules.preset("classic")


def factory(path: Path) -> BotFactory:
    return load_python_bot(str(path))


PROB = factory(ROOT / "bots" / "probabilistic.py")


def matches(a: BotFactory, b: BotFactory, n: int, tag: str) -> list[MatchRecord]:
    """``n`` heads-up matches, ``a`` labelled "a" and alternating seats with ``b``."""
    recs = []
    for i in range(n):
        order = [(a, "a"), (b, "b")] if i % 2 == 0 else [(b, "b"), (a, "a")]
        recs.append(
            play_record(
                CLASSIC,
                [f for f, _ in order],
                derive_seed("test_luck", tag, i),
                names=[name for _, name in order],
                match=f"m-{i:06d}",
                strict=False,
            )
        )
    return recs


def a_scores(recs: list[MatchRecord]) -> tuple[list[float], list[float]]:
    plain, reduced = [], []
    for rec in recs:
        s = luck.scores(rec)
        seat = s.bots.index("a")
        plain.append(s.plain[seat])
        reduced.append(s.reduced[seat])
    return plain, reduced


def mean_se(xs: list[float]) -> tuple[float, float]:
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs))


@pytest.mark.parametrize("wild", [True, False])
@pytest.mark.parametrize("counts", [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (3, 2)])
def test_each_round_luck_averages_to_zero_over_every_deal(counts: tuple[int, int], wild: bool) -> None:
    for model in (luck.MODEL, luck.LuckModel("lopsided", strength=5.0, cross=-3.0)):
        assert abs(luck.deal_expectation(*counts, wild, model)) < 1e-12


def test_expected_strength_is_the_enumerated_mean() -> None:
    # One die with wild aces: any face counts once (an ace counts for 6), so exactly 1.
    assert luck.expected_strength(1, True) == pytest.approx(1.0)
    # Two dice without wilds: a pair (6 of 36 rolls) counts 2, else 1.
    assert luck.expected_strength(2, False) == pytest.approx(2 * 6 / 36 + 30 / 36)
    # Two dice with wild aces: a pair, or an ace beside anything (incl. two aces), counts 2.
    two = sum(1 for x in range(1, 7) for y in range(1, 7) if x == y or 1 in (x, y))
    assert luck.expected_strength(2, True) == pytest.approx((2 * two + (36 - two)) / 36)


def test_luck_is_antisymmetric_and_scaled_by_dice_in_play() -> None:
    h, o = (6, 6, 1, 3), (2, 4, 5)
    assert luck.round_luck(h, o, True) == pytest.approx(-luck.round_luck(o, h, True))
    assert luck.round_luck(h, o, True) > 0  # three sixes counting (an ace among them) against a spread hand
    assert luck.round_luck((), o, True) == 0.0


def test_self_play_centres_on_one_half() -> None:
    plain, reduced = a_scores(matches(PROB, PROB, 240, "self"))
    for xs in (plain, reduced):
        m, se = mean_se(xs)
        assert abs(m - 0.5) < 4 * se, (m, se)


def test_a_known_handicap_is_recovered() -> None:
    concede = factory(ROOT / "tests" / "bots" / "concede.py")
    recs = matches(concede, PROB, 300, "concede")
    assert any(f.kind == "crash" for r in recs for f in r.faults)  # the handicap did bite
    truth = (1 - 0.4) / 2  # tests/bots/concede.py: CONCEDE = 0.4
    plain, reduced = a_scores(recs)
    m, se = mean_se(reduced)
    assert abs(m - truth) < 4 * se, (m, se, truth)
    assert abs(sum(plain) / len(plain) - truth) < 4 * mean_se(plain)[1]


def test_quitting_spoiled_rounds_cannot_steer_the_luck() -> None:
    """The attack bot voids the rounds the deal spoiled for it. Its luck still sums
    to zero on average, because void rounds count; leaving them out would show
    (the second half of the test: the same matches without void rounds)."""
    quitter = factory(ROOT / "tests" / "bots" / "luck_quitter.py")
    recs = matches(quitter, PROB, 300, "quit")
    assert sum(1 for r in recs if r.faults) > 250  # it quit most matches
    lucks = []
    lucks_without_void = []
    for rec in recs:
        seat = rec.bots.index("a")
        sign = 1.0 if seat == 0 else -1.0
        lucks.append(sign * luck.match_luck(rec))
        kept = [r for r in rec.rounds if not r.void]
        lucks_without_void.append(sign * sum(luck.round_luck(*r.dice, True) for r in kept))
    m, se = mean_se(lucks)
    assert abs(m) < 4 * se, (m, se)
    m_bad, se_bad = mean_se(lucks_without_void)
    assert m_bad > 4 * se_bad, (m_bad, se_bad)  # the estimator this test guards against is steered


def test_head_to_head_pairs_replayed_deals_and_names_the_pair() -> None:
    recs = []
    for i in range(30):
        seed = derive_seed("h2h", i)
        recs.append(play_record(CLASSIC, [PROB, PROB], seed, names=["x", "y"], match=f"m-{2 * i:06d}"))
        recs.append(play_record(CLASSIC, [PROB, PROB], seed, names=["y", "x"], match=f"m-{2 * i + 1:06d}"))
    (row,) = luck.head_to_head(recs)
    assert (row.a, row.b, row.matches, row.deals) == ("x", "y", 60, 30)
    # The same deterministic bot in both seats of a replayed deal: one win each, exactly.
    assert row.mean == pytest.approx(0.5) and row.half == pytest.approx(0.0)
    # ... and the seats' luck cancels across the swap (each hand is dealt to the same seat).
    assert row.mean_reduced == pytest.approx(0.5) and row.half_reduced == pytest.approx(0.0, abs=1e-9)


def test_more_than_two_players_is_one_clear_error() -> None:
    rec = play_record(CLASSIC, [PROB, PROB, PROB], derive_seed("three"), names=["a", "b", "c"])
    with pytest.raises(luck.LuckError, match="3 players.*heads-up"):
        luck.match_luck(rec)
    assert luck.head_to_head([rec]) == []


def test_arena_ratings_luck_prints_the_reduced_head_to_head(tmp_path: Path) -> None:
    import sys

    from click.testing import CliRunner

    from arena.apps.cli import main

    sys.path.insert(0, str(ROOT / "tests"))
    import synth_records

    cautious = factory(ROOT / "bots" / "cautious.py")
    recs = matches(PROB, cautious, 40, "cli")
    run = synth_records.write_run(
        tmp_path / "run", [json.loads(r.to_json()) for r in recs], {"local": CLASSIC.to_dict()}
    )
    result = CliRunner().invoke(main, ["ratings", str(run), "--luck", "--no-write", "--resamples", "2"])
    assert result.exit_code == 0, result.output
    (row,) = luck.head_to_head(recs)
    assert (row.a, row.b, row.matches, row.deals) == ("a", "b", 40, 40)
    line = next(ln for ln in result.output.splitlines() if ln.startswith("a "))
    assert line.split()[:4] == ["a", "b", "40", "40"]
    assert f"{row.mean_reduced:7.3f} ± {row.half_reduced:<7.3f}".strip() in line
    assert "Heads-up win share with the luck of the deal removed" in result.output
    refused = CliRunner().invoke(main, ["ratings", str(run), "--luck", "--json", "--no-write"])
    assert refused.exit_code != 0 and "--luck prints a text table" in refused.output
