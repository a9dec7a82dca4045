"""The worker side of a run: plays matches with bot processes it keeps alive.

One :class:`Worker` lives in each worker process (local pool or Ray actor). It
starts a bot's process the first time the bot plays, reuses it for the next
matches (start-up would otherwise dominate: NOTES.md), and restarts it after a
fault. Every spec produces exactly one result, internal errors included, so
the caller never waits for a result that will not come.
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


class Worker:
    """Plays matches for one worker process; owns that process's bot processes."""

    def __init__(self, entrants: Sequence[tuple[str, BotSpec]], limits: SandboxLimits, time: TimeControl,
                 fresh_process: bool = False) -> None:
        self.labels = [label for label, _ in entrants]
        self.specs = [spec for _, spec in entrants]
        self.limits = limits
        # Each bot's own limits: the run's, with the raises it asked for (checked
        # against the ceilings when the config was built).
        self.bot_limits = [limits.for_bot(spec.limits, f"bot {label}") for label, spec in entrants]
        self.time = time
        self.fresh = fresh_process
        self.procs: dict[int, BotProcess] = {}
        self._reported: dict[int, str] = {}

    def _player(self, entrant: int) -> Any:
        proc = self.procs.get(entrant)
        if proc is not None and proc.alive:
            return proc
        if proc is not None:
            proc.close()
        proc = BotProcess(self.specs[entrant], self.bot_limits[entrant], self.time)
        try:
            proc.start()
        except BotFault as exc:
            proc.close()
            self.procs.pop(entrant, None)
            return _Unstartable(exc)
        self.procs[entrant] = proc
        return proc

    def play(self, spec: MatchSpec) -> dict[str, Any]:
        """Play one match; returns ``{"match", "line", "stderr"}`` or ``{"error", "match"}``.

        ``line`` is the record already encoded as one JSON line: the worker
        pays for the encoding, and the parent, which every worker shares, only
        appends bytes (a nested dict costs far more to pickle across).
        """
        try:
            players = [self._player(e) for e in spec.entrants]
            names = [self.labels[e] for e in spec.entrants]
            outcome = play_match(spec, players, names, self.time.budget_ms)
            stderr: dict[str, str] = {}
            for pos, e in enumerate(spec.entrants):
                proc = self.procs.get(e)
                if proc is None:
                    continue
                tail = proc.stderr_tail()
                if tail and self._reported.get(e) != tail:
                    stderr[self.labels[e]] = tail
                    self._reported[e] = tail
                if pos in outcome.faulted or self.fresh:
                    # A faulting bot is restarted before its next match.
                    proc.close()
                    self.procs.pop(e, None)
            return {"match": spec.match, "line": record_line(outcome.record), "stderr": stderr}
        except Exception:  # noqa: BLE001 - every spec must produce a result
            return {"error": traceback.format_exc(), "match": spec.match, "pid": os.getpid()}

    def close(self) -> None:
        for proc in self.procs.values():
            proc.close()
        self.procs.clear()
