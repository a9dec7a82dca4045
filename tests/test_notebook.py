"""notebooks/analysis.ipynb runs top to bottom against a small run folder."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import synth_records as S

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "analysis.ipynb"


def test_analysis_notebook_executes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = S.league(tmp_path / "league", matches_per_variant=20)
    monkeypatch.setenv("ARENA_RUN", str(run))
    monkeypatch.setenv("ARENA_RESAMPLES", "20")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    # Elo bars, head-to-head maps, variant statistics, seat win rates, rating changes, Elo scatter.
    assert len(images) >= 6
    text = "".join(o.get("text", "") for o in outputs)
    assert f"{run}: 40 matches" in text
