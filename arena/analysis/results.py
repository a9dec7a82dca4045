"""Load a run folder (shared/RESULTS.md) into pandas DataFrames.

``load(run)`` reads ``run.json`` and ``games.jsonl`` (or ``games.jsonl.gz``)
and nothing else, so it works on any run, finished or not: a last line cut
short by an interrupted writer is skipped (``Results.truncated`` says so),
while a bad line anywhere else is an error naming the file and line.
``matches.parquet`` is not read: it is derived from the same records and may
lag behind them in an unfinished run.

Columns (one row per ...):

``matches`` (match):
    match, variant, line (0-based position in games.jsonl), seed, players,
    first (seat opening round 1), first_bot, winner (seat placed 1),
    winner_bot, rounds_played, decisions (actions in all rounds),
    palifico_rounds, faults (number of faults), seconds (wall time).
``seats`` (match and seat):
    match, variant, seat, bot, place (1 = winner), players, first (this seat
    opened round 1), rounds (rounds played in the match), dice_left,
    out_round (round in which the seat lost its last die or faulted; NA for
    players still in at the end), fault (kind of the seat's first fault, or
    None), seconds (the bot's thinking time, from ``think``; NaN if absent).
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

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from arena.errors import RunError
from arena.running.store import GAMES, GAMES_GZ, numbered_records

DEFAULT_DICE = 5  # RULES.md default, used when a record's rules omit "dice"

MATCH_COLUMNS = [
    "match", "variant", "line", "seed", "players", "first", "first_bot", "winner",
    "winner_bot", "rounds_played", "decisions", "palifico_rounds", "faults", "seconds",
]
SEAT_COLUMNS = [
    "match", "variant", "seat", "bot", "place", "players", "first", "rounds",
    "dice_left", "out_round", "fault", "seconds",
]
ROUND_COLUMNS = [
    "match", "variant", "round", "opener", "palifico", "players", "dice_in_play", "bids",
    "decisions", "call", "caller", "bidder", "quantity", "face", "count", "change_seat",
    "delta", "call_right", "bid_true", "fault_seat", "fault_kind",
]
ACTION_COLUMNS = ["match", "variant", "round", "index", "seat", "bot", "action", "quantity", "face"]
FAULT_COLUMNS = ["match", "variant", "seat", "bot", "round", "kind", "detail"]

_INT_COLUMNS = {
    "matches": ["line", "players", "first", "winner", "rounds_played", "decisions", "palifico_rounds", "faults"],
    "seats": ["seat", "place", "players", "rounds", "dice_left", "out_round"],
    "rounds": ["round", "opener", "players", "dice_in_play", "bids", "decisions", "caller", "bidder",
               "quantity", "face", "count", "change_seat", "delta", "fault_seat"],
    "actions": ["round", "index", "seat", "quantity", "face"],
    "faults": ["seat", "round"],
}
_BOOL_COLUMNS = {"rounds": ["call_right", "bid_true"]}


@dataclass
class Results:
    """A loaded run folder: ``run`` is run.json as a dict, the rest are the
    DataFrames documented in this module's docstring."""

    path: Path
    run: dict[str, Any]
    matches: pd.DataFrame
    seats: pd.DataFrame
    rounds: pd.DataFrame
    actions: pd.DataFrame
    faults: pd.DataFrame
    truncated: bool = False  # an incomplete last line was skipped
    records: list[dict[str, Any]] = field(default_factory=list, repr=False)

    @property
    def variants(self) -> list[str]:
        """Variant names: run.json's order first, then any others in record order."""
        names = [str(v) for v in (self.run.get("variants") or {})]
        for v in self.matches["variant"].unique():
            if v not in names:
                names.append(str(v))
        return names


