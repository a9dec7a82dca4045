"""The HTML report of a run folder: one self-contained page to look at and share.

:func:`build_report` reads the run folder alone (run.json, its tables or match records,
``bots/<name>.stderr``) and returns one HTML page:

- the run's config and provenance (seed, versions, bot files and their sha256);
- the Elo tables with their 95% interval bars, per variant and overall;
- the head-to-head heat map;
- the rule-variant statistics as plots (first-player advantage by seat, game
  length, dudo and calza accuracy, rating shifts between variants) and as a table;
- the faults, with the last lines of each faulting bot's standard error;
- a few notable matches (the biggest upsets, the longest match) rendered
  round by round by :func:`arena.engine.replay.render`, behind anchors.

Self-contained: plots are PNG images embedded as ``data:`` URLs, the style is
inline, there is no script and no font or file to fetch, so the page opens
offline. Bot authors are hostile: every string from a bot or a record (names,
stderr, fault details) is HTML-escaped, plot labels are drawn as plain text
(matplotlib's math parsing off, so a ``$`` in a name is just a ``$``), and a
Content-Security-Policy forbids scripts and any request beyond ``data:``
images, in case anything slipped through anyway.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from arena import __version__
from arena.analysis.results import Results, load
from arena.analysis.stats import (
    OVERALL,
    Progress,
    RatingReport,
    comparison_rows,
    rate_results,
    variant_comparison,
    variant_stats,
)
from arena.analysis.viewer import SCRIPT_HASH, viewer_html
from arena.analysis.viewer import STYLE as VIEWER_STYLE
from arena.elo import Z95
from arena.engine.replay import render
from arena.errors import ArenaError, RunError
from arena.running.store import RunFolder, write_text

__all__ = ["PLOTS", "build_report", "notable_matches", "write_report"]

PLOTS = ("elo", "h2h", "length")
"""Ids of plots every report has (``<img id="plot-...">``); besides them
``elo-change`` (several variants), ``seats-<N>p`` per table size and
``stat-<statistic>`` per charted statistic (STAT_CHARTS)."""

STDERR_LINES = 20  # last lines of a faulting bot's stderr shown
UPSETS = 3  # notable upsets shown
RESAMPLES = 200  # bootstrap resamples for the Elo intervals (as `arena ratings`)
DPI = 96

_CSP = f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src '{SCRIPT_HASH}'"
CSP = _CSP  # the report's policy, as arena serve sends it with the page (docs/serve.md)
_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{margin:0 0 4px}h2{margin-top:36px;border-bottom:2px solid #d0d5dc;padding-bottom:4px}
section{background:#fff;border-radius:8px;padding:4px 20px 16px;margin:16px 0;box-shadow:0 1px 3px #0002}
table{border-collapse:collapse;margin:8px 0;font-size:14px;display:block;max-width:100%;overflow-x:auto}
th,td{padding:3px 10px;border-bottom:1px solid #e3e6ea;text-align:left;vertical-align:top;overflow-wrap:break-word}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.n{white-space:nowrap}
th:first-child,td:first-child{position:sticky;left:0;background:#fff}
#bots td:nth-child(5),#bots td:nth-child(6){overflow-wrap:anywhere;min-width:12em}
/* break-word, not anywhere, in general: anywhere lets a table squeeze a column down to one letter
   ("pytho n", "calz a"); numbers stay whole. A table wider than its section (12 variants side by
   side, a long bot name) scrolls inside it, its first column (the row's name) staying in view.
   Hashes and paths may break anywhere. */
pre{background:#f0f2f5;padding:8px;overflow-x:auto;font-size:12.5px;max-height:480px}
img{max-width:100%;height:auto;display:block;margin:8px 0}
img.half{display:inline-block;max-width:49%;vertical-align:top;margin:8px 1% 8px 0}
.muted{color:#5b6570}.warn{color:#a33}
nav a{margin-right:14px}code{font-size:13px}
"""


def esc(value: Any) -> str:
    """HTML-escape anything (quotes too: some values go into attributes)."""
    return html.escape(str(value), quote=True)


def _plain_label(text: Any) -> str:
    """A string safe to hand matplotlib as a label: no math parsing, no control characters."""
    s = "".join(c if c.isprintable() else "?" for c in str(text))
    return s if len(s) <= 40 else s[:39] + "…"


