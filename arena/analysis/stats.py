"""Statistics of a run: Elo tables and rule-variant statistics, computed.

Input is only a :class:`arena.analysis.results.Results` (a loaded run folder),
output DataFrames; nothing here reads or writes a file or formats text
(:mod:`arena.analysis.format` turns the tables into text,
:mod:`arena.analysis.commands` loads a folder and writes the derived files).
The numerics live in :mod:`arena.analysis.ratings`, which sees plain int
rankings. docs/ratings.md explains the model and every statistic.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats as sps

from arena.analysis import ratings as rt
from arena.analysis.results import Results
from arena.errors import FaultKind, RatingError, RunError

OVERALL = "all"
"""The ``variant`` label of the table fitted on every variant's matches together."""

BOT_FAULT_KINDS = frozenset(kind for kind in FaultKind if kind.charged_to_bot)
"""The fault kinds PROTOCOL.md charges to the bot. The other kind a record can
carry (``arena``: a failure of the arena, such as a lost worker or a sandbox
that could not start) is *administrative*: ``drop_admin_faults`` removes the
matches that had one."""

LEVEL = 0.95

RATING_COLUMNS = [
    "variant", "bot", "elo", "elo_low", "elo_high", "matches", "wins", "mean_place",
    "faults", "fault_kinds", "elo_seq",
]
STAT_COLUMNS = ["variant", "statistic", "value", "low", "high", "n"]


def is_admin_fault(kind: str) -> bool:
    """True for a fault kind the bot is not to blame for (see BOT_FAULT_KINDS)."""
    return kind not in BOT_FAULT_KINDS


def select(res: Results, variant: str | None = None, drop_admin_faults: bool = False) -> Results:
    """The same run restricted to one variant and/or without the matches that
    had an administrative fault."""
    keep = pd.Series(True, index=res.matches.index)
    if variant is not None:
        if variant not in set(res.matches["variant"]) and variant not in res.variants:
            raise RunError(
                f"{res.path}: no variant {variant!r}; the run has {', '.join(res.variants) or 'no matches'}"
            )
        keep &= res.matches["variant"] == variant
    if drop_admin_faults and len(res.faults):
        admin = res.faults.loc[res.faults["kind"].map(is_admin_fault), "match"]
        keep &= ~res.matches["match"].isin(set(admin))
    ids = set(res.matches.loc[keep, "match"])

    def part(df: pd.DataFrame) -> pd.DataFrame:
        return df[df["match"].isin(ids)].reset_index(drop=True)

    return Results(
        res.path, res.run, part(res.matches), part(res.seats), part(res.rounds),
        part(res.actions), part(res.faults), res.truncated,
    )


# --- ratings ----------------------------------------------------------------


def rankings(seats: pd.DataFrame, matches: pd.DataFrame | None = None) -> tuple[list[str], list[list[int]]]:
    """Bot names (sorted) and each match's finishing order as bot indices,
    best first, matches in schedule order (the order sequential Elo uses)."""
    if seats.empty:
        return [], []
    bots = sorted(str(b) for b in seats["bot"].unique())
    index = {b: i for i, b in enumerate(bots)}
    line = dict(zip(matches["match"], matches["line"])) if matches is not None else {}
    order = seats.assign(_line=[line.get(mid, 0) for mid in seats["match"]])
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


