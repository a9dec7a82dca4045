"""``arena sprt``: a sequential probability ratio test of "A is stronger than B".

Model (docs/sprt.md says it in full). Matches come in *pairs* that share one
deal (the same dice seed, fixed seats): in match ``2t`` bot A sits at seat
``s`` of table ``t``, in match ``2t+1`` bot B sits at the same seat, with the
same opponents in the same other seats. Heads up, the "opponent" is the other
bot of the test, so the pair is the familiar game pair with seats swapped. A
pair scores 1 when A finished above B's place, 0.5 when level, 0 when below:
a trinomial outcome whose expectation ``mu`` is A's duplicate score against B.
By symmetry ``mu = 0.5`` for equal bots; its logistic Elo is
``-400 log10(1/mu - 1)``.

The test is the generalized SPRT that fishtest and fastchess use: H0 "Elo =
elo0" against H1 "Elo = elo1" with the distribution of pair scores otherwise
free; each hypothesis's likelihood is that of the maximum-likelihood
distribution of pair scores whose mean is the hypothesis's ``mu``
(:func:`constrained_mle`), and the log-likelihood ratio of H1 to H0 is
compared with Wald's bounds ``log(beta/(1-alpha))`` and
``log((1-beta)/alpha)``. Empty outcome classes get a tiny count (1e-3) so
that the constrained fit exists from the first pair on.

Determinism: the test reads pairs in schedule order and decides at the first
prefix that crosses a bound, so the verdict (and the pairs it rests on) is
the same whatever the workers; matches already being played when it decides
are recorded too, beyond the verdict.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.elo import Z95, elo_of_score, score_of_elo
from arena.engine.records import MatchSpec, derive_seed, match_id
from arena.errors import ConfigError
from arena.running.integrity import IntegrityReport, Play, check_plays
from arena.running.observe import Finished

SCORES = (0.0, 0.5, 1.0)  # a pair: A below B, level, above
REGULARIZE = 1e-3  # the count given to an empty outcome class
DEFAULTS = {"elo0": 0.0, "elo1": 20.0, "alpha": 0.05, "beta": 0.05}
INTEGRITY_ALPHA = 0.01  # the integrity check's false-alarm rate for A (docs/sprt.md, Integrity)


def wald_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """(lower, upper): accept H0 below the lower, H1 above the upper."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def constrained_mle(values: Sequence[float], probs: Sequence[float], mu: float) -> list[float]:
    """The distribution on ``values`` nearest (in likelihood) to the empirical
    ``probs`` whose mean is ``mu``: ``q_i = p_i / (1 + lam (v_i - mu))``, with
    ``lam`` the root of ``sum p_i (v_i - mu) / (1 + lam (v_i - mu)) = 0``
    (a Lagrange multiplier; the function is decreasing in ``lam`` on the
    interval where every ``q_i`` stays positive, so bisection finds it)."""
    lo_v, hi_v = min(values), max(values)
    if not lo_v < mu < hi_v:
        raise ValueError(f"mu={mu} must lie strictly between {lo_v} and {hi_v}")
    lo, hi = -1.0 / (hi_v - mu), 1.0 / (mu - lo_v)
    eps = 1e-12
    lo, hi = lo + eps * abs(lo), hi - eps * abs(hi)

    def g(lam: float) -> float:
        return sum(p * (v - mu) / (1.0 + lam * (v - mu)) for v, p in zip(values, probs))

    for _ in range(200):
        mid = (lo + hi) / 2.0
        if g(mid) > 0:
            lo = mid
        else:
            hi = mid
    lam = (lo + hi) / 2.0
    return [p / (1.0 + lam * (v - mu)) for v, p in zip(values, probs)]


