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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from arena.analysis import luck_table
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
    "FEATURES",
    "match_features",
    "Regression",
    "match_value",
    "round_weight",
    "table_key",
    "table_expectation",
    "table_round_luck",
    "table_deal_expectation",
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


# The table model ("dice-table"): a round's value from how the deal played out for a
# reference pair of bots, looked up by a few features of the deal.

TABLE_DICE = 5  # the table covers rounds where each player holds at most this many dice
PRIOR = 5.0  # a cell's count of pseudo-rounds at one half: a thin cell stays near 1/2


@cache
def match_value(a: int, b: int) -> float:
    """The chance that a player with ``a`` dice beats one with ``b`` if every later
    round were a fair coin costing its loser one die: derived from the rules, not
    fitted. It scales a round's luck by what the round is worth to the match."""
    if a <= 0:
        return 0.0
    if b <= 0:
        return 1.0
    return 0.5 * match_value(a, b - 1) + 0.5 * match_value(a - 1, b)


def round_weight(a: int, b: int) -> float:
    """What winning rather than losing a round at ``a`` against ``b`` dice is worth in
    match wins (under :func:`match_value`): 1 at 1 against 1, 0.27 at 5 against 5."""
    return match_value(a, b - 1) - match_value(a - 1, b)


def table_key(hand: Sequence[int], other: Sequence[int], wild: bool) -> tuple[int, int, int, int]:
    """The deal's features the table is keyed by, for the player holding ``hand``: its
    best face's count in its own hand, the other's in theirs, and each best face's
    count over both hands (what a challenge of a bid on it would find)."""
    f0, s0, c0 = _summary(tuple(sorted(hand)), wild)
    f1, s1, c1 = _summary(tuple(sorted(other)), wild)
    own0, own1 = c0[f0], c1[f1]
    return own0, own1, own0 + c1[f0], own1 + c0[f1]


def _cell_value(cells: Mapping[tuple[int, ...], tuple[int, int]], key: tuple[int, ...]) -> float:
    wins2, n = cells.get(key, (0, 0))  # round wins counted in halves (a calza may be a draw)
    return (wins2 / 2 + PRIOR / 2) / (n + PRIOR)


@cache
def _key_distribution(a: int, b: int, wild: bool) -> tuple[tuple[tuple[int, int, int, int], float], ...]:
    """Every value of :func:`table_key` for a deal of ``a`` and ``b`` dice with its exact
    probability: every pair of sorted hands with their multinomial weights (at most
    252 x 252 pairs at 5 dice each)."""
    dist: dict[tuple[int, int, int, int], float] = defaultdict(float)
    hands_a, hands_b = _sorted_hands(a), _sorted_hands(b)
    for h0, w0 in hands_a:
        for h1, w1 in hands_b:
            dist[table_key(h0, h1, wild)] += w0 * w1
    return tuple(sorted(dist.items()))


