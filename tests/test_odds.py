"""The odds helpers against brute force over every roll, and against scipy."""

from __future__ import annotations

import itertools
import random

import pytest
from scipy.stats import binom

from arena.engine import odds
from arena.engine.dice import roll_table
from arena.engine.rules import Bid, Rules, count_matching, deal, new_match
from arena.errors import InvalidAction
from arena.protocol.messages import match_start_message, turn_message
from arena.protocol.parse import parse_match_start, parse_turn


def brute(b: Bid, dice: tuple[int, ...], unseen: int, wild: bool) -> tuple[float, float, float]:
    """P(true), P(exact) and E[count] by enumerating every roll of the unseen dice,
    counted by the rules engine's own count (aces wild unless the bid is on aces)."""
    q, f = b
    w = wild and f != 1
    true = exact = total = 0
    rolls = list(itertools.product(range(1, 7), repeat=unseen))
    for other in rolls:
        c = count_matching([dice, other], f, w)
        true += c >= q
        exact += c == q
        total += c
    n = len(rolls)
    return true / n, exact / n, total / n


CASES = [
    (Bid(q, f), dice, unseen, wild)
    for dice in [(), (1,), (3, 3), (1, 5, 5), (2, 4, 6, 6)]
    for unseen in range(0, 5)
    for f in (1, 3, 6)
    for q in (1, 2, 3, 4, 6)
    for wild in (True, False)
]


@pytest.mark.parametrize("b,dice,unseen,wild", CASES)
def test_matches_enumeration(b: Bid, dice: tuple[int, ...], unseen: int, wild: bool) -> None:
    p_true, p_exact, mean = brute(b, dice, unseen, wild)
    assert odds.probability(b, dice, unseen, wild=wild) == pytest.approx(p_true, abs=1e-12)
    assert odds.probability_exact(b, dice, unseen, wild=wild) == pytest.approx(p_exact, abs=1e-12)
    assert odds.expected_count(b.face, dice, unseen, wild=wild) == pytest.approx(mean, abs=1e-12)


def test_palifico_turns_wilds_off() -> None:
    for q in range(1, 6):
        b = Bid(q, 4)
        assert odds.probability(b, (1, 4), 3, wild=True, palifico=True) == pytest.approx(
            brute(b, (1, 4), 3, wild=False)[0]
        )
        assert odds.probability_exact(b, (1, 4), 3, wild=True, palifico=True) == pytest.approx(
            brute(b, (1, 4), 3, wild=False)[1]
        )


@pytest.mark.parametrize("n", [0, 1, 7, 30, 99])
@pytest.mark.parametrize("p", [odds.P_FACE, odds.P_WILD_FACE])
def test_binomial_against_scipy(n: int, p: float) -> None:
    for k in range(-1, n + 2):
        assert odds.p_at_least(k, n, p) == pytest.approx(float(binom.sf(k - 1, n, p)), rel=1e-9, abs=1e-15)
        assert odds.p_exactly(k, n, p) == pytest.approx(float(binom.pmf(k, n, p)), rel=1e-9, abs=1e-15)
    assert sum(odds.p_exactly(k, n, p) for k in range(n + 1)) == pytest.approx(1.0)


def test_the_rules_page_example() -> None:
    # RULES (Lizumo): 12 dice, you hold 3, two of them 5s; about 5 fives in all.
    mine = (5, 5, 2)
    assert odds.expected_count(5, mine, 9) == pytest.approx(5.0)
    assert odds.probability("4x5", mine, 9) > 0.8  # "safe"
    assert odds.probability("7x5", mine, 9) < 0.4  # "a pretty big bluff"
    assert odds.expected_count(1, (), 9) == pytest.approx(1.5)  # "for 1s, count a sixth"


def test_bid_forms() -> None:
    assert odds.as_bid("5x3") == Bid(5, 3)
    assert odds.as_bid((5, 3)) == Bid(5, 3)
    assert odds.probability((2, 3), (3, 3), 4) == odds.probability(Bid(2, 3), (3, 3), 4) == 1.0
    for bad in ["dudo", (True, 3), (5, 7), (5,), "5y3", (5.0, 3)]:
        with pytest.raises(InvalidAction):
            odds.as_bid(bad)  # type: ignore[arg-type]


def test_turn_conveniences_follow_the_round() -> None:
    """turn.probability etc. equal the plain functions with the turn's dice, unseen and wilds,
    including a palifico round (wilds off) and a rule set without wild aces."""
    rng = random.Random(5)
    starts = [
        (Rules.preset("classic"), False),
        (Rules.preset("classic"), True),
        (Rules.preset("plain"), False),
    ]
    for rules, palifico in starts:
        for seed in range(20):
            state = new_match(rules, 4, seed % 4)._replace(palifico=palifico)
            state = deal(state, roll_table(seed, 1, state.counts))
            info = parse_match_start(match_start_message("m", state.to_act, ["a"] * 4, rules.to_dict(), 1))
            turn = parse_turn(turn_message("m", state, 100), info, rng)
            wild = rules.wild_ones and not palifico
            assert turn.wild is wild
            unseen = sum(state.counts) - len(turn.dice)
            assert turn.unseen == unseen == 15
            for b in [Bid(2, 1), Bid(3, 4), Bid(5, 6), Bid(9, 2)]:
                p = turn.probability(b)
                assert p == odds.probability(b, turn.dice, unseen, wild=wild)
                assert p == pytest.approx(
                    odds.p_at_least(
                        b.quantity - count_matching([turn.dice], b.face, wild and b.face != 1),
                        15,
                        1 / 3 if wild and b.face != 1 else 1 / 6,
                    )
                )
                assert turn.p_exact(b) == odds.probability_exact(b, turn.dice, unseen, wild=wild)
            assert turn.expected(4) == odds.expected_count(4, turn.dice, unseen, wild=wild)
            assert turn.mine(4) == count_matching([turn.dice], 4, wild)
