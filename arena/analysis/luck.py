"""Heads-up results with the luck of the deal removed: control variates on the dice.

A match's result (1 for the winner, 0 for the loser) mixes the players'
skill with the dice each round dealt them. The dice are the one part of a
match whose distribution is known exactly (every die uniform and independent
of everything before it, docs/rules.md, Dice from the seed), so a control
variate built on them has expectation zero by construction:

    luck of round r  =  V(state_r, deal_r) - E[ V(state_r, D) ]     (D a fresh deal)

where ``V`` is any function of the round's public state (dice counts, whether
the round is palifico) and its deal, fixed before the match. The reduced
score, result - (sum of every round's luck), has the same expectation as the
result whatever ``V`` is: each term is zero in expectation given everything
before its deal (the bots never see a deal before it is dealt), and the sum
stops at the match's end, a stopping time bounded by ``max_rounds``. A good
``V`` makes the reduced score vary less; a poor one only gains less (or costs
some variance: the benchmark measures both, benchmarks/luck.py).

The value estimate here (``MODEL``) is deliberately simple, fixed and
derivable from the rules: the chance of winning the round moves linearly
with two features of the deal, and a round's result is weighted by
``1 / (a + b - 1)`` with ``a`` and ``b`` dice in play (a die is worth more
near the end; the weight is a fixed choice, not a fitted one). The
features, for each player:

- *strength*: how many of its own dice count for the face it holds most of
  (aces included where they are wild), less that count's exact expectation
  over all hands of its size (:func:`expected_strength`, enumerated);
- *cross*: how many of the *other* player's dice count for that same face,
  less their expectation (``n / 3`` with wild aces, ``n / 6`` without): one's
  own best face being common at the table makes one's own bids true.

The luck of a round to a player is the weighted difference of its features
and its opponent's, divided by ``a + b - 1``. Both features are centred by
their exact expectations, so the luck of every round is zero in expectation
for any weights; :func:`deal_expectation` enumerates every deal of small
counts to check it. The two weights were measured once, by least squares
on 2,000 matches of ``bots/probabilistic.py`` against itself
(``python benchmarks/luck.py --calibrate``, its own seed), and are constants
of the code, never fitted on the results they are applied to.

Two players only: with more, a round's loser is not simply the other
player, and the value of a deal needs a table model (left open).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from arena.elo import Z95
from arena.engine.records import MatchRecord
from arena.engine.rules import aces_wild
from arena.errors import ArenaError

__all__ = [
    "LuckError",
    "LuckModel",
    "MODEL",
    "expected_strength",
    "features",
    "round_luck",
    "deal_expectation",
    "match_luck",
    "Scores",
    "scores",
    "HeadToHead",
    "head_to_head",
]

FACES = (1, 2, 3, 4, 5, 6)


class LuckError(ArenaError):
    """A match the luck estimator does not cover (it says which and why)."""


@dataclass(frozen=True, slots=True)
class LuckModel:
    """The value estimate's weights: round-win probability per die of each feature."""

    name: str
    strength: float
    cross: float


# Measured once by `python benchmarks/luck.py --calibrate` (least squares of the match
# result on the summed features, probabilistic against itself, 2,000 matches, seed
# "calibrate": 0.360 and 0.237), rounded to two places. Fixed here so that no run's results ever choose them.
MODEL = LuckModel("dice-strength-1", strength=0.36, cross=0.24)


def _counted(hand: Sequence[int], face: int, wild: bool) -> int:
    n = hand.count(face)
    if wild and face != 1:
        n += hand.count(1)
    return n


def _best_face(hand: Sequence[int], wild: bool) -> int:
    """The face the hand holds most of (aces counted where wild), the higher on a tie."""
    faces = FACES[1:] if wild else FACES
    return max(faces, key=lambda f: (_counted(hand, f, wild), f))


@cache
def expected_strength(n: int, wild: bool) -> float:
    """E[strength] of a hand of ``n`` uniform dice, exact: every multiset of
    faces with its multinomial probability (3,003 of them for 10 dice)."""
    if n <= 0:
        return 0.0
    total = 0.0
    for hand in itertools.combinations_with_replacement(FACES, n):
        ways = math.factorial(n)
        for f in FACES:
            ways //= math.factorial(hand.count(f))
        total += ways * _counted(hand, _best_face(hand, wild), wild)
    return total / float(6**n)


@cache
def _summary(hand: tuple[int, ...], wild: bool) -> tuple[int, float, tuple[int, ...]]:
    """A sorted hand's best face, its centred strength, and how many of its dice
    count for each face (index 0 unused): cached, since a run deals the same
    few hundred hands again and again (8,007 sorted hands of 1 to 10 dice at most)."""
    face = _best_face(hand, wild)
    counted = (0,) + tuple(_counted(hand, f, wild) for f in FACES)
    return face, counted[face] - expected_strength(len(hand), wild), counted


def features(hand: Sequence[int], other: Sequence[int], wild: bool) -> tuple[float, float]:
    """(strength, cross) of ``hand`` against ``other``, each centred by its exact expectation."""
    face, strength, _ = _summary(tuple(sorted(hand)), wild)
    counted = _summary(tuple(sorted(other)), wild)[2]
    p = 1 / 3 if wild and face != 1 else 1 / 6
    return strength, counted[face] - len(other) * p


