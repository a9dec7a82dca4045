"""Arrow arrays built from their buffers, without ``pyarrow.array``.

Why: ``pyarrow.array`` imports pandas the first time it runs, to ask whether
its argument is a pandas object: 0.15 s on a fast machine, 0.4 s on a slow
one, that ``arena run``'s process paid as it wrote the run's tables, at the
end of the run, with no other use for pandas there (the end-of-run Elo table
is made by a helper process: arena/apps/ahead.py). These lay the arrays out
as Arrow does (a validity bitmap where a value is missing, then the values;
offsets and bytes for strings) from numpy arrays, which import nothing more.
Each gives the array ``pyarrow.array(values, type=...)`` would
(tests/test_columns.py compares them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

# Arrow's type alias -> the numpy dtype of its values.
_NUMBERS = {"int16": np.int16, "int32": np.int32, "int64": np.int64, "float64": np.float64}
_MAX_STRING_BYTES = 2 ** 31 - 1  # a string array's offsets are int32


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
    return pa.Array.from_buffers(pa.type_for_alias(kind), len(data), [bitmap, pa.py_buffer(data)],
                                 null_count=nulls)


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
    return pa.Array.from_buffers(pa.string(), n, [bitmap, pa.py_buffer(offsets.astype(np.int32)),
                                                  pa.py_buffer(b"".join(encoded))], null_count=nulls)


def column(values: Sequence[Any], kind: str) -> pa.Array:
    """Python values (None: missing) as an array of the type alias ``kind``:
    string, bool, int16, int32, int64 or float64."""
    if kind == "string":
        return strings(values)
    null = np.fromiter((v is None for v in values), dtype=bool, count=len(values))
    fill: Any = False if kind == "bool" else 0
    data = np.array([fill if v is None else v for v in values], dtype=bool if kind == "bool" else _NUMBERS[kind])
    return bools(data, null) if kind == "bool" else numbers(data, kind, null)


def table(arrays: dict[str, pa.Array]) -> pa.Table:
    """A table of these columns, in this order (``pyarrow.table`` of a dict
    asks whether it is a pandas DataFrame first, and imports pandas to know)."""
    import pyarrow as pa

    return pa.Table.from_arrays(list(arrays.values()), names=list(arrays))
