"""What the analysis commands print, pinned: ``arena ratings``, ``arena stats``,
``arena replay`` and the table ``arena run`` ends with, on two fixed run folders
(the real run of tests/data/run-2026-12-01, written before records had a type,
and the hand-built records of synth_records.py, which carry faults).

The expected outputs in tests/data/golden/ were written by the code as it was
before the analysis was split into computation, formatting and file writing;
the test shows a user sees the very same text and files. When an output is
meant to change, regenerate them (``python tests/test_golden.py``) and say why
in the commit.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synth_records as S  # noqa: E402

from arena.apps.cli import main  # noqa: E402

GOLDEN = HERE / "data" / "golden"
OLD_RUN = HERE / "data" / "run-2026-12-01"

# (name, folder, arguments after the folder); the folder is "old" or "hand".
COMMANDS: list[tuple[str, str, list[str]]] = [
    ("old-ratings", "old", ["ratings", "--no-write"]),
    ("old-ratings-h2h", "old", ["ratings", "--no-write", "--h2h"]),
    ("old-ratings-csv", "old", ["ratings", "--no-write", "--csv"]),
    ("old-ratings-variant", "old", ["ratings", "--no-write", "--variant", "lizumo", "--anchor", "random=1000"]),
    ("old-stats", "old", ["stats", "--no-write"]),
    ("old-stats-csv", "old", ["stats", "--no-write", "--csv"]),
    ("hand-ratings", "hand", ["ratings", "--no-write", "--h2h", "--resamples", "50"]),
    ("hand-ratings-admin", "hand", ["ratings", "--no-write", "--drop-admin-faults", "--resamples", "50"]),
    ("hand-ratings-csv", "hand", ["ratings", "--no-write", "--csv", "--resamples", "50"]),
    ("hand-stats", "hand", ["stats", "--no-write", "--resamples", "50"]),
    ("hand-stats-csv", "hand", ["stats", "--no-write", "--csv", "--resamples", "50"]),
]
# JSON output: compared as data, floats to 1e-9 (their last digits are the
# linear algebra library's, not the project's).
JSON_COMMANDS: list[tuple[str, str, list[str]]] = [
    ("old-ratings-json", "old", ["ratings", "--no-write", "--json"]),
    ("old-stats-json", "old", ["stats", "--no-write", "--json"]),
    ("hand-ratings-json", "hand", ["ratings", "--no-write", "--json", "--resamples", "50"]),
    ("hand-stats-json", "hand", ["stats", "--no-write", "--json", "--resamples", "50"]),
]
REPLAYS = [("old-replay-m-000004", "m-000004"), ("old-replay-m-000023", "23")]


def folders(root: Path) -> dict[str, Path]:
    """Fresh copies of the two run folders (the commands may write into them)."""
    old = root / "old"
    shutil.copytree(OLD_RUN, old)
    hand = S.write_run(root / "hand", S.hand_built(), {"v1": {"dice": 2}, "v2": {"dice": 1}})
    return {"old": old, "hand": hand}


def invoke(args: list[str]) -> str:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return result.stdout


def end_of_run(folder: Path) -> tuple[str, bytes]:
    """What `arena run` prints at the end, and the ratings.csv it leaves."""
    from arena.analysis import commands

    text = commands.elo_table_text(folder)
    return text, (folder / "ratings.csv").read_bytes()


def outputs(root: Path) -> dict[str, str | bytes]:
    where = folders(root)
    out: dict[str, str | bytes] = {}
    for name, folder, args in COMMANDS + JSON_COMMANDS:
        out[name] = invoke([args[0], str(where[folder]), *args[1:]])
    for name, match in REPLAYS:
        out[name] = invoke(["replay", str(where["old"]), match])
    for folder in ("old", "hand"):
        text, csv = end_of_run(where[folder])
        out[f"{folder}-end-of-run"] = text
        out[f"{folder}-end-of-run-ratings.csv"] = csv
        invoke(["stats", str(where[folder])])
        out[f"{folder}-variant_stats.csv"] = (where[folder] / "variant_stats.csv").read_bytes()
    return out


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return bool(a == b) and type(a) is type(b)


@pytest.fixture(scope="module")
def produced(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | bytes]:
    return outputs(tmp_path_factory.mktemp("golden"))


EXACT = (
    [name for name, _, _ in COMMANDS]
    + [name for name, _ in REPLAYS]
    + [f"{f}-{what}" for f in ("old", "hand") for what in ("end-of-run", "end-of-run-ratings.csv", "variant_stats.csv")]
)


@pytest.mark.parametrize("name", EXACT)
def test_output_is_unchanged(produced: dict[str, str | bytes], name: str) -> None:
    got = produced[name]
    want = (GOLDEN / name).read_bytes()
    assert (got if isinstance(got, bytes) else got.encode()) == want


@pytest.mark.parametrize("name", [name for name, _, _ in JSON_COMMANDS])
def test_json_output_is_unchanged(produced: dict[str, str | bytes], name: str) -> None:
    got = produced[name]
    assert isinstance(got, str)
    assert _close(json.loads(got), json.loads((GOLDEN / name).read_text()))


if __name__ == "__main__":  # regenerate: python tests/test_golden.py
    import tempfile

    GOLDEN.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for key, value in outputs(Path(tmp)).items():
            (GOLDEN / key).write_bytes(value if isinstance(value, bytes) else value.encode())
            print(f"wrote {GOLDEN / key}")  # noqa: T201
