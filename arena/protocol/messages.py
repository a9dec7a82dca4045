"""A seat's view of the match: the only game data that leaves the referee.

``turn_view`` builds the game part of PROTOCOL.md's ``turn`` message. It reads
the acting seat's own dice and nothing else of anyone's dice, so no other
seat's hidden dice can ever reach a bot through it (a property test pins this).
"""

from __future__ import annotations

from typing import Any, Sequence

from arena.errors import FaultKind, StateError
from arena.engine.rules import State, legal_summary


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


# --- the referee's messages (PROTOCOL.md), the one place they are built -------
# The referee, `arena check` and the in-process player all send these, so a bot
# sees the same bytes whichever of them it talks to.


def match_start_message(match: str, seat: int, names: Sequence[str], rules: dict[str, Any],
                        seed: int) -> dict[str, Any]:
    """``match_start`` for ``seat``; ``rules`` is the full rule set (``Rules.to_dict()``)."""
    return {"type": "match_start", "match": match, "seat": seat, "players": len(names),
            "names": list(names), "rules": rules, "seed": seed}


def turn_message(match: str, state: State, time_ms: int) -> dict[str, Any]:
    """``turn`` for the seat to act in ``state``."""
    return {"type": "turn", "match": match, **turn_view(state, state.to_act), "time_ms": time_ms}


def round_end_message(match: str, state: State, fault_kind: FaultKind | None = None) -> dict[str, Any]:
    """``round_end`` for the round ``state.last`` ended: every die, and the call and
    its result, or, for a void round, the fault (``fault_kind``)."""
    res = state.last
    if res is None:
        raise StateError("no round has ended yet")
    msg: dict[str, Any] = {"type": "round_end", "match": match, "round": res.round,
                           "dice": [list(h) for h in res.dice]}
    if res.fault is not None:
        msg["fault"] = {"seat": res.fault, "kind": fault_kind or FaultKind.CRASH}
    else:
        if res.call is None or res.change is None:  # the engine sets both when a call ends a round
            raise StateError(f"round {res.round} ended with neither a call nor a fault")
        bidder, b = res.bids[-1]
        msg["bid"] = [bidder, b.quantity, b.face]
        msg["call"] = {"seat": res.call[0], "kind": res.call[1]}
        msg["count"] = res.count
        msg["change"] = {"seat": res.change[0], "delta": res.change[1]}
    msg["counts"] = list(state.counts)
    return msg


def match_end_message(match: str, placements: Sequence[int]) -> dict[str, Any]:
    return {"type": "match_end", "match": match, "placements": list(placements)}
