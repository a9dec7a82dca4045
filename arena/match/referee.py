"""The referee: plays one match with players behind the protocol, and records it.

Every fault a player commits (timeout, crash, malformed, illegal, unasked)
becomes data: the player is out, the round is void (docs/rules.md, Faults) and the
record says what happened. The referee never lets a player's failure stop the
match, and it sends each player only its own view (:func:`arena.protocol.messages.turn_view`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from arena.engine import dice as dice_mod
from arena.engine.records import (
    ActionRecord,
    DiceChange,
    FaultRecord,
    MatchRecord,
    MatchSpec,
    RoundRecord,
    derive_seed,
    end_reason,
)
from arena.engine.rules import Bid, Rules, apply, deal, fault, new_match, why_illegal
from arena.errors import BotFault, FaultKind, IllegalAction, InvalidAction, StateError
from arena.protocol.messages import (
    Notification,
    match_end_message,
    match_start_message,
    round_end_message,
    turn_message,
)
from arena.protocol.parse import parse_reply
from arena.protocol.player import Player
from arena.protocol.wire import clip

_new = tuple.__new__  # a NamedTuple built without its Python-level __new__ (per decision)


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

    def __init__(self, record: MatchRecord, faulted: set[int]) -> None:
        self.record = record
        self.faulted = faulted


def play_match(spec: MatchSpec, players: Sequence[Player], names: Sequence[str], time_ms: int) -> MatchOutcome:
    """Play ``spec`` with ``players[i]`` the player of entrant position ``i``.

    ``names[i]`` is that entrant's display name. Returns the match's record
    (:class:`arena.engine.records.MatchRecord`, its end reason included) and
    the set of entrant positions that faulted, whose processes must be
    restarted before their next match.
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
    rounds: list[RoundRecord] = []
    faults: list[FaultRecord] = []
    mid = spec.match

    def tell(seat: int, msg: Notification) -> None:
        if seat not in faulted_seats:
            seat_players[seat].notify(msg)

    for seat in range(n):
        tell(seat, match_start_message(mid, seat, seat_names, rules_dict, bot_seed(spec.seed, seat)))

    while state.placements is None:
        state = deal(state, dice_mod.roll_table(spec.dice_seed, state.round, state.counts))
        actions: list[ActionRecord] = []
        lapse: FaultRecord | None = None
        while state.dice is not None:  # until the round is resolved or void
            seat = state.to_act
            try:
                reply, cpu = seat_players[seat].request(turn_message(mid, state, time_ms))
                think[seat] += cpu
                action = parse_reply(reply)
                try:
                    # apply checks the action itself (the one check per decision);
                    # it leaves the state as it was when it refuses.
                    after = apply(state, action)
                except (IllegalAction, InvalidAction) as refused:
                    reason = why_illegal(state, action) or str(refused)
                    raise BotFault(f"{_text(action)}: {reason}", FaultKind.ILLEGAL) from None
            except BotFault as exc:
                lapse = FaultRecord(seat, exc.kind, clip(exc.detail, 300), state.round)
                faulted_seats.add(seat)
                state = fault(state, seat)
                if state.dice is not None:  # a player who was out, asked for a dead man's calza: the round goes on
                    faults.append(lapse)
                    lapse = None
                    continue
                break
            actions.append(_new(ActionRecord, (seat, action)))  # ActionRecord(seat, action), in C
            state = after
        end = round_end_message(mid, state, lapse.kind if lapse else None)
        last = state.last
        if last is None:  # the engine sets it whenever a round ends
            raise StateError(f"{mid}: round {state.round - 1} ended without a result")
        if lapse is not None:
            faults.append(lapse)
            entry = RoundRecord(last.round, last.opener, last.palifico, last.dice, tuple(actions), fault=lapse)
        else:
            change = last.change
            entry = RoundRecord(
                last.round,
                last.opener,
                last.palifico,
                last.dice,
                tuple(actions),
                last.count,
                DiceChange(*change) if change is not None else None,
            )
        rounds.append(entry)
        for seat in range(n):
            tell(seat, end)

    placements = state.placements
    for seat in range(n):
        tell(seat, match_end_message(mid, placements))
    record = MatchRecord(
        mid,
        spec.variant,
        rules,
        spec.dice_seed,
        tuple(seat_names),
        opener,
        tuple(rounds),
        placements,
        len(rounds),
        end_reason(state),
        tuple(faults),
        tuple(round(t, 6) for t in think),
        round(time.perf_counter() - started, 6),
    )
    return MatchOutcome(record, {order[s] for s in faulted_seats})


def _text(action: object) -> str:
    return str(action) if not isinstance(action, Bid) else f"bid {action.quantity}x{action.face}"
