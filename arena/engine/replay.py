"""Replay a match record through the rules engine and check every rule.

A record (:class:`arena.engine.records.MatchRecord`) holds every die and every
action, so the match can be re-played from it alone: :func:`replay` does, and
raises :class:`ReplayMismatch` at the first place where the record and the
rules disagree (a wrong opener, an illegal bid, a miscounted call, a wrong
change of dice, dice that are not the ones the seed gives, wrong placements,
a wrong end reason).
"""

from __future__ import annotations

from collections.abc import Iterator

from arena.engine import dice as dice_mod
from arena.engine.records import EndReason, MatchRecord, RoundRecord, end_reason
from arena.engine.rules import State, apply, deal, fault, new_match, why_illegal
from arena.errors import ArenaError


class ReplayMismatch(ArenaError):
    """A match record disagrees with the rules at the place the message names."""


def replay(record: MatchRecord, *, check_dice: bool = True) -> Iterator[tuple[RoundRecord, State]]:
    """Yield ``(round, state after it)`` for every round, checking each rule.

    With ``check_dice`` the dice must also be those the keyed generator gives
    for the record's ``seed`` (:mod:`arena.engine.dice`).
    """
    mid = record.match
    rules = record.rules
    n = record.players
    first = record.first
    if check_dice and rules.first == "roll":
        rolled = dice_mod.roll_off(range(n), dice_mod.opener_die(record.seed))[0]
        if rolled != first:
            raise ReplayMismatch(f"{mid}: round 1 opener is seat {first}, the roll gives seat {rolled}")
    try:
        state = new_match(rules, n, first)
    except ArenaError as exc:
        raise ReplayMismatch(f"{mid}: {exc}") from None
    for entry in record.rounds:
        where = f"{mid} round {entry.round}"
        if entry.round != state.round:
            raise ReplayMismatch(f"{where}: expected round {state.round}")
        if entry.opener != state.opener:
            raise ReplayMismatch(f"{where}: opener is seat {entry.opener}, the rules give seat {state.opener}")
        if entry.palifico != state.palifico:
            raise ReplayMismatch(f"{where}: palifico is {entry.palifico}, the rules give {state.palifico}")
        if check_dice:
            expected = dice_mod.roll_table(record.seed, state.round, state.counts)
            if tuple(map(tuple, expected)) != entry.dice:
                raise ReplayMismatch(f"{where}: the dice are not those the seed {record.seed} gives")
        try:
            state = deal(state, entry.dice)
        except ArenaError as exc:
            raise ReplayMismatch(f"{where}: {exc}") from None
        # Faults of players who were out (asked for a dead man's calza): in the
        # match's faults list only, since they void nothing. Each took the place
        # of the seat's answer the first time it was asked and did not answer.
        dead = [f.seat for f in record.faults if f.round == entry.round and not entry.dice[f.seat]]
        for seat, action in entry.actions:
            while dead and state.to_act in dead and seat != state.to_act:
                dead.remove(state.to_act)
                state = fault(state, state.to_act)
            if state.dice is None:
                raise ReplayMismatch(f"{where}: seat {seat} acted after the round was resolved")
            if seat != state.to_act:
                raise ReplayMismatch(f"{where}: seat {seat} acted, but seat {state.to_act} was to act")
            reason = why_illegal(state, action)
            if reason is not None:
                raise ReplayMismatch(f"{where}: seat {seat} {action} is illegal: {reason}")
            state = apply(state, action)
        while dead and state.dice is not None and state.to_act in dead:
            dead.remove(state.to_act)
            state = fault(state, state.to_act)
        if dead:
            raise ReplayMismatch(f"{where}: a fault by seat {dead[0]}, which was out and not asked")
        if entry.fault is not None:
            if state.dice is None:
                raise ReplayMismatch(f"{where}: a fault after the round was already resolved")
            seat = entry.fault.seat
            if seat != state.to_act:
                # The referee only detects faults on the seat it is asking.
                raise ReplayMismatch(f"{where}: fault by seat {seat}, but seat {state.to_act} was to act")
            state = fault(state, seat)
        else:
            last = state.last
            if state.dice is not None or last is None or last.round != entry.round:
                raise ReplayMismatch(f"{where}: the round does not end with a call")
            if entry.count != last.count:
                raise ReplayMismatch(f"{where}: count {entry.count}, the dice give {last.count}")
            change = tuple(entry.change) if entry.change is not None else None
            if change != last.change:
                raise ReplayMismatch(f"{where}: change {change}, the rules give {last.change}")
        yield entry, state
    if state.placements is None:
        raise ReplayMismatch(f"{mid}: the record ends before the match does")
    if state.placements != record.placements:
        raise ReplayMismatch(f"{mid}: placements {list(record.placements)}, the rules give {list(state.placements)}")
    if record.rounds_played != len(record.rounds):
        raise ReplayMismatch(f"{mid}: rounds_played {record.rounds_played} but {len(record.rounds)} rounds")
    if record.end is not end_reason(state):
        raise ReplayMismatch(
            f"{mid}: the record says the match ended by {record.end}, the rules give {end_reason(state)}"
        )