# ---------------------------------------------------------------------------
# Plots (matplotlib, no pyplot: no global figure state)
# ---------------------------------------------------------------------------


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


def _suptitle(fig: Any, text: str) -> None:
    """The figure's title, left-aligned and wrapped to the figure's width: a
    narrow figure (one variant) cut a one-line title off at its right edge,
    and text cut off in a PNG is lost."""
    import textwrap

    per_line = max(16, int(fig.get_figwidth() / TITLE_CHAR_INCHES))
    fig.suptitle(textwrap.fill(text, per_line), fontsize=9, x=0.01, ha="left")


TITLE_CHAR_INCHES = 0.075  # the widest a character of a 9-point title runs on average, with margin


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    # Fast zlib level: the default spends seconds per report squeezing a few percent.
    fig.savefig(buf, format="png", dpi=DPI, pil_kwargs={"compress_level": 3})
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _img(plot_id: str, fig: Any, alt: str) -> str:
    cls = ' class="half"' if plot_id.startswith("stat-") else ""
    return f'<img id="plot-{plot_id}"{cls} alt="{esc(alt)}" src="{_png(fig)}">'


def _nan0(values: Iterable[float]) -> np.ndarray:
    out: np.ndarray = np.nan_to_num(np.asarray(list(values), dtype=float), nan=0.0)
    return out


PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#637939",
    "#843c39",
    "#7b4173",
    "#3182bd",
    "#e6550d",
)
"""Distinct colours, one per variant in run order (16 before any repeats)."""


def colours(variants: Sequence[str]) -> dict[str, str]:
    return {v: PALETTE[i % len(PALETTE)] for i, v in enumerate(variants)}


def _heat(
    ax: Any, values: np.ndarray, rows: Sequence[str], cols: Sequence[str], cmap: str, vmin: float, vmax: float, fmt: str
) -> Any:
    """A labelled heat map with each cell's value written in it (NaN cells blank)."""
    im = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(cols)), [_plain_label(c) for c in cols], rotation=40, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(len(rows)), [_plain_label(r) for r in rows])
    span = (vmax - vmin) or 1.0
    small = 8 if len(cols) <= 8 else 7
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            v = values[i, j]
            if not math.isnan(v):
                dark = abs((v - vmin) / span - 0.5) > 0.3
                # Inside its cell, so inside the axes: left out of the layout's
                # search for what sticks out, which would measure every cell's text twice.
                ax.text(
                    j,
                    i,
                    format(v, fmt),
                    ha="center",
                    va="center",
                    fontsize=small,
                    color="white" if dark else "black",
                    in_layout=False,
                )
    return im


def plot_elo(table: pd.DataFrame, variants: Sequence[str], order: Sequence[str]) -> Any:
    """Bot x variant heat map of the fitted Elo, bots in one stable order (the overall table's)."""
    t = table[table["variant"].isin(list(variants))]
    grid = t.pivot(index="bot", columns="variant", values="elo").reindex(index=list(order), columns=list(variants))
    values = grid.to_numpy(float)
    fig = _figure(2.8 + 0.75 * len(variants), 1.3 + 0.34 * len(order))
    ax = fig.subplots()
    centre = 1500.0
    half = max(100.0, float(np.nanmax(np.abs(values - centre)))) if np.isfinite(values).any() else 100.0
    im = _heat(ax, values, order, variants, "RdBu_r", centre - half, centre + half, ".0f")
    _suptitle(fig, "Elo by variant (Plackett-Luce fit; rows: bots, best overall first)")
    fig.colorbar(im, ax=ax, shrink=0.8, label="Elo")
    return fig


def plot_elo_change(changes: pd.DataFrame, variants: Sequence[str], order: Sequence[str], baseline: str) -> Any:
    """Bot x variant heat map of the Elo change from the reference variant; '*' where the 95% interval excludes 0."""
    others = [v for v in variants if v != baseline]
    ch = changes.pivot(index="bot", columns="variant", values="change").reindex(index=list(order), columns=others)
    lo = changes.pivot(index="bot", columns="variant", values="low").reindex(index=list(order), columns=others)
    hi = changes.pivot(index="bot", columns="variant", values="high").reindex(index=list(order), columns=others)
    values = ch.to_numpy(float)
    fig = _figure(2.8 + 0.75 * len(others), 1.3 + 0.34 * len(order))
    ax = fig.subplots()
    half = max(50.0, float(np.nanmax(np.abs(values)))) if np.isfinite(values).any() else 50.0
    im = _heat(ax, values, order, others, "PuOr_r", -half, half, "+.0f")
    sure = (lo.to_numpy(float) > 0) | (hi.to_numpy(float) < 0)
    for i, j in zip(*np.nonzero(sure)):
        ax.text(j + 0.42, i - 0.28, "*", ha="right", va="top", fontsize=8, color="black", in_layout=False)
    _suptitle(fig, f"Elo change from {_plain_label(baseline)} (*: 95% interval excludes 0)")
    fig.colorbar(im, ax=ax, shrink=0.8, label="Elo change")
    return fig


