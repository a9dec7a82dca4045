"""Where matches are played: one small interface, several engines.

A backend takes the specs still to play and yields one result per spec, in
any order, as matches finish (``{"match", "line", "stderr"}`` or ``{"error", "match"}``,
see :class:`arena.running.worker.Worker`). The scheduler neither knows nor cares which
backend runs; the records are the same.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from arena.engine.records import MatchSpec
from arena.running.worker import Drained, PlayResult


class Backend(Protocol):
    def run(self, specs: Sequence[MatchSpec]) -> Iterator[PlayResult]: ...

    def drain(self) -> list[Drained]:
        """Each worker's last stderr, once every match is played (closes the bots)."""
        ...

    def close(self) -> None: ...

    def terminate(self) -> None:
        """Stop now, whatever state the workers are in; no bot process outlives it."""
        ...
