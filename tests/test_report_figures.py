"""The report's figures keep every label inside the picture, at one, two and
twelve variants: each text's drawn extent (titles, tick labels, colour-bar
labels, cell values) lies within the figure, measured on the figure as it is
drawn into the page's PNG. Text clipped there is lost: a PNG has no overflow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from synth_records import wide

from arena.analysis import report

SLACK = 1.0  # pixels: anti-aliasing at the very edge


def figures(folder: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Every figure the report of ``folder`` draws, by plot id."""
    found: dict[str, Any] = {}
    real = report._img

    def keep(plot_id: str, fig: Any, alt: str) -> str:
        found[plot_id] = fig
        return real(plot_id, fig, alt)

    monkeypatch.setattr(report, "_img", keep)
    report.build_report(folder, resamples=20)
    return found


def outside(fig: Any) -> list[str]:
    """What of ``fig`` is drawn (partly) outside it, with by how much: each
    axes with its tick labels, axis labels and title, each colour bar with its
    label, and the figure's own title. (Only the ticks drawn count: matplotlib
    keeps the labels of ticks outside the view, undrawn.)"""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    parts: list[tuple[str, Any]] = []
    for ax in fig.axes:
        name = ax.get_label() or ax.get_ylabel() or ax.get_title() or "axes"
        parts.append((f"axes {name!r}", ax.get_tightbbox(renderer)))
    for text in fig.texts + ([fig._suptitle] if fig._suptitle is not None else []):
        if text.get_visible() and text.get_text().strip():
            parts.append((repr(text.get_text()), text.get_window_extent(renderer)))
    bad = []
    for name, box in parts:
        over = max(-box.x0, -box.y0, box.x1 - width, box.y1 - height)
        if over > SLACK:
            bad.append(f"{name} by {over:.0f} px")
    return bad


@pytest.mark.parametrize("variants", [1, 2, 12])
def test_no_label_is_clipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variants: int) -> None:
    folder = wide(tmp_path / "run", variants=variants, bots=6 if variants < 12 else 12, matches_per_variant=30)
    found = figures(folder, monkeypatch)
    assert "elo" in found and any(k.startswith("seats-") for k in found) and any(k.startswith("stat-") for k in found)
    clipped = {key: bad for key, fig in found.items() if (bad := outside(fig))}
    assert not clipped, clipped