def plot_h2h(h2h: pd.DataFrame, order: Sequence[str], label: str) -> Any:
    """Share of meetings the row bot finished above the column bot."""
    share = (
        h2h.pivot(index="bot", columns="opponent", values="share")
        .reindex(index=list(order), columns=list(order))
        .to_numpy(float)
    )
    n = len(order)
    fig = _figure(2.8 + 0.62 * n, 1.4 + 0.42 * n)
    ax = fig.subplots()
    im = _heat(ax, share, order, order, "RdBu", 0.0, 1.0, ".2f")
    ax.set_xlabel("opponent")
    ax.set_title(_plain_label(label), fontsize=9, loc="left")
    fig.colorbar(im, ax=ax, shrink=0.8, label="share finished above")
    return fig


StatCell = tuple[float, float, float, int]
_INDEX: list[tuple[weakref.ref[pd.DataFrame], dict[tuple[str, str], StatCell]]] = []  # the last table's


def _stat(stats: pd.DataFrame, variant: str, name: str) -> StatCell:
    """(value, low, high, n) of a statistic of a variant (its first row), NaN and 0 if absent.
    Looked up in an index of the table made once: the charts ask for hundreds of cells."""
    index = _INDEX[0][1] if _INDEX and _INDEX[0][0]() is stats else None
    if index is None:
        index = {}
        for v, s, value, low, high, n in zip(
            stats["variant"], stats["statistic"], stats["value"], stats["low"], stats["high"], stats["n"]
        ):
            index.setdefault((str(v), str(s)), (float(value), float(low), float(high), 0 if pd.isna(n) else int(n)))
        _INDEX[:] = [(weakref.ref(stats), index)]
    return index.get((variant, name), (math.nan, math.nan, math.nan, 0))


def plot_seats(stats: pd.DataFrame, variants: Sequence[str], size: int) -> Any:
    """Variant x seat heat map at ``size``-player tables: each seat's (and the
    round-1 opener's) win rate minus the fair share 1/size, in points."""
    cols = ["opener"] + [f"seat {s}" for s in range(size)]
    names = [f"opener_win_rate[{size}p]"] + [f"seat{s}_win_rate[{size}p]" for s in range(size)]
    values = np.array([[_stat(stats, v, n)[0] for n in names] for v in variants], dtype=float)
    diff = (values - 1.0 / size) * 100
    fig = _figure(4.6 + 0.6 * len(cols), max(2.0, 1.2 + 0.3 * len(variants)))
    ax = fig.subplots()
    half = max(5.0, float(np.nanmax(np.abs(diff)))) if np.isfinite(diff).any() else 5.0
    im = _heat(ax, diff, variants, cols, "PiYG", -half, half, "+.1f")
    _suptitle(fig, f"{size}-player tables: win rate minus the fair share ({100 / size:.1f}%), in points")
    # Two lines: on a figure of one or two variants the colour bar is shorter than the label on one.
    fig.colorbar(im, ax=ax, shrink=0.8, label="points above\nfair share")
    return fig


