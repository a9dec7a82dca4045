"""The analysis tables of a run as files: ``tables/<name>.parquet``, one per
table of :mod:`arena.running.tables` (matches, seats, rounds, actions, faults),
with the very columns and rows the analysis derives from the match records.

They exist so that ``arena stats`` and ``arena report`` need not parse every
record and tabulate every bid in Python (most of their time on a league):
reading them is a few hundredths of a second. Like ``matches.parquet`` they are
derived, never the source of truth: :mod:`arena.running.store` writes them
whenever a run stops, and a reader uses them only while they match the games
file byte for byte in size (each file's metadata records it), else it reads
the records.

Cheap at the end of a run, because the work is done where the record is
made: each worker turns its record into a :class:`RecordTables` (its rows,
the many rows of rounds and bids as small int64 arrays rather than Python
tuples) and sends it with the line; the store only sorts the records' parts
by match, concatenates them and writes. No pandas here (the run layer has
none): pyarrow tables, which the analysis turns into DataFrames.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from mypy_extensions import mypyc_attr

from arena.engine.records import MatchRecord
from arena.errors import FaultKind
from arena.running import columns
from arena.running.tables import (
    ACTION_COLUMNS,
    FAULT_COLUMNS,
    MATCH_COLUMNS,
    ROUND_COLUMNS,
    SEAT_COLUMNS,
    PlayedAction,
    Row,
    fault_rows,
    match_row,
    play_rows,
    seat_rows,
)

if TYPE_CHECKING:
    import pyarrow as pa

NAMES = ("matches", "seats", "rounds", "actions", "faults")
COLUMNS: dict[str, tuple[str, ...]] = {
    "matches": MATCH_COLUMNS,
    "seats": SEAT_COLUMNS,
    "rounds": ROUND_COLUMNS,
    "actions": ACTION_COLUMNS,
    "faults": FAULT_COLUMNS,
}

_STRING = {
    "matches": {"match", "variant", "first_bot", "winner_bot", "end"},
    "seats": {"match", "variant", "bot", "fault"},
    "rounds": {"match", "variant", "call", "fault_kind"},
    "actions": {"match", "variant", "bot", "action"},
    "faults": {"match", "variant", "bot", "kind", "detail"},
}
_BOOL = {
    "matches": set(),
    "seats": {"first"},
    "rounds": {"palifico", "call_right", "bid_true"},
    "actions": {"true"},
    "faults": set(),
}
_FLOAT = {"matches": {"seconds"}, "seats": {"seconds"}, "rounds": set(), "actions": set(), "faults": set()}


def arrow_type(table: str, column: str) -> str:
    """The pyarrow type alias of a column: string, bool, float64, else int64 (nulls allowed in all)."""
    if column in _STRING[table]:
        return "string"
    if column in _BOOL[table]:
        return "bool"
    return "float64" if column in _FLOAT[table] else "int64"


# Rounds and bids travel as int64 arrays: every column but the match's own
# (match, variant) and the seat's (bot), None as NULL, strings as codes.
NULL = int(np.iinfo(np.int64).min)
CODES: dict[str, tuple[str, ...]] = {
    "call": ("dudo", "calza"),
    "action": ("bid", "dudo", "calza"),
    "fault_kind": tuple(k.value for k in FaultKind),
}
CODED = {"rounds": ROUND_COLUMNS[2:], "actions": ("round", "index", "seat", "action", "quantity", "face", "true")}


@mypyc_attr(native_class=False)  # compiled (arena/compiled.py), it still pickles: workers send it
@dataclass(frozen=True, slots=True)
class RecordTables:
    """One record's rows of every table, as a worker sends them with its line.
    ``matches`` is its one match row with ``line`` 0 (a record's place in
    schedule order is known only beside all the others); ``rounds`` and
    ``actions`` are (rows, len(CODED[name])) int64 arrays."""

    match: str
    variant: str
    matches: Row
    seats: list[Row]
    rounds: np.ndarray
    actions: np.ndarray
    faults: list[Row]


_ROUND_CODES: tuple[tuple[str, ...] | None, ...] = tuple(CODES.get(c) for c in CODED["rounds"])
_ACTION_CODE: dict[str, int] = {a: i for i, a in enumerate(CODES["action"])}


def _encoded_rounds(rows: list[Row]) -> np.ndarray:
    """play_rows' round rows as int64 (CODED["rounds"], their columns in order)."""
    flat: list[int] = []
    for row in rows:
        for v, code in zip(row, _ROUND_CODES):
            flat.append(NULL if v is None else (code.index(v) if code is not None else int(v)))  # type: ignore[call-overload]
    return np.array(flat, dtype=np.int64).reshape(len(rows), len(_ROUND_CODES))


