"""Load a run folder into pandas DataFrames.

``load(run)`` reads ``run.json`` and the match records (through the run
folder's one reader, :func:`arena.running.store.read_records`) and nothing
else, so it works on any run, finished or not: a last line cut short by an
interrupted writer is skipped (``Results.truncated`` says so), a match
recorded twice counts once (``Results.repeats``), and a bad line anywhere else
is an error naming the file and line. ``matches.parquet`` is not read: it is
derived from the same records and may lag behind them in an unfinished run.
The rows come from :mod:`arena.running.tables`, the one place they are derived.

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
    NA), seconds (the bot's thinking time, from ``think``; NaN if absent).
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
    action ("bid", "dudo", "calza"), quantity, face (NA for calls).
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
from typing import Any

import pandas as pd

from arena.engine.records import MatchRecord
from arena.errors import RunError
from arena.running.store import Repeat, RunFolder, read_records, read_run_json
from arena.running.tables import ACTION_COLUMNS, FAULT_COLUMNS, MATCH_COLUMNS, ROUND_COLUMNS, SEAT_COLUMNS, tables

__all__ = ["ACTION_COLUMNS", "FAULT_COLUMNS", "MATCH_COLUMNS", "ROUND_COLUMNS", "SEAT_COLUMNS", "Results",
           "from_records", "load"]

_INT_COLUMNS = {
    "matches": ["line", "players", "first", "winner", "rounds_played", "decisions", "palifico_rounds", "faults"],
    "seats": ["seat", "place", "players", "rounds", "dice_left", "out_round"],
    "rounds": ["round", "opener", "players", "dice_in_play", "bids", "decisions", "caller", "bidder",
               "quantity", "face", "count", "change_seat", "delta", "fault_seat"],
    "actions": ["round", "index", "seat", "quantity", "face"],
    "faults": ["seat", "round"],
}
_BOOL_COLUMNS = {"rounds": ["call_right", "bid_true"]}
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
    records: list[MatchRecord] = field(default_factory=list, repr=False)
    repeats: tuple[Repeat, ...] = ()  # later records of a match already recorded, left out
    notes: list[str] = field(default_factory=list)  # what the loader left out, in words for the user

    @property
    def variants(self) -> list[str]:
        """Variant names: run.json's order first, then any others in record order."""
        names = [str(v) for v in (self.run.get("variants") or {})]
        for v in self.matches["variant"].unique():
            if v not in names:
                names.append(str(v))
        return names


def _frames(records: Sequence[MatchRecord]) -> dict[str, pd.DataFrame]:
    rows = tables(records)
    frames = {
        "matches": pd.DataFrame(rows.matches, columns=list(MATCH_COLUMNS)),
        "seats": pd.DataFrame(rows.seats, columns=list(SEAT_COLUMNS)),
        "rounds": pd.DataFrame(rows.rounds, columns=list(ROUND_COLUMNS)),
        "actions": pd.DataFrame(rows.actions, columns=list(ACTION_COLUMNS)),
        "faults": pd.DataFrame(rows.faults, columns=list(FAULT_COLUMNS)),
    }
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


def from_records(records: Sequence[MatchRecord], run: dict[str, Any] | None = None,
                 path: Path | str = ".") -> Results:
    """Results from match records already in memory (tests, notebooks), in the order given."""
    frames = _frames(records)
    return Results(Path(path), dict(run or {}), frames["matches"], frames["seats"], frames["rounds"],
                   frames["actions"], frames["faults"], records=list(records))


def load(run: str | Path) -> Results:
    """Load a run folder: run.json and every recorded match."""
    folder = RunFolder(Path(run))
    if not folder.path.is_dir():
        raise RunError(f"{folder.path}: no such run folder (arena run writes results/<config name>/)")
    if not folder.is_run():
        raise RunError(f"{folder.path}: not a run folder (no run.json and no games.jsonl)")
    meta = read_run_json(folder.path) or {}
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
