"""The HTML report of a run folder: one self-contained page to look at and share.

:func:`build_report` reads the run folder alone (run.json, the match records,
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from arena import __version__
from arena.analysis.results import Results, load
from arena.analysis.stats import OVERALL, rate_results, variant_comparison, variant_stats
from arena.engine.replay import render
from arena.errors import ArenaError, RunError
from arena.running.store import RunFolder, write_text

__all__ = ["PLOTS", "build_report", "notable_matches", "write_report"]

PLOTS = ("elo", "h2h", "seats", "length", "calls", "shifts")
"""The ids of the report's plots (``<img id="plot-...">``), in page order."""

STDERR_LINES = 20  # last lines of a faulting bot's stderr shown
UPSETS = 3  # notable upsets shown
RESAMPLES = 200  # bootstrap resamples for the Elo intervals (as `arena ratings`)
DPI = 96

_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{margin:0 0 4px}h2{margin-top:36px;border-bottom:2px solid #d0d5dc;padding-bottom:4px}
section{background:#fff;border-radius:8px;padding:4px 20px 16px;margin:16px 0;box-shadow:0 1px 3px #0002}
table{border-collapse:collapse;margin:8px 0;font-size:14px}
th,td{padding:3px 10px;border-bottom:1px solid #e3e6ea;text-align:left;vertical-align:top;overflow-wrap:anywhere}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
pre{background:#f0f2f5;padding:8px;overflow-x:auto;font-size:12.5px;max-height:480px}
img{max-width:100%;height:auto;display:block;margin:8px 0}
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


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _img(plot_id: str, fig: Any, alt: str) -> str:
    return f'<img id="plot-{plot_id}" alt="{esc(alt)}" src="{_png(fig)}">'


def _nan0(values: Iterable[float]) -> np.ndarray:
    out: np.ndarray = np.nan_to_num(np.asarray(list(values), dtype=float), nan=0.0)
    return out


def plot_elo(table: pd.DataFrame) -> Any:
    """One panel per variant label: each bot's Elo with its 95% interval bar."""
    labels = list(dict.fromkeys(table["variant"]))
    nbots = max(len(table[table["variant"] == v]) for v in labels)
    fig = _figure(7.5, 0.6 + len(labels) * (0.45 + 0.3 * nbots))
    axes = fig.subplots(len(labels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, label in zip(axes, labels):
        t = table[table["variant"] == label].iloc[::-1]  # best at the top
        y = np.arange(len(t))
        elo = t["elo"].to_numpy(float)
        err = np.vstack([elo - t["elo_low"].to_numpy(float), t["elo_high"].to_numpy(float) - elo])
        ax.errorbar(elo, y, xerr=np.clip(np.nan_to_num(err), 0, None), fmt="o", color="#2b6cb0",
                    ecolor="#90b4d8", elinewidth=4, capsize=0)
        ax.set_yticks(y, [_plain_label(b) for b in t["bot"]])
        ax.set_title(_plain_label(label), loc="left", fontsize=10)
        ax.axvline(1500, color="#bbb", lw=0.8, ls="--")
        ax.grid(axis="x", alpha=0.3)
    axes[-1].set_xlabel("Elo (Plackett-Luce fit, 95% bootstrap interval)")
    return fig


def plot_h2h(h2h: pd.DataFrame, order: Sequence[str], label: str) -> Any:
    """Share of meetings the row bot finished above the column bot."""
    share = (h2h.pivot(index="bot", columns="opponent", values="share")
             .reindex(index=list(order), columns=list(order)).to_numpy(float))
    met = (h2h.pivot(index="bot", columns="opponent", values="met")
           .reindex(index=list(order), columns=list(order)).to_numpy(float))
    n = len(order)
    fig = _figure(2.6 + 0.8 * n, 1.4 + 0.6 * n)
    ax = fig.subplots()
    im = ax.imshow(np.ma.masked_invalid(share), cmap="RdBu", vmin=0, vmax=1)
    names = [_plain_label(b) for b in order]
    ax.set_xticks(range(n), names, rotation=35, ha="right")
    ax.set_yticks(range(n), names)
    for i in range(n):
        for j in range(n):
            if not math.isnan(share[i, j]):
                ax.text(j, i, f"{share[i, j]:.2f}\n({int(met[i, j])})", ha="center", va="center", fontsize=7,
                        color="white" if abs(share[i, j] - 0.5) > 0.3 else "black")
    ax.set_xlabel("opponent")
    ax.set_title(_plain_label(label), fontsize=9, loc="left")
    fig.colorbar(im, ax=ax, shrink=0.8)
    return fig


def _stat(stats: pd.DataFrame, variant: str, name: str) -> tuple[float, float, float, int]:
    row = stats[(stats["variant"] == variant) & (stats["statistic"] == name)]
    if row.empty:
        return math.nan, math.nan, math.nan, 0
    r = row.iloc[0]
    n = 0 if pd.isna(r["n"]) else int(r["n"])
    return float(r["value"]), float(r["low"]), float(r["high"]), n


def _grouped(ax: Any, stats: pd.DataFrame, variants: Sequence[str], names: Sequence[str],
             ticks: Sequence[str]) -> None:
    """Bars of ``names`` (one group per name), one bar per variant, with their intervals."""
    width = 0.8 / max(1, len(variants))
    x = np.arange(len(names))
    for k, v in enumerate(variants):
        vals = [_stat(stats, v, name) for name in names]
        value = _nan0(s[0] for s in vals)
        low = _nan0(s[0] - s[1] for s in vals)
        high = _nan0(s[2] - s[0] for s in vals)
        pos = x - 0.4 + width * (k + 0.5)
        ax.bar(pos, value, width * 0.92, yerr=[np.clip(low, 0, None), np.clip(high, 0, None)], capsize=3,
               label=_plain_label(v))
        for p, s in zip(pos, vals):
            if s[3] == 0 or math.isnan(s[0]):
                ax.text(p, 0.01, "n=0", ha="center", va="bottom", fontsize=7, rotation=90)
    ax.set_xticks(x, list(ticks))
    ax.grid(axis="y", alpha=0.3)


def plot_seats(stats: pd.DataFrame, variants: Sequence[str], players: int) -> Any:
    """Win rate by seat and of the round-1 opener, against the fair share."""
    fig = _figure(7.5, 3.4)
    ax = fig.subplots()
    names = ["opener_win_rate"] + [f"seat{s}_win_rate" for s in range(players)]
    _grouped(ax, stats, variants, names, ["opener"] + [f"seat {s}" for s in range(players)])
    fair = [_stat(stats, v, "opener_fair_share")[0] for v in variants]
    for f in fair:
        if not math.isnan(f):
            ax.axhline(f, ls="--", lw=1, color="#555")
    ax.set_ylabel("win rate (95% Wilson interval)")
    ax.set_title("First-player advantage: win rate by seat and of the round-1 opener (dashed: fair share)",
                 fontsize=9, loc="left")
    ax.legend(fontsize=8)
    return fig


def plot_length(matches: pd.DataFrame, stats: pd.DataFrame, variants: Sequence[str]) -> Any:
    """Rounds per match: the distribution per variant and the mean with its interval."""
    fig = _figure(7.5, 3.2)
    left, right = fig.subplots(1, 2, width_ratios=[2, 1])
    top = int(matches["rounds_played"].max()) if len(matches) else 1
    bins = np.arange(0.5, top + 1.5, max(1, math.ceil(top / 30)))
    for v in variants:
        rounds = matches.loc[matches["variant"] == v, "rounds_played"].to_numpy(float)
        left.hist(rounds, bins=bins, histtype="step", lw=1.6, label=_plain_label(v))
    left.set_xlabel("rounds in a match")
    left.set_ylabel("matches")
    left.legend(fontsize=8)
    left.set_title("Game length", fontsize=9, loc="left")
    vals = [_stat(stats, v, "rounds_per_match") for v in variants]
    mean = _nan0(s[0] for s in vals)
    err = [np.clip(_nan0(s[0] - s[1] for s in vals), 0, None), np.clip(_nan0(s[2] - s[0] for s in vals), 0, None)]
    right.errorbar(range(len(variants)), mean, yerr=err, fmt="o", capsize=4)
    right.set_xticks(range(len(variants)), [_plain_label(v) for v in variants], rotation=20)
    right.set_xlim(-0.6, len(variants) - 0.4)
    right.set_title("mean, 95% interval", fontsize=9, loc="left")
    right.grid(axis="y", alpha=0.3)
    return fig


def plot_calls(stats: pd.DataFrame, variants: Sequence[str]) -> Any:
    """How often dudo and calza calls were right, and how often a challenged bid was true."""
    fig = _figure(7.5, 3.2)
    ax = fig.subplots()
    _grouped(ax, stats, variants, ["dudo_right_share", "calza_right_share", "challenged_bid_true_share"],
             ["dudo right", "calza right", "challenged bid true"])
    ax.set_ylim(0, 1)
    ax.set_ylabel("share (95% Wilson interval)")
    ax.set_title("Dudo and calza accuracy", fontsize=9, loc="left")
    ax.legend(fontsize=8)
    return fig


def plot_shifts(changes: pd.DataFrame, baseline: str) -> Any:
    """Each bot's Elo change from the baseline variant, with its 95% interval."""
    variants = list(dict.fromkeys(changes["variant"]))
    bots = sorted(set(changes["bot"]))
    fig = _figure(7.5, 0.9 + 0.32 * len(bots) * max(1, len(variants)) ** 0.5)
    ax = fig.subplots()
    step = 0.8 / max(1, len(variants))
    for k, v in enumerate(variants):
        c = changes[changes["variant"] == v].set_index("bot").reindex(bots)
        y = np.arange(len(bots)) - 0.4 + step * (k + 0.5)
        ch = c["change"].to_numpy(float)
        err = [np.clip(_nan0(ch - c["low"].to_numpy(float)), 0, None),
               np.clip(_nan0(c["high"].to_numpy(float) - ch), 0, None)]
        ax.errorbar(ch, y, xerr=err, fmt="o", capsize=3, label=f"{_plain_label(v)} - {_plain_label(baseline)}")
    ax.axvline(0, color="#555", lw=1)
    ax.set_yticks(range(len(bots)), [_plain_label(b) for b in bots])
    ax.invert_yaxis()
    ax.set_xlabel("Elo change from the baseline variant (95% interval)")
    ax.set_title("Rating shifts between variants", fontsize=9, loc="left")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


# ---------------------------------------------------------------------------
# Notable matches
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Notable:
    """A match worth reading: why, and the record's id."""

    match: str
    why: str


def notable_matches(res: Results, table: pd.DataFrame, upsets: int = UPSETS) -> list[Notable]:
    """The biggest upsets (the largest Elo gap between the winner and the
    best-rated player it beat, by the match's variant table) and the longest match."""
    elo = {(str(v), str(b)): float(x) for v, b, x in zip(table["variant"], table["bot"], table["elo"].astype(float))}
    seats = res.seats
    found: list[tuple[float, str, str]] = []
    for mid, group in seats.groupby("match", sort=False):
        variant = str(group["variant"].iloc[0])
        win = group[group["place"] == 1]
        if win.empty:
            continue
        winner = str(win["bot"].iloc[0])
        others = [(elo.get((variant, str(b)), math.nan), str(b)) for b in group.loc[group["place"] != 1, "bot"]]
        others = [o for o in others if not math.isnan(o[0])]
        w = elo.get((variant, winner), math.nan)
        if not others or math.isnan(w):
            continue
        best, best_bot = max(others)
        if best > w:
            found.append((best - w, str(mid), f"upset: {winner} ({w:.0f}) won, ahead of {best_bot} "
                                               f"({best:.0f}) in {variant}: a gap of {best - w:.0f} Elo"))
    found.sort(key=lambda t: (-t[0], t[1]))
    out = [Notable(mid, why) for _, mid, why in found[:upsets]]
    if len(res.matches):
        longest = res.matches.sort_values(["rounds_played", "line"], ascending=[False, True]).iloc[0]
        out.append(Notable(str(longest["match"]), f"the longest match: {int(longest['rounds_played'])} rounds"))
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


def _table(headers: Sequence[str], rows: Iterable[Sequence[Any]], numeric: Sequence[bool] | None = None,
           table_id: str | None = None) -> str:
    """An HTML table; every cell is escaped here (callers pass raw values or
    already formatted strings, never HTML)."""
    numeric = numeric or [False] * len(headers)
    ident = f' id="{esc(table_id)}"' if table_id else ""
    head = "".join(f'<th{_NUM if n else ""}>{esc(h)}</th>' for h, n in zip(headers, numeric))
    body = "".join(
        "<tr>" + "".join(f'<td{_NUM if n else ""}>{esc(c)}</td>' for c, n in zip(row, numeric)) + "</tr>"
        for row in rows)
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
        ("run", run.get("name", res.path.name)), ("status", run.get("status", "unknown")),
        ("seed", run.get("seed", "")), ("Dudo Arena version", run.get("version", "")),
        ("started", run.get("started", "")), ("ended", run.get("ended", "")),
        ("resumed", run.get("resumed") or ""), ("matches recorded", len(res.matches)),
        ("backend / workers", f"{run.get('backend', '')} / {run.get('workers', '')}"),
    ]
    sched = run.get("schedule") or {}
    if sched:
        facts.append(("schedule", ", ".join(f"{k} {v}" for k, v in sched.items())))
    parts = [_table(["", ""], facts, table_id="provenance")]
    if res.truncated:
        parts.append('<p class="warn">The last line of the match file was cut short (an interrupted '
                     'writer) and was skipped.</p>')
    if res.repeats:
        parts.append(f'<p class="warn">{len(res.repeats)} record(s) of a match already recorded were left out: '
                     f'each match counts once.</p>')
    bots = run.get("bots") or []
    if bots:
        parts.append("<h3>Bots</h3>" + _table(
            ["entrant", "bot", "kind", "version", "sha256", "file"],
            [(b.get("name", ""), b.get("bot", ""), b.get("kind", ""), b.get("version") or "",
              b.get("sha256", ""), b.get("path", "")) for b in bots], table_id="bots"))
    variants = run.get("variants") or {}
    if variants:
        keys = list(dict.fromkeys(k for v in variants.values() for k in v))
        parts.append("<h3>Rule variants</h3>" + _table(
            ["rule", *variants], [(k, *(variants[v].get(k, "") for v in variants)) for k in keys],
            table_id="variants"))
    limits = {"time": run.get("time"), "sandbox": run.get("sandbox")}
    parts.append("<h3>Limits</h3><pre>" + esc(json.dumps(limits, indent=1, sort_keys=True)) + "</pre>")
    if run.get("config"):
        parts.append("<h3>Config as given</h3><pre>"
                     + esc(json.dumps(run["config"], indent=1, sort_keys=True, default=str)) + "</pre>")
    return "".join(parts)


def _elo_tables(table: pd.DataFrame) -> str:
    out = []
    for label, t in table.groupby("variant", sort=False):
        rows = [(i + 1, r.bot, _fmt(r.elo, ".0f"), _fmt(r.elo_low, ".0f"), _fmt(r.elo_high, ".0f"), r.matches,
                 r.wins, _fmt(r.mean_place, ".2f"), r.faults, r.fault_kinds)
                for i, r in enumerate(t.itertuples())]
        out.append(f"<h3>{esc(label)}</h3>" + _table(
            ["rank", "bot", "Elo", "low", "high", "matches", "wins", "mean place", "faults", "fault kinds"],
            rows, [True, False, True, True, True, True, True, True, True, False]))
    return f'<div id="elo-table">{"".join(out)}</div>'


def _stats_table(stats: pd.DataFrame) -> str:
    rows = [(r.variant, r.statistic, _fmt(r.value, ".4g"), _fmt(r.low, ".4g"), _fmt(r.high, ".4g"),
             "" if pd.isna(r.n) else int(r.n)) for r in cast(Iterable[Any], stats.itertuples())]
    return _table(["variant", "statistic", "value", "low", "high", "n"], rows,
                  [False, False, True, True, True, True], table_id="variant-stats")


def _faults(res: Results) -> str:
    f = res.faults
    if f.empty:
        return '<p id="faults-none">No bot faulted in this run.</p>'
    rows = []
    for (bot, kind), g in f.groupby(["bot", "kind"], sort=True):
        last = g.iloc[-1]
        rows.append((bot, kind, len(g), last["match"], str(last["detail"])[:300]))
    parts = [_table(["bot", "kind", "faults", "last match", "last detail"], rows,
                    [False, False, True, False, False], table_id="faults")]
    for bot in sorted(set(f["bot"])):
        tail = _stderr_tail(res.path, str(bot))
        shown = (f"<pre>{esc(tail)}</pre>" if tail
                 else '<p class="muted">no standard error recorded</p>')
        parts.append(f"<h3>stderr of {esc(bot)} (last {STDERR_LINES} lines)</h3>{shown}")
    return "".join(parts)


def _match_anchor(mid: str) -> str:
    return "match-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in mid)


def _notables(res: Results, notables: Sequence[Notable]) -> str:
    if not notables:
        return "<p>No match recorded.</p>"
    by_id = {r.match: r for r in res.records}
    items = "".join(f'<li><a href="#{_match_anchor(n.match)}">{esc(n.match)}</a>: {esc(n.why)}</li>'
                    for n in notables)
    parts = [f"<ul>{items}</ul>"]
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


def build_report(run: str | Path, *, resamples: int = RESAMPLES, seed: int = 0) -> str:
    """The HTML page of run folder ``run`` (see the module docstring)."""
    try:
        from matplotlib import rc_context
    except ImportError as exc:  # a dependency, but a broken install should say what is missing
        raise RunError(f"the report draws its plots with matplotlib, which cannot be imported ({exc}); "
                       f"pip install matplotlib") from None

    res = load(run)
    if res.matches.empty:
        raise RunError(f"{run}: no finished match yet, nothing to report")
    report = rate_results(res, resamples=resamples, seed=seed)
    stats = variant_stats(res)
    variants = [v for v in res.variants if v in set(res.matches["variant"])]
    players = int(res.matches["players"].max())
    top_label = next(iter(report.los))  # the overall table (or the one variant's)
    order = list(report.table.loc[report.table["variant"] == top_label, "bot"])
    plots: dict[str, str] = {}
    # Plain text labels: a bot named "$\\frac" must neither fail nor be typeset.
    with rc_context({"text.parse_math": False, "text.usetex": False}):
        plots["elo"] = _img("elo", plot_elo(report.table), "Elo with 95% intervals, per variant")
        plots["h2h"] = _img("h2h", plot_h2h(report.h2h[report.h2h["variant"] == top_label], order, top_label),
                            "head-to-head heat map")
        plots["seats"] = _img("seats", plot_seats(stats, variants, players), "win rate by seat")
        plots["length"] = _img("length", plot_length(res.matches, stats, variants), "game length")
        plots["calls"] = _img("calls", plot_calls(stats, variants), "dudo and calza accuracy")
        if len(variants) > 1:
            changes, corr = variant_comparison(report)
            baseline = variants[0]
            plots["shifts"] = _img("shifts", plot_shifts(changes, baseline), "rating shifts between variants")
            corr_rows = [(c.variant, c.baseline, _fmt(c.spearman, ".2f"), _fmt(c.low, ".2f"), _fmt(c.high, ".2f"),
                          c.bots) for c in corr.itertuples()]
            shifts = plots["shifts"] + "<p>Rank correlation of each variant's Elo table with the baseline's:</p>" + \
                _table(["variant", "baseline", "Spearman", "low", "high", "bots"], corr_rows,
                       [False, False, True, True, True, True], table_id="rank-correlation")
        else:
            shifts = '<p id="shifts-none">One variant only: no rating shift to show.</p>'
    notables = notable_matches(res, report.table)
    title = f"Dudo Arena report: {res.run.get('name', res.path.name)}"
    nav = "".join(f'<a href="#{a}">{esc(t)}</a>' for a, t in (
        ("run", "Run"), ("ratings", "Ratings"), ("head-to-head", "Head to head"), ("variants-stats", "Variants"),
        ("faults-section", "Faults"), ("notable", "Notable matches")))
    overall_note = (f"<p class='muted'>{esc(OVERALL)}: every variant's matches fitted together.</p>"
                    if len(variants) > 1 else "")
    body = "".join([
        _section("run", "Run and provenance", _provenance(res)),
        _section("ratings", "Elo ratings", overall_note + plots["elo"] + _elo_tables(report.table)
                 + f"<p class='muted'>Plackett-Luce fit on the finishing orders, 95% bootstrap intervals "
                   f"({report.resamples} resamples, seed {report.seed}); docs/ratings.md.</p>"),
        _section("head-to-head", "Head to head",
                 "<p>Share of their meetings in which the row bot finished above the column bot "
                 "(meetings in brackets), all variants together.</p>" + plots["h2h"]),
        _section("variants-stats", "Rule-variant statistics",
                 plots["seats"] + plots["length"] + plots["calls"] + "<h3>Rating shifts between variants</h3>"
                 + shifts + "<h3>Every statistic</h3>" + _stats_table(stats)),
        _section("faults-section", "Faults", _faults(res)),
        _section("notable", "Notable matches", _notables(res, notables)),
    ])
    from arena.analysis.exploitview import exploit_section  # issue 16: shown only when computed

    exploits = exploit_section(res.path)
    if exploits is not None:
        body += _section("exploitability", "Exploitability", exploits)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{_STYLE}</style></head><body><main>"
        f"<h1>{esc(title)}</h1><p class='muted'>Written by Dudo Arena {esc(__version__)} from the run folder "
        f"alone.</p><nav>{nav}</nav>{body}</main></body></html>\n"
    )


def write_report(run: str | Path, output: str | Path | None = None, **options: Any) -> Path:
    """Build the report of ``run`` and write it (default ``RUN/report.html``); returns the path."""
    page = build_report(run, **options)
    path = Path(output) if output is not None else RunFolder(Path(run)).report
    write_text(path, page)
    return path
