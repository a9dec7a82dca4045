"""A seat's view of the match: the only game data that leaves the referee.

``turn_view`` builds the game part of PROTOCOL.md's ``turn`` message. It reads
the acting seat's own dice and nothing else of anyone's dice, so no other
seat's hidden dice can ever reach a bot through it (a property test pins this).
"""

from __future__ import annotations

from typing import Any

from arena.errors import StateError
from arena.rules import State, legal_summary


def turn_view(state: State, seat: int) -> dict[str, Any]:
    """The fields of a ``turn`` message for ``seat`` (the referee adds ``type``,
    ``match`` and ``time_ms``)."""
    if state.dice is None:
        raise StateError("no round is being played: deal the round first")
    if not 0 <= seat < len(state.counts):
        raise StateError(f"seat {seat} does not exist at a table of {len(state.counts)}")
    legal = legal_summary(state) if state.to_act == seat else None
    return {
        "round": state.round,
        "seat": seat,
        "dice": sorted(state.dice[seat]),
        "counts": list(state.counts),
        "palifico": state.palifico,
        "history": [[s, b.quantity, b.face] for s, b in state.history],
        "legal": None if legal is None else {
            "dudo": legal.dudo,
            "calza": legal.calza,
            "min_quantity": {str(f): q for f, q in legal.min_quantity.items()},
            "max_quantity": legal.max_quantity,
        },
    }