def read_records(folder: Path) -> tuple[list[dict[str, Any]], bool]:
    """The match records of a run folder in file order, and whether an
    incomplete last line was skipped (:func:`arena.running.store.numbered_records`,
    which every reader of a run folder shares); a match recorded twice is an error."""
    path, numbered, truncated = numbered_records(folder)
    seen: dict[str, int] = {}
    for lineno, rec in numbered:
        mid = str(rec["match"])
        if mid in seen:
            raise RunError(f"{path}, line {lineno}: match {mid!r} already recorded on line {seen[mid]}")
        seen[mid] = lineno
    return [rec for _, rec in numbered], truncated


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _frames_from_records(records: list[dict[str, Any]]) -> dict[str, pd.DataFrame]:
    matches: list[tuple[Any, ...]] = []
    seats: list[tuple[Any, ...]] = []
    rounds: list[tuple[Any, ...]] = []
    actions: list[tuple[Any, ...]] = []
    faults: list[tuple[Any, ...]] = []
    for line, rec in enumerate(records):
        mid = str(rec["match"])
        variant = str(rec.get("variant", ""))
        bots = [str(b) for b in rec["bots"]]
        n = len(bots)
        placements = [int(p) for p in rec["placements"]]
        if len(placements) != n:
            raise RunError(f"match {mid}: {len(placements)} placements for {n} bots")
        max_dice = int((rec.get("rules") or {}).get("dice", DEFAULT_DICE))
        dice = [max_dice] * n
        out_round: list[int | None] = [None] * n
        seat_fault: list[str | None] = [None] * n
        n_decisions = 0
        n_palifico = 0
        rec_rounds = rec.get("rounds") or []
        for rnd in rec_rounds:
            r = int(rnd["round"])
            hands = rnd.get("dice") or []
            players = sum(1 for h in hands if isinstance(h, list) and h) if hands else sum(1 for x in dice if x)
            in_play = sum(len(h) for h in hands if isinstance(h, list)) if hands else sum(dice)
            acts = rnd.get("actions") or []
            bids = 0
            standing: tuple[int, int, int] | None = None  # (seat, quantity, face)
            call: str | None = None
            caller: int | None = None
            for idx, act in enumerate(acts):
                seat = int(act[0])
                kind = str(act[1])
                if kind == "bid":
                    q, f = int(act[2]), int(act[3])
                    bids += 1
                    standing = (seat, q, f)
                    actions.append((mid, variant, r, idx, seat, bots[seat], kind, q, f))
                else:
                    call, caller = kind, seat
                    actions.append((mid, variant, r, idx, seat, bots[seat], kind, None, None))
            n_decisions += len(acts)
            palifico = bool(rnd.get("palifico", False))
            n_palifico += palifico
            count = _opt_int(rnd.get("count"))
            change = rnd.get("change") or None
            fault = rnd.get("fault") or None
            bid_q = standing[1] if standing else None
            call_right: bool | None = None
            bid_true: bool | None = None
            if fault is None and call is not None and count is not None and bid_q is not None:
                bid_true = count >= bid_q
                call_right = count < bid_q if call == "dudo" else count == bid_q
            if change is not None:
                s, delta = int(change["seat"]), int(change["delta"])
                dice[s] = min(max_dice, max(0, dice[s] + delta))
                if dice[s] == 0 and out_round[s] is None:
                    out_round[s] = r
            if fault is not None:
                fs = int(fault["seat"])
                dice[fs] = 0
                if out_round[fs] is None:
                    out_round[fs] = r
            rounds.append((
                mid, variant, r, _opt_int(rnd.get("opener")), palifico, players, in_play, bids,
                len(acts), None if fault is not None else call, None if fault is not None else caller,
                standing[0] if standing else None, bid_q, standing[2] if standing else None,
                count, int(change["seat"]) if change else None, int(change["delta"]) if change else None,
                call_right, bid_true,
                int(fault["seat"]) if fault else None, str(fault.get("kind", "")) if fault else None,
            ))
        # Every fault of the match: the record's "faults" list when present
        # (it includes faults outside rounds), else those voiding rounds.
        rec_faults = rec.get("faults")
        if rec_faults is None:
            rec_faults = [
                {"seat": rnd["fault"]["seat"], "round": rnd["round"], "kind": rnd["fault"].get("kind", ""),
                 "detail": rnd["fault"].get("detail", "")}
                for rnd in rec_rounds if rnd.get("fault")
            ]
        for fl in rec_faults:
            fs = int(fl["seat"])
            fr = _opt_int(fl.get("round"))
            kind = str(fl.get("kind", ""))
            faults.append((mid, variant, fs, bots[fs], fr, kind, str(fl.get("detail", ""))))
            if seat_fault[fs] is None:
                seat_fault[fs] = kind
            dice[fs] = 0
            if out_round[fs] is None and fr is not None:
                out_round[fs] = fr
        think = rec.get("think") or [None] * n
        first = _opt_int(rec.get("first"))
        winner = placements.index(1) if 1 in placements else None
        rounds_played = int(rec.get("rounds_played", len(rec_rounds)))
        for s in range(n):
            seats.append((
                mid, variant, s, bots[s], placements[s], n, first == s, rounds_played, dice[s],
                out_round[s], seat_fault[s], float(think[s]) if think[s] is not None else float("nan"),
            ))
        matches.append((
            mid, variant, line, rec.get("seed"), n, first, bots[first] if first is not None else None,
            winner, bots[winner] if winner is not None else None, rounds_played, n_decisions,
            n_palifico, len(rec_faults), float(rec.get("seconds", float("nan"))),
        ))
    frames = {
        "matches": pd.DataFrame(matches, columns=MATCH_COLUMNS),
        "seats": pd.DataFrame(seats, columns=SEAT_COLUMNS),
        "rounds": pd.DataFrame(rounds, columns=ROUND_COLUMNS),
        "actions": pd.DataFrame(actions, columns=ACTION_COLUMNS),
        "faults": pd.DataFrame(faults, columns=FAULT_COLUMNS),
    }
    for name, cols in _INT_COLUMNS.items():
        for col in cols:
            frames[name][col] = frames[name][col].astype("Int64")
    for name, cols in _BOOL_COLUMNS.items():
        for col in cols:
            frames[name][col] = frames[name][col].astype("boolean")
    frames["seats"]["fault"] = frames["seats"]["fault"].astype("string")
    frames["seats"]["first"] = frames["seats"]["first"].astype(bool)
    frames["rounds"]["palifico"] = frames["rounds"]["palifico"].astype(bool)
    return frames


