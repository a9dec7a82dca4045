"""notebooks/analysis.ipynb runs top to bottom against a small run folder."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from arena.running.config import load_config
from arena.running.runner import run as arena_run

pytest.importorskip("nbformat", reason="the test extra is not installed (pip install -e '.[test]')")
pytest.importorskip("nbclient", reason="the test extra is not installed (pip install -e '.[test]')")
import nbformat  # noqa: E402  (after the skip above)
from nbclient import NotebookClient  # noqa: E402  (after the skip above)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "analysis.ipynb"


def small_run(folder: Path) -> Path:
    """A real run: built-in bots in their sandboxes, two variants, 20 matches each."""
    cfg = folder / "nb.yaml"
    cfg.write_text(
        json.dumps(
            {
                "name": "nb",
                "seed": 3,
                "players": [3, 4],
                "matches": 20,
                "bots": ["random", "probabilistic", "cautious", "bluffer", "calza"],
                # Not in alphabetical order: the notebook's tables keep the run's.
                "variants": {"lizumo": {"preset": "lizumo"}, "classic": {"preset": "classic"}},
            }
        )
    )
    old = os.getcwd()
    os.chdir(ROOT)  # built-in bot names resolve from the project
    try:
        result = arena_run(load_config(cfg, out=str(folder / "league")))
    finally:
        os.chdir(old)
    assert result.status == "complete", result.error
    return folder / "league"


def test_analysis_notebook_executes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = small_run(tmp_path)
    monkeypatch.setenv("ARENA_RUN", str(run))
    monkeypatch.setenv("ARENA_RESAMPLES", "20")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    # Elo bars, head-to-head maps, variant statistics, seat win rates, rating changes, Elo scatter.
    assert len(images) >= 6
    text = "".join(o.get("text", "") for o in outputs)
    assert f"{run}: 40 matches" in text
    # The variant table: formatted for reading (no raw floats, no NaN), variants in the run's order.
    table = next(c for c in nb.cells if c.cell_type == "code" and "variant_table" in c.source)
    html = "".join(o["data"].get("text/html", "") for o in table.outputs if "data" in o)
    assert html and "NaN" not in html and not re.search(r"\d\.\d{5,}", html), html[:2000]
    header = re.findall(r"<th>(\w+)</th>", html.split("</thead>")[0])
    assert header.index("lizumo") < header.index("classic"), header
