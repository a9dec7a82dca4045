"""Tables as text: what the analysis commands print and the CSV and JSON they write.

:func:`format_table` renders a DataFrame as plain aligned text (pandas'
``to_string`` right-aligns everything and prints ``NaN``/``<NA>`` noise);
:func:`format_ratings` and :func:`format_stats` are ``arena ratings`` and
``arena stats``; :func:`csv_text` is the one CSV form of a table (the
``--csv`` output and the files a run folder keeps); :func:`ratings_json` and
:func:`stats_json` the ``--json`` output. Formatting only: the numbers come
from :mod:`arena.analysis.stats`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from arena.analysis.stats import DEFINITIONS, LEVEL, RatingReport, base_name
from arena.untrusted import printable

__all__ = [
    "csv_text",
    "explain_text",
    "format_ratings",
    "format_stats",
    "format_table",
    "ratings_json",
    "stat_cell",
    "stat_cells",
    "stat_kind",
    "stats_json",
]

CSV_FLOATS = "%.6g"
"""How a CSV writes a float: six significant digits (the intervals are not
known to more)."""


def _cell(value: object, fmt: str | None) -> str:
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return ""
    if fmt is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
        return format(value, fmt)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def format_table(
    df: pd.DataFrame,
    formats: Mapping[str, str] | None = None,
    columns: Sequence[str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> str:
    """Render ``df`` as text: numbers right-aligned, text left-aligned, a rule
    under the header, missing values blank. ``formats`` maps a column to a
    format spec (e.g. ``".0f"``); ``headers`` renames columns for display."""
    formats = dict(formats or {})
    cols = list(columns) if columns is not None else [str(c) for c in df.columns]
    names = [(headers or {}).get(c, c) for c in cols]
    cells = [[_cell(v, formats.get(c)) for v in df[c].tolist()] for c in cols]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) for c in cols]
    widths = [max([len(n)] + [len(x) for x in col]) for n, col in zip(names, cells)]

    def line(values: Sequence[str]) -> str:
        parts = [v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)]
        return "  ".join(parts).rstrip()

    out = [line(names), "  ".join("-" * w for w in widths)]
    out += [line([col[i] for col in cells]) for i in range(len(df))]
    return "\n".join(out)


def csv_text(table: pd.DataFrame) -> str:
    """A table as CSV text, without the index."""
    text: str = table.to_csv(index=False, float_format=CSV_FLOATS)
    return text


def format_ratings(report: RatingReport, head_to_head: bool = False) -> str:
    """The Elo tables as terminal text, one block per variant label; with
    ``head_to_head`` also each label's share-above and LOS matrices."""
    blocks = []
    labels = list(report.los)
    for label, t in report.table.groupby("variant", sort=False):
        if len(labels) == 2 and label == labels[0]:
            continue  # one variant: the overall table is the same table, print it once
        title = (
            f"{label}: Plackett-Luce Elo, {int(LEVEL * 100)}% bootstrap interval "
            f"({report.resamples} resamples, seed {report.seed})"
        )
        if report.drop_admin_faults:
            title += ", administrative faults dropped"
        body = format_table(
            t.assign(rank=range(1, len(t) + 1)),
            formats={"elo": ".0f", "elo_low": ".0f", "elo_high": ".0f", "mean_place": ".2f", "elo_seq": ".0f"},
            columns=[
                "rank",
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
            ],
            headers={
                "elo_low": "low",
                "elo_high": "high",
                "mean_place": "mean place",
                "fault_kinds": "fault kinds",
                "elo_seq": "seq. Elo*",
            },
        )
        blocks.append(f"{title}\n{body}")
        if head_to_head:
            order = list(t["bot"])
            h = report.h2h[report.h2h["variant"] == label]
            share = h.pivot(index="bot", columns="opponent", values="share").reindex(index=order, columns=order)
            met = h.pivot(index="bot", columns="opponent", values="met").reindex(index=order, columns=order)
            cells = share.map(lambda x: "" if pd.isna(x) else f"{x:.2f}") + met.map(
                lambda x: "" if pd.isna(x) else f" ({int(x)})"
            )
            blocks.append(
                "head to head: share of meetings the row bot finished above the column bot (meetings)\n"
                + format_table(cells.reset_index().rename(columns={"bot": ""}).astype(str))
            )
            los = report.los[str(label)].reindex(index=order, columns=order)
            blocks.append(
                "likelihood of superiority: P(row stronger than column)\n"
                + format_table(los.map(lambda x: f"{x:.3f}").reset_index(names="").astype(str))
            )
    # Anchored, both columns put the anchor at the same Elo (stats.rate_results shifts seq. Elo).
    scale = f"; shifted, as the fit, to put {report.anchor} at {report.anchor_elo:g}" if report.anchor else ""
    blocks.append(
        "* seq. Elo: classic K-factor Elo in schedule order (match id); it depends on match order, "
        f"unlike the fit{scale}."
    )
    if report.integrity is not None and report.integrity.lines():
        blocks.append("\n".join(printable(line, newlines=False) for line in report.integrity.lines()))
    return "\n\n".join(blocks)


_PERCENT = ("_share", "_rate", "win_rate_holding")