def plot_stat(
    stats: pd.DataFrame,
    variants: Sequence[str],
    name: str,
    title: str,
    percent: bool,
    reference: float | None = None,
    colour: dict[str, str] | None = None,
) -> Any:
    """One statistic across variants: a dot and its 95% interval per variant,
    variants as rows (labels never collide), the reference value dashed."""
    vals = [_stat(stats, v, name) for v in variants]
    scale = 100.0 if percent else 1.0
    fig = _figure(6.4, 0.9 + 0.26 * len(variants))
    ax = fig.subplots()
    for i, (v, (x, lo, hi, _)) in enumerate(zip(variants, vals)):
        c = (colour or {}).get(v, "#2b6cb0")
        if math.isnan(x):
            ax.text(0.01, i, "no data", transform=ax.get_yaxis_transform(), va="center", fontsize=7, color="#777")
            continue
        if not (math.isnan(lo) or math.isnan(hi)):
            ax.plot([lo * scale, hi * scale], [i, i], color=c, lw=3, alpha=0.45, solid_capstyle="butt")
        ax.plot([x * scale], [i], "o", color=c, ms=5)
    ax.set_yticks(range(len(variants)), [_plain_label(v) for v in variants])
    ax.set_ylim(len(variants) - 0.5, -0.5)
    if reference is not None:
        ax.axvline(reference * scale, color="#555", ls="--", lw=1)
    ax.set_xlabel(("%" if percent else "value") + " (95% interval)", fontsize=8)
    _suptitle(fig, title)  # the figure's width, not the axes'; wrapped to it
    ax.grid(axis="x", alpha=0.3)
    return fig


def plot_length(stats: pd.DataFrame, variants: Sequence[str], colour: dict[str, str]) -> Any:
    """Game length per variant: the 10th-90th percentile range, the median, and the mean."""
    fig = _figure(6.4, 0.9 + 0.26 * len(variants))
    ax = fig.subplots()
    for i, v in enumerate(variants):
        p10, p50, p90 = (_stat(stats, v, f"rounds_p{q}")[0] for q in (10, 50, 90))
        mean = _stat(stats, v, "rounds_per_match")[0]
        c = colour[v]
        ax.plot([p10, p90], [i, i], color=c, lw=6, alpha=0.35, solid_capstyle="butt")
        ax.plot([p50], [i], "|", color=c, ms=14, mew=2.5)
        ax.plot([mean], [i], "o", color="black", ms=3.5)
    ax.set_yticks(range(len(variants)), [_plain_label(v) for v in variants])
    ax.set_ylim(len(variants) - 0.5, -0.5)
    # Two lines: centred under an axes that long variant names push right, one line ran off the figure.
    ax.set_xlabel("rounds in a match\nbar: 10th-90th percentile, tick: median, dot: mean", fontsize=8)
    ax.set_title("Game length", fontsize=9, loc="left")
    ax.grid(axis="x", alpha=0.3)
    return fig


STAT_CHARTS = (
    ("opener_win_rate", "First player: round-1 opener's win share (dashed: fair share)", True, "opener_fair_share"),
    ("rounds_per_match", "Mean rounds in a match", False, None),
    ("bid_false_share", "Bluffs: share of bids false when made", True, None),
    ("dudo_right_share", "Dudo calls that were right", True, None),
    ("calza_right_share", "Calza calls that were right", True, None),
    ("challenged_bid_true_share", "Called bids that were true", True, None),
    ("palifico_opener_lost_share", "Palifico rounds lost by the palifico player", True, None),
    ("dice_lost_per_round", "Dice lost per round", False, None),
    ("strongest_bot_win_share", "Skill: share of matches won by the best-rated bot at the table", True, None),
    ("elo_sd", "Skill: spread of the bots' Elo (standard deviation)", False, None),
    ("faulted_match_share", "Matches with a fault", True, None),
)
"""The per-statistic charts: (statistic, title, shown in %, reference statistic)."""


# ---------------------------------------------------------------------------
# Notable matches
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Notable:
    """A match worth reading: why, and the record's id."""

    match: str
    why: str