@cache
def _sorted_hands(n: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    out = []
    for hand in itertools.combinations_with_replacement(FACES, n):
        ways = math.factorial(n)
        for f in FACES:
            ways //= math.factorial(hand.count(f))
        out.append((hand, ways / float(6**n)))
    return tuple(out)


@cache
def table_expectation(a: int, b: int, opener: int, wild: bool) -> float:
    """E[the table's value of a deal] at this round start, exact (:func:`_key_distribution`)."""
    cells = luck_table.CELLS
    return sum(p * _cell_value(cells, (a, b, opener, int(wild), *key)) for key, p in _key_distribution(a, b, wild))


def table_round_luck(hand: Sequence[int], other: Sequence[int], opener: int, wild: bool) -> float:
    """The luck of one heads-up deal to the player holding ``hand`` (``opener`` 0 when
    that player opens the round, 1 when the other does), in match wins: the table's
    chance of winning the round with this deal less its exact expectation over all
    deals, times :func:`round_weight`. Rounds beyond the table (more than
    ``TABLE_DICE`` dice in a hand) take the linear model's :func:`round_luck`, which
    is zero in expectation too."""
    a, b = len(hand), len(other)
    if not a or not b:
        return 0.0
    if a > TABLE_DICE or b > TABLE_DICE:
        return round_luck(hand, other, wild)
    value = _cell_value(luck_table.CELLS, (a, b, opener, int(wild), *table_key(hand, other, wild)))
    return (value - table_expectation(a, b, opener, wild)) * round_weight(a, b)


def table_deal_expectation(a: int, b: int, opener: int, wild: bool) -> float:
    """E[table_round_luck] over every ordered deal (6^(a+b): small counts only),
    enumerated independently of :func:`table_expectation`: zero, the tests check."""
    total = 0.0
    for hand in itertools.product(FACES, repeat=a):
        for other in itertools.product(FACES, repeat=b):
            total += table_round_luck(hand, other, opener, wild)
    return total / float(6 ** (a + b))


def match_luck(record: MatchRecord, model: LuckModel | None = None) -> float:
    """The summed luck of every round of a heads-up match to seat 0 (seat 1's is its negative),
    by the table model (:func:`table_round_luck`), or by the linear ``model`` when given.

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
        w = aces_wild(record.rules, rnd.palifico)
        luck += round_luck(h0, h1, w, model) if model is not None else table_round_luck(h0, h1, rnd.opener, w)
    return luck


@dataclass(frozen=True, slots=True)
class Scores:
    """One heads-up match: each seat's result (1 won, 0 lost) and its result less its luck."""

    match: str
    seed: int
    bots: tuple[str, str]
    plain: tuple[float, float]
    reduced: tuple[float, float]


def scores(record: MatchRecord, model: LuckModel | None = None) -> Scores:
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


def head_to_head(records: Iterable[MatchRecord], model: LuckModel | None = None) -> list[HeadToHead]:
    """Every pair of entrants that met heads up, sorted by name: ``a``'s win share
    against ``b`` (``a`` < ``b``), plain and reduced, with intervals over deals.
    Records of more than two players are skipped.

    Reduced by default with :class:`Regression` on :func:`match_features`, deal
    by deal in the order of their first match id (each deal's coefficients
    from the deals before it); with a linear ``model``, by that model's luck
    subtracted as it is."""
    # pair -> deal seed -> [(match id, a's result, a's features)]
    by_pair: dict[tuple[str, str], dict[int, list[tuple[str, float, tuple[float, ...]]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for rec in records:
        if len(rec.bots) != 2 or rec.bots[0] == rec.bots[1]:
            continue
        i = 0 if rec.bots[0] < rec.bots[1] else 1
        pair = (rec.bots[i], rec.bots[1 - i])
        won = 1.0 if rec.placements[i] == 1 else 0.0
        sign = 1.0 if i == 0 else -1.0
        feats = (match_luck(rec, model),) if model is not None else match_features(rec)
        by_pair[pair][rec.seed].append((rec.match, won, tuple(sign * f for f in feats)))
    rows = []
    for (a, b), deals in sorted(by_pair.items()):
        ordered = sorted(deals.values(), key=lambda ms: min(m for m, _, _ in ms))
        plain = [sum(w for _, w, _ in ms) / len(ms) for ms in ordered]
        k = len(ordered[0][0][2])
        mean_feats = [[sum(f[j] for _, _, f in ms) / len(ms) for j in range(k)] for ms in ordered]
        if model is not None:
            reduced = [p - f[0] for p, f in zip(plain, mean_feats)]
        else:
            reg = Regression(k)
            reduced = [reg.reduce(p, f) for p, f in zip(plain, mean_feats)]
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
            f"(the estimator, {luck_table.NAME}, covers 2-player matches only)"
        )
    lines = [
        "Heads-up win share with the luck of the deal removed (regression on the dice features, coefficients "
        "from earlier deals only; 95% intervals over deals)",
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


# Features for the regression estimator: each a sum over rounds of terms that are zero in
# expectation given everything before the round's deal, like the luck itself.
FEATURES = ("table", "strength", "cross")


def match_features(record: MatchRecord) -> tuple[float, float, float]:
    """Seat 0's luck features of a heads-up match, summed over its rounds (a void one
    too): the table model's luck (:func:`table_round_luck`), and the centred strength
    and cross differences of :func:`features`, each times :func:`round_weight`.
    Seat 1's are the negatives. Every term is zero in expectation over the deal, so
    any fixed combination of them is a control variate (:class:`Regression`)."""
    if len(record.bots) != 2:
        raise LuckError(
            f"match {record.match}: {len(record.bots)} players; the luck estimator "
            "covers heads-up matches (2 players) only"
        )
    wild = record.rules.wild_ones
    t = s = c = 0.0
    for rnd in record.rounds:
        h0, h1 = rnd.dice
        if not h0 or not h1:
            continue
        w = wild and not rnd.palifico
        weight = round_weight(len(h0), len(h1))
        s0, c0 = features(h0, h1, w)
        s1, c1 = features(h1, h0, w)
        t += table_round_luck(h0, h1, rnd.opener, w)
        s += (s0 - s1) * weight
        c += (c0 - c1) * weight
    return t, s, c


class Regression:
    """A control-variate coefficient learnt only from earlier observations.

    :meth:`reduce` returns ``y - c . f`` where ``c`` is the ridge least-squares
    coefficient of ``y`` on ``f`` over the observations *before* this one (0
    before ``warmup`` of them), then records ``(y, f)``. Since the features of an
    observation are zero in expectation whatever came before (each is a sum of
    deal luck, and a deal is drawn after the earlier matches), and ``c`` is
    fixed before the observation is made, ``E[c . f] = E[c . E[f | past]] = 0``:
    every reduced value has the mean of ``y``, exactly, for any bots and any
    features. The coefficient adapts to the bots at hand (a model of the dice
    that says nothing about them gets ``c`` near 0 and costs almost nothing),
    which no coefficient fixed in advance can do; what it may never see is the
    observation it reduces. (Starting from the table model at face value rather
    than 0 reduced the SPRT's first pairs too, 712 -> 470 matches against 566,
    but its false alarms rose to 14 of 200 tests, above alpha: the test then
    stops on rough early variances: benchmarks/luck.py --sprt 200 --seed s1 at
    commit 019c261, the equal-bots case.)
    """

    def __init__(self, k: int = len(FEATURES), *, warmup: int = 30, ridge: float = 1.0) -> None:
        self.k, self.warmup, self.ridge = k, warmup, ridge
        self.n = 0
        self._sy = 0.0
        self._sf = [0.0] * k
        self._sff = [[0.0] * k for _ in range(k)]
        self._sfy = [0.0] * k

    def coefficients(self) -> list[float]:
        """The coefficients the next observation will be reduced with."""
        if self.n < max(self.warmup, 2):
            return [0.0] * self.k
        n, mf = self.n, [x / self.n for x in self._sf]
        my = self._sy / n
        cov = np.array([[self._sff[i][j] - n * mf[i] * mf[j] for j in range(self.k)] for i in range(self.k)])
        cy = np.array([self._sfy[i] - n * mf[i] * my for i in range(self.k)])
        return [float(x) for x in np.linalg.solve(cov + self.ridge * np.eye(self.k), cy)]

    def reduce(self, y: float, f: Sequence[float]) -> float:
        c = self.coefficients()
        out = y - sum(ci * fi for ci, fi in zip(c, f))
        self.n += 1
        self._sy += y
        for i in range(self.k):
            self._sf[i] += f[i]
            self._sfy[i] += f[i] * y
            for j in range(self.k):
                self._sff[i][j] += f[i] * f[j]
        return out


class LuckSprt:
    """The SPRT of docs/sprt.md on pair scores less their luck (heads up).

    Feed it, pair by pair in schedule order, A's plain pair score (the mean of
    its two results, 0, 1/2 or 1) and A's luck features in the pair (the mean of
    its :func:`match_features`, signed for A's seat). Each pair's score is
    reduced by :class:`Regression` (coefficients from earlier pairs only, so the
    mean is unchanged) and tested with :func:`arena.running.sprt.llr_normal`, whose
    mean and variance are those of the reduced scores. It decides nothing before
    the regression's warm-up (those pairs are not reduced, and a variance of a
    few pairs is too rough to stop on).
    """

    def __init__(self, elo0: float, elo1: float, alpha: float, beta: float, *, warmup: int = 30) -> None:
        from arena.running.sprt import wald_bounds

        self.elo0, self.elo1 = elo0, elo1
        self.lower, self.upper = wald_bounds(alpha, beta)
        self.regression = Regression(warmup=warmup)
        self.warmup = warmup
        self.n = 0
        self._s = 0.0
        self._ss = 0.0
        self.llr = 0.0
        self.verdict: str | None = None
        self.decided_at: int | None = None

    def add(self, plain: float, feats: Sequence[float]) -> str | None:
        """One more pair; the verdict ("H1" or "H0") once decided, else None."""
        from arena.running.sprt import llr_normal

        if self.verdict is not None:
            return self.verdict
        x = self.regression.reduce(plain, feats)
        self.n += 1
        self._s += x
        self._ss += x * x
        if self.n < max(self.warmup, 2):
            return None
        mean = self._s / self.n
        var = max(self._ss / self.n - mean * mean, 0.0)
        self.llr = llr_normal(self.n, mean, var, self.elo0, self.elo1)
        if self.llr >= self.upper:
            self.verdict, self.decided_at = "H1", self.n
        elif self.llr <= self.lower:
            self.verdict, self.decided_at = "H0", self.n
        return self.verdict

    @property
    def mean(self) -> float:
        return self._s / self.n if self.n else math.nan