def check(record: MatchRecord) -> State:
    """Replay the whole record; returns the final state or raises ReplayMismatch."""
    state: State | None = None
    for _, state in replay(record):  # noqa: B007  # the loop keeps the last state
        pass
    if state is None:
        raise ReplayMismatch(f"{record.match}: no rounds")
    return state


_ENDS = {
    EndReason.ELIMINATION: "the last opponent lost its last die",
    EndReason.FORFEIT: "the last opponent faulted (a forfeit)",
}


def render(record: MatchRecord, *, check_dice: bool = True) -> Iterator[str]:
    """The match round by round, in words, checking every rule as it goes."""
    names = record.bots
    n = record.players
    yield (
        f"{record.match} ({record.variant}), {n} players, seed {record.seed}: "
        + ", ".join(f"seat {s} {names[s]}" for s in range(n))
    )
    state: State | None = None
    for entry, state in replay(record, check_dice=check_dice):
        pal = " palifico" if entry.palifico else ""
        yield f"\nround {entry.round}{pal}, opened by seat {entry.opener} ({names[entry.opener]})"
        for s, hand in enumerate(entry.dice):
            if hand:
                yield f"  seat {s} {names[s]:<16} {' '.join(str(d) for d in hand)}"
        moves = [f"{names[s]} {action}" for s, action in entry.actions]
        if moves:
            yield "  " + ", ".join(moves)
        for f in record.faults:
            if f.round == entry.round and not entry.dice[f.seat]:
                yield f"  FAULT seat {f.seat} ({names[f.seat]}, out): {f.kind}: {f.detail}; the round goes on"
        if entry.fault is not None:
            f = entry.fault
            yield f"  FAULT seat {f.seat} ({names[f.seat]}): {f.kind}: {f.detail}; round void"
        elif entry.change is not None:
            seat, delta = entry.change
            if not entry.dice[seat]:  # the caller was out: a dead man's calza
                what = (
                    f"made a dead man's calza, right: back with {delta} di{'e' if delta == 1 else 'ce'}"
                    if delta
                    else "made a dead man's calza, wrong: stays out, the call spent"
                )
            else:
                what = (
                    f"loses {-delta} di{'e' if delta == -1 else 'ce'}"
                    if delta < 0
                    else "regains a die"
                    if delta > 0
                    else "is right but already holds the maximum"
                )
            yield f"  count {entry.count}: seat {seat} ({names[seat]}) {what}"
        yield "  dice left: " + " ".join(str(c) for c in state.counts)
    places = record.placements
    ranking = sorted(range(n), key=lambda s: places[s])
    yield "\nplacements: " + ", ".join(f"{places[s]}. {names[s]} (seat {s})" for s in ranking)
    if record.end is EndReason.MAX_ROUNDS:
        still = sum(1 for c in (state.counts if state is not None else ()) if c)
        yield (
            f"ended: {record.end}: round {record.rules.max_rounds} (the rules' cap) ended with {still} players "
            f"still in, placed by dice left"
        )
    else:
        yield f"ended: {record.end}: {_ENDS[record.end]}"
    yield "every rule checked: the record agrees with the rules"