def notable_matches(res: Results, table: pd.DataFrame, upsets: int = UPSETS, faults: int = 2) -> list[Notable]:
    """The biggest upsets (the largest Elo gap between the winner and the
    best-rated player it beat, by the match's variant table), the longest
    match, and the first match with each kind of fault (up to ``faults``)."""
    elo = {(str(v), str(b)): float(x) for v, b, x in zip(table["variant"], table["bot"], table["elo"].astype(float))}
    seats = res.seats
    rating = pd.Series(
        [elo.get((str(v), str(b)), math.nan) for v, b in zip(seats["variant"], seats["bot"])],
        index=seats.index,
        dtype=float,
    )
    won = seats["place"] == 1
    s = seats.assign(_elo=rating, _won=won)
    winners = s[s["_won"]].drop_duplicates("match").set_index("match")
    losers = s[~s["_won"] & s["_elo"].notna()]
    best_idx = losers.groupby("match")["_elo"].idxmax()
    best = losers.loc[best_idx.to_numpy()].set_index("match")
    both = winners[["bot", "variant", "_elo"]].merge(
        best[["bot", "_elo"]].add_suffix("_best"), left_index=True, right_index=True, how="inner"
    )
    both = both[both["_elo"].notna() & (both["_elo_best"] > both["_elo"])]
    found: list[tuple[float, str, str]] = []
    for mid, r in both.iterrows():
        w, top = float(r["_elo"]), float(r["_elo_best"])
        found.append(
            (
                top - w,
                str(mid),
                f"upset: {r['bot']} ({w:.0f}) won, ahead of {r['bot_best']} "
                f"({top:.0f}) in {r['variant']}: a gap of {top - w:.0f} Elo",
            )
        )
    found.sort(key=lambda t: (-t[0], t[1]))
    out = [Notable(mid, why) for _, mid, why in found[:upsets]]
    if len(res.matches):
        longest = res.matches.sort_values(["rounds_played", "line"], ascending=[False, True]).iloc[0]
        out.append(Notable(str(longest["match"]), f"the longest match: {int(longest['rounds_played'])} rounds"))
    for f in res.faults.drop_duplicates("kind").head(faults).itertuples():
        out.append(Notable(str(f.match), f"a fault: {f.bot} ({f.kind})"))
    seen: set[str] = set()
    unique = []
    for n in out:
        if n.match not in seen:
            seen.add(n.match)
            unique.append(n)
    return unique


# ---------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------


