"""Replay a match record through the rules engine and check every rule.

A record (RESULTS.md) holds every die and every action, so the match can be
re-played from it alone: :func:`replay` does, and raises
:class:`ReplayMismatch` at the first place where the record and the rules
disagree (a wrong opener, an illegal bid, a miscounted call, a wrong change of
dice, dice that are not the ones the seed gives, wrong placements).
"""

from __future__ import annotations

from typing import Any, Iterator

from arena.engine import dice as dice_mod
from arena.errors import ArenaError
from arena.engine.rules import Action, Rules, State, apply, bid, deal, fault, new_match, parse_action, why_illegal


class ReplayMismatch(ArenaError):
    """A match record disagrees with the rules at the place the message names."""


def _action(item: list[Any]) -> tuple[int, Action]:
    if len(item) == 4 and item[1] == "bid":
        return int(item[0]), bid(int(item[2]), int(item[3]))
    if len(item) == 2 and item[1] in ("dudo", "calza"):
        return int(item[0]), parse_action(item[1])
    raise ReplayMismatch(f"unreadable action {item!r}")


def replay(record: dict[str, Any], *, check_dice: bool = True) -> Iterator[tuple[dict[str, Any], State]]:
    """Yield ``(round entry, state after it)`` for every round, checking each rule.

    With ``check_dice`` the dice must also be those the keyed generator gives
    for the record's ``seed`` (:mod:`arena.engine.dice`).
    """
    mid = record.get("match", "?")
    rules = Rules.from_dict(record["rules"])
    n = len(record["bots"])
    first = int(record["first"])
    if check_dice and rules.first == "roll":
        rolled = dice_mod.roll_off(range(n), dice_mod.opener_die(int(record["seed"])))[0]
        if rolled != first:
            raise ReplayMismatch(f"{mid}: round 1 opener is seat {first}, the roll gives seat {rolled}")
    state = new_match(rules, n, first)
    for entry in record["rounds"]:
        where = f"{mid} round {entry.get('round')}"
        if entry["round"] != state.round:
            raise ReplayMismatch(f"{where}: expected round {state.round}")
        if entry["opener"] != state.opener:
            raise ReplayMismatch(f"{where}: opener is seat {entry['opener']}, the rules give seat {state.opener}")
        if bool(entry["palifico"]) != state.palifico:
            raise ReplayMismatch(f"{where}: palifico is {entry['palifico']}, the rules give {state.palifico}")
        hands = [list(h) for h in entry["dice"]]
        if check_dice:
            expected = dice_mod.roll_table(int(record["seed"]), state.round, state.counts)
            if [list(h) for h in expected] != hands:
                raise ReplayMismatch(f"{where}: the dice are not those the seed {record['seed']} gives")
        try:
            state = deal(state, hands)
        except ArenaError as exc:
            raise ReplayMismatch(f"{where}: {exc}") from None
        for item in entry["actions"]:
            seat, action = _action(item)
            if seat != state.to_act:
                raise ReplayMismatch(f"{where}: seat {seat} acted, but seat {state.to_act} was to act")
            reason = why_illegal(state, action)
            if reason is not None:
                raise ReplayMismatch(f"{where}: seat {seat} {action} is illegal: {reason}")
            state = apply(state, action)
            if state.dice is None:
                break
        if "fault" in entry:
            if state.dice is None:
                raise ReplayMismatch(f"{where}: a fault after the round was already resolved")
            seat = int(entry["fault"]["seat"])
            if seat != state.to_act:
                # The referee only detects faults on the seat it is asking.
                raise ReplayMismatch(f"{where}: fault by seat {seat}, but seat {state.to_act} was to act")
            state = fault(state, seat)
        else:
            last = state.last
            if state.dice is not None or last is None or last.round != entry["round"]:
                raise ReplayMismatch(f"{where}: the round does not end with a call")
            if entry["count"] != last.count:
                raise ReplayMismatch(f"{where}: count {entry['count']}, the dice give {last.count}")
            change = (entry["change"]["seat"], entry["change"]["delta"])
            if change != last.change:
                raise ReplayMismatch(f"{where}: change {change}, the rules give {last.change}")
        yield entry, state
    if state.placements is None:
        raise ReplayMismatch(f"{mid}: the record ends before the match does")
    if list(state.placements) != list(record["placements"]):
        raise ReplayMismatch(f"{mid}: placements {record['placements']}, the rules give {list(state.placements)}")
    if record.get("rounds_played", len(record["rounds"])) != len(record["rounds"]):
        raise ReplayMismatch(f"{mid}: rounds_played {record['rounds_played']} but {len(record['rounds'])} rounds")


def check(record: dict[str, Any]) -> State:
    """Replay the whole record; returns the final state or raises ReplayMismatch."""
    state: State | None = None
    for _, state in replay(record):
        pass
    if state is None:
        raise ReplayMismatch(f"{record.get('match')}: no rounds")
    return state


def render(record: dict[str, Any], *, check_dice: bool = True) -> Iterator[str]:
    """The match round by round, in words, checking every rule as it goes."""
    names = record["bots"]
    n = len(names)
    yield (f"{record['match']} ({record['variant']}), {n} players, seed {record['seed']}: "
           + ", ".join(f"seat {s} {names[s]}" for s in range(n)))
    for entry, state in replay(record, check_dice=check_dice):
        pal = " palifico" if entry["palifico"] else ""
        yield f"\nround {entry['round']}{pal}, opened by seat {entry['opener']} ({names[entry['opener']]})"
        for s, hand in enumerate(entry["dice"]):
            if hand:
                yield f"  seat {s} {names[s]:<16} {' '.join(str(d) for d in hand)}"
        moves = []
        for item in entry["actions"]:
            s, action = _action(item)
            moves.append(f"{names[s]} {action}")
        if moves:
            yield "  " + ", ".join(moves)
        if "fault" in entry:
            f = entry["fault"]
            yield f"  FAULT seat {f['seat']} ({names[f['seat']]}): {f['kind']}: {f.get('detail', '')}; round void"
        else:
            ch = entry["change"]
            who = names[ch["seat"]]
            what = (f"loses {-ch['delta']} di{'e' if ch['delta'] == -1 else 'ce'}" if ch["delta"] < 0
                    else "regains a die" if ch["delta"] > 0 else "is right but already holds the maximum")
            yield f"  count {entry['count']}: seat {ch['seat']} ({who}) {what}"
        yield "  dice left: " + " ".join(str(c) for c in state.counts)
    places = record["placements"]
    ranking = sorted(range(n), key=lambda s: places[s])
    yield "\nplacements: " + ", ".join(f"{places[s]}. {names[s]} (seat {s})" for s in ranking)
    yield "every rule checked: the record agrees with the rules"