def _encoded_actions(rows: list[PlayedAction]) -> np.ndarray:
    """play_rows' action rows as int64 (CODED["actions"], their columns in order)."""
    flat: list[int] = []
    for r, i, s, a, q, f, t in rows:
        flat += (
            r,
            i,
            s,
            _ACTION_CODE[a],
            NULL if q is None else q,
            NULL if f is None else f,
            NULL if t is None else int(t),
        )
    return np.array(flat, dtype=np.int64).reshape(len(rows), len(CODED["actions"]))


def record_tables(rec: MatchRecord) -> RecordTables | None:
    """The record's rows of every table (those :func:`arena.running.tables.tables`
    gives), rounds and actions encoded; or None if one of them holds a value the
    encoding does not know (then the store derives the tables from the records
    instead: nothing is lost, only time). Made from :func:`play_rows` directly:
    the rows :func:`tables` would make, then encode, cost a worker 134 us a
    match against 110 (docs/performance.md)."""
    rounds, actions, decisions, palifico_rounds = play_rows(rec)
    try:
        coded_rounds, coded_actions = _encoded_rounds(rounds), _encoded_actions(actions)
    except (ValueError, TypeError, OverflowError, KeyError):
        return None
    return RecordTables(
        rec.match,
        rec.variant,
        match_row(rec, 0, decisions, palifico_rounds),
        seat_rows(rec),
        coded_rounds,
        coded_actions,
        fault_rows(rec),
    )


def _decoded(name: str, column: str, values: np.ndarray) -> pa.Array:
    null = values == NULL
    code = CODES.get(column)
    if code is not None:
        return columns.picked(code, values, null)
    kind = arrow_type(name, column)
    return columns.bools(values, null) if kind == "bool" else columns.numbers(values, kind, null)


def arrow_tables(parts: Sequence[RecordTables]) -> dict[str, pa.Table]:
    """Every table of these records as pyarrow tables, records in schedule
    order (by match id) and ``line`` their position in it: the tables
    :func:`arena.running.tables.tables` gives for the sorted records. Built
    without ``pyarrow.array``, which would import pandas (arena/running/columns.py)."""
    ordered = sorted(parts, key=lambda p: p.match)
    out: dict[str, pa.Table] = {}
    for name, rows in (
        ("matches", [p.matches for p in ordered]),
        ("seats", list(itertools.chain.from_iterable(p.seats for p in ordered))),
        ("faults", list(itertools.chain.from_iterable(p.faults for p in ordered))),
    ):
        cols = COLUMNS[name]
        values = list(zip(*rows)) if rows else [()] * len(cols)
        arrays = {c: columns.column(v, arrow_type(name, c)) for c, v in zip(cols, values)}
        if name == "matches":
            arrays["line"] = columns.numbers(np.arange(len(rows)), "int64")
        out[name] = columns.table(arrays)
    ids = [p.match for p in ordered]
    variants = [p.variant for p in ordered]
    # Seat s of the record at position m is row first_seat[m] + s of the seat table.
    players = np.array([len(p.seats) for p in ordered], dtype=np.int64)
    first_seat = np.concatenate([[0], np.cumsum(players)[:-1]]).astype(np.int64)
    bot_at = COLUMNS["seats"].index("bot")
    bots = [str(row[bot_at]) for p in ordered for row in p.seats]
    for name in ("rounds", "actions"):
        blocks = [getattr(p, name) for p in ordered]
        width = len(CODED[name])
        coded = np.concatenate(blocks) if blocks else np.empty((0, width), dtype=np.int64)
        at = np.repeat(np.arange(len(ordered), dtype=np.int64), [len(b) for b in blocks])  # each row's record
        arrays = {"match": columns.picked(ids, at), "variant": columns.picked(variants, at)}
        for j, c in enumerate(CODED[name]):
            arrays[c] = _decoded(name, c, coded[:, j])
        if name == "actions":
            seat_rows = first_seat[at] + coded[:, CODED[name].index("seat")]
            arrays["bot"] = columns.picked(bots, seat_rows)
        out[name] = columns.table({c: arrays[c] for c in COLUMNS[name]})
    return out


def check(name: str, table: pa.Table) -> bool:
    """Whether a table read back has the columns and types :func:`arrow_tables` gives it."""
    import pyarrow as pa

    return table.column_names == list(COLUMNS[name]) and all(
        table.schema.field(c).type == pa.type_for_alias(arrow_type(name, c)) for c in COLUMNS[name]
    )


def merged(old: dict[str, pa.Table], new: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """Two sets of tables of different records as one, in schedule order: a
    resumed run's tables read back (``old``, :func:`check`-ed) and those of
    the matches it played since. Arrow's sort is stable, so a match's rows
    keep their order; ``line`` is renumbered."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out: dict[str, pa.Table] = {}
    for name in NAMES:
        table = pa.concat_tables([old[name].replace_schema_metadata(None), new[name].replace_schema_metadata(None)])
        table = table.take(pc.sort_indices(table, sort_keys=[("match", "ascending")]))
        if name == "matches":
            at = table.column_names.index("line")
            table = table.set_column(at, "line", pa.array(np.arange(table.num_rows, dtype=np.int64)))
        out[name] = table
    return out
