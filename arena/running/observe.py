"""What a run's observer sees of each finished match (live standings, the SPRT).

Not the full :class:`~arena.engine.records.MatchRecord`: decoding and checking
a whole record costs the parent process (which every worker shares) about as
much as the rest of its work per match, and an observer needs only who sat
where, where each finished and who faulted. A worker makes it from the record
in its memory (:meth:`Finished.of`) and sends it with the record's line;
:meth:`Finished.from_line` reads the same fields back from a line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import orjson

from arena.engine.records import MatchRecord

ARENA_FAULT = "arena"  # the fault kind that is the arena's, not the bot's (FaultKind.ARENA)


@dataclass(frozen=True, slots=True)
class Finished:
    """A finished match: its id, the label in each seat, each seat's place, its
    faults; its deal (the dice seed, shared by the plays of one deal) and
    variant, for the paired-play integrity check (:mod:`arena.running.integrity`)."""

    match: str
    bots: tuple[str, ...]
    placements: tuple[int, ...]
    faults: tuple[tuple[int, str], ...] = ()  # (seat, kind), in order
    deal: int | None = None  # the record's seed: the dice seed of its table
    variant: str = ""
    replays: tuple[str, ...] = ()  # the label of the bot a host stall held up, once per replay of the match

    @staticmethod
    def of(rec: MatchRecord) -> Finished:
        return Finished(
            rec.match,
            tuple(rec.bots),
            tuple(rec.placements),
            tuple((f.seat, str(f.kind)) for f in rec.faults),
            rec.seed,
            rec.variant,
        )

    @staticmethod
    def from_line(line: bytes) -> Finished:
        data = orjson.loads(line)
        return Finished(
            data["match"],
            tuple(data["bots"]),
            tuple(data["placements"]),
            tuple((f["seat"], f["kind"]) for f in data.get("faults") or ()),
            data.get("seed"),
            str(data.get("variant", "")),
        )


Observer = Callable[[Finished], bool]  # a finished match, recorded before or just now -> stop the run?
