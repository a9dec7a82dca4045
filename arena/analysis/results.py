"""Load a run folder into pandas DataFrames.

``load(run)`` reads ``run.json`` and the match records (through the run
folder's one reader, :func:`arena.running.store.read_records`) and nothing
else, so it works on any run, finished or not: a last line cut short by an
interrupted writer is skipped (``Results.truncated`` says so), a match
recorded twice counts once (``Results.repeats``), and a bad line anywhere else
is an error naming the file and line. The rows come from
:mod:`arena.running.tables`, the one place they are derived. A run that
stopped wrote them as files (``tables/``, :mod:`arena.running.tablefiles`):
while those were made from the games file as it is, ``load`` reads them
instead of the records, many times faster, and gives the same frames
(``Results.records`` then reads the records the first time it is used, and
:meth:`Results.records_of` only the few asked for). ``matches.parquet`` is read only to rate
(``seats_only``). Both are derived from the records and may lag behind them
in an unfinished run: then the records are read.

Columns (one row per ...):

``matches`` (match):
    match, variant, line (0-based position in schedule order, that is by
    match id), seed, players, first (seat opening round 1), first_bot, winner
    (seat placed 1), winner_bot, rounds_played, decisions (actions in all
    rounds), palifico_rounds, faults (number of faults), end (how the match
    ended: elimination, forfeit or max_rounds), seconds (wall time; NaN if
    absent).
``seats`` (match and seat):
    match, variant, seat, bot, place (1 = winner), players, first (this seat
    opened round 1), rounds (rounds played in the match), dice_left,
    out_round (round in which the seat lost its last die or faulted; NA for
    players still in at the end), fault (kind of the seat's first fault, or
    NA), seconds (the bot's thinking time, from ``think``; NaN if absent),
    held (bit mask of the numbers of dice held at the start of a round: bit
    k set when the seat once started a round with k dice).
``rounds`` (round of a match):
    match, variant, round, opener, palifico, players (players in),
    dice_in_play, bids, decisions (bids and calls), call ("dudo", "calza" or
    None for a void round), caller, bidder (seat of the standing bid),
    quantity, face (the standing bid), count, change_seat, delta (dice change
    the call caused; negative for a loss), call_right (the call was right:
    dudo when count < quantity, calza when count == quantity), bid_true
    (count >= quantity), fault_seat, fault_kind (for a void round).
``actions`` (action):
    match, variant, round, index (0-based within the round), seat, bot,
    action ("bid", "dudo", "calza"), quantity, face (NA for calls), true
    (the bid was true when made, by the round's dice; NA for calls).
``faults`` (fault):
    match, variant, seat, bot, round (NA for a fault outside a round, e.g. at
    match start), kind, detail.

Seat numbers are the record's (after seating); nullable integer columns use
pandas' ``Int64`` so that "none" stays distinct from 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import numpy as np
import pandas as pd

from arena.engine.records import MatchRecord
from arena.errors import RunError
from arena.running.store import (
    GAMES_BYTES,
    Repeat,
    RunFolder,
    read_matches,
    read_records,
    read_run_json,
    read_tables,
)
from arena.running.tables import ACTION_COLUMNS, FAULT_COLUMNS, MATCH_COLUMNS, ROUND_COLUMNS, SEAT_COLUMNS, tables

__all__ = [
    "ACTION_COLUMNS",
    "FAULT_COLUMNS",
    "MATCH_COLUMNS",
    "ROUND_COLUMNS",
    "SEAT_COLUMNS",
    "FolderRecords",
    "Results",
    "from_records",
    "load",
    "match_seeds",
]

_INT_COLUMNS = {
    "matches": ["line", "players", "first", "winner", "rounds_played", "decisions", "palifico_rounds", "faults"],
    "seats": ["seat", "place", "players", "rounds", "dice_left", "out_round", "held"],
    "rounds": [
        "round",
        "opener",
        "players",
        "dice_in_play",
        "bids",
        "decisions",
        "caller",
        "bidder",
        "quantity",
        "face",
        "count",
        "change_seat",
        "delta",
        "fault_seat",
    ],
    "actions": ["round", "index", "seat", "quantity", "face"],
    "faults": ["seat", "round"],
}
_BOOL_COLUMNS = {"rounds": ["call_right", "bid_true"], "actions": ["true"]}
_FLOAT_COLUMNS = {"matches": ["seconds"], "seats": ["seconds"]}


@dataclass
class Results:
    """A loaded run folder: ``run`` is run.json as a dict, ``records`` the
    match records (schedule order), the rest are the DataFrames documented in
    this module's docstring."""

    path: Path
    run: dict[str, Any]
    matches: pd.DataFrame
    seats: pd.DataFrame
    rounds: pd.DataFrame
    actions: pd.DataFrame
    faults: pd.DataFrame
    truncated: bool = False  # an incomplete last line was skipped
    records: Sequence[MatchRecord] = field(default_factory=list, repr=False)
    repeats: tuple[Repeat, ...] = ()  # later records of a match already recorded, left out
    notes: list[str] = field(default_factory=list)  # what the loader left out, in words for the user
    seats_only: bool = False  # loaded from matches.parquet: no rounds, actions or records (see load)
    from_tables: bool = False  # loaded from the run's tables/ files: every table, but no records (see load)

    def records_of(self, ids: Sequence[str]) -> dict[str, MatchRecord]:
        """The records of these matches (those recorded), by id: from ``records``
        when they are in memory, else read from the run folder (a few lines of it)."""
        unread = isinstance(self.records, FolderRecords) and not self.records.loaded
        if unread or (self.seats_only and not self.records):
            return read_matches(self.path, ids)
        wanted = set(ids)
        return {r.match: r for r in self.records if r.match in wanted}

    @property
    def variants(self) -> list[str]:
        """Variant names: run.json's order first, then any others in record order."""
        names = [str(v) for v in (self.run.get("variants") or {})]
        for v in self.matches["variant"].unique():
            if v not in names:
                names.append(str(v))
        return names