def _fmt(value: Any, spec: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    try:
        return esc(format(value, spec))
    except (TypeError, ValueError):
        return esc(value)


_NUM = ' class="n"'  # right-aligned numbers


def _table(
    headers: Sequence[str],
    rows: Iterable[Sequence[Any]],
    numeric: Sequence[bool] | None = None,
    table_id: str | None = None,
) -> str:
    """An HTML table; every cell is escaped here (callers pass raw values or
    already formatted strings, never HTML)."""
    numeric = numeric or [False] * len(headers)
    ident = f' id="{esc(table_id)}"' if table_id else ""
    head = "".join(f"<th{_NUM if n else ''}>{esc(h)}</th>" for h, n in zip(headers, numeric))
    body = "".join(
        "<tr>" + "".join(f"<td{_NUM if n else ''}>{esc(c)}</td>" for c, n in zip(row, numeric)) + "</tr>"
        for row in rows
    )
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _stderr_tail(folder: Path, label: str, lines: int = STDERR_LINES) -> str | None:
    path = RunFolder(folder).stderr(label)
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def _section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{esc(title)}</h2>{body}</section>'


def _provenance(res: Results) -> str:
    run = res.run
    facts = [
        ("run", run.get("name", res.path.name)),
        ("status", run.get("status", "unknown")),
        ("seed", run.get("seed", "")),
        ("Dudo Arena version", run.get("version", "")),
        ("started", run.get("started", "")),
        ("ended", run.get("ended", "")),
        ("resumed", run.get("resumed") or ""),
        ("matches recorded", len(res.matches)),
        ("backend / workers", f"{run.get('backend', '')} / {run.get('workers', '')}"),
    ]
    sched = run.get("schedule") or {}
    if sched:
        facts.append(("schedule", ", ".join(f"{k} {v}" for k, v in sched.items())))
    parts = [_table(["", ""], facts, table_id="provenance")]
    if res.truncated:
        parts.append(
            '<p class="warn">The last line of the match file was cut short (an interrupted writer) and was skipped.</p>'
        )
    if res.repeats:
        parts.append(
            f'<p class="warn">{len(res.repeats)} record(s) of a match already recorded were left out: '
            f"each match counts once.</p>"
        )
    bots = run.get("bots") or []
    if bots:
        parts.append(
            "<h3>Bots</h3>"
            + _table(
                ["entrant", "bot", "kind", "version", "sha256", "file"],
                [
                    (
                        b.get("name", ""),
                        b.get("bot", ""),
                        b.get("kind", ""),
                        b.get("version") or "",
                        b.get("sha256", ""),
                        b.get("path", ""),
                    )
                    for b in bots
                ],
                table_id="bots",
            )
        )
    variants = run.get("variants") or {}
    if variants:
        keys = list(dict.fromkeys(k for v in variants.values() for k in v))
        parts.append(
            "<h3>Rule variants</h3>"
            + _table(
                ["rule", *variants],
                [(k, *(variants[v].get(k, "") for v in variants)) for k in keys],
                table_id="variants",
            )
        )
    limits = {"time": run.get("time"), "sandbox": run.get("sandbox")}
    parts.append("<h3>Limits</h3><pre>" + esc(json.dumps(limits, indent=1, sort_keys=True)) + "</pre>")
    if run.get("config"):
        parts.append(
            "<h3>Config as given</h3><pre>"
            + esc(json.dumps(run["config"], indent=1, sort_keys=True, default=str))
            + "</pre>"
        )
    return "".join(parts)


def _elo_tables(table: pd.DataFrame, single: bool) -> str:
    out = []
    for label, t in table.groupby("variant", sort=False):
        if single and label == OVERALL:
            continue  # one variant: the overall table is that variant's, shown once
        rows = [
            (
                i + 1,
                r.bot,
                _fmt(r.elo, ".0f"),
                _fmt(r.elo_low, ".0f"),
                _fmt(r.elo_high, ".0f"),
                r.matches,
                r.wins,
                _fmt(r.mean_place, ".2f"),
                r.faults,
                r.fault_kinds,
            )
            for i, r in enumerate(t.itertuples())
        ]
        out.append(
            f"<h3>{esc(label)}</h3>"
            + _table(
                ["rank", "bot", "Elo", "low", "high", "matches", "wins", "mean place", "faults", "fault kinds"],
                rows,
                [True, False, True, True, True, True, True, True, True, False],
            )
        )
    return f'<div id="elo-table">{"".join(out)}</div>'


def _integrity(report: RatingReport) -> str:
    """The paired-play integrity check under the Elo tables: a flag per flagged bot, in red."""
    check = report.integrity
    if check is None or not check.paired:
        return ""
    lines = check.lines(untestable=True)
    flagged = {c.bot for c in check.flagged}
    rows = [
        (c.bot, c.deals, _fmt(c.gain, "+.3f"), _fmt(Z95 * c.se, ".3f"), f"{c.p:.2g}", "FLAGGED" if c.flagged else "")
        for c in check.checks
    ]
    css = "warn" if flagged else "muted"
    text = "".join(f"<p class='{css}'>{esc(line)}</p>" for line in lines)
    table = (
        _table(
            ["bot", "deals", "gain on later plays", "± (95%)", "p", ""],
            rows,
            [False, True, True, True, True, False],
            table_id="integrity-table",
        )
        if rows
        else ""
    )
    return (
        f'<div id="integrity"><h3>Integrity of paired play</h3>{text}{table}'
        "<p class='muted'>Each bot's placement score on its later plays of a deal against its first, "
        "seats balanced; a bot that does significantly better may remember deals "
        f"(alpha {check.alpha:g} per run, Holm over the bots tested; docs/ratings.md, Integrity).</p></div>"
    )


def _stats_table(stats: pd.DataFrame) -> str:
    rows = [
        (
            r.variant,
            r.statistic,
            _fmt(r.value, ".4g"),
            _fmt(r.low, ".4g"),
            _fmt(r.high, ".4g"),
            "" if pd.isna(r.n) else int(r.n),
        )
        for r in cast(Iterable[Any], stats.itertuples())
    ]
    return (
        "<details id='variant-stats-details'><summary>Every statistic, every variant "
        f"({len(rows)} rows; also in variant_stats.csv)</summary>"
        + _table(
            ["variant", "statistic", "value", "low", "high", "n"],
            rows,
            [False, False, True, True, True, True],
            table_id="variant-stats",
        )
        + "</details>"
    )


def _side_by_side(stats: pd.DataFrame, variants: Sequence[str]) -> str:
    """The statistics as `arena stats` prints them: one row per statistic, a column per variant."""
    from arena.analysis.format import stat_cells
    from arena.analysis.stats import definition

    names = [str(n) for n in dict.fromkeys(stats["statistic"])]
    cells = stat_cells(stats)
    rows = [(n, *(cells.get((n, v), "") for v in variants)) for n in names]
    table = _table(["statistic", *variants], rows, [False] + [True] * len(variants), table_id="stats-wide")
    keys = list(dict.fromkeys(n.split("[", 1)[0] for n in names))
    legend = "".join(f"<li><code>{esc(k)}</code>: {esc(definition(k))}</li>" for k in keys if definition(k))
    return (
        f"<div style='overflow-x:auto'>{table}</div>"
        f"<details><summary>What each statistic is</summary><ul>{legend}</ul></details>"
    )


def _faults(res: Results) -> str:
    f = res.faults
    if f.empty:
        return '<p id="faults-none">No bot faulted in this run.</p>'
    rows = []
    for (bot, kind), g in f.groupby(["bot", "kind"], sort=True):
        last = g.iloc[-1]
        rows.append((bot, kind, len(g), last["match"], str(last["detail"])[:300]))
    parts = [
        _table(
            ["bot", "kind", "faults", "last match", "last detail"],
            rows,
            [False, False, True, False, False],
            table_id="faults",
        )
    ]
    for bot in sorted(set(f["bot"])):
        tail = _stderr_tail(res.path, str(bot))
        shown = f"<pre>{esc(tail)}</pre>" if tail else '<p class="muted">no standard error recorded</p>'
        parts.append(f"<h3>stderr of {esc(bot)} (last {STDERR_LINES} lines)</h3>{shown}")
    return "".join(parts)


def _match_anchor(mid: str) -> str:
    return "match-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in mid)


def _notables(res: Results, notables: Sequence[Notable]) -> str:
    if not notables:
        return "<p>No match recorded.</p>"
    by_id = res.records_of([n.match for n in notables])
    items = "".join(f'<li><a href="#{_match_anchor(n.match)}">{esc(n.match)}</a>: {esc(n.why)}</li>' for n in notables)
    shown = [(by_id[n.match], n.why) for n in notables if n.match in by_id]
    parts = [f"<ul>{items}</ul><h3>Step through a match</h3>" + viewer_html(shown), "<h3>The same matches in full</h3>"]
    for n in notables:
        rec = by_id.get(n.match)
        if rec is None:
            continue
        try:
            text = "\n".join(render(rec))
        except ArenaError as exc:
            text = f"this record cannot be replayed: {exc}"
        parts.append(f'<h3 id="{_match_anchor(n.match)}">{esc(n.match)}: {esc(n.why)}</h3><pre>{esc(text)}</pre>')
    return "".join(parts)


def build_report(
    run: str | Path, *, resamples: int = RESAMPLES, seed: int = 0, progress: Progress | None = None
) -> str:
    """The HTML page of run folder ``run`` (see the module docstring): the
    folder is read once, rated once, its statistics computed once."""
    try:
        from matplotlib import rc_context
    except ImportError as exc:  # a dependency, but a broken install should say what is missing
        raise RunError(
            f"the report draws its plots with matplotlib, which cannot be imported ({exc}); pip install matplotlib"
        ) from None

    tell = progress or (lambda what, done, total: None)
    tell("reading the match records", 0, 1)
    res = load(run)
    if res.matches.empty:
        raise RunError(f"{run}: no finished match yet, nothing to report")
    report = rate_results(res, resamples=resamples, seed=seed, progress=progress)
    tell("variant statistics", 0, 1)
    played = set(res.matches["variant"].unique())
    variants = [v for v in res.variants if v in played]
    single = len(variants) == 1
    stats = variant_stats(res, report=report)
    changes = corr = None
    if not single:
        changes, corr = variant_comparison(report)
        stats = pd.concat([stats, comparison_rows(changes, corr)], ignore_index=True)
    top_label = next(iter(report.los))  # the overall table (or the one variant's)
    order = list(report.table.loc[report.table["variant"] == top_label, "bot"])
    colour = colours(variants)
    sizes = sorted(int(p) for p in res.matches["players"].unique())
    plots: dict[str, str] = {}
    charts = [c for c in STAT_CHARTS if (stats["statistic"] == c[0]).any()]
    total = 4 + len(sizes) + len(charts)

    def draw(key: str, fig: Any, alt: str) -> None:
        plots[key] = _img(key, fig, alt)
        tell("drawing the plots", len(plots), total)

    # Plain text labels: a bot named "$\\frac" must neither fail nor be typeset.
    with rc_context({"text.parse_math": False, "text.usetex": False}):
        draw("elo", plot_elo(report.table, variants, order), "Elo heat map, bots by variants")
        if changes is not None and len(changes):
            draw(
                "elo-change",
                plot_elo_change(changes, variants, order, variants[0]),
                "Elo change from the reference variant",
            )
        draw("h2h", plot_h2h(report.h2h[report.h2h["variant"] == top_label], order, top_label), "head-to-head heat map")
        for size in sizes:
            draw(f"seats-{size}p", plot_seats(stats, variants, size), f"win rate by seat at {size}-player tables")
        draw("length", plot_length(stats, variants, colour), "game length")
        for name, title, percent, ref in charts:
            refs = [_stat(stats, v, ref)[0] for v in variants] if ref else []
            reference = float(np.nanmean(refs)) if refs and np.isfinite(refs).any() else None
            draw(
                f"stat-{name}",
                plot_stat(stats, variants, name, title, percent, reference, colour),
                f"{name} by variant",
            )
    tell("notable matches", 0, 1)
    notables = notable_matches(res, report.table)
    title = f"Dudo Arena report: {res.run.get('name', res.path.name)}"
    nav = "".join(
        f'<a href="#{a}">{esc(t)}</a>'
        for a, t in (
            ("run", "Run"),
            ("ratings", "Ratings"),
            ("head-to-head", "Head to head"),
            ("variants-stats", "Variants"),
            ("faults-section", "Faults"),
            ("notable", "Notable matches"),
        )
    )
    overall_note = (
        f"<p class='muted'>{esc(OVERALL)}: every variant's matches fitted together.</p>" if not single else ""
    )
    if corr is not None:
        corr_rows = [
            (c.variant, c.baseline, _fmt(c.spearman, ".2f"), _fmt(c.low, ".2f"), _fmt(c.high, ".2f"), c.bots)
            for c in corr.itertuples()
        ]
        shifts = (
            plots.get("elo-change", "") + "<p>Rank correlation of each variant's Elo table with the "
            "reference variant's:</p>"
            + _table(
                ["variant", "reference", "Spearman", "low", "high", "bots"],
                corr_rows,
                [False, False, True, True, True, True],
                table_id="rank-correlation",
            )
        )
    else:
        shifts = '<p id="shifts-none">One variant only: no rating shift to show.</p>'
    seat_plots = "".join(plots[f"seats-{size}p"] for size in sizes)
    stat_plots = "".join(plots[f"stat-{c[0]}"] for c in charts)
    body = "".join(
        [
            _section("run", "Run and provenance", _provenance(res)),
            _section(
                "ratings",
                "Elo ratings",
                overall_note
                + plots["elo"]
                + "<h3>Rating shifts between variants</h3>"
                + shifts
                + _elo_tables(report.table, single)
                + f"<p class='muted'>Plackett-Luce fit on the finishing orders, 95% bootstrap intervals "
                f"({report.resamples} resamples, seed {report.seed}); docs/ratings.md.</p>" + _integrity(report),
            ),
            _section(
                "head-to-head",
                "Head to head",
                "<p>Share of their meetings in which the row bot finished above the column bot, "
                "all variants together.</p>" + plots["h2h"],
            ),
            _section(
                "variants-stats",
                "Rule-variant statistics",
                "<h3>Seats and the first player, per table size</h3>"
                + seat_plots
                + plots["length"]
                + "<h3>One chart per statistic</h3>"
                + stat_plots
                + "<h3>Side by side</h3>"
                + _side_by_side(stats, variants)
                + _stats_table(stats),
            ),
            _section("faults-section", "Faults", _faults(res)),
            _section("notable", "Notable matches", _notables(res, notables)),
        ]
    )
    from arena.analysis.exploitview import exploit_section  # shown only when arena exploit wrote there

    exploits = exploit_section(res.path)
    if exploits is not None:
        body += _section("exploitability", "Exploitability", exploits)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{_STYLE}{VIEWER_STYLE}</style></head><body><main>"
        f"<h1>{esc(title)}</h1><p class='muted'>Written by Dudo Arena {esc(__version__)} from the run folder "
        f"alone.</p><nav>{nav}</nav>{body}</main></body></html>\n"
    )


def write_report(run: str | Path, output: str | Path | None = None, **options: Any) -> Path:
    """Build the report of ``run`` and write it (default ``RUN/report.html``); returns the path."""
    page = build_report(run, **options)
    path = Path(output) if output is not None else RunFolder(Path(run)).report
    try:
        write_text(path, page)
    except RunError as exc:  # a read-only or full disk: the page was made, say where else it can go
        raise RunError(
            f"{exc}; nothing was written; write the report elsewhere with `arena report {run} -o FILE`"
        ) from None
    return path
