"""Arrow arrays built from their buffers, without ``pyarrow.array`` or ``pyarrow.compute``.

Why: ``pyarrow.array`` imports pandas the first time it runs, to ask whether
its argument is a pandas object: 0.15 s on a fast machine, 0.4 s on a slow
one, that ``arena run``'s process paid as it wrote the run's tables, at the
end of the run, with no other use for pandas there (the end-of-run Elo table
is made by a helper process: arena/apps/ahead.py). These lay the arrays out
as Arrow does (a validity bitmap where a value is missing, then the values;
offsets and bytes for strings) from numpy arrays, which import nothing more.
Each gives the array ``pyarrow.array(values, type=...)`` would
(tests/test_columns.py compares them).

Nor ``Array.take``: it imports ``pyarrow.compute``, whose import wraps every
compute function and parses its docstring, 56 ms on a fast machine at the end
of every run, and its first takes cost as much again (docs/performance.md,
"Eleventh round"). :func:`picked` gathers strings with numpy instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

# Arrow's type alias -> the numpy dtype of its values.
_NUMBERS = {"int16": np.int16, "int32": np.int32, "int64": np.int64, "float64": np.float64}
_MAX_STRING_BYTES = 2**31 - 1  # a string array's offsets are int32


def _validity(null: np.ndarray | None) -> tuple[Any, int]:
    """The validity bitmap (bit set: a value) and the null count; no bitmap without a null."""
    if null is None:
        return None, 0
    nulls = int(np.count_nonzero(null))
    if nulls == 0:
        return None, 0
    import pyarrow as pa

    return pa.py_buffer(np.packbits(~null, bitorder="little")), nulls


def numbers(values: np.ndarray, kind: str, null: np.ndarray | None = None) -> pa.Array:
    """An int16/int32/int64/float64 array of ``values``; ``null``: where a value is missing."""
    import pyarrow as pa

    data = np.ascontiguousarray(values, dtype=_NUMBERS[kind])
    bitmap, nulls = _validity(null)
    return pa.Array.from_buffers(pa.type_for_alias(kind), len(data), [bitmap, pa.py_buffer(data)], null_count=nulls)


def bools(values: np.ndarray, null: np.ndarray | None = None) -> pa.Array:
    """A bool array of ``values`` (any numpy array: nonzero is true)."""
    import pyarrow as pa

    data = np.packbits(np.asarray(values).astype(bool), bitorder="little")
    bitmap, nulls = _validity(null)
    return pa.Array.from_buffers(pa.bool_(), len(values), [bitmap, pa.py_buffer(data)], null_count=nulls)


def strings(values: Sequence[str | None]) -> pa.Array:
    """A string array, None as a missing value (UTF-8; a string that is not,
    a lone surrogate, raises UnicodeEncodeError as ``pyarrow.array`` refuses it)."""
    import pyarrow as pa

    n = len(values)
    encoded = [b"" if s is None else s.encode() for s in values]
    null = np.fromiter((s is None for s in values), dtype=bool, count=n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=n), out=offsets[1:])
    if offsets[-1] > _MAX_STRING_BYTES:
        raise OverflowError(f"{offsets[-1]} bytes of strings do not fit one Arrow string array")
    bitmap, nulls = _validity(null)
    return pa.Array.from_buffers(
        pa.string(),
        n,
        [bitmap, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(encoded))],
        null_count=nulls,
    )


def picked(values: Sequence[str], at: np.ndarray, null: np.ndarray | None = None) -> pa.Array:
    """A string array of ``values[i]`` for each ``i`` in ``at`` (missing where
    ``null``): ``strings(values).take(at)``, gathered with numpy. The columns
    that repeat a record's match id, variant or bot on each of its rows."""
    import pyarrow as pa

    encoded = [s.encode() for s in values]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    width = max(lengths, default=0)
    at = np.asarray(at, dtype=np.int64)
    if null is not None:
        at = np.where(null, 0, at)
    sizes = lengths[at]
    if null is not None:
        sizes = np.where(null, 0, sizes)
    offsets = np.zeros(len(at) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    if offsets[-1] > _MAX_STRING_BYTES:
        raise OverflowError(f"{offsets[-1]} bytes of strings do not fit one Arrow string array")
    # Each string padded to the longest as a row of a matrix: rows are gathered
    # whole, then the padding is dropped (row-major, so the bytes stay in order).
    # Byte by byte instead (np.repeat of each row's start), the 8 columns of a
    # 2,000-match league took 136 ms as the run stopped; so, 41 (docs/performance.md,
    # "Eleventh round").
    padded = np.frombuffer(b"".join(e.ljust(width, b"\0") for e in encoded), dtype=np.uint8)
    rows = padded.reshape(len(encoded), width)[at]
    uniform = null is None and bool(np.all(lengths == width))
    data = rows.reshape(-1) if uniform else rows[np.arange(width) < sizes[:, None]]
    bitmap, nulls = _validity(null)
    return pa.Array.from_buffers(
        pa.string(), len(at), [bitmap, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)], null_count=nulls
    )


def column(values: Sequence[Any], kind: str) -> pa.Array:
    """Python values (None: missing) as an array of the type alias ``kind``:
    string, bool, int16, int32, int64 or float64."""
    if kind == "string":
        return strings(values)
    # As an object array first: its None test and conversion run in C, 0.41 ms
    # for 10,000 values against 1.08 with generators (docs/performance.md, "Eleventh round").
    boxed = np.empty(len(values), dtype=object)
    boxed[:] = values
    null = np.asarray(boxed == None)  # noqa: E711 - elementwise, in C
    if null.any():
        boxed[null] = False if kind == "bool" else 0
    data = boxed.astype(bool if kind == "bool" else _NUMBERS[kind])
    return bools(data, null) if kind == "bool" else numbers(data, kind, null)


def table(arrays: dict[str, pa.Array]) -> pa.Table:
    """A table of these columns, in this order (``pyarrow.table`` of a dict
    asks whether it is a pandas DataFrame first, and imports pandas to know)."""
    import pyarrow as pa

    return pa.Table.from_arrays(list(arrays.values()), names=list(arrays))
