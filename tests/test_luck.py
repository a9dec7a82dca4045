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


# The table model and the regression estimator.


@pytest.mark.parametrize("wild", [True, False])
@pytest.mark.parametrize("opener", [0, 1])
@pytest.mark.parametrize("counts", [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (2, 3)])
def test_table_luck_averages_to_zero_over_every_deal(counts: tuple[int, int], opener: int, wild: bool) -> None:
    # Every ordered deal (itertools.product), against the table's expectation taken over
    # sorted hands with multinomial weights: two enumerations that must agree.
    assert abs(luck.table_deal_expectation(*counts, opener, wild)) < 1e-12


def test_table_luck_is_the_other_players_negative() -> None:
    h, o = (6, 6, 1, 3), (2, 4, 5)
    for opener in (0, 1):
        assert luck.table_round_luck(h, o, opener, True) == pytest.approx(
            -luck.table_round_luck(o, h, 1 - opener, True)
        )
    # The value is the calibration's cell for this round start and deal, less its exact mean.
    wins2, n = luck.luck_table.CELLS[(4, 3, 0, 1, *luck.table_key(h, o, True))]
    value = (wins2 / 2 + luck.PRIOR / 2) / (n + luck.PRIOR)
    expected = (value - luck.table_expectation(4, 3, 0, True)) * luck.round_weight(4, 3)
    assert luck.table_round_luck(h, o, 0, True) == pytest.approx(expected)
    # Beyond the table's TABLE_DICE the linear model takes over, also centred.
    big = (2,) * (luck.TABLE_DICE + 1)
    assert luck.table_round_luck(big, o, 0, True) == luck.round_luck(big, o, True)


def test_round_weight_is_what_the_round_is_worth_to_the_match() -> None:
    assert luck.round_weight(1, 1) == 1.0  # the last round decides the match
    assert luck.match_value(3, 3) == pytest.approx(0.5)
    assert luck.round_weight(5, 5) == pytest.approx(luck.match_value(5, 4) - luck.match_value(4, 5))
    assert 0 < luck.round_weight(5, 5) < luck.round_weight(2, 2) < 1


def test_regression_reduces_with_earlier_observations_only() -> None:
    """The coefficient an observation is reduced with is fixed before it is seen: a
    feature equal to the result itself (the steering a peek would allow) is not
    subtracted from the observation it describes, only learnt for the next ones."""
    reg = luck.Regression(1, warmup=3, ridge=0.0)
    assert [reg.reduce(y, [y - 0.5]) for y in (1.0, 0.0, 1.0)] == [1.0, 0.0, 1.0]  # the warm-up: nothing learnt
    before = reg.coefficients()
    assert before == pytest.approx([1.0])  # learnt from the three: y = 0.5 + f
    assert reg.reduce(0.0, [-0.5]) == pytest.approx(0.0 - before[0] * -0.5)


def test_regression_centres_on_the_truth_where_the_dice_decide() -> None:
    """A dice-driven bot with random choices against its copy (truth 1/2), and the
    same bot conceding a known share of matches (truth (1 - q) / 2): the regression
    estimate centres on both, and it is tighter than the plain share."""
    jitter = factory(ROOT / "tests" / "bots" / "jitter.py")
    for other, truth, tag in (
        (jitter, 0.5, "jitter"),
        (factory(ROOT / "tests" / "bots" / "jitter_concede.py"), None, "jitter-concede"),
    ):
        recs = matches(other, jitter, 400, tag)
        if truth is None:
            concede = 2 / (1 + 10 ** (-20 / 400)) - 1
            truth = (1 - concede) / 2
            assert any(f.kind == "crash" for r in recs for f in r.faults)
        reg = luck.Regression()
        plain, reduced = [], []
        for rec in recs:
            seat = rec.bots.index("a")
            sign = 1.0 if seat == 0 else -1.0
            won = 1.0 if rec.placements[seat] == 1 else 0.0
            plain.append(won)
            reduced.append(reg.reduce(won, [sign * x for x in luck.match_features(rec)]))
        m, se = mean_se(reduced)
        assert abs(m - truth) < 4 * se, (tag, m, se, truth)
        assert se < mean_se(plain)[1], tag


def test_quitting_spoiled_rounds_cannot_steer_the_table_luck() -> None:
    quitter = factory(ROOT / "tests" / "bots" / "luck_quitter.py")
    recs = matches(quitter, PROB, 300, "quit-table")
    feats = []
    for rec in recs:
        sign = 1.0 if rec.bots.index("a") == 0 else -1.0
        feats.append([sign * x for x in luck.match_features(rec)])
    for i, name in enumerate(luck.FEATURES):
        m, se = mean_se([f[i] for f in feats])
        assert abs(m) < 4 * se, (name, m, se)


def test_luck_sprt_decides_sooner_on_the_same_pairs_when_the_luck_explains_them() -> None:
    """Synthetic pairs with a known mean: the score is the truth plus luck the features
    see plus noise they do not. The reduced test decides the right way, in fewer pairs
    than the same test told nothing (features all zero)."""
    import random

    from arena.running.sprt import score_of_elo

    told_pairs = blind_pairs = told_h1 = 0
    for seed in range(20):
        rng = random.Random(seed)
        told, blind = luck.LuckSprt(0, 20, 0.05, 0.05), luck.LuckSprt(0, 20, 0.05, 0.05)
        while told.verdict is None or blind.verdict is None:
            f = rng.gauss(0, 0.3)  # the luck: variance 0.09, against 0.0225 of the rest
            y = score_of_elo(20) + f + rng.gauss(0, 0.15)
            told.add(y, [f, 0.0, 0.0])
            blind.add(y, [0.0, 0.0, 0.0])
        told_h1 += told.verdict == "H1"
        assert told.decided_at is not None and blind.decided_at is not None
        told_pairs += told.decided_at
        blind_pairs += blind.decided_at
    assert told_h1 >= 18  # beta 0.05: about one in twenty may end H0
    assert 2 * told_pairs < blind_pairs, (told_pairs, blind_pairs)
