"""Arrow arrays built from their buffers (arena/running/columns.py) are the
arrays pyarrow.array makes of the same values, and the run's tables are
written without importing pandas."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from synth_records import league

from arena.analysis.results import from_records, load
from arena.running import columns
from arena.running.store import read_records

pytest.importorskip("hypothesis", reason="the test extra is not installed (pip install -e '.[test]')")
from hypothesis import given  # noqa: E402  (after the skip above)
from hypothesis import strategies as st  # noqa: E402  (after the skip above)

LIMITS = {"int16": 2**15, "int32": 2**31, "int64": 2**63}


@pytest.mark.parametrize("kind", ["int16", "int32", "int64"])
@given(data=st.data())
def test_integer_columns_are_pyarrows(kind: str, data: st.DataObject) -> None:
    bound = LIMITS[kind]
    values = data.draw(st.lists(st.none() | st.integers(-bound, bound - 1), max_size=40))
    assert columns.column(values, kind).equals(pa.array(values, type=pa.type_for_alias(kind)))


@given(st.lists(st.none() | st.floats(allow_nan=False), max_size=40))
def test_float_columns_are_pyarrows(values: list[float | None]) -> None:
    assert columns.column(values, "float64").equals(pa.array(values, type=pa.float64()))


@given(st.lists(st.none() | st.booleans(), max_size=40))
def test_bool_columns_are_pyarrows(values: list[bool | None]) -> None:
    assert columns.column(values, "bool").equals(pa.array(values, type=pa.bool_()))


@given(st.lists(st.none() | st.text(alphabet=st.characters(exclude_categories=("Cs",))), max_size=40))
def test_string_columns_are_pyarrows(values: list[str | None]) -> None:
    made = columns.column(values, "string")
    assert made.equals(pa.array(values, type=pa.string()))
    made.validate(full=True)


@given(st.lists(st.text(alphabet=st.characters(exclude_categories=("Cs",))), min_size=1, max_size=12), st.data())
def test_picked_strings_are_pyarrows_take(values: list[str], data: st.DataObject) -> None:
    at = data.draw(st.lists(st.integers(0, len(values) - 1), max_size=60))
    null = data.draw(st.lists(st.booleans(), min_size=len(at), max_size=len(at)))
    index = np.array(at, dtype=np.int64)
    mask = np.array(null, dtype=bool)
    made = columns.picked(values, index, mask)
    made.validate(full=True)
    assert made.equals(pa.array(values, type=pa.string()).take(pa.array(index, mask=mask)))
    assert columns.picked(values, index).equals(pa.array([values[i] for i in at], type=pa.string()))


def test_a_mask_makes_the_same_nulls_as_pyarrows() -> None:
    values = np.array([5, -1, 7, 0], dtype=np.int64)
    null = np.array([False, True, False, True])
    assert columns.numbers(values, "int64", null).equals(pa.array(values, mask=null))
    assert columns.bools(values, null).equals(pa.array(values.astype(bool), mask=null))
    assert columns.numbers(values, "int64", np.zeros(4, dtype=bool)).null_count == 0


def test_a_string_that_is_not_unicode_is_refused() -> None:
    with pytest.raises(UnicodeEncodeError):
        columns.strings(["ok", "\ud800"])


def test_writing_a_runs_tables_imports_no_pandas(tmp_path: Path) -> None:
    """arena run's process writes matches.parquet and tables/ without pandas,
    nor pyarrow.compute: importing them there cost the end of every run
    0.15-0.4 s and 0.06 s (docs/performance.md)."""
    folder = league(tmp_path / "run", matches_per_variant=20)
    code = f"""
import sys
from pathlib import Path
from arena.running.store import read_records, write_matches_parquet, write_tables
from arena.running.tablefiles import record_tables
from arena.running.tables import parquet_rows
folder = Path({str(folder)!r})
records = read_records(folder).records
for p in [folder / "matches.parquet", *(folder / "tables").iterdir()]:
    p.unlink()
write_matches_parquet(folder, parquet_rows(records))
write_tables(folder, [record_tables(r) for r in records])
assert (folder / "tables" / "actions.parquet").is_file(), "no tables written"
print("pandas" in sys.modules, "pyarrow.compute" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
    assert load(folder).seats.equals(from_records(read_records(folder).records).seats)