class FolderRecords(Sequence[MatchRecord]):
    """A run folder's records in schedule order, read the first time they are
    used: what ``Results.records`` holds when the tables were read from the
    folder's tables/ files, which most analyses never need."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._items: list[MatchRecord] | None = None

    @property
    def loaded(self) -> bool:
        return self._items is not None

    def _all(self) -> list[MatchRecord]:
        if self._items is None:
            self._items = sorted(read_records(self.path).records, key=lambda r: r.match)
        return self._items

    @overload
    def __getitem__(self, i: int) -> MatchRecord: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[MatchRecord]: ...

    def __getitem__(self, i: int | slice) -> MatchRecord | Sequence[MatchRecord]:
        return self._all()[i]

    def __len__(self) -> int:
        return len(self._all())


def _typed(frames: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The column types of the module docstring, whichever way the tables were read."""
    for name, cols in _INT_COLUMNS.items():
        for col in cols:
            frames[name][col] = frames[name][col].astype("Int64")
    for name, cols in _BOOL_COLUMNS.items():
        for col in cols:
            frames[name][col] = frames[name][col].astype("boolean")
    for name, cols in _FLOAT_COLUMNS.items():
        for col in cols:
            frames[name][col] = frames[name][col].astype("float64")
    frames["seats"]["fault"] = frames["seats"]["fault"].astype("string")
    frames["seats"]["first"] = frames["seats"]["first"].astype(bool)
    frames["rounds"]["palifico"] = frames["rounds"]["palifico"].astype(bool)
    return frames