def llr(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """The generalized log-likelihood ratio of H1 (elo1) to H0 (elo0) for
    ``counts`` of pair scores 0, 0.5, 1."""
    reg = [c if c > 0 else REGULARIZE for c in counts]
    n = sum(reg)
    probs = [c / n for c in reg]
    q0 = constrained_mle(SCORES, probs, score_of_elo(elo0))
    q1 = constrained_mle(SCORES, probs, score_of_elo(elo1))
    total = sum(counts)
    return total * sum(p * math.log(b / a) for p, a, b in zip(probs, q0, q1))


def llr_normal(n: int, mean: float, var: float, elo0: float, elo1: float) -> float:
    """The generalized log-likelihood ratio of H1 (elo1) to H0 (elo0) for ``n`` pair
    scores of any distribution on the line with sample ``mean`` and ``var``: the
    normal approximation, ``n (mu1 - mu0) (2 mean - mu0 - mu1) / (2 var)``, which
    the trinomial :func:`llr` approaches as the pairs grow. It is what a pair score
    less its luck (:mod:`arena.analysis.luck`: no longer 0, 1/2 or 1) is tested with."""
    if n < 2 or var <= 0:
        return 0.0
    mu0, mu1 = score_of_elo(elo0), score_of_elo(elo1)
    return n * (mu1 - mu0) * (2 * mean - mu0 - mu1) / (2 * var)


def elo_estimate(counts: Sequence[float]) -> tuple[float, float, float]:
    """A's Elo over B from the pair scores, with a 95% interval (normal
    approximation to the mean pair score, then the logistic transform)."""
    n = sum(counts)
    if n == 0:
        return 0.0, -math.inf, math.inf
    mean = sum(c * v for c, v in zip(counts, SCORES)) / n
    var = sum(c * (v - mean) ** 2 for c, v in zip(counts, SCORES)) / n
    se = math.sqrt(var / n) if n > 1 else 0.5
    return elo_of_score(mean), elo_of_score(mean - Z95 * se), elo_of_score(mean + Z95 * se)


@dataclass(frozen=True)
class SprtParams:
    """What is tested: ``a`` stronger than ``b`` by elo1 rather than elo0."""

    a: str
    b: str
    elo0: float = DEFAULTS["elo0"]
    elo1: float = DEFAULTS["elo1"]
    alpha: float = DEFAULTS["alpha"]
    beta: float = DEFAULTS["beta"]

    @staticmethod
    def from_data(data: Any, labels: Sequence[str], where: str) -> SprtParams:
        """From a config's ``sprt`` mapping; ``a`` and ``b`` default to the first two entrants."""
        data = dict(data or {})
        unknown = [k for k in data if k not in ("a", "b", *DEFAULTS)]
        if unknown:
            raise ConfigError(f"{where}: sprt.{unknown[0]}: unknown key; the keys are a, b, {', '.join(DEFAULTS)}")
        a, b = data.pop("a", labels[0]), data.pop("b", labels[1])
        for key, who in (("a", a), ("b", b)):
            if who not in labels:
                raise ConfigError(f"{where}: sprt.{key}: {who!r} is not an entrant; name one of {', '.join(labels)}")
        if a == b:
            raise ConfigError(
                f"{where}: sprt: a and b are both {a!r}; list the bot twice to test it against "
                f"a copy of itself (the copy is named {a}#2)"
            )
        nums: dict[str, float] = {}
        for key, default in DEFAULTS.items():
            v = data.get(key, default)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ConfigError(f"{where}: sprt.{key}: {v!r} is not a number")
            nums[key] = float(v)
        for key in ("alpha", "beta"):
            if not 0 < nums[key] < 0.5:
                raise ConfigError(f"{where}: sprt.{key}: {nums[key]} is not allowed; use a number between 0 and 0.5")
        if not nums["elo0"] < nums["elo1"]:
            raise ConfigError(f"{where}: sprt: elo0 ({nums['elo0']}) must be below elo1 ({nums['elo1']})")
        return SprtParams(a, b, **nums)

    def to_data(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta}


def sprt_schedule(
    *,
    seed: int,
    labels: Sequence[str],
    params: SprtParams,
    players: int,
    pairs: int,
    variant: str,
    rules: Mapping[str, Any],
) -> list[MatchSpec]:
    """``pairs`` pairs of matches sharing a deal: A then B at the same seat,
    the same opponents (drawn from the entrants other than A and B) in the
    same other seats; the hero's seat goes round the table."""
    a, b = labels.index(params.a), labels.index(params.b)
    field_ = [i for i in range(len(labels)) if i not in (a, b)]
    heads_up = players == 2 and not field_
    if not heads_up and len(field_) < players - 1:
        raise ConfigError(
            f"sprt: a table of {players} needs {players - 1} opponents besides "
            f"{params.a} and {params.b}, there are {len(field_)} (add them with --field)"
        )
    rng = random.Random(derive_seed(seed, "sprt", "schedule"))
    fixed = dict(rules)
    fixed["seating"] = "fixed"  # the schedule fixes the seats; dice follow seat positions
    specs: list[MatchSpec] = []
    for t in range(pairs):
        seat = t % players
        tables: list[tuple[int, ...]] = []
        if heads_up:  # A at `seat` facing B, then B at `seat` facing A
            tables = [(a, b), (b, a)] if seat == 0 else [(b, a), (a, b)]
        else:
            others = rng.sample(field_, players - 1)
            rng.shuffle(others)
            for hero in (a, b):
                seats = list(others)
                seats.insert(seat, hero)
                tables.append(tuple(seats))
        dice_seed = derive_seed(seed, "dice", t)
        for r, table in enumerate(tables):
            index = 2 * t + r
            specs.append(
                MatchSpec(
                    index=index,
                    match=match_id(index),
                    variant=variant,
                    rules=fixed,
                    entrants=table,
                    seed=derive_seed(seed, "match", t, r),
                    dice_seed=dice_seed,
                    table=t,
                    rotation=r,
                    repeat=r,
                )
            )
    return specs


@dataclass
class SprtTest:
    """The running test: fed records in any order, decides on the schedule-order prefix."""

    params: SprtParams
    pairs: int
    counts: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    # H1 | H0 | None (undecided) | inconclusive (every pair played) | untrusted (H1 reached, A flagged)
    verdict: str | None = None
    decided_at: int | None = None  # pairs when it decided
    llr_value: float = 0.0
    integrity: IntegrityReport | None = None  # A's integrity check when the LLR last reached H1's bound
    heads_up: bool = False  # A and B alone at the table: a pair is two games, shown as fastchess shows them
    _halves: dict[int, dict[int, int]] = field(default_factory=dict)  # pair -> role -> place of A or B
    _a_plays: dict[int, dict[int, tuple[int, int, int]]] = field(default_factory=dict)  # pair -> role -> A's
    # (seat, players, place), when A sat at the table (heads up, both halves)
    _next: int = 0

    @property
    def bounds(self) -> tuple[float, float]:
        return wald_bounds(self.params.alpha, self.params.beta)

    def observe(self, rec: Finished) -> bool:
        """Take one record; True when the test has decided (the run may stop)."""
        try:
            index = int(rec.match.removeprefix("m-"))
        except ValueError:
            return self.decided
        return self.observe_places(index, rec.bots, rec.placements)

    @property
    def decided(self) -> bool:
        return self.verdict in ("H1", "H0", "untrusted")

    def observe_places(self, index: int, bots: Sequence[str], placements: Sequence[int]) -> bool:
        """:meth:`observe` from match ``index``'s seat labels and placements."""
        t, role = divmod(index, 2)
        who = self.params.a if role == 0 else self.params.b
        seats = list(bots)
        if who in seats:
            self._halves.setdefault(t, {})[role] = placements[seats.index(who)]
        if self.params.a in seats:
            seat = seats.index(self.params.a)
            self._a_plays.setdefault(t, {})[role] = (seat, len(seats), placements[seat])
        while self.verdict is None and len(self._halves.get(self._next, {})) == 2:
            pa, pb = self._halves[self._next][0], self._halves[self._next][1]
            self.counts[2 if pa < pb else 1 if pa == pb else 0] += 1
            self._next += 1
            self.llr_value = llr(self.counts, self.params.elo0, self.params.elo1)
            lower, upper = self.bounds
            if self.llr_value >= upper:
                self._at_upper_bound()
            elif self.llr_value <= lower:
                self.verdict, self.decided_at = "H0", self._next
            if self.verdict is None and self._next >= self.pairs:
                self.verdict = "inconclusive"
                self.decided_at = self._next
        return self.decided

    def _at_upper_bound(self) -> None:
        """H1, unless the integrity check flags A (then ``untrusted``) or has
        too few pairs to speak while A sees deals twice (then go on testing):
        a bot that remembers deals must not win a test by it (docs/sprt.md, Integrity)."""
        self.integrity = report = self.integrity_check()
        mine = report.check_of(self.params.a)
        if mine is None and self.params.a in report.untested:
            return  # A replays deals (heads up) but the check has fewer than MIN_DEALS pairs yet
        if mine is not None and mine.flagged:
            self.verdict = "untrusted"
        else:
            self.verdict = "H1"
        self.decided_at = self._next

    def integrity_check(self) -> IntegrityReport:
        """A's paired-play integrity check on the pairs the test has read so far
        (schedule order): does A do better in the second match of a deal?"""
        plays = [
            Play(t, role, self.params.a, seat, n, "", place)
            for t in range(self._next)
            for role, (seat, n, place) in sorted(self._a_plays.get(t, {}).items())
        ]
        return check_plays(plays, INTEGRITY_ALPHA, [self.params.a])

    def elo(self) -> tuple[float, float, float]:
        return elo_estimate(self.counts)

    def status(self) -> str:
        lower, upper = self.bounds
        elo, low, high = self.elo()
        n = int(sum(self.counts))
        return (
            f"LLR {self.llr_value:+.2f} [{lower:+.2f}, {upper:+.2f}]  {n} pairs  "
            f"Elo {elo:+.0f} [{low:+.0f}, {high:+.0f}]"
        )

    def outcomes(self) -> str:
        """The pair outcomes as fastchess users read them. Heads up a pair is
        two games with seats swapped: A above B is both games won (WW), level
        is one each (WL), below both lost (LL); Dudo has no draws, so the
        pentanomial's LD and WD classes stay empty. In a field a pair is one
        comparison of A's and B's places on a deal: above, level, below."""
        below, level, above = (int(c) for c in self.counts)
        if self.heads_up:
            wins, losses = 2 * above + level, 2 * below + level
            return (
                f"Games: {wins + losses}, Wins: {wins}, Losses: {losses}, Draws: 0, "
                f"Ptnml(0-2): [{below}, 0, {level}, 0, {above}]"
            )
        return f"Pairs: {above + level + below}, {self.params.a} above {self.params.b}: {above}, level: {level}, below: {below}"

    def summary(self) -> str:
        """The verdict in words."""
        p = self.params
        head = {
            "H1": f"H1 accepted: {p.a} is stronger than {p.b} by at least about {p.elo1:g} Elo",
            "H0": f"H0 accepted: {p.a} is not stronger than {p.b} by more than about {p.elo0:g} Elo",
            "inconclusive": "no decision within the maximum number of matches",
            "untrusted": f"H1 refused, the result cannot be trusted: the LLR reached H1's bound, but "
            f"{self._flag_words()}; {p.a} may remember deals through a side channel "
            f"(docs/sprt.md, Integrity)",
        }.get(self.verdict or "", "undecided so far")
        return f"{head} (alpha {p.alpha:g}, beta {p.beta:g}); {self.status()}"

    def _flag_words(self) -> str:
        mine = None if self.integrity is None else self.integrity.check_of(self.params.a)
        return "A is flagged" if mine is None else mine.words(INTEGRITY_ALPHA, 1)

    def to_data(self) -> dict[str, Any]:
        lower, upper = self.bounds
        elo, low, high = self.elo()
        return {
            **self.params.to_data(),
            "verdict": self.verdict,
            "llr": self.llr_value,
            "lower": lower,
            "upper": upper,
            "pairs": int(sum(self.counts)),
            "decided_at": self.decided_at,
            "counts": {"below": self.counts[0], "level": self.counts[1], "above": self.counts[2]},
            "outcomes": self.outcomes(),
            "elo": elo,
            "elo_low": low,
            "elo_high": high,
            "integrity": None if self.integrity is None else self.integrity.to_data(),
        }


def sprt_config_data(
    a: str,
    b: str,
    field_: Sequence[str],
    *,
    players: int | None,
    preset: str,
    elo0: float,
    elo1: float,
    alpha: float,
    beta: float,
    max_matches: int,
    seed: int | None,
    out: str | None,
    workers: int | None,
) -> dict[str, Any]:
    """The run config ``arena sprt`` plays (format sprt): A, B, then the field."""
    size = players if players is not None else (2 if not field_ else 4)

    def stem(x: str) -> str:  # a bot's name for the folder's name
        return x.rsplit("/", 1)[-1].rsplit(".", 1)[0]

    data: dict[str, Any] = {
        "name": f"sprt-{stem(a)}-{stem(b)}",
        "bots": [a, b, *field_],
        "players": size,
        "matches": max_matches,
        "format": "sprt",
        "variants": {preset: {"preset": preset}},
        "seed": seed,
        "sprt": {"elo0": elo0, "elo1": elo1, "alpha": alpha, "beta": beta},
    }
    if out is not None:
        data["out"] = out
    if workers is not None:
        data["workers"] = workers
    return data
