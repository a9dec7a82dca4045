"""The worker side of a run: plays matches with bot processes it keeps alive.

One :class:`Worker` lives in each worker process (local pool or Ray actor). It
starts a bot's process the first time the bot plays, reuses it for the next
matches (start-up would otherwise dominate: docs/performance.md), and restarts it after a
fault. Every spec produces exactly one result, internal errors included, so
the caller never waits for a result that will not come.

**No bot process plays a deal twice.** Paired experiments (several variants
of one table, ``seating: rotate``) deal the same dice to several matches, and
``round_end`` reveals every hand: a process that played one repetition would
know every die of the next. So each live process remembers the deals (dice
seeds) it has played, and a match takes, for each entrant, a live process of
that entrant that has not played its deal; only where none is left is a
fresh one started. An entrant's processes are a pool, not fixed repetition
slots: a process may play any deal it has not seen, so a worker holds, per
entrant, only as many processes as the repetitions of one deal it plays (the
local backend hands the repetitions of a deal to different workers:
:func:`arena.running.backends.local.spread_batches`), and a process once
started keeps being used for later tables instead of being replaced where
repetitions outnumbered slots. The processes are capped
(:data:`MAX_LIVE_PROCESSES` per worker, or one per entrant if there are more
entrants): past the cap, the least recently used spare process (an entrant's
second or later) is closed first. A process is never told which deal it
plays, only ever given one it has not seen.

Each result carries what the match's bots wrote to stderr during it (at most
the sandbox's ``stderr_tail`` bytes per bot and match), tagged with the match
id and this worker; the parent, the run folder's only writer, appends it to
``bots/<label>.stderr``. A line is filed under the match during which it was
read: what a kept process writes on ``match_end`` is usually read during its
next match (the worker starts that at once, on the same core), and what it
writes after its last match is collected by :meth:`Worker.drain` at the end.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import traceback
from collections import Counter
from collections.abc import Sequence
from typing import TypedDict

from arena.botfile.spec import BotSpec
from arena.engine.records import MatchSpec, record_line
from arena.errors import BotFault, FaultKind
from arena.match.process import BotProcess, TimeControl
from arena.match.referee import MatchOutcome, play_match
from arena.protocol.messages import Notification, ReadyMessage, TurnMessage
from arena.protocol.parse import RawMessage
from arena.protocol.player import Player
from arena.running.observe import Finished
from arena.running.tablefiles import RecordTables, record_tables
from arena.running.tables import Row, parquet_rows
from arena.sandbox import SandboxLimits
from arena.sandbox.zygote import Zygote
from arena.sandbox.zygote import unavailable as no_zygote

StderrChunk = tuple[str, str, str, bytes, int]  # label, match id, note, what was written, bytes not kept
Entrants = Sequence[tuple[str, BotSpec]]  # (label, bot) of each entrant of a run


class PlayResult(TypedDict, total=False):
    """What one spec produces: ``match``, ``line`` (the record, encoded),
    ``rows`` (its rows of matches.parquet), ``tables`` (of the analysis tables), ``finished``
    (:class:`~arena.running.observe.Finished`), ``stderr`` and ``worker``; or, when Dudo Arena itself failed, ``match``,
    ``error`` (the traceback) and ``pid``."""

    match: str
    line: bytes
    rows: list[Row]  # its rows of matches.parquet, made here from the record in memory
    finished: Finished  # what the run's observer sees of it (live standings, the SPRT), made here too
    tables: RecordTables | None  # and its rows of the analysis tables (None: the store derives them)
    stderr: list[StderrChunk]
    replays: list[tuple[str, str]]  # (bot label, what held it up): each time the host stalled the match
    worker: str
    error: str
    pid: int


class Drained(TypedDict):
    """What a worker's bots wrote after their last match (:meth:`Worker.drain`)."""

    stderr: list[StderrChunk]
    worker: str


Slot = tuple[int, int]  # (entrant, serial number of the entrant's process in this worker)