def from_records(records: list[dict[str, Any]], run: dict[str, Any] | None = None,
                 path: Path | str = ".") -> Results:
    """Results from match records already in memory (tests, notebooks)."""
    try:
        frames = _frames_from_records(records)
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise RunError(f"{path}: a match record does not follow RESULTS.md ({type(exc).__name__}: {exc})") from None
    return Results(Path(path), dict(run or {}), records=records, **frames)


def load(run: str | Path) -> Results:
    """Load a run folder: run.json and every recorded match."""
    folder = Path(run)
    if not folder.is_dir():
        raise RunError(f"{folder}: no such run folder (arena run writes results/<config name>/)")
    meta_path = folder / "run.json"
    meta: dict[str, Any] = {}
    if meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise RunError(f"{meta_path}: not valid JSON ({exc})") from None
    elif not ((folder / GAMES).exists() or (folder / GAMES_GZ).exists()):
        raise RunError(f"{folder}: not a run folder (no run.json and no games.jsonl)")
    records, truncated = read_records(folder)
    # Schedule order, not file order: workers finish matches in any order, and
    # everything computed from a run (bootstrap resamples included) must be the
    # same for the same records.
    records.sort(key=lambda r: str(r.get("match", "")))
    res = from_records(records, meta, folder)
    res.truncated = truncated
    return res