def _frames(records: Sequence[MatchRecord]) -> dict[str, pd.DataFrame]:
    rows = tables(records)
    return _typed(
        {
            "matches": pd.DataFrame(rows.matches, columns=list(MATCH_COLUMNS)),
            "seats": pd.DataFrame(rows.seats, columns=list(SEAT_COLUMNS)),
            "rounds": pd.DataFrame(rows.rounds, columns=list(ROUND_COLUMNS)),
            "actions": pd.DataFrame(rows.actions, columns=list(ACTION_COLUMNS)),
            "faults": pd.DataFrame(rows.faults, columns=list(FAULT_COLUMNS)),
        }
    )


def _table_frames(arrow: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """The frames of the run's tables/ files (:func:`arena.running.store.read_tables`):
    the same as :func:`_frames` gives for the folder's records, sorted."""
    frames = {}
    for name, table in arrow.items():
        if table.num_rows == 0:  # as pandas makes a table of no rows: every column object
            frames[name] = pd.DataFrame(columns=list(table.column_names))
            continue
        df = table.to_pandas()
        # Strings as pandas makes them of the records' values: its string type
        # (a missing one NaN), but object for a column of None alone.
        for column in table.schema:
            if str(column.type) != "string":
                continue
            if table.column(column.name).null_count == table.num_rows:
                df[column.name] = pd.Series([None] * table.num_rows, dtype=object)
            elif df[column.name].dtype == object:
                df[column.name] = df[column.name].astype("str")
        frames[name] = df
    return _typed(frames)


def from_records(records: Sequence[MatchRecord], run: dict[str, Any] | None = None, path: Path | str = ".") -> Results:
    """Results from match records already in memory (tests, notebooks), in the order given."""
    frames = _frames(records)
    return Results(
        Path(path),
        dict(run or {}),
        frames["matches"],
        frames["seats"],
        frames["rounds"],
        frames["actions"],
        frames["faults"],
        records=list(records),
    )


def _parquet_fresh(folder: RunFolder, meta: dict[str, Any]) -> bool:
    """matches.parquet holds every record: written when the run stopped, and
    the match file not appended to since (a compressed run's games.jsonl.gz is
    made from the closed file just after the parquet, before run.json)."""
    games = folder.games_file()
    parquet = folder.matches
    if games is None or not parquet.is_file():
        return False
    p, g = parquet.stat().st_mtime_ns, games.stat().st_mtime_ns
    if g <= p:
        return True
    return (
        games.name.endswith(".gz")
        and meta.get("status") == "complete"
        and folder.run_json.is_file()
        and g <= folder.run_json.stat().st_mtime_ns
    )


def _from_parquet(path: Path, meta: dict[str, Any]) -> Results | None:
    """The seat and match tables from matches.parquet (enough to rate a run),
    or None if it cannot be read as the run folder writes it."""
    try:
        import pyarrow.parquet as pq

        seats = pq.read_table(path).to_pandas()
    except Exception:  # noqa: BLE001 - any unreadable parquet: fall back to the records
        return None
    wanted = [c for c in SEAT_COLUMNS if c not in ("first", "held")]
    if list(seats.columns) != wanted:
        return None
    seats = seats.sort_values(["match", "seat"], kind="stable").reset_index(drop=True)
    seats.insert(SEAT_COLUMNS.index("first"), "first", False)
    seats["held"] = pd.array([pd.NA] * len(seats), dtype="Int64")
    for col in _INT_COLUMNS["seats"]:
        seats[col] = seats[col].astype("Int64")
    seats["fault"] = seats["fault"].astype("string")
    seats["seconds"] = seats["seconds"].astype("float64")
    first = seats.drop_duplicates("match")
    winners = seats[seats["place"] == 1].drop_duplicates("match").set_index("match")
    faults = seats[seats["fault"].notna()]
    nfaults = faults.groupby("match").size()
    ids = first["match"].to_numpy()
    matches = pd.DataFrame({c: pd.Series([pd.NA] * len(ids), dtype="object") for c in MATCH_COLUMNS})
    matches["match"] = ids
    matches["variant"] = first["variant"].to_numpy()
    matches["line"] = np.arange(len(ids))  # schedule order, as load() sorts the records
    matches["players"] = first["players"].to_numpy()
    matches["winner"] = winners["seat"].reindex(ids).to_numpy()
    matches["winner_bot"] = winners["bot"].reindex(ids).to_numpy()
    matches["rounds_played"] = first["rounds"].to_numpy()
    matches["faults"] = nfaults.reindex(ids, fill_value=0).to_numpy()
    matches["seconds"] = np.nan
    for col in _INT_COLUMNS["matches"]:
        matches[col] = matches[col].astype("Int64")
    fault_rows = pd.DataFrame(
        {
            "match": faults["match"],
            "variant": faults["variant"],
            "seat": faults["seat"],
            "bot": faults["bot"],
            "round": faults["out_round"],
            "kind": faults["fault"].astype(object),
            "detail": "",
        },
        columns=list(FAULT_COLUMNS),
    ).reset_index(drop=True)
    empty_rounds = pd.DataFrame(columns=list(ROUND_COLUMNS))
    empty_actions = pd.DataFrame(columns=list(ACTION_COLUMNS))
    return Results(path.parent, meta, matches, seats, empty_rounds, empty_actions, fault_rows, seats_only=True)


def match_seeds(run: str | Path) -> dict[str, int]:
    """Each recorded match's seed (its deal's dice seed), by match id: from the
    run's tables/matches.parquet when it was made from the games file as it is
    (one column read), else from the records."""
    folder = RunFolder(Path(run))
    games = folder.games_file()
    path = folder.table("matches")
    if games is not None and path.is_file():
        try:
            import pyarrow.parquet as pq

            table = pq.read_table(path, columns=["match", "seed"])
            if (table.schema.metadata or {}).get(GAMES_BYTES) == str(games.stat().st_size).encode():
                return {
                    str(m): int(s)
                    for m, s in zip(table.column("match").to_pylist(), table.column("seed").to_pylist())
                    if s is not None
                }
        except Exception:  # noqa: BLE001 - an unreadable table: the records are read instead
            pass
    return {r.match: r.seed for r in read_records(folder.path).records}


def load(run: str | Path, *, seats_only: bool = False) -> Results:
    """Load a run folder: run.json and every recorded match.

    ``seats_only``: what rating needs (the seat and match tables, faults by
    kind) and no more, read from matches.parquet when it holds every record
    (a stopped run), which is many times faster than the match records; then
    ``rounds`` and ``actions`` are empty, ``records`` too, the match columns
    the parquet cannot give (seed, first, decisions...) are NA, and a fault's
    detail is empty. Otherwise every table is read, from the run's tables/
    files when they are fresh, else from the records."""
    folder = RunFolder(Path(run))
    if not folder.path.is_dir():
        raise RunError(f"{folder.path}: no such run folder (arena run writes results/<config name>/)")
    if not folder.is_run():
        raise RunError(f"{folder.path}: not a run folder (no run.json and no games.jsonl)")
    meta = read_run_json(folder.path) or {}
    if seats_only and _parquet_fresh(folder, meta):
        fast = _from_parquet(folder.matches, meta)
        if fast is not None:
            return fast
    arrow = read_tables(folder.path)
    if arrow is not None:
        # The tables a stopped run wrote from these very records: the same
        # frames as the records give, without parsing them. No records.
        frames = _table_frames(arrow)
        return Results(
            folder.path,
            meta,
            frames["matches"],
            frames["seats"],
            frames["rounds"],
            frames["actions"],
            frames["faults"],
            records=FolderRecords(folder.path),
            from_tables=True,
        )
    read = read_records(folder.path)
    # Schedule order, not file order: workers finish matches in any order, and
    # everything computed from a run (bootstrap resamples included) must be the
    # same for the same records.
    records = sorted(read.records, key=lambda r: r.match)
    res = from_records(records, meta, folder.path)
    res.truncated = read.truncated
    res.repeats = read.repeats
    note = read.note()
    if note is not None:
        res.notes.append(note)
    return res