def _rate_part(
    label: str, part: Results, *, resamples: int, seed: int, prior_sd: float | None,
    anchor: str | None, anchor_elo: float, k: float,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    bots, ranks = rankings(part.seats, part.matches)
    anchor_idx: int | None = None
    if anchor is not None:
        if anchor not in bots:
            raise RatingError(f"anchor bot {anchor!r} played no match in {label!r}; bots: {', '.join(bots)}")
        anchor_idx = bots.index(anchor)
    rating = rt.rate(
        len(bots), ranks, resamples=resamples, seed=seed, level=LEVEL, prior_sd=prior_sd,
        anchor=anchor_idx, anchor_elo=anchor_elo,
    )
    seq = rt.sequential_elo(len(bots), ranks, k=k, start=anchor_elo)
    s = part.seats
    per_match = s.groupby("bot").agg(
        matches=("match", "nunique"), wins=("place", lambda p: int((p == 1).sum())),
        mean_place=("place", "mean"),
    )
    faults = part.faults.groupby("bot")["kind"]
    fault_count = faults.size()
    kinds = faults.agg(lambda k: " ".join(f"{n}:{c}" for n, c in sorted(k.value_counts().items())))
    table = pd.DataFrame({
        "variant": label, "bot": bots, "elo": rating.elo, "elo_low": rating.low, "elo_high": rating.high,
        "matches": per_match.loc[bots, "matches"].astype(int).tolist(),
        "wins": per_match.loc[bots, "wins"].astype(int).tolist(),
        "mean_place": per_match.loc[bots, "mean_place"].astype(float).tolist(),
        "faults": [int(fault_count.get(b, 0)) for b in bots],
        "fault_kinds": [str(kinds.get(b, "")) for b in bots],
        "elo_seq": seq,
    }).sort_values(["elo", "bot"], ascending=[False, True], kind="stable").reset_index(drop=True)
    los = pd.DataFrame(rating.los, index=bots, columns=bots)
    above, met = rt.head_to_head(len(bots), ranks)
    a, b = np.nonzero(met)
    h2h = pd.DataFrame({
        "variant": label, "bot": [bots[i] for i in a], "opponent": [bots[j] for j in b],
        "above": above[a, b], "met": met[a, b], "share": above[a, b] / met[a, b],
    })
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
) -> RatingReport:
    """Elo tables for every variant and over all variants (label
    :data:`OVERALL`), or for ``variant`` alone. Seeded: the same options give
    the same table."""
    base = select(res, None, drop_admin_faults)
    if base.matches.empty:
        raise RunError(f"{res.path}: no finished match to rate yet")
    if variant is not None:
        parts = [(variant, select(base, variant))]
    else:
        present = [v for v in res.variants if v in set(base.matches["variant"])]
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
            done[key] = _rate_part(label, part, resamples=resamples, seed=seed, prior_sd=prior_sd,
                                   anchor=anchor, anchor_elo=anchor_elo, k=k)
        t, lo, h, sa = done[key]
        tables.append(t.assign(variant=label))
        los[label] = lo
        h2hs.append(h.assign(variant=label))
        samples[label] = sa
    return RatingReport(
        pd.concat(tables, ignore_index=True)[RATING_COLUMNS], los, pd.concat(h2hs, ignore_index=True),
        samples, resamples, seed, prior_sd, anchor, anchor_elo, drop_admin_faults,
    )


# --- variant statistics -----------------------------------------------------


def wilson(successes: int, n: int, level: float = LEVEL) -> tuple[float, float, float]:
    """(share, low, high): the Wilson score interval; NaN when n is 0."""
    if n <= 0:
        return math.nan, math.nan, math.nan
    ci = sps.binomtest(int(successes), int(n)).proportion_ci(confidence_level=level, method="wilson")
    return successes / n, float(ci.low), float(ci.high)


BOOT_RESAMPLES = 2000
"""Resamples for the percentile-bootstrap intervals of means and ratios."""


