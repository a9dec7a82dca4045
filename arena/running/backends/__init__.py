"""Where matches are played: one small interface, several engines.

A backend takes the specs still to play and yields one result per spec, in
any order, as matches finish (``{"match", "line", "stderr"}`` or ``{"error", "match"}``,
see :class:`arena.running.worker.Worker`). The scheduler neither knows nor cares which
backend runs; the records are the same.
"""

from __future__ import annotations

from typing import Any, Iterator, Protocol, Sequence

from arena.engine.records import MatchSpec


class Backend(Protocol):
    def run(self, specs: Sequence[MatchSpec]) -> Iterator[dict[str, Any]]: ...

    def close(self) -> None: ...
