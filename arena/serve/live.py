"""A run followed as it plays: ``arena serve RUN_FOLDER`` and ``arena run --serve`` (docs/serve.md).

:class:`RunWatch` reads the run folder's games file from where it last
stopped (the records a run's store appends, one line each) and keeps one
small row per match (its id, variant, bots, placements, faults and where its
line starts) and, per bot, the counts a page shows. From those it makes what
the live page shows: progress and pace; an Elo table with intervals over
every bot (the analysis's Plackett-Luce fit with a small bootstrap, as
``arena run`` prints it live, refitted at a pace that keeps fitting under
:data:`MAX_SHARE` of the time); per-variant statistics once a variant has
:data:`MIN_VARIANT` matches; the latest faults with the reason the referee
recorded and a warning per bot that faults often. The match list of the
viewer (:meth:`RunWatch.matches`) and a match's record (:meth:`RunWatch.record`)
come from the same rows.

It only reads the folder, as ``arena ratings`` does, and never blocks the
run: the store writes whole lines, and a line not yet ended is left for the
next look. A folder whose tables (``tables/*.parquet``, written when a run
stops) match its games file is read from them, not record by record: the
first look at a finished run of 100,000 matches takes about a second.
"""

from __future__ import annotations

import csv
import math
import re
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from arena.elo import Z95
from arena.engine.records import MatchRecord
from arena.errors import ArenaError, RunError
from arena.running.observe import ARENA_FAULT
from arena.running.store import GAMES_BYTES, RunFolder, iter_records, read_matches, read_run_json
from arena.serve.matchlist import Fault, MatchColumns, MatchRow, find_line

__all__ = ["RunWatch"]

RECENT_FAULTS = 20  # the latest faults shown, newest first
RATE_WINDOW_S = 60.0  # matches per second over about this long
PAGE = 50  # matches per page of the match list
MAX_SHARE = 0.01  # at most this share of wall time spent fitting the live Elo table
FIT_EVERY_S = 2.0  # and no more often than this
RESAMPLES = 8  # bootstrap fits for the live intervals (arena ratings uses the full bootstrap)
MIN_INTERVAL = 5  # matches a bot plays before its interval is shown
MIN_VARIANT = 30  # matches of a variant before its statistics are shown
WARN_AFTER = 20  # matches a bot plays before its fault rate can warn (as arena run's live standings)
WARN_RATE = 0.2  # share of a bot's matches with a fault of its own that warns


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


@dataclass
class _Tally:
    matches: int = 0
    wins: int = 0
    places: int = 0
    faults: int = 0  # matches with a fault of the bot's own
    kinds: Counter[str] = field(default_factory=Counter)


@dataclass
class _Variant:
    matches: int = 0
    rounds: int = 0
    rounds_sq: int = 0
    with_rounds: int = 0
    first_won: int = 0
    with_first: int = 0
    faulted: int = 0


