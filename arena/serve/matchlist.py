"""The matches of a run folder as the match list and the viewer find them (docs/serve.md).

One :class:`MatchRow` per match (its id, variant, bots, places, faults and
where its line starts in the games file), made by :mod:`arena.serve.live`
from each line as a run appends it; a finished run's matches read from its
tables are kept as columns instead (:class:`MatchColumns`), rows made only
for the page shown; :func:`find_line` finds a record's line without
parsing any.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

__all__ = ["Fault", "MatchColumns", "MatchRow", "find_line"]


@dataclass(frozen=True, slots=True)
class Fault:
    seat: int
    kind: str
    round: Any
    detail: str


@dataclass(frozen=True, slots=True)
class MatchRow:
    """One recorded match, as the match list shows it and finds its record."""

    match: str
    variant: str
    bots: tuple[str, ...]
    placements: tuple[int, ...]
    first: int | None  # the seat that opened the match
    rounds: int | None
    faults: tuple[Fault, ...]
    offset: int | None  # where its line starts in games.jsonl; None: read from the tables or a .gz

    def public(self, elo: dict[str, float] | None = None) -> dict[str, Any]:
        winner = self.placements.index(1) if 1 in self.placements else None
        out: dict[str, Any] = {
            "match": self.match,
            "variant": self.variant,
            "players": [{"bot": b, "place": p} for b, p in zip(self.bots, self.placements, strict=True)],
            "winner": self.bots[winner] if winner is not None else None,
            "rounds": self.rounds,
            "faults": [{"bot": self.bots[f.seat], "kind": f.kind} for f in self.faults],
        }
        upset = self.upset(elo) if elo else None
        if upset is not None:
            out["upset"] = round(upset)
        return out

    def upset(self, elo: dict[str, float]) -> float | None:
        """How far (Elo) the winner stood below the best-rated player at the table."""
        if 1 not in self.placements or any(b not in elo for b in self.bots):
            return None
        return max(elo[b] for b in self.bots) - elo[self.bots[self.placements.index(1)]]


class MatchColumns:
    """The matches of a finished run as read from its tables, kept as columns
    (numpy arrays over codes) rather than a row object each: 100,000 matches
    are read, counted and filtered in a fraction of a second. Rows are made
    only for the page shown (:meth:`row`)."""

    def __init__(self, m: dict[str, Any], s: dict[str, Any], faults: list[tuple[Any, ...]]) -> None:
        self.ids: list[str] = m["match"]
        self.n = len(self.ids)
        self.pos = {mid: i for i, mid in enumerate(self.ids)}
        self.variant_names: list[str] = m["variant_names"]
        self.variant = m["variant"]  # code per match
        self.first = m["first"]  # -1: none
        self.rounds = m["rounds"]  # -1: none
        self.bot_names: list[str] = s["bot_names"]
        self.seat_bot = s["bot"]  # code per seat row, rows in match then seat order
        self.seat_place = s["place"]
        self.seat_match = s["match"]  # the match of each seat row
        self.players = np.bincount(self.seat_match, minlength=self.n)
        self.start = np.concatenate([[0], np.cumsum(self.players)[:-1]]).astype(np.int64)
        self.faults: dict[int, list[Fault]] = {}
        for mid, seat, rnd, kind, detail in faults:
            at = self.pos.get(mid)
            if at is not None and 0 <= seat < self.players[at]:
                self.faults.setdefault(at, []).append(Fault(seat, str(kind), rnd, str(detail)))

    def row(self, i: int) -> MatchRow:
        a, b = int(self.start[i]), int(self.start[i] + self.players[i])
        first, rounds = int(self.first[i]), int(self.rounds[i])
        return MatchRow(
            self.ids[i],
            self.variant_names[int(self.variant[i])],
            tuple(self.bot_names[c] for c in self.seat_bot[a:b].tolist()),
            tuple(self.seat_place[a:b].tolist()),
            first if first >= 0 else None,
            rounds if rounds >= 0 else None,
            tuple(self.faults.get(i, ())),
            None,
        )

    def rankings(self, code: list[int]) -> list[list[int]]:
        """Each match's bots best place first, as codes of the watch's index (``code``: ours to its)."""
        order = np.lexsort((self.seat_place, self.seat_match))
        flat = np.asarray(code, dtype=np.int64)[self.seat_bot[order]].tolist()
        starts, ends = self.start.tolist(), (self.start + self.players).tolist()
        return [flat[a:b] for a, b in zip(starts, ends, strict=True)]

    def select(self, bot: str, variant: str, fault: str, q: str) -> np.ndarray:
        """The positions of the matches that pass the filter (as :meth:`RunWatch.matches` reads it)."""
        keep = np.ones(self.n, dtype=bool)
        if bot:
            has = np.zeros(self.n, dtype=bool)
            if bot in self.bot_names:
                has[self.seat_match[self.seat_bot == self.bot_names.index(bot)]] = True
            keep &= has
        if variant:
            keep &= (
                self.variant == self.variant_names.index(variant)
                if variant in self.variant_names
                else np.zeros(self.n, dtype=bool)
            )
        if fault:
            has = np.zeros(self.n, dtype=bool)
            hit = [i for i, fs in self.faults.items() if fault == "any" or any(f.kind == fault for f in fs)]
            has[np.asarray(hit, dtype=np.int64)] = True
            keep &= has
        if q:
            keep &= np.fromiter((q in mid for mid in self.ids), dtype=bool, count=self.n)
        return np.flatnonzero(keep)

    def upsets(self, elo: dict[str, float], at: np.ndarray) -> np.ndarray:
        """:meth:`MatchRow.upset` of the matches at ``at`` (NaN where a bot is not rated)."""
        rating = np.array([elo.get(b, np.nan) for b in self.bot_names], dtype=np.float64)
        if not self.n:
            return np.zeros(0)
        seat_elo = rating[self.seat_bot]
        best: np.ndarray = np.maximum.reduceat(seat_elo, self.start)
        winner = np.full(self.n, np.nan)
        won = self.seat_place == 1
        winner[self.seat_match[won]] = seat_elo[won]
        out: np.ndarray = (best - winner)[at]
        return out


def find_line(path: Path, match: str) -> bytes | None:
    """The line of the games file that starts with ``match``'s id, as the
    store writes records (compact JSON, ``match`` first), found without
    parsing a line: a memory map searched for the bytes."""
    needle = b'\n{"match":' + orjson.dumps(match) + b","
    with open(path, "rb") as fh:
        if fh.seek(0, 2) == 0:
            return None
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            at = 0 if mm[: len(needle) - 1] == needle[1:] else mm.find(needle)
            if at < 0:
                return None
            start = at + 1 if mm[at : at + 1] == b"\n" else at
            end = mm.find(b"\n", start)
            return bytes(mm[start : end if end >= 0 else len(mm)])
