"""Plain aligned text tables for the terminal (no dependency: pandas'
``to_string`` right-aligns everything and prints ``NaN``/``<NA>`` noise)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd


def _cell(value: Any, fmt: str | None) -> str:
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
