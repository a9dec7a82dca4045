"""The paired-play integrity check: does a bot do better on the later plays of a deal?

Paired deals (``seating: rotate``, ``arena sprt``'s pairs, the rotations of a
table under a variant) show one deal to a bot several times, each time in a
fresh process. A bot that remembers a deal through a side channel (docs/sandbox.md)
plays its later plays knowing every hand; an honest bot cannot tell a first
play from a later one. This module tests, for every bot, whether its results
on its later plays of a deal beat its result on its first play of that deal
by more than chance allows. docs/ratings.md ("Integrity") is the contract.

The statistic, built so that an honest bot has zero expectation *by
construction*, not by luck of the schedule:

- A bot's result in one play is its placement score ``(n - place) / (n - 1)``
  (1 = won, 0 = last). For each deal and each later play ``k`` of the bot,
  ``d = score(k) - score(first)``.
- ``d`` also carries seat luck: the later play puts the bot in another seat
  (rotated), and seats differ (dice follow seat positions, who opens). So the
  differences are grouped by *stratum* ``(table size, variant and seat of the
  first play, variant and seat of the later one)`` and each stratum is only
  used beside its *mirror*, the same two seats in the opposite order. For an
  honest bot, whose result depends on the seat and the deal but not on which
  play came first, a stratum's mean difference estimates ``F(q) - F(p)`` and
  its mirror's ``F(p) - F(q)``; their average is zero whatever the seat
  effects. A bot that gains ``delta`` on every later play adds ``delta`` to
  both. The estimate is a weighted mean of those averages (weights
  ``1 / (1/n + 1/n')``, the inverse variance of equal-variance means).
- Its standard error treats the deal as the unit (the plays of one deal are
  correlated) and takes residuals from the fit under the null (a stratum pair's
  seat effect, no gain), as a score test does: never zero when the
  differences vary, and conservative when the bot does gain.
- One-sided: ``p = P(Z >= z)``, flagged at ``alpha`` (default 0.01 per run)
  after Holm's correction over the bots tested; a bot is tested only with at
  least :data:`MIN_DEALS` deals in mirrored strata.

What this cannot see: a comparison without a mirror (the variants of a table
played in a fixed order, a field bot of ``arena sprt`` that sits in the same
seat in both halves of a pair) says nothing, because there play order and
configuration cannot be told apart; such plays are left out, and a bot with
none is "not testable" here. Order is schedule order (match index): with
several workers the plays of a deal may overlap in time, which only dilutes
a cheater's measured gain.

Pure: plain numbers in, a report out (the running layer's SPRT and the
analysis and live standings above it all use it).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from arena.elo import Z95

ALPHA = 0.01  # the family-wise false-alarm rate per run (Holm over the bots tested)
MIN_DEALS = 10  # deals in mirrored strata before a bot can be flagged

Stratum = tuple[int, str, int, str, int]  # players, first variant, first seat, later variant, later seat


@dataclass(frozen=True, slots=True)
class Play:
    """One bot's play of one deal: ``order`` ranks the deal's plays (schedule order)."""

    deal: Hashable
    order: int
    bot: str
    seat: int
    players: int
    variant: str
    place: int

    @property
    def score(self) -> float:
        return (self.players - self.place) / (self.players - 1) if self.players > 1 else 0.0


@dataclass(frozen=True, slots=True)
class BotCheck:
    """One bot's test: ``gain`` is its estimated placement-score gain on later plays
    (0 for an honest bot; 1 would be last to first), ``p`` its one-sided p-value."""

    bot: str
    deals: int
    comparisons: int
    gain: float
    se: float
    z: float
    p: float
    flagged: bool

    def words(self, alpha: float, tested: int) -> str:
        return (
            f"{self.bot} did better on later plays of a deal than on its first "
            f"(placement score {self.gain:+.2f} ± {Z95 * self.se:.2f} over {self.deals} deals, "
            f"p = {self.p:.1g}; flagged at alpha {alpha:g} over {tested} bot{'s' * (tested != 1)})"
        )


@dataclass(frozen=True)
class IntegrityReport:
    """Every bot with paired plays: ``checks`` for the testable ones (best
    evidence first), ``untested`` for those with too few mirrored deals."""

    alpha: float
    checks: tuple[BotCheck, ...]
    untested: tuple[str, ...]
    paired: bool  # the plays include a deal played more than once

    @property
    def flagged(self) -> list[BotCheck]:
        return [c for c in self.checks if c.flagged]

    def check_of(self, bot: str) -> BotCheck | None:
        return next((c for c in self.checks if c.bot == bot), None)

    @property
    def tested(self) -> bool:
        return bool(self.checks)

    def lines(self, untestable: bool = False) -> list[str]:
        """What ``arena ratings`` prints under its table: a flag per flagged bot, or one
        line of all clear; nothing when no bot could be tested, unless ``untestable``."""
        if not self.paired:
            return []
        tested = len(self.checks)
        if not tested:
            return (
                [
                    f"integrity: no bot could be tested: a bot is tested on its later plays of a deal in "
                    f"another seat, with the same two seats also met the other way round, on {MIN_DEALS} "
                    f"deals or more (docs/ratings.md, Integrity)"
                ]
                if untestable
                else []
            )
        out = [
            f"INTEGRITY FLAG: {c.words(self.alpha, tested)}; it may be remembering deals, "
            f"so its results cannot be trusted (docs/ratings.md, Integrity)"
            for c in self.flagged
        ]
        if not out:
            worst = min(self.checks, key=lambda c: c.p)
            out.append(
                f"integrity: no bot does better on later plays of a deal (alpha {self.alpha:g}, "
                f"{tested} bot{'s' * (tested != 1)} tested; lowest p = {worst.p:.2g}, {worst.bot})"
            )
        return out

    def to_data(self) -> dict[str, object]:
        return {
            "alpha": self.alpha,
            "min_deals": MIN_DEALS,
            "untested": list(self.untested),
            "bots": [
                {
                    "bot": c.bot,
                    "deals": c.deals,
                    "comparisons": c.comparisons,
                    "gain": c.gain,
                    "se": c.se,
                    "z": c.z,
                    "p": c.p,
                    "flagged": c.flagged,
                }
                for c in self.checks
            ],
        }


def upper_tail(z: float) -> float:
    """P(Z >= z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _differences(plays: Iterable[Play]) -> tuple[dict[str, dict[Hashable, list[tuple[Stratum, float]]]], bool]:
    """Per bot, per deal: (stratum, later score - first score) of each later play."""
    deals: dict[Hashable, list[Play]] = defaultdict(list)
    for p in plays:
        deals[p.deal].append(p)
    paired = False
    out: dict[str, dict[Hashable, list[tuple[Stratum, float]]]] = defaultdict(dict)
    for deal, ps in deals.items():
        by_bot: dict[str, list[Play]] = defaultdict(list)
        for p in ps:
            by_bot[p.bot].append(p)
        for bot, mine in by_bot.items():
            if len(mine) < 2:
                continue
            paired = True
            mine.sort(key=lambda p: p.order)
            first = mine[0]
            out[bot][deal] = [
                ((first.players, first.variant, first.seat, later.variant, later.seat), later.score - first.score)
                for later in mine[1:]
                if later.players == first.players
            ]
    return out, paired


def _test(deals: dict[Hashable, list[tuple[Stratum, float]]]) -> tuple[int, int, float, float, float] | None:
    """(deals, comparisons, gain, se, z) of one bot, or None if it has no mirrored strata."""
    sums: dict[Stratum, float] = defaultdict(float)
    counts: dict[Stratum, int] = defaultdict(int)
    for diffs in deals.values():
        for s, d in diffs:
            sums[s] += d
            counts[s] += 1
    # Each unordered pair of a stratum and its mirror, both observed, seats differing.
    weight: dict[Stratum, float] = {}  # a stratum's share of the estimate, per difference
    seat_effect: dict[Stratum, float] = {}  # the fitted seat effect under no gain, signed for the stratum
    total = 0.0
    estimate = 0.0
    for s in counts:
        n, fv, fs, lv, ls = s
        mirror = (n, lv, ls, fv, fs)
        if mirror == s or mirror not in counts or s > mirror:
            continue
        a, b = counts[s], counts[mirror]
        w = 1.0 / (1.0 / a + 1.0 / b)
        total += w
        estimate += w * (sums[s] / a + sums[mirror] / b) / 2.0
        weight[s], weight[mirror] = w / (2.0 * a), w / (2.0 * b)
        mu = (sums[s] - sums[mirror]) / (a + b)  # least squares of d = mu on s, -mu on the mirror
        seat_effect[s], seat_effect[mirror] = mu, -mu
    if total == 0.0:
        return None
    gain = estimate / total
    variance = 0.0
    used = 0
    comparisons = 0
    for diffs in deals.values():
        c = 0.0
        hit = False
        for s, d in diffs:
            if s in weight:
                c += weight[s] * (d - seat_effect[s])
                hit = True
                comparisons += 1
        if hit:
            used += 1
            variance += c * c
    variance /= total * total
    if used > 1:
        variance *= used / (used - 1)  # the small-sample factor of a cluster-robust variance
    se = math.sqrt(variance)
    z = gain / se if se > 0 else 0.0
    return used, comparisons, gain, se, z


def check_plays(plays: Iterable[Play], alpha: float = ALPHA, bots: Sequence[str] | None = None) -> IntegrityReport:
    """Test every bot (or only ``bots``) of ``plays``; Holm's step-down over the bots tested."""
    per_bot, paired = _differences(plays)
    results: list[tuple[str, tuple[int, int, float, float, float]]] = []
    untested = []
    for bot in sorted(per_bot):
        if bots is not None and bot not in bots:
            continue
        r = _test(per_bot[bot])
        if r is None or r[0] < MIN_DEALS:
            untested.append(bot)
        else:
            results.append((bot, r))
    # p = 1 where the differences never vary (no evidence either way: z is 0 by convention).
    ordered = sorted(
        ((upper_tail(r[4]) if r[3] > 0 else 1.0, bot, r) for bot, r in results), key=lambda x: (x[0], x[1])
    )
    m = len(ordered)
    checks = []
    rejecting = True
    for rank, (p, bot, (deals, comparisons, gain, se, z)) in enumerate(ordered):
        rejecting = rejecting and p <= alpha / (m - rank)  # Holm: stop at the first that fails
        checks.append(BotCheck(bot, deals, comparisons, gain, se, z, p, rejecting))
    return IntegrityReport(alpha, tuple(checks), tuple(untested), paired)


class IntegrityCollector:
    """Plays gathered match by match (the live standings, the SPRT), checked on demand."""

    def __init__(self) -> None:
        self.plays: list[Play] = []

    def add(self, *, deal: Hashable, order: int, variant: str, bots: Sequence[str], placements: Sequence[int]) -> None:
        n = len(bots)
        for seat, (bot, place) in enumerate(zip(bots, placements)):
            self.plays.append(Play(deal, order, bot, seat, n, variant, place))

    def check(self, alpha: float = ALPHA, bots: Sequence[str] | None = None) -> IntegrityReport:
        return check_plays(self.plays, alpha, bots)
