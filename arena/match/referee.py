"""The referee: plays one match with players behind the protocol, and records it.

Every fault a player commits (timeout, crash, malformed, illegal, unasked)
becomes data: the player is out, the round is void (docs/rules.md, Faults) and the
record says what happened. The referee never lets a player's failure stop the
match, and it sends each player only its own view (:func:`arena.protocol.messages.turn_view`).
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from arena.engine import dice as dice_mod
from arena.errors import BotFault
from arena.engine.records import MatchSpec, derive_seed
from arena.engine.rules import Bid, Rules, apply, deal, fault, new_match, why_illegal
from arena.protocol.messages import (Notification, match_end_message, match_start_message, round_end_message,
                                     turn_message)
from arena.protocol.parse import parse_reply
from arena.protocol.player import Player
from arena.protocol.wire import clip


def seat_order(rules: Rules, n: int, dice_seed: int) -> list[int]:
    """Entrant position for each seat: rolled (docs/rules.md, Seating) or the schedule's order."""
    if rules.seating == "roll":
        return dice_mod.roll_off(range(n), dice_mod.seating_die(dice_seed))
    return list(range(n))


def first_opener(rules: Rules, n: int, dice_seed: int) -> int:
    if rules.first == "roll":
        return dice_mod.roll_off(range(n), dice_mod.opener_die(dice_seed))[0]
    return 0


def bot_seed(match_seed: int, seat: int) -> int:
    """The seed a bot gets in ``match_start``: one-way from the match seed, and
    unrelated to the dice seed, so it reveals nothing about anyone's dice."""
    return derive_seed("bot", match_seed, seat)


class MatchOutcome:
    """A finished match: its record, and which entrant positions faulted."""

    __slots__ = ("record", "faulted")

    def __init__(self, record: dict[str, Any], faulted: set[int]) -> None:
        self.record = record
        self.faulted = faulted


def play_match(spec: MatchSpec, players: Sequence[Player], names: Sequence[str],
               time_ms: int) -> MatchOutcome:
    """Play ``spec`` with ``players[i]`` the player of entrant position ``i``.

    ``names[i]`` is that entrant's display name. Returns the RESULTS.md record
    (plus ``faults`` and ``think``) and the set of entrant positions that
    faulted, whose processes must be restarted before their next match.
    """
    started = time.perf_counter()
    rules = Rules.from_dict(spec.rules)
    n = len(players)
    order = seat_order(rules, n, spec.dice_seed)  # seat -> entrant position
    seat_players = [players[e] for e in order]
    seat_names = [names[e] for e in order]
    opener = first_opener(rules, n, spec.dice_seed)
    state = new_match(rules, n, opener)
    rules_dict = rules.to_dict()

    faulted_seats: set[int] = set()
    think = [0.0] * n
    rounds: list[dict[str, Any]] = []
    faults: list[dict[str, Any]] = []
    mid = spec.match

    def tell(seat: int, msg: Notification) -> None:
        if seat not in faulted_seats:
            seat_players[seat].notify(msg)

    for seat in range(n):
        tell(seat, match_start_message(mid, seat, seat_names, rules_dict, bot_seed(spec.seed, seat)))

    while state.placements is None:
        state = deal(state, dice_mod.roll_table(spec.dice_seed, state.round, state.counts))
        actions: list[list[Any]] = []
        fault_info: dict[str, Any] | None = None
        while state.dice is not None:  # until the round is resolved or void
            seat = state.to_act
            try:
                reply, cpu = seat_players[seat].request(turn_message(mid, state, time_ms))
                think[seat] += cpu
                action = parse_reply(reply)
                reason = why_illegal(state, action)
                if reason is not None:
                    raise BotFault(f"{_text(action)}: {reason}", "illegal")
            except BotFault as exc:
                fault_info = {"seat": seat, "kind": exc.kind, "detail": clip(exc.detail, 300)}
                faulted_seats.add(seat)
                state = fault(state, seat)
                break
            if isinstance(action, Bid):
                actions.append([seat, "bid", action.quantity, action.face])
            else:
                actions.append([seat, str(action)])
            state = apply(state, action)
        end = round_end_message(mid, state, fault_info["kind"] if fault_info else None)
        last = state.last  # set by the engine whenever a round ends (round_end_message checked)
        entry: dict[str, Any] = {"round": end["round"], "opener": last.opener if last else -1,
                                 "palifico": bool(last and last.palifico), "dice": end["dice"],
                                 "actions": actions}
        if fault_info is not None:
            entry["fault"] = fault_info
            faults.append({"round": end["round"], **fault_info})
        else:
            entry["count"] = end["count"]
            entry["change"] = end["change"]
        rounds.append(entry)
        for seat in range(n):
            tell(seat, end)

    placements = list(state.placements)
    for seat in range(n):
        tell(seat, match_end_message(mid, placements))
    record = {
        "match": mid, "variant": spec.variant, "rules": rules_dict, "seed": spec.dice_seed,
        "bots": seat_names, "first": opener, "rounds": rounds, "placements": placements,
        "rounds_played": len(rounds), "faults": faults,
        "think": [round(t, 6) for t in think],
        "seconds": round(time.perf_counter() - started, 6),
    }
    return MatchOutcome(record, {order[s] for s in faulted_seats})


def _text(action: object) -> str:
    return str(action) if not isinstance(action, Bid) else f"bid {action.quantity}x{action.face}"