def stat_kind(statistic: str) -> str:
    """How a statistic is shown: "count", "percent", "elo", "rounds" (whole
    rounds, the percentiles) or "mean"."""
    base = base_name(statistic)
    if base == "matches":
        return "count"
    if base in ("elo_sd", "elo_change"):
        return "elo"
    if base.startswith("rounds_p") and base[len("rounds_p") :].isdigit():
        return "rounds"
    if base == "rank_correlation":
        return "mean"
    if any(base.endswith(x) or base == x for x in _PERCENT) or base == "fair_share":
        return "percent"
    return "mean"


def stat_cell(statistic: str, value: Any, low: Any, high: Any) -> str:
    """One statistic as text, the same format for every variant: shares as
    percentages, Elo and rounds whole, means with two decimals; the 95%
    interval in brackets when there is one."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "-"
    kind = stat_kind(statistic)
    if kind == "count":
        return f"{int(value):,}"
    scale, spec, unit = {
        "percent": (100.0, ".1f", "%"),
        "elo": (1.0, ".0f", ""),
        "rounds": (1.0, ".0f", ""),
        "mean": (1.0, ".2f", ""),
    }[kind]

    def num(x: Any) -> str:
        return "?" if _missing(x) else format(float(x) * scale, spec)

    text = f"{num(value)}{unit}"
    if not (_missing(low) and _missing(high)):
        text += f" [{num(low)}, {num(high)}]"
    return text


def stat_cells(table: pd.DataFrame) -> dict[tuple[str, str], str]:
    """Every (statistic, variant) of a statistics table as its cell text."""
    return {
        (str(name), str(v)): stat_cell(str(name), value, low, high)
        for name, v, value, low, high in zip(
            table["statistic"], table["variant"], table["value"], table["low"], table["high"]
        )
    }


def _missing(x: object) -> bool:
    return x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x))


def format_stats(table: pd.DataFrame, width: int = 120, legend: bool = True) -> str:
    """Variant statistics as terminal text: one row per statistic, one column
    per variant (in blocks of columns that fit ``width``), each cell the value
    and its 95% interval, then a legend of the statistics shown."""
    variants = list(dict.fromkeys(table["variant"]))
    names = list(dict.fromkeys(table["statistic"]))
    cells = stat_cells(table)
    name_w = max(len("statistic"), *(len(n) for n in names)) if names else len("statistic")
    col_w = {v: max(len(v), *(len(cells.get((n, v), "")) for n in names)) for v in variants}
    blocks: list[list[str]] = []
    current: list[str] = []
    used = name_w
    for v in variants:
        if current and used + 2 + col_w[v] > width:
            blocks.append(current)
            current, used = [], name_w
        current.append(v)
        used += 2 + col_w[v]
    if current:
        blocks.append(current)
    out = []
    for block in blocks:
        head = "statistic".ljust(name_w) + "".join("  " + v.rjust(col_w[v]) for v in block)
        lines = [head, "-" * name_w + "".join("  " + "-" * col_w[v] for v in block)]
        for n in names:
            if not any((n, v) in cells for v in block):
                continue
            lines.append(n.ljust(name_w) + "".join("  " + cells.get((n, v), "").rjust(col_w[v]) for v in block))
        out.append("\n".join(lines))
    text = "\n\n".join(out)
    if legend:
        text += "\n\n" + explain_text(names, brief=True)
    return text


def explain_text(names: Sequence[str] | None = None, brief: bool = False) -> str:
    """The definitions of the statistics (``names``: those shown; None: all)."""
    keys = list(DEFINITIONS) if names is None else list(dict.fromkeys(base_name(n) for n in names))
    head = (
        "Values: shares in %, Elo in points, means with 2 decimals; [low, high] is the 95% interval."
        if brief
        else "What each statistic of `arena stats` is (value [95% interval]; docs/ratings.md):"
    )
    w = max(len(k) for k in keys) if keys else 0
    shown = {"seat_win_rate": "seatS_win_rate[Np]"}
    return head + "\n" + "\n".join(f"  {shown.get(k, k).ljust(w)}  {DEFINITIONS.get(k, '')}" for k in keys)


def ratings_json(report: RatingReport) -> dict[str, Any]:
    """The report as plain JSON data (NaN becomes null)."""

    def rows(df: pd.DataFrame) -> Any:
        return json.loads(df.to_json(orient="records"))

    out: dict[str, Any] = {
        "ratings": rows(report.table),
        "head_to_head": rows(report.h2h),
        "los": {v: json.loads(m.to_json(orient="index")) for v, m in report.los.items()},
        "resamples": report.resamples,
        "seed": report.seed,
        "prior_sd": report.prior_sd,
        "anchor": report.anchor,
        "anchor_elo": report.anchor_elo,
        "drop_admin_faults": report.drop_admin_faults,
    }
    if report.integrity is not None and report.integrity.tested:  # only where a bot could be tested
        out["integrity"] = report.integrity.to_data()
    return out


def stats_json(table: pd.DataFrame) -> str:
    """Variant statistics as JSON records (NaN becomes null)."""
    text: str = table.to_json(orient="records", indent=1)
    return text
