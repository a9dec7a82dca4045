"""Statistics of a run: Elo tables and rule-variant statistics, computed.

Input is only a :class:`arena.analysis.results.Results` (a loaded run folder),
output DataFrames; nothing here reads or writes a file or formats text
(:mod:`arena.analysis.format` turns the tables into text,
:mod:`arena.analysis.commands` loads a folder and writes the derived files).
The numerics live in :mod:`arena.analysis.ratings`, which sees plain int
rankings. docs/ratings.md explains the model and every statistic.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from arena.analysis import ratings as rt
from arena.analysis.integrity import integrity_of
from arena.analysis.results import Results
from arena.errors import FaultKind, RatingError, RunError
from arena.running.integrity import IntegrityReport


def _special() -> Any:
    """scipy.special (imported with the rating fit's scipy.optimize anyway)."""
    from scipy import special

    return special


def _binom_ppf(q: float, n: int, p: float) -> float:
    """scipy.stats.binom.ppf(q, n, p) for 0 < q < 1 and 0 < p < 1: the same
    ufunc it calls, without importing scipy.stats (most of a second, a large
    share of `arena stats`); scipy.stats itself where the ufunc is not found."""
    ufunc = getattr(_special()._ufuncs, "_binom_ppf", None)
    if ufunc is None:
        from scipy import stats

        return float(stats.binom.ppf(q, n, p))
    return float(ufunc(q, n, p))


def _rankdata(a: np.ndarray) -> np.ndarray:
    """Ranks along the last axis, 1-based, ties given their average rank:
    scipy.stats.rankdata's values (exact halves), without importing scipy.stats."""
    x = np.asarray(a, dtype=np.float64)
    order = np.argsort(x, axis=-1, kind="mergesort")
    ordered = np.take_along_axis(x, order, axis=-1)
    n = x.shape[-1]
    positions = np.broadcast_to(np.arange(1, n + 1, dtype=np.float64), x.shape)
    starts = np.ones(x.shape, dtype=bool)
    starts[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
    ends = np.ones(x.shape, dtype=bool)
    ends[..., :-1] = starts[..., 1:]
    first = np.maximum.accumulate(np.where(starts, positions, 0.0), axis=-1)  # each tie group's first position
    last = np.flip(np.minimum.accumulate(np.flip(np.where(ends, positions, np.inf), -1), axis=-1), -1)
    ranks = np.empty_like(x)
    np.put_along_axis(ranks, order, (first + last) / 2, axis=-1)
    return ranks


OVERALL = "all"
"""The ``variant`` label of the table fitted on every variant's matches together."""

BOT_FAULT_KINDS = frozenset(kind for kind in FaultKind if kind.charged_to_bot)
"""The fault kinds the protocol charges to the bot (docs/protocol.md, Faults). The other kind a record can
carry (``arena``: a failure of the arena, such as a lost worker or a sandbox
that could not start) is *administrative*: ``drop_admin_faults`` removes the
matches that had one."""

LEVEL = 0.95

RATING_COLUMNS = [
    "variant",
    "bot",
    "elo",
    "elo_low",
    "elo_high",
    "matches",
    "wins",
    "mean_place",
    "faults",
    "fault_kinds",
    "elo_seq",
]
STAT_COLUMNS = ["variant", "statistic", "value", "low", "high", "n"]

Progress = Callable[[str, int, int], None]
"""Told (what, done, total) as a long computation goes (the CLI draws a bar)."""

W, B, Q, N = (
    "95% Wilson interval",
    "95% bootstrap interval, whole matches resampled",
    "95% distribution-free interval (order statistics)",
    "no interval",
)
DEFINITIONS: dict[str, str] = {
    "matches": f"matches of the variant ({N})",
    "rounds_per_match": f"mean rounds in a match ({B})",
    "rounds_p10": f"10th percentile of rounds in a match: 1 match in 10 is this short or shorter ({Q})",
    "rounds_p50": f"median rounds in a match ({Q})",
    "rounds_p90": f"90th percentile of rounds in a match: 1 match in 10 is this long or longer ({Q})",
    "decisions_per_match": f"mean bids and calls in a match ({B})",
    "opener_win_rate": f"share of matches won by the player who opened round 1 ({W}); [Np]: at N-player tables",
    "opener_fair_share": f"what opener_win_rate would be without a first-player advantage: mean of 1/players ({N})",
    "fair_share": f"a seat's win rate at N-player tables if no seat had an advantage: 1/N ({N})",
    "seat_win_rate": f"seatS_win_rate[Np]: share of N-player matches won by seat S, after seating ({W})",
    "dudo_calls_per_match": f"mean dudo calls in a match ({B})",
    "dudo_right_share": f"share of dudo calls that were right: the bid was false ({W})",
    "calza_calls_per_match": f"mean calza calls in a match ({B})",
    "calza_right_share": f"share of calza calls that were right: exactly the bid; [a-b dice]: with that many dice "
    f"in play ({W})",
    "challenged_bid_true_share": f"share of called bids that were true ({W})",
    "bid_false_share": f"share of all bids that were false when made, by every die on the table: bluffs and "
    f"misjudgements ({B})",
    "palifico_rounds_per_match": f"mean palifico rounds in a match ({B})",
    "palifico_opener_lost_share": f"share of decided palifico rounds in which the palifico player (the opener) "
    f"lost a die ({B})",
    "palifico_dudo_right_share": f"share of dudo calls in palifico rounds that were right ({B})",
    "dice_lost_per_round": f"mean dice lost per decided round ({B})",
    "win_rate_holding": f"win_rate_holding[k]: share of players who started a round with exactly k dice and "
    f"went on to win the match ({B})",
    "faults_per_match": f"mean bot faults in a match ({B})",
    "faulted_match_share": f"share of matches with at least one fault ({W})",
    "strongest_bot_win_share": f"share of matches won by the best-rated bot at the table, by the variant's Elo "
    f"fit ({W}; the ratings' own uncertainty not included)",
    "elo_sd": "standard deviation of the bots' Elo in the variant: how much skill separates them "
    "(95% bootstrap interval of the rating fit)",
    "elo_change": "elo_change[bot]: the bot's Elo in this variant minus in the reference variant "
    "(95% bootstrap interval)",
    "rank_correlation": "rank_correlation[ref]: Spearman correlation of this variant's Elo order with the reference "
    "variant's (95% bootstrap interval)",
    # Only for a variant that plays dead_mans_calza or veteran_palifico (docs/rules.md).
    "dead_mans_calls_per_match": f"mean dead man's calzas in a match: calls by a player who was out ({B})",
    "dead_mans_right_share": f"share of dead man's calzas that were right: the caller came back ({W})",
    "dead_mans_return_win_share": f"share of players back by a dead man's calza who went on to win ({W})",
    "veteran_overrides_per_match": f"mean veteran overrides in a match: a palifico round's face changed by a "
    f"veteran ({B})",
    "rounds_change": "rounds_change[ref]: mean rounds in a match minus in the reference variant (the same rules "
    "without the variant), over matches with the same dice, seats and bots in both (95% bootstrap "
    "interval, pairs of matches resampled)",
    "opener_win_rate_change": "opener_win_rate_change[ref]: opener_win_rate minus the reference variant's, over "
    "the same pairs of matches (95% bootstrap interval, pairs of matches resampled)",
}


def is_admin_fault(kind: str) -> bool:
    """True for a fault kind the bot is not to blame for (see BOT_FAULT_KINDS)."""
    return kind not in BOT_FAULT_KINDS


def select(res: Results, variant: str | None = None, drop_admin_faults: bool = False) -> Results:
    """The same run restricted to one variant and/or without the matches that
    had an administrative fault."""
    keep = pd.Series(True, index=res.matches.index)
    if variant is not None:
        if variant not in set(res.matches["variant"].unique()) and variant not in res.variants:
            raise RunError(f"{res.path}: no variant {variant!r}; the run has {', '.join(res.variants) or 'no matches'}")
        keep &= res.matches["variant"] == variant
    if drop_admin_faults and len(res.faults):
        admin = res.faults.loc[res.faults["kind"].map(is_admin_fault), "match"]
        keep &= ~res.matches["match"].isin(set(admin))
    everything = bool(keep.all())
    by_variant_only = variant is not None and not (drop_admin_faults and len(res.faults))
    ids = set() if everything or by_variant_only else set(res.matches.loc[keep, "match"])

    def part(df: pd.DataFrame) -> pd.DataFrame:
        if everything and isinstance(df.index, pd.RangeIndex) and df.index.start == 0 and df.index.step == 1:
            return df  # every row of every table belongs to a kept match: no copy of every bid
        if by_variant_only:
            # Every table carries the variant: comparing one column is many times faster than a set lookup.
            rows = (df["variant"] == variant).to_numpy(dtype=bool)
        else:
            found, distinct = pd.factorize(df["match"])  # the ids looked up once each, not once per row
            rows = np.array([d in ids for d in distinct], dtype=bool)[found] if len(df) else np.zeros(0, bool)
        return df[rows].reset_index(drop=True)

    return Results(
        res.path,
        res.run,
        part(res.matches),
        part(res.seats),
        part(res.rounds),
        part(res.actions),
        part(res.faults),
        res.truncated,
        seats_only=res.seats_only,
    )


# --- ratings ----------------------------------------------------------------


def _lines_of(match: pd.Series, matches: pd.DataFrame | None) -> list[int] | np.ndarray:
    """Each row's match's ``line`` in ``matches`` (0 for a match not there)."""
    if matches is None:
        return [0] * len(match)
    if not matches["match"].is_unique:  # the last row of a match counts, as a dict of them would say
        line = dict(zip(matches["match"], matches["line"]))
        return [line.get(mid, 0) for mid in match]
    found, distinct = pd.factorize(match)  # the distinct ids looked up once each
    at = pd.Index(matches["match"]).get_indexer(distinct)
    lines = matches["line"].to_numpy(dtype=object)
    known = np.array([lines[i] if i >= 0 else 0 for i in at], dtype=object)
    return known[found] if len(found) else []


def rankings(seats: pd.DataFrame, matches: pd.DataFrame | None = None) -> tuple[list[str], list[list[int]]]:
    """Bot names (sorted) and each match's finishing order as bot indices,
    best first, matches in schedule order (the order sequential Elo uses)."""
    if seats.empty:
        return [], []
    bots = sorted(str(b) for b in seats["bot"].unique())
    index = {b: i for i, b in enumerate(bots)}
    order = seats.assign(_line=_lines_of(seats["match"], matches))
    order = order.sort_values(["_line", "match", "place"], kind="stable")
    codes = order["bot"].map(index).to_numpy(dtype=np.int64)
    mids = order["match"].to_numpy()
    cuts = np.flatnonzero(mids[1:] != mids[:-1]) + 1
    return bots, [part.tolist() for part in np.split(codes, cuts)]


@dataclass
class RatingReport:
    """Elo tables of a run: ``table`` (columns RATING_COLUMNS, one row per
    variant label and bot, best first), and per variant label the
    likelihood-of-superiority matrix ``los[v]`` (row beats column) and the
    head-to-head table ``h2h`` (long: variant, bot, opponent, above, met,
    share), plus the bootstrap Elo samples per label for comparisons."""

    table: pd.DataFrame
    los: dict[str, pd.DataFrame]
    h2h: pd.DataFrame
    samples: dict[str, pd.DataFrame] = field(repr=False)
    resamples: int
    seed: int
    prior_sd: float | None
    anchor: str | None
    anchor_elo: float
    drop_admin_faults: bool
    # The paired-play integrity check over the rated matches (None: the deals were not known).
    integrity: IntegrityReport | None = None


def _rate_part(
    label: str,
    part: Results,
    *,
    resamples: int,
    seed: int,
    prior_sd: float | None,
    anchor: str | None,
    anchor_elo: float,
    k: float,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    bots, ranks = rankings(part.seats, part.matches)
    anchor_idx: int | None = None
    if anchor is not None:
        if anchor not in bots:
            raise RatingError(f"anchor bot {anchor!r} played no match in {label!r}; bots: {', '.join(bots)}")
        anchor_idx = bots.index(anchor)
    rating = rt.rate(
        len(bots),
        ranks,
        resamples=resamples,
        seed=seed,
        level=LEVEL,
        prior_sd=prior_sd,
        anchor=anchor_idx,
        anchor_elo=anchor_elo,
        progress=progress,
    )
    seq = rt.sequential_elo(len(bots), ranks, k=k, start=anchor_elo)
    if anchor_idx is not None:
        # On the fit's scale: K-factor Elo moves by differences only, so shifting
        # every rating to put the anchor at anchor_elo changes no comparison.
        seq = seq - seq[anchor_idx] + anchor_elo
    s = part.seats
    per_match = s.groupby("bot").agg(
        matches=("match", "nunique"),
        wins=("place", lambda p: int((p == 1).sum())),
        mean_place=("place", "mean"),
    )
    faults = part.faults.groupby("bot")["kind"]
    fault_count = faults.size()
    kinds = faults.agg(lambda k: " ".join(f"{n}:{c}" for n, c in sorted(k.value_counts().items())))
    table = (
        pd.DataFrame(
            {
                "variant": label,
                "bot": bots,
                "elo": rating.elo,
                "elo_low": rating.low,
                "elo_high": rating.high,
                "matches": per_match.loc[bots, "matches"].astype(int).tolist(),
                "wins": per_match.loc[bots, "wins"].astype(int).tolist(),
                "mean_place": per_match.loc[bots, "mean_place"].astype(float).tolist(),
                "faults": [int(fault_count.get(b, 0)) for b in bots],
                "fault_kinds": [str(kinds.get(b, "")) for b in bots],
                "elo_seq": seq,
            }
        )
        .sort_values(["elo", "bot"], ascending=[False, True], kind="stable")
        .reset_index(drop=True)
    )
    los = pd.DataFrame(rating.los, index=bots, columns=bots)
    above, met = rt.head_to_head(len(bots), ranks)
    a, b = np.nonzero(met)
    h2h = pd.DataFrame(
        {
            "variant": label,
            "bot": [bots[i] for i in a],
            "opponent": [bots[j] for j in b],
            "above": above[a, b],
            "met": met[a, b],
            "share": above[a, b] / met[a, b],
        }
    )
    samples = pd.DataFrame(rating.samples, columns=bots)
    return table, los, h2h, samples


def rate_results(
    res: Results,
    *,
    variant: str | None = None,
    drop_admin_faults: bool = False,
    resamples: int = 200,
    seed: int = 0,
    prior_sd: float | None = rt.PRIOR_SD_ELO,
    anchor: str | None = None,
    anchor_elo: float = 1500.0,
    k: float = 16.0,
    progress: Progress | None = None,
    seeds: Mapping[str, int] | None = None,
) -> RatingReport:
    """Elo tables for every variant and over all variants (label
    :data:`OVERALL`), or for ``variant`` alone. Seeded: the same options give
    the same table. ``progress`` is told ("rating LABEL", resamples done, resamples).
    The report carries the paired-play integrity check of the rated matches
    (:mod:`arena.analysis.integrity`), whose deals are the matches' seeds
    (``seeds`` by match id when ``res`` was loaded without them)."""
    # Rating reads only the seats, matches and faults: the rounds and bids are not split by variant.
    base = select(replace(res, rounds=res.rounds.iloc[:0], actions=res.actions.iloc[:0]), None, drop_admin_faults)
    if base.matches.empty:
        raise RunError(f"{res.path}: no finished match to rate yet")
    if variant is not None:
        parts = [(variant, select(base, variant))]
    else:
        played = set(base.matches["variant"].unique())
        present = [v for v in res.variants if v in played]
        parts = [(v, select(base, v)) for v in present]
        label = OVERALL if OVERALL not in present else OVERALL + "-variants"
        parts = [(label, base if len(present) > 1 else parts[0][1])] + parts
    tables, los, h2hs, samples = [], {}, [], {}
    done: dict[int, tuple[pd.DataFrame, ...]] = {}
    for label, part in parts:
        if part.matches.empty:
            raise RunError(f"{res.path}: variant {label!r} has no finished match to rate")
        key = id(part)
        if key not in done:  # one variant: "all" is that variant's table, not a refit
            tell = None if progress is None else (lambda d, t, what=f"rating {label}": progress(what, d, t))
            done[key] = _rate_part(
                label,
                part,
                resamples=resamples,
                seed=seed,
                prior_sd=prior_sd,
                anchor=anchor,
                anchor_elo=anchor_elo,
                k=k,
                progress=tell,
            )
        t, lo, h, sa = done[key]
        tables.append(t.assign(variant=label))
        los[label] = lo
        h2hs.append(h.assign(variant=label))
        samples[label] = sa
    return RatingReport(
        pd.concat(tables, ignore_index=True)[RATING_COLUMNS],
        los,
        pd.concat(h2hs, ignore_index=True),
        samples,
        resamples,
        seed,
        prior_sd,
        anchor,
        anchor_elo,
        drop_admin_faults,
        integrity_of(base, seeds),  # the whole run, whatever the variant shown: a deal's plays span variants
    )


# --- variant statistics -----------------------------------------------------


@functools.cache
def _z(level: float) -> float:
    """The normal quantile of a two-sided interval at ``level`` (arena.elo.Z95 at 95%)."""
    return float(_special().ndtri(0.5 + level / 2))  # scipy.stats.norm.ppf's very ufunc


def wilson(successes: int, n: int, level: float = LEVEL) -> tuple[float, float, float]:
    """(share, low, high): the Wilson score interval; NaN when n is 0."""
    if n <= 0:
        return math.nan, math.nan, math.nan
    z = _z(level)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return p, max(0.0, centre - half), min(1.0, centre + half)


BOOT_RESAMPLES = 2000
"""Resamples for the percentile-bootstrap intervals of means and ratios."""

DICE_BANDS = ((1, 5), (6, 10), (11, 15), (16, 20), (21, 30), (31, 10_000))
"""Dice in play, in bands, for calza success by dice in play."""


class _Resampler:
    """Seeded match resamples shared by every bootstrap interval of one
    variant: ``counts[b, m]`` is how often match m is drawn in resample b.
    A statistic given as per-match totals (a numerator and a denominator)
    then costs one matrix product for all resamples, and resampling whole
    matches keeps the rounds and bids of one match together (they are not
    independent)."""

    def __init__(self, n: int, seed: int, resamples: int = BOOT_RESAMPLES) -> None:
        self.n = n
        rng = np.random.default_rng(seed)
        if n >= 2:
            draws = rng.integers(0, n, (resamples, n))
            draws += n * np.arange(resamples)[:, None]  # in place: the array is tens of MB on a league
            self.counts = np.bincount(draws.ravel(), minlength=resamples * n).reshape(resamples, n).astype(float)
        else:
            self.counts = np.zeros((0, n))

    def ratio(self, num: ArrayLike, den: ArrayLike) -> tuple[float, float, float]:
        """sum(num) / sum(den) and its percentile interval (NaN without data or below 2 matches)."""
        return self.ratios([(num, den)])[0]

    def ratios(self, pairs: Sequence[tuple[ArrayLike, ArrayLike]]) -> list[tuple[float, float, float]]:
        """:meth:`ratio` of each (num, den) pair, the resampled sums of all of
        them in one matrix product: the counts (resamples x matches, tens of MB
        on a league) are read once, not twice per statistic."""
        arrays = [(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)) for a, b in pairs]
        live = [i for i, (a, b) in enumerate(arrays) if len(a) != 0 and b.sum() != 0]
        sums = (
            self.counts @ np.column_stack([x for i in live for x in arrays[i]])
            if live and self.n >= 2
            else np.zeros((0, 0))
        )
        at = {i: j for j, i in enumerate(live)}
        tail = (1 - LEVEL) / 2
        out: list[tuple[float, float, float]] = []
        for i, (a, b) in enumerate(arrays):
            if i not in at:
                out.append((math.nan, math.nan, math.nan))
                continue
            value = float(a.sum() / b.sum())
            if self.n < 2:
                out.append((value, math.nan, math.nan))
                continue
            sa, sb = sums[:, 2 * at[i]], sums[:, 2 * at[i] + 1]
            keep = sb > 0
            with np.errstate(invalid="ignore", divide="ignore"):
                boot = sa[keep] / sb[keep]
            low, high = np.quantile(boot, [tail, 1 - tail])
            out.append((value, float(low), float(high)))
        return out


def mean_interval(values: ArrayLike, seed: int = 0) -> tuple[float, float, float, int]:
    """(mean, low, high, n): the mean with a seeded percentile-bootstrap
    interval (unlike a t interval it never leaves the range of the data, so
    a rare count such as calza calls per match is never given a negative
    lower end). No interval below 2 values."""
    x = np.asarray(pd.Series(values, dtype="float64").dropna(), dtype=np.float64)
    if len(x) == 0:
        return math.nan, math.nan, math.nan, 0
    v, low, high = _Resampler(len(x), seed).ratio(x, np.ones(len(x)))
    return v, low, high, len(x)


def ratio_interval(num: ArrayLike, den: ArrayLike, seed: int = 0) -> tuple[float, float, float, int]:
    """(sum(num) / sum(den), low, high, n): a ratio of per-match totals with
    a percentile-bootstrap interval that resamples whole matches (rounds of
    one match are not independent). n is the number of matches."""
    a = np.asarray(num, dtype=np.float64)
    v, low, high = _Resampler(len(a), seed).ratio(a, np.asarray(den, dtype=np.float64))
    return v, low, high, len(a)


def quantile_interval(values: ArrayLike, q: float) -> tuple[float, float, float, int]:
    """(q-quantile, low, high, n): the sample quantile (the order statistic
    of rank ceil(q n)) with the distribution-free 95% interval between two
    order statistics, whose ranks come from the Binomial(n, q) law of how
    many values fall below the true quantile. NaN ends where n is too small
    for the interval to exist."""
    x = np.sort(np.asarray(pd.Series(values, dtype="float64").dropna(), dtype=np.float64))
    n = len(x)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    value = float(x[max(0, math.ceil(q * n) - 1)])
    tail = (1 - LEVEL) / 2
    lo_rank = int(_binom_ppf(tail, n, q))  # P(B <= lo_rank - 1) <= tail
    hi_rank = int(_binom_ppf(1 - tail, n, q)) + 1
    low = float(x[lo_rank - 1]) if lo_rank >= 1 else math.nan
    high = float(x[hi_rank - 1]) if hi_rank <= n else math.nan
    return value, low, high, n


StatRow = tuple[str, str, float, float, float, float]
"""A row of the statistics table (STAT_COLUMNS; ``n`` a count, or NaN)."""


def _variant_rows(
    label: str,
    part: Results,
    seed: int = 0,
    elo: dict[str, float] | None = None,
    elo_samples: pd.DataFrame | None = None,
) -> list[StatRow]:
    """Every statistic of one variant's matches (DEFINITIONS says what each is)."""
    # Only the columns read here: every filter below copies what it keeps of each column.
    m = part.matches[["match", "rounds_played", "decisions", "first", "winner", "players", "palifico_rounds", "faults"]]
    r = part.rounds[
        ["match", "call", "call_right", "dice_in_play", "bid_true", "palifico", "change_seat", "delta", "opener"]
    ]
    seats = part.seats[[c for c in ("match", "bot", "seat", "players", "place", "held") if c in part.seats]]
    acts = part.actions
    ids = m["match"].to_numpy()
    boot = _Resampler(len(m), seed)
    rows: list[StatRow] = [(label, "matches", float(len(m)), math.nan, math.nan, len(m))]

    index = pd.Index(ids)

    # The bootstrap rows are computed together at the end (one matrix product,
    # _Resampler.ratios); until then each holds its place in ``rows``.
    pending: list[tuple[int, np.ndarray, np.ndarray]] = []

    def later(name: str, num: np.ndarray, den: np.ndarray, n: int) -> None:
        pending.append((len(rows), num, den))
        rows.append((label, name, math.nan, math.nan, math.nan, n))

    def totals(values: ArrayLike, codes: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.bincount(codes, weights=np.asarray(values, dtype=np.float64), minlength=len(ids))
        return out

    def ratio_row(name: str, hits: ArrayLike, of: ArrayLike, match: pd.Series, n: int | None = None) -> None:
        """A share or mean over rows of a table (rounds, bids, seats), by whole-match resampling."""
        # Each row's match as its position in ``ids``: factorised first (a table
        # has far fewer matches than rows), so only the distinct ids are looked up.
        found, distinct = pd.factorize(match)
        codes = index.get_indexer(distinct)[found]
        later(name, totals(hits, codes), totals(of, codes), int(np.asarray(of, dtype=float).sum()) if n is None else n)

    def mean_row(name: str, values: pd.Series) -> None:
        x = values.astype("float64").to_numpy()
        later(name, x, np.ones(len(x)), len(x))

    def share_row(name: str, k: int, n: int) -> None:
        v, lo, hi = wilson(k, n)
        rows.append((label, name, v, lo, hi, n))

    def fixed_row(name: str, value: float, n: int) -> None:
        rows.append((label, name, value, math.nan, math.nan, n))

    # Game length.
    mean_row("rounds_per_match", m["rounds_played"])
    for q in (10, 50, 90):
        v, lo, hi, n = quantile_interval(m["rounds_played"], q / 100)
        rows.append((label, f"rounds_p{q}", v, lo, hi, n))
    mean_row("decisions_per_match", m["decisions"])
    # First player and seats, per table size against that size's fair share.
    known = m[m["first"].notna()]
    share_row("opener_win_rate", int((known["winner"] == known["first"]).sum()), len(known))
    # Pooled over table sizes the opener's fair share is the mean of 1/players.
    fixed_row("opener_fair_share", float((1.0 / m["players"].astype(float)).mean()), len(m))
    seat_no = seats["seat"].to_numpy(dtype=np.int64, na_value=-1)
    seat_size = seats["players"].to_numpy(dtype=np.int64, na_value=-1)
    seat_won = (seats["place"] == 1).fillna(False).to_numpy(dtype=bool)  # a missing place is no win
    for size in sorted(int(p) for p in m["players"].unique()):
        at = known[known["players"] == size]
        fixed_row(f"fair_share[{size}p]", 1.0 / size, len(m[m["players"] == size]))
        share_row(f"opener_win_rate[{size}p]", int((at["winner"] == at["first"]).sum()), len(at))
        for s in range(size):
            here = (seat_size == size) & (seat_no == s)
            share_row(f"seat{s}_win_rate[{size}p]", int(seat_won[here].sum()), int(here.sum()))
    # Calls.
    calls = r[r["call"].notna()]
    for kind in ("dudo", "calza"):
        counts = (r["call"] == kind).groupby(r["match"]).sum().reindex(ids, fill_value=0)
        mean_row(f"{kind}_calls_per_match", counts)
        these = calls[calls["call"] == kind]
        judged = these["call_right"].dropna()
        share_row(f"{kind}_right_share", int(judged.sum()), len(judged))
    calza = calls[(calls["call"] == "calza") & calls["call_right"].notna()]
    dice = calza["dice_in_play"].astype(float)
    for lo_d, hi_d in DICE_BANDS:
        band = calza[(dice >= lo_d) & (dice <= hi_d)]
        if len(band):
            share_row(
                f"calza_right_share[{lo_d}-{hi_d} dice]" if hi_d < 10_000 else f"calza_right_share[{lo_d}+ dice]",
                int(band["call_right"].astype(bool).sum()),
                len(band),
            )
    judged = calls["bid_true"].dropna()
    share_row("challenged_bid_true_share", int(judged.sum()), len(judged))
    # Bluffs: every bid, true or false when made (by all the dice on the table).
    bids = acts[(acts["action"] == "bid") & acts["true"].notna()]
    ratio_row("bid_false_share", (~bids["true"].astype(bool)).astype(float), np.ones(len(bids)), bids["match"])
    # Palifico.
    mean_row("palifico_rounds_per_match", m["palifico_rounds"])
    pal = r[r["palifico"] & r["change_seat"].notna()]
    lost = pal[pal["delta"].astype(float) < 0]
    ratio_row(
        "palifico_opener_lost_share",
        (lost["change_seat"] == lost["opener"]).reindex(pal.index, fill_value=False).astype(float),
        np.ones(len(pal)),
        pal["match"],
    )
    pal_dudo = pal[(pal["call"] == "dudo") & pal["call_right"].notna()]
    ratio_row(
        "palifico_dudo_right_share", pal_dudo["call_right"].astype(float), np.ones(len(pal_dudo)), pal_dudo["match"]
    )
    # Dice.
    decided = r[r["delta"].notna()]
    lost_dice = (-decided["delta"].astype(float)).clip(lower=0)
    ratio_row("dice_lost_per_round", lost_dice, np.ones(len(decided)), decided["match"], n=len(m))
    if "held" in seats and seats["held"].notna().any():
        held = seats["held"].fillna(0).astype(np.int64).to_numpy()
        won = (seats["place"] == 1).to_numpy(dtype=float)
        top = int(held.max()).bit_length() - 1
        for k in range(1, top + 1):
            has = (held >> k) & 1 == 1
            if has.any():
                ratio_row(f"win_rate_holding[{k}]", won[has], np.ones(int(has.sum())), seats["match"][has])
    # Faults.
    mean_row("faults_per_match", m["faults"])
    share_row("faulted_match_share", int((m["faults"] > 0).sum()), len(m))
    # Skill: how often the best-rated bot at the table won, and how far apart the ratings are.
    if elo:
        best = seats.assign(_elo=seats["bot"].map(elo)).groupby("match")["_elo"].transform("max")
        strongest = seats[seats["bot"].map(elo) == best]
        has_win = strongest[strongest["place"] == 1]["match"].nunique()
        share_row("strongest_bot_win_share", int(has_win), int(strongest["match"].nunique()))
        bots_here = sorted(set(seats["bot"]) & set(elo))
        if len(bots_here) >= 2:
            spread = float(np.std([elo[b] for b in bots_here], ddof=0))
            if elo_samples is not None and len(elo_samples):
                sd = elo_samples[bots_here].to_numpy().std(axis=1, ddof=0)
                lo_s, hi_s = np.quantile(sd, [(1 - LEVEL) / 2, 1 - (1 - LEVEL) / 2])
            else:
                lo_s = hi_s = math.nan
            rows.append((label, "elo_sd", spread, float(lo_s), float(hi_s), len(bots_here)))
    for (slot, _, _), (v, lo, hi) in zip(pending, boot.ratios([(num, den) for _, num, den in pending])):
        rows[slot] = (label, rows[slot][1], v, lo, hi, rows[slot][5])
    return rows


_BID_COLUMNS = ["match", "variant", "action", "true"]  # what _variant_rows reads of the actions


def variant_stats(
    res: Results,
    *,
    variant: str | None = None,
    drop_admin_faults: bool = False,
    report: RatingReport | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per variant and statistic (columns STAT_COLUMNS); DEFINITIONS
    says what each statistic is and which interval it carries. The skill
    statistics need ``report`` (the run's Elo tables, from :func:`rate_results`)."""
    if res.seats_only:
        raise RunError(f"{res.path}: variant statistics need the match records, not matches.parquet alone")
    # The bids are the largest table by far: only the columns the statistics read are split by variant.
    base = select(replace(res, actions=res.actions[_BID_COLUMNS]), variant, drop_admin_faults)
    played = set(base.matches["variant"].unique())
    names = [variant] if variant is not None else [v for v in res.variants if v in played]
    rows: list[StatRow] = []
    for v in names:
        elo = samples = None
        if report is not None and v in report.los:
            t = report.table[report.table["variant"] == v]
            elo = dict(zip(t["bot"], t["elo"].astype(float)))
            samples = report.samples.get(v)
        rows += _variant_rows(v, select(base, v), seed, elo, samples)
        rows += _rule_variant_rows(v, res, base, seed)
    return _typed(pd.DataFrame(rows, columns=STAT_COLUMNS))


_SPECIAL_KEYS = ("dead_mans_calza", "dead_mans_dice", "veteran_palifico", "veteran_from")


def _rule_variant_rows(label: str, res: Results, base: Results, seed: int) -> list[StatRow]:
    """The rows of a variant that plays dead man's calza or veteran palifico
    (none otherwise): how often its special move happens, read from the
    records, and how it changes match length and the opener's chance against
    the reference variant, the run's variant with the same rules without it."""
    from arena.engine.rules import Bid, Calza  # analysis sits above the engine

    variants: dict[str, dict[str, Any]] = {str(k): dict(v) for k, v in (res.run.get("variants") or {}).items()}
    rules = variants.get(label)
    if rules is None or not (rules.get("dead_mans_calza") or rules.get("veteran_palifico")):
        return []
    part = select(base, label)
    ids = [str(m) for m in part.matches["match"]]
    records = res.records_of(ids)
    rows: list[StatRow] = []
    calls, right, back, back_won, overrides = [], 0, 0, 0, []
    for mid in ids:
        rec = records.get(mid)
        if rec is None:
            continue
        made = changed = 0
        returned: set[int] = set()
        for rnd in rec.rounds:
            last = rnd.actions[-1] if rnd.actions else None
            if (
                rnd.fault is None
                and rnd.change is not None
                and last is not None
                and type(last.action) is Calza
                and not rnd.dice[last.seat]
            ):
                made += 1
                if rnd.change.delta > 0:
                    right += 1
                    returned.add(last.seat)
            if rnd.palifico:
                face = None
                for seat, action in rnd.actions:
                    if type(action) is not Bid:
                        continue
                    one_die = rec.rules.palifico_change_face and len(rnd.dice[seat]) == 1
                    if face is not None and action.face != face and not one_die:
                        changed += 1
                    face = action.face
        calls.append(made)
        overrides.append(changed)
        back += len(returned)
        back_won += sum(1 for s in returned if rec.placements[s] == 1)
    if rules.get("dead_mans_calza"):
        v, lo, hi, n = mean_interval(calls, seed)
        rows.append((label, "dead_mans_calls_per_match", v, lo, hi, n))
        for name, k, of in (
            ("dead_mans_right_share", right, sum(calls)),
            ("dead_mans_return_win_share", back_won, back),
        ):
            v, lo, hi = wilson(k, of)
            rows.append((label, name, v, lo, hi, of))
    if rules.get("veteran_palifico"):
        v, lo, hi, n = mean_interval(overrides, seed)
        rows.append((label, "veteran_overrides_per_match", v, lo, hi, n))
    plain = {k: v for k, v in rules.items() if k not in _SPECIAL_KEYS}
    ref = next(
        (
            name
            for name, r in variants.items()
            if name != label
            and {k: v for k, v in r.items() if k not in _SPECIAL_KEYS} == plain
            and not any(k in r for k in _SPECIAL_KEYS)
        ),
        None,
    )
    if ref is None:
        return rows
    pairs = _paired(part, select(base, ref))
    if len(pairs):
        for name, column in (("rounds_change", "rounds"), ("opener_win_rate_change", "opener_won")):
            v, lo, hi, n = mean_interval(pairs[f"{column}_x"] - pairs[f"{column}_y"], seed)
            rows.append((label, f"{name}[{ref}]", v, lo, hi, n))
    return rows


def _paired(a: Results, b: Results) -> pd.DataFrame:
    """Matches of ``a`` and ``b`` with the same dice seed and the same bots in
    the same seats (one table of the schedule under two variants): their
    rounds and whether the opener won, as ``*_x`` (``a``) and ``*_y`` (``b``)."""

    def keyed(part: Results) -> pd.DataFrame:
        m = part.matches
        bots = part.seats.sort_values(["match", "seat"]).groupby("match", sort=False)["bot"].agg(tuple)
        out = pd.DataFrame(
            {
                "match": m["match"],
                "seed": m["seed"],
                "rounds": m["rounds_played"].astype(float),
                "opener_won": (m["winner"] == m["first"]).fillna(False).astype(float),
            }
        )
        out["bots"] = out["match"].map(bots)
        return out.drop_duplicates(["seed", "bots"])

    return keyed(a).merge(keyed(b), on=["seed", "bots"])


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    df["n"] = df["n"].astype("Int64")
    return df


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    if len(a) < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return math.nan
    # scipy.stats.spearmanr's statistic: the correlation matrix of the ranks, its [1, 0].
    ranked = np.column_stack([_rankdata(a), _rankdata(b)])
    return float(np.corrcoef(ranked, rowvar=False)[1, 0])


def _spearman_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row of ``a`` with the same row of ``b`` (average
    ranks for ties, as scipy's spearmanr; NaN where a row is constant)."""
    if a.shape[1] < 2:
        return np.full(a.shape[0], math.nan)
    ra, rb = _rankdata(a), _rankdata(b)
    ra -= ra.mean(axis=1, keepdims=True)
    rb -= rb.mean(axis=1, keepdims=True)
    den = np.sqrt((ra * ra).sum(axis=1) * (rb * rb).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = np.where(den > 0, (ra * rb).sum(axis=1) / np.where(den > 0, den, 1.0), math.nan)
    return out


def variant_comparison(report: RatingReport, baseline: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """How the rules move the table.

    ``changes``: variant, bot, elo, baseline_elo, change, low, high (95%
    bootstrap interval of the change: the variants' matches are resampled
    independently, so resample b of one minus resample b of the other).
    ``correlation``: variant, baseline, spearman (rank correlation of the two
    Elo tables over the bots in both), low, high, bots.
    The baseline defaults to the first variant.
    """
    labels = [v for v in report.los if not v.startswith(OVERALL)]
    if baseline is None:
        baseline = labels[0] if labels else None
    if baseline not in report.los:
        raise RunError(f"baseline variant {baseline!r} is not in the report ({', '.join(labels)})")
    t = report.table
    base = t[t["variant"] == baseline].set_index("bot")["elo"]
    base_s = report.samples[baseline]
    changes, corr = [], []
    for v in labels:
        if v == baseline:
            continue
        cur = t[t["variant"] == v].set_index("bot")["elo"]
        common = [b for b in base.index if b in cur.index]
        cur_s = report.samples[v]
        for b in common:
            diff = cur_s[b].to_numpy() - base_s[b].to_numpy()
            lo, hi = np.quantile(diff, [(1 - LEVEL) / 2, 1 - (1 - LEVEL) / 2])
            changes.append((v, b, float(cur[b]), float(base[b]), float(cur[b] - base[b]), float(lo), float(hi)))
        rho = _spearman(cur[common].to_numpy(), base[common].to_numpy())
        boot = _spearman_rows(cur_s[common].to_numpy(), base_s[common].to_numpy())
        boot = boot[~np.isnan(boot)]
        lo, hi = np.quantile(boot, [(1 - LEVEL) / 2, 1 - (1 - LEVEL) / 2]) if len(boot) else (math.nan, math.nan)
        corr.append((v, baseline, rho, float(lo), float(hi), len(common)))
    return (
        pd.DataFrame(changes, columns=["variant", "bot", "elo", "baseline_elo", "change", "low", "high"]),
        pd.DataFrame(corr, columns=["variant", "baseline", "spearman", "low", "high", "bots"]),
    )


def comparison_rows(changes: pd.DataFrame, correlation: pd.DataFrame) -> pd.DataFrame:
    """The between-variant figures as variant_stats rows: ``elo_change[bot]``
    and ``rank_correlation[baseline]``."""
    rows: list[tuple[Any, ...]] = [
        (c.variant, f"elo_change[{c.bot}]", c.change, c.low, c.high, math.nan) for c in changes.itertuples()
    ]
    rows += [
        (c.variant, f"rank_correlation[{c.baseline}]", c.spearman, c.low, c.high, c.bots)
        for c in correlation.itertuples()
    ]
    return _typed(pd.DataFrame(rows, columns=STAT_COLUMNS))


def run_stats(
    res: Results,
    *,
    variant: str | None = None,
    drop_admin_faults: bool = False,
    resamples: int = 200,
    seed: int = 0,
    report: RatingReport | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """The variant statistics of a run (:func:`variant_stats`), the skill
    rows from one rating of the run (``report``, else rated here with
    ``resamples`` bootstrap resamples seeded by ``seed``); with several
    variants (and none singled out) the between-variant rows are added
    (:func:`comparison_rows`)."""
    if report is None:
        report = rate_results(
            res, variant=variant, drop_admin_faults=drop_admin_faults, resamples=resamples, seed=seed, progress=progress
        )
    table = variant_stats(res, variant=variant, drop_admin_faults=drop_admin_faults, report=report)
    if variant is None and len(set(res.matches["variant"])) > 1:
        table = pd.concat([table, comparison_rows(*variant_comparison(report))], ignore_index=True)
    return table


def base_name(statistic: str) -> str:
    """``seat0_win_rate[4p]`` -> ``seat_win_rate``: the key of DEFINITIONS."""
    name = statistic.split("[", 1)[0]
    return "seat_win_rate" if name.startswith("seat") and name.endswith("_win_rate") else name


def definition(statistic: str) -> str:
    """The one-line definition of a statistic of the table (its interval included)."""
    return DEFINITIONS.get(base_name(statistic), "")
