"""The worker side of a run: plays matches with bot processes it keeps alive.

One :class:`Worker` lives in each worker process (local pool or Ray actor). It
starts a bot's process the first time the bot plays, reuses it for the next
matches (start-up would otherwise dominate: NOTES.md), and restarts it after a
fault. Every spec produces exactly one result, internal errors included, so
the caller never waits for a result that will not come.

**No bot process plays a deal twice.** Paired experiments (several variants
of one table, ``seating: rotate``) deal the same dice to several matches, and
``round_end`` reveals every hand: a process that played one repetition would
know every die of the next. So the worker keeps one process per entrant *and
repetition slot* (``MatchSpec.repeat``): the process of slot ``k`` only ever
plays repetition ``k`` of each deal, and the deals of different tables
differ. Each process also remembers which deals it has played; should one
come round again (more repetitions than slots, or a Ray actor given odd
work), the process is replaced by a fresh one first. The slots are capped
(:data:`MAX_LIVE_PROCESSES` per worker) so a config with many variants does
not hold hundreds of idle processes; past the cap, repetitions share slots
and pay for a fresh process where they meet.
"""

from __future__ import annotations

import os
import traceback
from typing import Any, Sequence

from arena.botfile import BotSpec
from arena.errors import BotFault
from arena.process import BotProcess, TimeControl
from arena.records import MatchSpec, record_line
from arena.referee import play_match
from arena.sandbox import SandboxLimits


class _Unstartable:
    """Stands in for a bot whose process failed to start: it faults at its first turn."""

    def __init__(self, fault: BotFault) -> None:
        self.fault = fault

    def notify(self, msg: dict[str, Any]) -> None:
        pass

    def request(self, msg: dict[str, Any]) -> tuple[dict[str, Any], float]:
        raise BotFault(f"could not start: {self.fault.detail}", self.fault.kind)


MAX_LIVE_PROCESSES = 64
"""Bot processes one worker keeps alive at most (idle ones are frozen and
small, a few MB each, but not free)."""


def deal_slots(repeats: int, entrants: int) -> int:
    """Repetition slots per entrant: one per repetition of a deal, within
    :data:`MAX_LIVE_PROCESSES` for the worker."""
    return max(1, min(repeats, MAX_LIVE_PROCESSES // max(1, entrants)))


class Worker:
    """Plays matches for one worker process; owns that process's bot processes."""

    def __init__(self, entrants: Sequence[tuple[str, BotSpec]], limits: SandboxLimits, time: TimeControl,
                 fresh_process: bool = False, slots: int = 1) -> None:
        self.labels = [label for label, _ in entrants]
        self.specs = [spec for _, spec in entrants]
        self.limits = limits
        self.time = time
        self.fresh = fresh_process
        self.slots = max(1, slots)
        self.procs: dict[tuple[int, int], BotProcess] = {}  # (entrant, slot) -> process
        self.deals: dict[tuple[int, int], set[int]] = {}  # the dice seeds each live process has played
        self._reported: dict[tuple[int, int], str] = {}

    def _player(self, entrant: int, spec: MatchSpec) -> Any:
        key = (entrant, spec.repeat % self.slots)
        proc = self.procs.get(key)
        if proc is not None and proc.alive and spec.dice_seed not in self.deals.get(key, ()):
            return proc
        if proc is not None:  # faulted, exited, or it has seen this deal revealed: a fresh one
            proc.close()
            self.procs.pop(key, None)
        self.deals[key] = set()
        proc = BotProcess(self.specs[entrant], self.limits, self.time)
        try:
            proc.start()
        except BotFault as exc:
            proc.close()
            return _Unstartable(exc)
        self.procs[key] = proc
        return proc

    def play(self, spec: MatchSpec) -> dict[str, Any]:
        """Play one match; returns ``{"match", "line", "stderr"}`` or ``{"error", "match"}``.

        ``line`` is the record already encoded as one JSON line: the worker
        pays for the encoding, and the parent, which every worker shares, only
        appends bytes (a nested dict costs far more to pickle across).
        """
        try:
            players = [self._player(e, spec) for e in spec.entrants]
            names = [self.labels[e] for e in spec.entrants]
            outcome = play_match(spec, players, names, self.time.budget_ms)
            stderr: dict[str, str] = {}
            for pos, e in enumerate(spec.entrants):
                key = (e, spec.repeat % self.slots)
                proc = self.procs.get(key)
                if proc is None:
                    continue
                self.deals[key].add(spec.dice_seed)  # seen revealed: never again for this process
                tail = proc.stderr_tail()
                if tail and self._reported.get(key) != tail:
                    stderr[self.labels[e]] = tail
                    self._reported[key] = tail
                if pos in outcome.faulted or self.fresh:
                    # A faulting bot is restarted before its next match.
                    proc.close()
                    self.procs.pop(key, None)
            return {"match": spec.match, "line": record_line(outcome.record), "stderr": stderr}
        except Exception:  # noqa: BLE001 - every spec must produce a result
            return {"error": traceback.format_exc(), "match": spec.match, "pid": os.getpid()}

    def close(self) -> None:
        for proc in self.procs.values():
            proc.close()
        self.procs.clear()
        self.deals.clear()