def round_luck(hand: Sequence[int], other: Sequence[int], wild: bool, model: LuckModel = MODEL) -> float:
    """The luck of one heads-up deal to the player holding ``hand``, in match wins
    (the other player's is its negative)."""
    if not hand or not other:
        return 0.0
    s0, c0 = features(hand, other, wild)
    s1, c1 = features(other, hand, wild)
    return (model.strength * (s0 - s1) + model.cross * (c0 - c1)) / (len(hand) + len(other) - 1)


def deal_expectation(a: int, b: int, wild: bool, model: LuckModel = MODEL) -> float:
    """E[round_luck] over every ordered deal of ``a`` and ``b`` dice, enumerated (6^(a+b)
    deals: small counts only). Zero by construction; the tests check it."""
    total = 0.0
    for hand in itertools.product(FACES, repeat=a):
        for other in itertools.product(FACES, repeat=b):
            total += round_luck(hand, other, wild, model)
    return total / float(6 ** (a + b))


def match_luck(record: MatchRecord, model: LuckModel = MODEL) -> float:
    """The summed luck of every round of a heads-up match to seat 0 (seat 1's is its negative).

    Every dealt round counts, a void one too: its deal was drawn like any
    other, so its luck is zero in expectation all the same.
    """
    if len(record.bots) != 2:
        raise LuckError(
            f"match {record.match}: {len(record.bots)} players; the luck estimator "
            "covers heads-up matches (2 players) only"
        )
    luck = 0.0
    for rnd in record.rounds:
        h0, h1 = rnd.dice
        luck += round_luck(h0, h1, aces_wild(record.rules, rnd.palifico), model)
    return luck


@dataclass(frozen=True, slots=True)
class Scores:
    """One heads-up match: each seat's result (1 won, 0 lost) and its result less its luck."""

    match: str
    seed: int
    bots: tuple[str, str]
    plain: tuple[float, float]
    reduced: tuple[float, float]


def scores(record: MatchRecord, model: LuckModel = MODEL) -> Scores:
    luck = match_luck(record, model)
    won = tuple(1.0 if p == 1 else 0.0 for p in record.placements)
    return Scores(
        record.match, record.seed, (record.bots[0], record.bots[1]), (won[0], won[1]), (won[0] - luck, won[1] + luck)
    )


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """Bot ``a``'s share of wins against ``b``, plain and with the luck removed.

    ``deals`` is the number of distinct deals (matches with the same dice seed
    are one observation: a replayed deal's two matches are averaged before
    the interval is taken, so the interval resamples whole deals). ``half``
    and ``half_reduced`` are 95% normal half-widths; ``factor`` is the
    variance ratio, plain over reduced: how many times fewer deals the
    reduced mean needs for the same interval.
    """

    a: str
    b: str
    matches: int
    deals: int
    mean: float
    half: float
    mean_reduced: float
    half_reduced: float

    @property
    def factor(self) -> float:
        return (self.half / self.half_reduced) ** 2 if self.half_reduced > 0 else math.nan


def _mean_half(values: Sequence[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, math.inf
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, Z95 * math.sqrt(var / n)


def head_to_head(records: Iterable[MatchRecord], model: LuckModel = MODEL) -> list[HeadToHead]:
    """Every pair of entrants that met heads up, sorted by name: ``a``'s win share
    against ``b`` (``a`` < ``b``), plain and reduced, with intervals over deals.
    Records of more than two players are skipped."""
    by_pair: dict[tuple[str, str], dict[int, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    for rec in records:
        if len(rec.bots) != 2 or rec.bots[0] == rec.bots[1]:
            continue
        s = scores(rec, model)
        i = 0 if s.bots[0] < s.bots[1] else 1
        pair = (s.bots[i], s.bots[1 - i])
        by_pair[pair][s.seed].append((s.plain[i], s.reduced[i]))
    rows = []
    for (a, b), deals in sorted(by_pair.items()):
        plain = [sum(p for p, _ in ms) / len(ms) for ms in deals.values()]
        reduced = [sum(r for _, r in ms) / len(ms) for ms in deals.values()]
        m, h = _mean_half(plain)
        mr, hr = _mean_half(reduced)
        rows.append(HeadToHead(a, b, sum(map(len, deals.values())), len(deals), m, h, mr, hr))
    return rows


def head_to_head_text(rows: Sequence[HeadToHead]) -> str:
    """The table ``arena ratings --luck`` prints: per pair, the first bot's win share
    plain and luck-reduced with 95% intervals, the deals behind them, and the factor."""
    if not rows:
        return (
            "luck: no heads-up matches between two different entrants in this run "
            f"(the estimator, {MODEL.name}, covers 2-player matches only)"
        )
    lines = [
        f"Heads-up win share with the luck of the deal removed (model {MODEL.name}; 95% intervals over deals)",
        f"{'A':<20} {'B':<20} {'matches':>7} {'deals':>6}  {'A share plain':>17}  "
        f"{'A share reduced':>17}  {'factor':>6}",
    ]
    for r in rows:
        factor = f"{r.factor:6.2f}" if math.isfinite(r.factor) else f"{'-':>6}"
        lines.append(
            f"{r.a:<20} {r.b:<20} {r.matches:>7} {r.deals:>6}  {r.mean:7.3f} ± {r.half:<7.3f}  "
            f"{r.mean_reduced:7.3f} ± {r.half_reduced:<7.3f}  {factor}"
        )
    lines.append(
        "factor: plain variance over reduced, how many times fewer deals the reduced share needs "
        "for the same interval (below 1: the model adds noise for this pair; docs/ratings.md, Luck)"
    )
    return "\n".join(lines)
