"""A run followed as it plays: ``arena serve --run RUN_FOLDER`` (docs/serve.md).

:class:`RunWatch` reads the run folder's games file from where it last
stopped (the records a run's store appends, one line each) and keeps, per
bot, the counts a page shows: matches, wins, mean place, faults by kind; the
latest faults with the reason the referee recorded; how many matches are
recorded of how many planned, and how fast they come. It only reads the
folder, as ``arena ratings`` does, and never blocks the run: the store
writes whole lines, and a line not yet ended is left for the next look.

The Elo table with its intervals is the run's own (``ratings.csv``, written
when the run stops); while a run plays, the page shows the counts.
"""

from __future__ import annotations

import csv
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from arena.engine.records import MatchRecord
from arena.errors import RunError
from arena.running.store import RunFolder, iter_records, read_run_json

__all__ = ["RunWatch"]

RECENT_FAULTS = 20  # the latest faults shown, newest first
RATE_WINDOW_S = 60.0  # matches per second over about this long


# A record's keys around its rounds (docs/records.md): match ... bots, first, then
# "rounds", then placements ... faults. Inside a JSON string every quote is
# escaped, so these byte patterns occur only as the record's own keys.
_ROUNDS = re.compile(rb',\s*"rounds"\s*:')
_PLACEMENTS = re.compile(rb'\]\s*,\s*"placements"\s*:')


def _outline(line: bytes) -> dict[str, Any] | None:
    """The record's fields but its rounds, parsed without its rounds (most of
    its bytes); the whole line where it is not laid out as expected; None if
    it is not a JSON object."""
    # The store writes compact JSON: find its bytes (memmem), else the patterns.
    start = line.find(b',"rounds":')
    cut = line.find(b'],"placements":', start) if start >= 0 else -1
    if start < 0 or cut < 0:
        head_end = _ROUNDS.search(line)
        tail = _PLACEMENTS.search(line, head_end.end()) if head_end else None
        start, cut = (head_end.start(), tail.start()) if head_end is not None and tail is not None else (-1, -1)
    try:
        if start >= 0 and cut >= 0:
            head = orjson.loads(line[:start] + b"}")
            rest = orjson.loads(b"{" + line[cut + 1 :].lstrip()[1:])
            if isinstance(head, dict) and isinstance(rest, dict):
                return {**head, **rest}
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            return None
    return obj if isinstance(obj, dict) else None


@dataclass(frozen=True)
class _Fault:
    seat: int
    kind: str
    round: Any
    detail: str


@dataclass
class _Tally:
    matches: int = 0
    wins: int = 0
    places: int = 0
    faults: int = 0


class RunWatch:
    """What a page shows of one run folder, brought up to date on each look."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.paths = RunFolder(folder)
        if not self.paths.is_run():
            raise RunError(
                f"{folder}: not a run folder (no run.json or games file): give the folder a run writes (results/NAME)"
            )
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._offset = 0
        self._size_seen = 0
        self._read_gz = False
        self._count = 0
        self._bots: dict[str, _Tally] = {}
        self._kinds: dict[str, int] = {}
        self._faults: deque[dict[str, Any]] = deque(maxlen=RECENT_FAULTS)
        self._seen: deque[tuple[float, int]] = deque()

    # -- reading ---------------------------------------------------------------

    def _add(self, match: str, bots: list[str], placements: list[int], faults: list[_Fault]) -> None:
        self._count += 1
        faulted = {f.seat for f in faults}
        for seat, name in enumerate(bots):
            t = self._bots.setdefault(name, _Tally())
            t.matches += 1
            t.wins += placements[seat] == 1
            t.places += placements[seat]
            t.faults += seat in faulted
        for f in faults:
            self._kinds[f.kind] = self._kinds.get(f.kind, 0) + 1
            self._faults.appendleft(
                {"match": match, "bot": bots[f.seat], "kind": f.kind, "round": f.round, "detail": f.detail}
            )

    def _add_record(self, rec: MatchRecord) -> None:
        self._add(
            rec.match,
            list(rec.bots),
            list(rec.placements),
            [_Fault(f.seat, str(f.kind), f.round, f.detail) for f in rec.faults],
        )

    def _add_line(self, line: bytes) -> None:
        """One line of the games file, read for its counts only (a full
        :meth:`MatchRecord.from_json` of every line made the first look at a
        large run take tens of seconds); a line that is not a record as
        docs/records.md describes it is passed over, as a torn one."""
        obj = _outline(line)
        if obj is None:
            return
        match, bots, places = obj.get("match"), obj.get("bots"), obj.get("placements")
        if not (
            isinstance(match, str)
            and isinstance(bots, list)
            and isinstance(places, list)
            and len(bots) == len(places)
            and all(isinstance(b, str) for b in bots)
            and all(type(p) is int for p in places)
        ):
            return
        faults = []
        for f in obj.get("faults") or ():
            if isinstance(f, dict) and type(f.get("seat")) is int and 0 <= f["seat"] < len(bots):
                faults.append(_Fault(f["seat"], str(f.get("kind")), f.get("round"), str(f.get("detail", ""))))
        self._add(match, bots, places, faults)

    def _read_new(self) -> None:
        plain, gz = self.paths.games, self.paths.games_gz
        if plain.exists():
            size = plain.stat().st_size
            if size < self._size_seen:  # rewritten (a resumed run drops a torn last line): read it again
                self._reset()
            with open(plain, "rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
            end = data.rfind(b"\n") + 1  # a line not yet ended waits for the next look
            for line in data[:end].split(b"\n"):
                if line.strip():
                    self._add_line(line)
            self._offset += end
            self._size_seen = size
        elif gz.exists() and not self._read_gz:  # a finished, compressed run: read once
            self._reset()
            for rec in iter_records(self.folder):
                self._add_record(rec)
            self._read_gz = True

    # -- the page's view -----------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            self._read_new()
            now = time.monotonic()
            self._seen.append((now, self._count))
            while len(self._seen) > 2 and now - self._seen[0][0] > RATE_WINDOW_S:
                self._seen.popleft()
            t0, c0 = self._seen[0]
            rate = (self._count - c0) / (now - t0) if now > t0 else 0.0
            try:
                meta = read_run_json(self.folder) or {}
            except RunError:
                meta = {}
            schedule = meta.get("schedule") if isinstance(meta.get("schedule"), dict) else {}
            total = schedule.get("total") if isinstance(schedule, dict) else None
            ranked = sorted(self._bots.items(), key=lambda nt: (nt[1].places / nt[1].matches, -nt[1].matches, nt[0]))
            standings = [
                {
                    "bot": name,
                    "matches": t.matches,
                    "wins": t.wins,
                    "win_rate": t.wins / t.matches,
                    "mean_place": t.places / t.matches,
                    "faults": t.faults,
                }
                for name, t in ranked
            ]
            return {
                "name": str(meta.get("name") or self.folder.name),
                "status": str(meta.get("status") or "unknown"),
                "recorded": self._count,
                "total": total if isinstance(total, int) else None,
                "per_second": rate,
                "standings": standings,
                "fault_kinds": dict(sorted(self._kinds.items())),
                "faults": list(self._faults),
                "ratings": self._ratings(),
            }

    def _ratings(self) -> list[dict[str, str]] | None:
        """The run's Elo table with its intervals (``ratings.csv``), once the run wrote it."""
        path = self.paths.ratings
        if not path.exists():
            return None
        try:
            with open(path, newline="", encoding="utf-8") as fh:
                return [dict(row) for row in csv.DictReader(fh)][:500]
        except (OSError, csv.Error, UnicodeDecodeError):
            return None