class RunWatch:
    """What a page shows of one run folder, brought up to date on each look."""

    def __init__(self, folder: Path, clock: Any = time.monotonic) -> None:
        self.folder = folder
        self.paths = RunFolder(folder)
        if not self.paths.is_run():
            raise RunError(
                f"{folder}: not a run folder (no run.json or games file): give the folder a run writes (results/NAME)"
            )
        self._clock = clock
        self._lock = threading.Lock()
        self._fit_lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._offset = 0
        self._size_seen = 0
        self._read_gz = False
        self._tables_tried = False
        self._base: MatchColumns | None = None  # a finished run's matches, from its tables
        self._rows: list[MatchRow] = []  # every other match, as read from its line
        self._by_id: dict[str, int] = {}
        self._bots: dict[str, _Tally] = {}
        self._kinds: dict[str, int] = {}
        self._faults: deque[dict[str, Any]] = deque(maxlen=RECENT_FAULTS)
        self._seen: deque[tuple[float, int]] = deque()
        self._index: dict[str, int] = {}
        self._rankings: list[list[int]] = []
        self._variants: dict[str, _Variant] = {}
        self._elo: dict[str, Any] | None = None
        self._fitted = 0  # matches the last fit saw
        self._fit_seconds = 0.0
        self._fits = 0
        self._next_fit = 0.0
        self._fitting = False

    @property
    def _count(self) -> int:
        return len(self._rows) + (self._base.n if self._base is not None else 0)

    # -- reading ---------------------------------------------------------------

    def _add(self, row: MatchRow) -> None:
        if row.match in self._by_id or (self._base is not None and row.match in self._base.pos):
            return  # a repeated record (a resumed run's): the first counts, as read_records
        self._by_id[row.match] = len(self._rows)
        self._rows.append(row)
        own = {f.seat: f.kind for f in row.faults if f.kind != ARENA_FAULT}
        for seat, name in enumerate(row.bots):
            t = self._bots.get(name)
            if t is None:
                t = self._bots[name] = _Tally()
            t.matches += 1
            t.wins += row.placements[seat] == 1
            t.places += row.placements[seat]
            if seat in own:
                t.faults += 1
                t.kinds[own[seat]] += 1
        for f in row.faults:
            self._kinds[f.kind] = self._kinds.get(f.kind, 0) + 1
            self._faults.appendleft(
                {"match": row.match, "bot": row.bots[f.seat], "kind": f.kind, "round": f.round, "detail": f.detail}
            )
        ranking = []
        for seat in sorted(range(len(row.bots)), key=lambda s: row.placements[s]):
            ranking.append(self._index.setdefault(row.bots[seat], len(self._index)))
        self._rankings.append(ranking)
        v = self._variants.get(row.variant)
        if v is None:
            v = self._variants[row.variant] = _Variant()
        v.matches += 1
        v.faulted += bool(own)
        if row.rounds is not None:
            v.with_rounds += 1
            v.rounds += row.rounds
            v.rounds_sq += row.rounds * row.rounds
        if row.first is not None and 0 <= row.first < len(row.placements):
            v.with_first += 1
            v.first_won += row.placements[row.first] == 1

    def _add_record(self, rec: MatchRecord) -> None:
        self._add(
            MatchRow(
                rec.match,
                rec.variant,
                tuple(rec.bots),
                tuple(rec.placements),
                rec.first,
                rec.rounds_played,
                tuple(Fault(f.seat, str(f.kind.value), f.round, f.detail) for f in rec.faults),
                None,
            )
        )

    def _add_base(self, base: MatchColumns) -> None:
        """A finished run's matches from its tables: counted by columns."""
        self._base = base
        n_bots = len(base.bot_names)
        for name in base.bot_names:
            self._index.setdefault(name, len(self._index))
        matches = np.bincount(base.seat_bot, minlength=n_bots)
        wins = np.bincount(base.seat_bot, weights=base.seat_place == 1, minlength=n_bots)
        places = np.bincount(base.seat_bot, weights=base.seat_place, minlength=n_bots)
        for code, name in enumerate(base.bot_names):
            if matches[code]:
                self._bots[name] = _Tally(int(matches[code]), int(wins[code]), int(places[code]))
        own_by_match: dict[int, dict[int, str]] = {}
        for at in sorted(base.faults):
            fs = base.faults[at]
            own = {f.seat: f.kind for f in fs if f.kind != ARENA_FAULT}
            if own:
                own_by_match[at] = own
            for seat, kind in own.items():
                t = self._bots[base.bot_names[int(base.seat_bot[base.start[at] + seat])]]
                t.faults += 1
                t.kinds[kind] += 1
            for f in fs:
                self._kinds[f.kind] = self._kinds.get(f.kind, 0) + 1
                self._faults.appendleft(
                    {
                        "match": base.ids[at],
                        "bot": base.bot_names[int(base.seat_bot[base.start[at] + f.seat])],
                        "kind": f.kind,
                        "round": f.round,
                        "detail": f.detail,
                    }
                )
        faulted = np.zeros(base.n, dtype=bool)
        faulted[np.asarray(list(own_by_match), dtype=np.int64)] = True
        has_first = (base.first >= 0) & (base.first < base.players)
        first_seat = base.start + np.where(has_first, base.first, 0)
        first_won = has_first & (base.seat_place[np.minimum(first_seat, max(0, len(base.seat_place) - 1))] == 1)
        has_rounds = base.rounds >= 0
        rounds = np.where(has_rounds, base.rounds, 0)
        k = len(base.variant_names)
        counts = {
            "matches": np.bincount(base.variant, minlength=k),
            "rounds": np.bincount(base.variant, weights=rounds, minlength=k),
            "rounds_sq": np.bincount(base.variant, weights=rounds * rounds, minlength=k),
            "with_rounds": np.bincount(base.variant, weights=has_rounds, minlength=k),
            "first_won": np.bincount(base.variant, weights=first_won, minlength=k),
            "with_first": np.bincount(base.variant, weights=has_first, minlength=k),
            "faulted": np.bincount(base.variant, weights=faulted, minlength=k),
        }
        for code, name in enumerate(base.variant_names):
            if counts["matches"][code]:
                self._variants[name] = _Variant(**{key: int(round(float(c[code]))) for key, c in counts.items()})

    def _add_line(self, line: bytes, offset: int | None = None) -> None:
        """One line of the games file, read for its row only (a full
        :meth:`MatchRecord.from_json` of every line made the first look at a
        large run take tens of seconds); a line that is not a record as
        docs/records.md describes it is passed over, as a torn one."""
        obj = _outline(line)
        if obj is None:
            return
        match, variant, bots, places = obj.get("match"), obj.get("variant"), obj.get("bots"), obj.get("placements")
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
                faults.append(Fault(f["seat"], str(f.get("kind")), f.get("round"), str(f.get("detail", ""))))
        first, rounds = obj.get("first"), obj.get("rounds_played")
        self._add(
            MatchRow(
                match,
                variant if isinstance(variant, str) else "?",
                tuple(bots),
                tuple(places),
                first if type(first) is int else None,
                rounds if type(rounds) is int else None,
                tuple(faults),
                offset,
            )
        )

    def _from_tables(self) -> bool:
        """Every row from the run's tables, when they were made from the games
        file as it is now (a finished run): no record parsed. False: read the records."""
        games = self.paths.games_file()
        if games is None or not self.paths.table("matches").is_file():
            return False
        size = games.stat().st_size
        try:
            import pyarrow.parquet as pq

            wanted = {
                "matches": ["match", "variant", "first", "rounds_played"],
                "seats": ["match", "bot", "place"],
                "faults": ["match", "seat", "round", "kind", "detail"],
            }
            # Fresh or not from the files' metadata alone: reading a table imports
            # pandas (pyarrow reads its schema's pandas metadata), which a run
            # still playing, whose tables are stale, should not pay for.
            for name in wanted:
                if (pq.read_metadata(self.paths.table(name)).metadata or {}).get(GAMES_BYTES) != str(size).encode():
                    return False
            t = {name: pq.read_table(self.paths.table(name), columns=cols) for name, cols in wanted.items()}
            m, st = t["matches"], t["seats"]
            ids = m.column("match").to_pylist()
            variant = m.column("variant").combine_chunks().dictionary_encode()
            seat_match = st.column("match").combine_chunks().dictionary_encode()
            bots = st.column("bot").combine_chunks().dictionary_encode()
            # Seat rows come in match order, each match's together (arena/running/tablefiles.py).
            if seat_match.dictionary.to_pylist() != ids:
                return False
            base = MatchColumns(
                {
                    "match": ids,
                    "variant_names": variant.dictionary.to_pylist(),
                    "variant": variant.indices.to_numpy(zero_copy_only=False).astype(np.int64),
                    "first": m.column("first").fill_null(-1).to_numpy().astype(np.int64),
                    "rounds": m.column("rounds_played").fill_null(-1).to_numpy().astype(np.int64),
                },
                {
                    "bot_names": bots.dictionary.to_pylist(),
                    "bot": bots.indices.to_numpy(zero_copy_only=False).astype(np.int64),
                    "place": st.column("place").fill_null(0).to_numpy().astype(np.int64),
                    "match": seat_match.indices.to_numpy(zero_copy_only=False).astype(np.int64),
                },
                list(zip(*(t["faults"].column(c).to_pylist() for c in wanted["faults"]), strict=True)),
            )
        except Exception:  # noqa: BLE001 - an unreadable or older table: the records are read instead
            return False
        self._add_base(base)
        if games == self.paths.games:
            self._offset = self._size_seen = size  # what a resumed run appends is read as lines
        else:
            self._read_gz = True
        return True

    def _read_new(self) -> None:
        if not self._tables_tried:
            self._tables_tried = True
            if self._from_tables():
                return
        plain, gz = self.paths.games, self.paths.games_gz
        if plain.exists():
            size = plain.stat().st_size
            if size < self._size_seen:  # rewritten (a resumed run drops a torn last line): read it again
                self._reset()
                self._tables_tried = True
            with open(plain, "rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
            end = data.rfind(b"\n") + 1  # a line not yet ended waits for the next look
            pos = 0
            while pos < end:
                nl = data.index(b"\n", pos)
                if nl > pos and data[pos:nl].strip():
                    self._add_line(data[pos:nl], self._offset + pos)
                pos = nl + 1
            self._offset += end
            self._size_seen = size
        elif gz.exists() and not self._read_gz:  # a finished, compressed run: read once
            self._reset()
            self._tables_tried = True
            for rec in iter_records(self.folder):
                self._add_record(rec)
            self._read_gz = True

    # -- the page's view -----------------------------------------------------------

    def snapshot(self, *, wait_fit: bool = False) -> dict[str, Any]:
        """Everything the live page shows, as of now; the Elo table is the last
        fit's while a new one is made in the background (``wait_fit``: wait for it)."""
        with self._lock:
            self._read_new()
            now = self._clock()
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
            state = {
                "name": str(meta.get("name") or self.folder.name),
                "status": str(meta.get("status") or "unknown"),
                "recorded": self._count,
                "total": total if isinstance(total, int) else None,
                "per_second": rate,
                "standings": standings,
                "fault_kinds": dict(sorted(self._kinds.items())),
                "faults": list(self._faults),
                "warnings": self._warnings(),
                "variants": self._variant_stats(),
                "ratings": self._ratings(),
            }
            if self._fit_due(now):
                self._fitting = True
                job = (list(self._index), self._base, list(self._rankings), self._count)
                if wait_fit:
                    self._lock.release()
                    try:
                        self._fit(*job)
                    finally:
                        self._lock.acquire()
                else:  # a fit of a large run takes seconds: the page is answered meanwhile
                    threading.Thread(target=self._fit, args=job, daemon=True).start()
            state["elo"] = self._elo
        return state

    def _warnings(self) -> list[str]:
        out = []
        for name, t in sorted(self._bots.items()):
            if t.matches >= WARN_AFTER and t.faults >= WARN_RATE * t.matches:
                kind = t.kinds.most_common(1)[0][0]
                out.append(
                    f"{name} faulted in {t.faults} of its {t.matches} matches (mostly {kind}); "
                    f"see why with: arena check {name}"
                )
        return out

    def _variant_stats(self) -> list[dict[str, Any]]:
        """Per variant, once it has MIN_VARIANT matches: rounds per match and
        the opener's winning share (95% intervals), the share of matches with a fault."""
        out = []
        for name, v in sorted(self._variants.items()):
            if v.matches < MIN_VARIANT:
                continue
            row: dict[str, Any] = {"variant": name, "matches": v.matches}
            if v.with_rounds >= 2:
                mean = v.rounds / v.with_rounds
                var = max(0.0, (v.rounds_sq - v.with_rounds * mean * mean) / (v.with_rounds - 1))
                half = Z95 * (var / v.with_rounds) ** 0.5
                row["rounds"] = [mean, mean - half, mean + half]
            if v.with_first:
                row["first_wins"] = list(_wilson(v.first_won, v.with_first))
            row["faulted"] = list(_wilson(v.faulted, v.matches))
            out.append(row)
        return out

    def _fit_due(self, now: float) -> bool:
        return not (self._fitting or self._count == self._fitted or len(self._index) < 2 or now < self._next_fit)

    def _fit(self, labels: list[str], base: MatchColumns | None, rows: list[list[int]], count: int) -> None:
        """The Elo table (mean 1500) with a rough 95% interval of the first
        ``count`` matches, outside the reading lock (a fit of a large run takes
        a while; the pages are answered meanwhile)."""
        from arena.analysis.ratings import bootstrap, design, fit_design, to_elo

        t0 = time.perf_counter()
        try:
            rankings = (base.rankings([self._index[b] for b in base.bot_names]) if base is not None else []) + rows
            d = design(len(labels), rankings)
            theta = fit_design(d)
            boot = bootstrap(d, theta, resamples=RESAMPLES, seed=len(rankings))
            elo = to_elo(theta)
            half = Z95 * to_elo(boot).std(axis=0, ddof=1)
            out = []
            for i in np.argsort(-elo):
                t = self._bots[labels[i]]
                shown = t.matches >= MIN_INTERVAL and bool(np.isfinite(half[i]))
                out.append(
                    {
                        "bot": labels[i],
                        "elo": float(elo[i]),
                        "half": float(half[i]) if shown else None,
                        "matches": t.matches,
                    }
                )
            table: dict[str, Any] | None = {"after": count, "rows": out, "resamples": RESAMPLES}
        except (ArenaError, ValueError, KeyError, np.linalg.LinAlgError):
            table = None
        spent = time.perf_counter() - t0
        with self._fit_lock:
            if table is not None:
                self._elo = table
            self._fitted = count
            self._fit_seconds += spent
            self._fits += 1
            # The next fit late enough that fitting stays under MAX_SHARE of the time.
            self._next_fit = self._clock() + max(FIT_EVERY_S, self._fit_seconds / MAX_SHARE / self._fits)
            self._fitting = False

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

    # -- the match list and the viewer --------------------------------------------------

    def matches(
        self,
        *,
        page: int = 0,
        bot: str = "",
        variant: str = "",
        fault: str = "",
        q: str = "",
        order: str = "",
        size: int = PAGE,
    ) -> dict[str, Any]:
        """One page of the matches recorded, filtered: ``bot`` plays in it,
        ``variant``, ``fault`` (a kind, or ``any``), ``q`` in its id; ``order``
        ``upset``: the biggest upsets first (by the live Elo table), else as recorded."""
        if order == "upset" and self._elo is None:
            self.snapshot(wait_fit=True)  # the first Elo fit, which upsets are measured by
        with self._lock:
            self._read_new()
            base = self._base
            at = base.select(bot, variant, fault, q) if base is not None else np.zeros(0, dtype=np.int64)
            rows = self._rows
            elo = {r["bot"]: r["elo"] for r in self._elo["rows"]} if self._elo else None
            if bot:
                rows = [r for r in rows if bot in r.bots]
            if variant:
                rows = [r for r in rows if r.variant == variant]
            if fault == "any":
                rows = [r for r in rows if r.faults]
            elif fault:
                rows = [r for r in rows if any(f.kind == fault for f in r.faults)]
            if q:
                rows = [r for r in rows if q in r.match]
            # Positions in (the base's matches at `at`, then `rows`), in the order shown.
            order_of = np.arange(len(at) + len(rows))
            if order == "upset" and elo:
                ups = np.concatenate(
                    [
                        base.upsets(elo, at) if base is not None else np.zeros(0),
                        np.array([r.upset(elo) for r in rows], dtype=np.float64),
                    ]
                )
                order_of = np.argsort(-np.nan_to_num(ups, nan=0.0), kind="stable")
            total = len(order_of)
            pages = max(1, -(-total // size))
            page = min(max(0, page), pages - 1)
            shown = []
            for k in order_of[page * size : (page + 1) * size].tolist():
                shown.append(base.row(int(at[k])) if k < len(at) and base is not None else rows[k - len(at)])
            return {
                "total": total,
                "recorded": self._count,
                "page": page,
                "pages": pages,
                "size": size,
                "rows": [r.public(elo) for r in shown],
                "bots": sorted(self._bots),
                "variants": sorted(self._variants),
                "fault_kinds": sorted(self._kinds),
                "rated": elo is not None,
            }

    def record(self, match: str) -> MatchRecord | None:
        """The record of ``match``, None if the folder has none: its line read
        where the list saw it start, else found in the games file."""
        with self._lock:
            self._read_new()
            at = self._by_id.get(match)
            row = self._rows[at] if at is not None else None
            if row is None and self._base is not None and match in self._base.pos:
                row = self._base.row(self._base.pos[match])
        if row is None:
            return None
        try:
            if row.offset is not None:
                with open(self.paths.games, "rb") as fh:
                    fh.seek(row.offset)
                    rec = MatchRecord.from_json(fh.readline())
                if rec.match == match:
                    return rec
            found = find_line(self.paths.games, match) if self.paths.games.exists() else None
            if found is not None:
                rec = MatchRecord.from_json(found)
                if rec.match == match:
                    return rec
        except (OSError, ArenaError, ValueError):
            pass
        return read_matches(self.folder, [match]).get(match)


def _wilson(successes: int, n: int) -> tuple[float, float, float]:
    """(share, low, high): the 95% Wilson score interval, as
    :func:`arena.analysis.stats.wilson` gives it (which would import pandas
    into the server for eight lines of arithmetic)."""
    z = Z95
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return p, max(0.0, centre - half), min(1.0, centre + half)