MAX_LIVE_PROCESSES = 96
"""Bot processes one worker keeps alive at most, or one per entrant if there
are more entrants (idle ones are frozen and small, about 10 MB each,
more for a bot with large data loaded, but not free). 96 holds the 88 of
configs/variants.yaml (8 entrants x 11 plays of a deal) on one worker."""

MAX_REPLAYS_PER_MATCH = 3
"""Plays of one match a host stall may void (the last one's record stands, its
``arena`` fault with it): a machine that stalls one match four times over is
not giving this run a fair hearing, and the warnings say so."""

MAX_REPLAYS_PER_BOT = 25
"""Replays one bot's stalls may cause in one worker process: a bot that is
stalled far more than its table mates (one that times its waits to the host's
load) cannot void its matches without end."""


class _Unstartable:
    """A :class:`~arena.protocol.player.Player` for a bot whose process failed to
    start: it faults at its first turn."""

    def __init__(self, fault: BotFault) -> None:
        self.fault = fault

    def start(self) -> ReadyMessage:
        raise self.fault

    def notify(self, msg: Notification) -> None:
        pass

    def request(self, msg: TurnMessage) -> tuple[RawMessage, float]:
        raise BotFault(f"could not start: {self.fault.detail}", self.fault.kind)

    def close(self) -> None:
        pass