def _boot(data: tuple[np.ndarray, ...], statistic: Callable[..., Any], seed: int) -> tuple[float, float]:
    n = len(data[0])
    if n < 2:
        return math.nan, math.nan
    if all(np.all(x == x[0]) for x in data):
        v = float(statistic(*data, axis=-1))
        return v, v  # every resample is the sample itself
    res = sps.bootstrap(data, statistic, n_resamples=BOOT_RESAMPLES, method="percentile", paired=len(data) > 1,
                        vectorized=True, confidence_level=LEVEL, rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def mean_interval(values: ArrayLike, seed: int = 0) -> tuple[float, float, float, int]:
    """(mean, low, high, n): the mean with a seeded percentile-bootstrap
    interval (unlike a t interval it never leaves the range of the data, so
    a rare count such as calza calls per match is never given a negative
    lower end). No interval below 2 values."""
    x = np.asarray(pd.Series(values, dtype="float64").dropna(), dtype=np.float64)
    if len(x) == 0:
        return math.nan, math.nan, math.nan, 0
    low, high = _boot((x,), np.mean, seed)
    return float(x.mean()), low, high, len(x)


def ratio_interval(num: ArrayLike, den: ArrayLike, seed: int = 0) -> tuple[float, float, float, int]:
    """(sum(num) / sum(den), low, high, n): a ratio of per-match totals with
    a percentile-bootstrap interval that resamples whole matches (rounds of
    one match are not independent). n is the number of matches."""
    a = np.asarray(num, dtype=np.float64)
    b = np.asarray(den, dtype=np.float64)
    if len(a) == 0 or b.sum() == 0:
        return math.nan, math.nan, math.nan, len(a)

    def ratio(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(x.sum(axis=axis) / y.sum(axis=axis))

    low, high = _boot((a, b), ratio, seed)
    return float(a.sum() / b.sum()), low, high, len(a)


StatRow = tuple[str, str, float, float, float, float]
"""A row of the statistics table (STAT_COLUMNS; ``n`` a count, or NaN)."""


def _variant_rows(label: str, part: Results) -> list[StatRow]:
    m, r = part.matches, part.rounds
    rows: list[StatRow] = [(label, "matches", float(len(m)), math.nan, math.nan, len(m))]

    def mean_row(name: str, values: ArrayLike) -> None:
        v, lo, hi, n = mean_interval(values)
        rows.append((label, name, v, lo, hi, n))

    def share_row(name: str, k: int, n: int) -> None:
        v, lo, hi = wilson(k, n)
        rows.append((label, name, v, lo, hi, n))

    mean_row("rounds_per_match", m["rounds_played"])
    mean_row("decisions_per_match", m["decisions"])
    known = m[m["first"].notna()]
    share_row("opener_win_rate", int((known["winner"] == known["first"]).sum()), len(known))
    # Without a first-player advantage the opener wins 1/players of the time.
    fair = float((1.0 / m["players"].astype(float)).mean())
    rows.append((label, "opener_fair_share", fair, math.nan, math.nan, len(m)))
    seats = part.seats
    for s in range(int(m["players"].max())):
        at = seats[seats["seat"] == s]
        share_row(f"seat{s}_win_rate", int((at["place"] == 1).sum()), len(at))
    calls = r[r["call"].notna()]
    for kind in ("dudo", "calza"):
        counts = (r["call"] == kind).groupby(r["match"]).sum().reindex(m["match"], fill_value=0)
        mean_row(f"{kind}_calls_per_match", counts)
        these = calls[calls["call"] == kind]
        judged = these["call_right"].dropna()
        share_row(f"{kind}_right_share", int(judged.sum()), len(judged))
    judged = calls["bid_true"].dropna()
    share_row("challenged_bid_true_share", int(judged.sum()), len(judged))
    mean_row("palifico_rounds_per_match", m["palifico_rounds"])
    decided = r[r["delta"].notna()]
    lost = (-decided["delta"].astype(float)).clip(lower=0).groupby(decided["match"]).sum()
    played = decided.groupby("match").size()
    lost = lost.reindex(m["match"], fill_value=0.0)
    played = played.reindex(m["match"], fill_value=0)
    v, lo, hi, n = ratio_interval(lost.to_numpy(), played.to_numpy())
    rows.append((label, "dice_lost_per_round", v, lo, hi, n))
    mean_row("faults_per_match", m["faults"])
    share_row("faulted_match_share", int((m["faults"] > 0).sum()), len(m))
    return rows


def variant_stats(res: Results, *, variant: str | None = None, drop_admin_faults: bool = False) -> pd.DataFrame:
    """One row per variant and statistic (columns STAT_COLUMNS); docs/ratings.md
    says what each statistic is and which interval it carries."""
    base = select(res, variant, drop_admin_faults)
    names = [variant] if variant is not None else [v for v in res.variants if v in set(base.matches["variant"])]
    rows: list[StatRow] = []
    for v in names:
        rows += _variant_rows(v, select(base, v))
    return _typed(pd.DataFrame(rows, columns=STAT_COLUMNS))


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    df["n"] = df["n"].astype("Int64")
    return df


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    if len(a) < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return math.nan
    return float(sps.spearmanr(a, b).statistic)


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
        boot = np.array([
            _spearman(cur_s[common].to_numpy()[i], base_s[common].to_numpy()[i]) for i in range(len(cur_s))
        ])
        boot = boot[~np.isnan(boot)]
        lo, hi = (np.quantile(boot, [(1 - LEVEL) / 2, 1 - (1 - LEVEL) / 2]) if len(boot) else (math.nan, math.nan))
        corr.append((v, baseline, rho, float(lo), float(hi), len(common)))
    return (
        pd.DataFrame(changes, columns=["variant", "bot", "elo", "baseline_elo", "change", "low", "high"]),
        pd.DataFrame(corr, columns=["variant", "baseline", "spearman", "low", "high", "bots"]),
    )


def comparison_rows(changes: pd.DataFrame, correlation: pd.DataFrame) -> pd.DataFrame:
    """The between-variant figures as variant_stats rows: ``elo_change[bot]``
    and ``rank_correlation[baseline]``."""
    rows: list[tuple[Any, ...]] = [(c.variant, f"elo_change[{c.bot}]", c.change, c.low, c.high, math.nan)
                                   for c in changes.itertuples()]
    rows += [(c.variant, f"rank_correlation[{c.baseline}]", c.spearman, c.low, c.high, c.bots)
             for c in correlation.itertuples()]
    return _typed(pd.DataFrame(rows, columns=STAT_COLUMNS))


def run_stats(res: Results, *, variant: str | None = None, drop_admin_faults: bool = False,
              resamples: int = 200, seed: int = 0) -> pd.DataFrame:
    """The variant statistics of a run (:func:`variant_stats`); with several
    variants (and none singled out) the between-variant rows are added
    (:func:`comparison_rows`, rating changes with ``resamples`` bootstrap
    resamples seeded by ``seed``)."""
    table = variant_stats(res, variant=variant, drop_admin_faults=drop_admin_faults)
    if variant is None and len(set(res.matches["variant"])) > 1:
        report = rate_results(res, drop_admin_faults=drop_admin_faults, resamples=resamples, seed=seed)
        table = pd.concat([table, comparison_rows(*variant_comparison(report))], ignore_index=True)
    return table