class Worker:
    """Plays matches for one worker process; owns that process's bot processes."""

    def __init__(
        self,
        entrants: Entrants,
        limits: SandboxLimits,
        time: TimeControl,
        fresh_process: bool = False,
        tag: str | None = None,
    ) -> None:
        self.labels = [label for label, _ in entrants]
        self.specs = [spec for _, spec in entrants]
        self.limits = limits
        # Each bot's own limits: the run's, with the raises it asked for (checked
        # against the ceilings when the config was built).
        self.bot_limits = [limits.for_bot(spec.limits, f"bot {label}") for label, spec in entrants]
        self.time = time
        self.fresh = fresh_process
        self.tag = tag or str(os.getpid())  # names this worker in the stderr files
        self.procs: dict[Slot, BotProcess] = {}  # the live processes, oldest first
        self.deals: dict[Slot, set[int]] = {}  # the dice seeds each live process has played
        self._last: dict[Slot, str] = {}  # the last match each live process played
        self._launched: dict[Slot, BotProcess] = {}  # launched for the coming match, handshake not yet run
        self._serial = [0] * len(self.specs)  # each entrant's next process number
        self._used: dict[Slot, int] = {}  # the match count at each live process's last match
        self._count = 0
        self.started = 0  # processes started over the worker's life (benchmarks/paired_play.py reports it)
        self.replayed: Counter[str] = Counter()  # replays caused by each bot's stalls (MAX_REPLAYS_PER_BOT)
        # Python bots' processes are forked from a warm interpreter into sandboxes
        # of their own (arena.sandbox.zygote), where this machine allows it.
        self.zygote: Zygote | None = (
            None  # made for the first Python bot to start (BotProcess decides where it applies)
        )
        self._zygote_checked = False

    def _process(self, e: int) -> BotProcess:
        if not self._zygote_checked and self.specs[e].kind == "python":
            self._zygote_checked = True
            self.zygote = Zygote() if no_zygote() is None else None
        return BotProcess(self.specs[e], self.bot_limits[e], self.time, zygote=self.zygote)

    def _take(self, out: list[StderrChunk], key: Slot, proc: BotProcess, match: str, note: str = "") -> None:
        data, lost = proc.take_stderr()
        if data or lost:
            out.append((self.labels[key[0]], match, note, data, lost))

    def _retire(self, key: Slot, stderr: list[StderrChunk], match: str) -> None:
        """Close a live process; what it wrote since its last match is filed under that match."""
        proc = self.procs.pop(key)
        proc.close()
        self._take(stderr, key, proc, self._last.get(key, match), "after its end")
        self._last.pop(key, None)
        self.deals.pop(key, None)
        self._used.pop(key, None)

    def _assign(self, spec: MatchSpec, stderr: list[StderrChunk]) -> list[Slot]:
        """The process of each seat: the oldest live process of its entrant that
        has not played this deal (nor is taken by another seat), else a new
        number, for a process to be started (one found dead, faulted or exited
        while idle, is retired on the way); past the cap, the least recently used spare
        processes of other entrants make room."""
        keys: list[Slot] = []
        for e in spec.entrants:
            while True:
                key = next(
                    (k for k in self.procs if k[0] == e and k not in keys and spec.dice_seed not in self.deals[k]), None
                )
                if key is None or self.procs[key].alive:
                    break
                self._retire(key, stderr, spec.match)  # faulted or exited while idle
            if key is None:
                key = (e, self._serial[e])
                self._serial[e] += 1
            keys.append(key)
        new = sum(1 for k in keys if k not in self.procs)
        cap = max(MAX_LIVE_PROCESSES, len(self.specs))
        if new and len(self.procs) + new > cap:
            live = collections.Counter(k[0] for k in self.procs)
            spare = sorted(
                (k for k in self.procs if k not in keys and live[k[0]] > 1), key=lambda k: self._used.get(k, 0)
            )
            for key in spare:
                if len(self.procs) + new <= cap:
                    break
                if live[key[0]] > 1:  # an entrant keeps one process, as with a single variant
                    live[key[0]] -= 1
                    self._retire(key, stderr, spec.match)
        return keys

    def _player(self, key: Slot, spec: MatchSpec, stderr: list[StderrChunk]) -> Player:
        proc = self.procs.get(key)
        if proc is not None:  # live, and has not played this deal (_assign)
            return proc
        self.deals[key] = set()
        proc = self._launched.pop(key, None) or self._process(key[0])
        self.started += 1
        try:
            proc.start()
        except BotFault as exc:
            proc.close()
            self._take(stderr, key, proc, spec.match, "failed to start")
            self.deals.pop(key, None)
            return _Unstartable(exc)
        self.procs[key] = proc
        return proc

    def _launch_missing(self, keys: Sequence[Slot]) -> None:
        """Launch together the processes this match needs that are not live yet
        (:meth:`_assign`), so that they boot at the same time (a start is mostly
        waiting for bwrap and an interpreter): a table's bots start in about the
        time of one. :meth:`_player` then runs each one's handshake, as for a
        process it starts itself."""
        for key in keys:
            if key in self.procs or key in self._launched:
                continue
            fresh = self._process(key[0])
            try:
                fresh.launch()
            except BotFault:
                fresh.close()
                continue  # _player starts it again, and reports what goes wrong
            self._launched[key] = fresh
        for key in keys:  # bots forked from the zygote: all their sandboxes are on their way
            launched = self._launched.get(key)
            if launched is not None:
                try:
                    launched.boot()
                except BotFault:
                    launched.close()
                    del self._launched[key]  # _player starts it again, and reports what goes wrong

    def play(self, spec: MatchSpec) -> PlayResult:
        """Play one match; returns ``{"match", "line", "stderr", "worker"}`` or ``{"error", "match"}``.

        ``line`` is the record already encoded as one JSON line: the worker
        pays for the encoding, and the parent, which every worker shares, only
        appends bytes (a nested dict costs far more to pickle across).
        ``stderr`` is a list of ``(label, match, note, bytes, lost)`` chunks.

        A match in which the host held a bot up past a wall-clock limit (a
        fault of kind ``arena``, :class:`~arena.errors.HostStall`) is played
        again from its spec, with fresh processes (every process of the table
        saw the deal), so its record is the one a quiet machine gives; within
        :data:`MAX_REPLAYS_PER_MATCH` and :data:`MAX_REPLAYS_PER_BOT`, past
        which the record keeps its ``arena`` fault (administrative: never
        charged to the bot, ``--drop-admin-faults`` leaves the match out).
        ``replays`` lists each replay as ``(bot label, what held it up)``.
        """
        try:
            stderr: list[StderrChunk] = []
            replays: list[tuple[str, str]] = []
            while True:
                outcome = self._play_once(spec, stderr, len(replays))
                stalled = [f for f in outcome.record.faults if f.kind is FaultKind.ARENA]
                labels = [outcome.record.bots[f.seat] for f in stalled]
                if (
                    not stalled
                    or len(replays) >= MAX_REPLAYS_PER_MATCH
                    or any(self.replayed[label] >= MAX_REPLAYS_PER_BOT for label in labels)
                ):
                    break
                for f, label in zip(stalled, labels, strict=True):
                    self.replayed[label] += 1
                    replays.append((label, f.detail))
            finished = Finished.of(outcome.record)
            if replays:
                finished = dataclasses.replace(finished, replays=tuple(label for label, _ in replays))
            return {
                "match": spec.match,
                "line": record_line(outcome.record),
                "stderr": stderr,
                "worker": self.tag,
                "rows": parquet_rows([outcome.record]),
                "tables": record_tables(outcome.record),
                "finished": finished,
                "replays": replays,
            }
        except Exception:  # noqa: BLE001 - every spec must produce a result
            self._close_launched()
            return {"error": traceback.format_exc(), "match": spec.match, "pid": os.getpid()}

    def _play_once(self, spec: MatchSpec, stderr: list[StderrChunk], attempt: int) -> MatchOutcome:
        """One play of ``spec`` (``attempt`` 0, or the number of replays before it). A
        replay gets processes that have not played its deal (the pool's rule), fresh ones."""
        keys = self._assign(spec, stderr)
        self._count += 1
        for key in keys:
            # Written since this process's previous match ended: it belongs to that match.
            proc = self.procs.get(key)
            if proc is not None and key in self._last:
                self._take(stderr, key, proc, self._last[key], "after its end")
        self._launch_missing(keys)
        players = [self._player(key, spec, stderr) for key in keys]
        names = [self.labels[e] for e in spec.entrants]
        outcome = play_match(spec, players, names, self.time.budget_ms)
        note = f"play {attempt + 1}" if attempt or any(f.kind is FaultKind.ARENA for f in outcome.record.faults) else ""
        for pos, key in enumerate(keys):
            proc = self.procs.get(key)
            if proc is None:
                continue
            self.deals[key].add(spec.dice_seed)  # seen revealed: never again for this process
            self._used[key] = self._count
            if pos in outcome.faulted or self.fresh:
                # A faulting bot is restarted before its next match; closed
                # first, so its last words are in this match's stderr.
                proc.close()
                self.procs.pop(key, None)
                self._last.pop(key, None)
                self.deals.pop(key, None)
                self._used.pop(key, None)
            else:
                self._last[key] = spec.match
            self._take(stderr, key, proc, spec.match, note)
        return outcome

    def drain(self) -> list[StderrChunk]:
        """Close the live processes and hand over what they wrote since their last
        match, filed under that match: the end of a run. Closed first, because a
        bot frozen after its last reply reads its last ``match_end`` (and logs
        on it) only when it is thawed to be closed."""
        out: list[StderrChunk] = []
        for proc in self.procs.values():
            proc.release()  # all end at once, then each is closed
        for key, proc in self.procs.items():
            proc.close()
            if key in self._last:
                self._take(out, key, proc, self._last[key], "after its end")
        self.procs.clear()
        self.deals.clear()
        self._used.clear()
        self._close_launched()
        if self.zygote is not None:
            self.zygote.close()
        return out

    def _close_launched(self) -> None:
        """Processes launched for a match that never took them (it failed first)."""
        for proc in self._launched.values():
            proc.close()
        self._launched.clear()

    def close(self) -> None:
        for proc in self.procs.values():
            proc.release()
        for proc in self.procs.values():
            proc.close()
        self.procs.clear()
        self.deals.clear()
        self._close_launched()
        if self.zygote is not None:
            self.zygote.close()
