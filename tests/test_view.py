"""A seat's view (arena.protocol.messages.turn_view): the game part of docs/protocol.md's ``turn``, and
nothing of any other seat's dice."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from arena.engine.rules import Rules, State, apply, bid, deal, new_match, parse_action
from arena.errors import ArenaError, StateError
from arena.protocol.messages import turn_view

View = Callable[[State, int], dict[str, Any]]


def position(preset: str = "classic", players: int = 3, dice: int = 4, **over: Any) -> State:
    s = new_match(Rules.preset(preset, {"dice": dice, **over}), players)
    s = deal(s, [[5, 1, 3, 3][:dice], [2, 2, 6, 4][:dice], [6, 6, 6, 1][:dice]][:players])
    for t in ("3x4", "4x4") if s.total >= 4 else ("1x4", "2x4"):
        s = apply(s, parse_action(t))
    return s


def leaks(view: View, state: State, seat: int) -> bool:
    """Does ``view`` for ``seat`` change when any other seat's dice change?

    Tries every other die set to each face (one die at a time), so a view that
    shows, counts or summarises any other seat's die is caught.
    """
    assert state.dice is not None
    base = json.dumps(view(state, seat), sort_keys=True)
    for other, hand in enumerate(state.dice):
        if other == seat:
            continue
        for i in range(len(hand)):
            for face in range(1, 7):
                if face == hand[i]:
                    continue
                changed = hand[:i] + (face,) + hand[i + 1 :]
                dice = state.dice[:other] + (changed,) + state.dice[other + 1 :]
                if json.dumps(view(state._replace(dice=dice), seat), sort_keys=True) != base:
                    return True
    return False


def test_turn_view_fields() -> None:
    s = position()
    assert s.to_act == 2
    v = turn_view(s, 2)
    assert v == {
        "round": 1,
        "seat": 2,
        "dice": [1, 6, 6, 6],
        "counts": [4, 4, 4],
        "palifico": False,
        "history": [[0, 3, 4], [1, 4, 4]],
        "legal": {
            "dudo": True,
            "calza": True,
            "min_quantity": {"1": 2, "2": 5, "3": 5, "4": 5, "5": 4, "6": 4},
            "max_quantity": 12,
        },
    }
    assert json.loads(json.dumps(v)) == v  # plain JSON data


def test_legal_only_for_the_seat_to_act() -> None:
    s = position()
    assert turn_view(s, 0)["legal"] is None and turn_view(s, 1)["legal"] is None
    assert turn_view(s, 0)["dice"] == [1, 3, 3, 5]  # sorted, own dice only


def test_opening_view_and_palifico_flag() -> None:
    s = deal(new_match(Rules.preset("classic", {"dice": 2}), 3), [[4, 1], [2, 2], [3, 3]])
    v = turn_view(s, 0)
    assert v["history"] == [] and v["legal"]["dudo"] is False and "1" not in v["legal"]["min_quantity"]
    s = apply(apply(s, bid(1, 3)), bid(4, 2))
    s = apply(s, parse_action("dudo"))  # 2 twos plus an ace: 3 < 4, seat 1 drops to one die
    assert s.palifico and s.opener == 1
    s = deal(s, [[4, 1], [2], [3, 3]])
    v = turn_view(s, 1)
    assert v["palifico"] is True and v["round"] == 2 and v["counts"] == [2, 1, 2]
    assert v["legal"]["min_quantity"]["1"] == 1  # aces are ordinary in palifico


@pytest.mark.parametrize(
    "preset,players,dice",
    [
        ("classic", 3, 4),
        ("neller", 2, 1),
        ("plain", 3, 2),
        ("wikipedia", 2, 3),
    ],
)
def test_no_other_seat_dice_in_any_view(preset: str, players: int, dice: int) -> None:
    s = position(preset, players, dice)
    for seat in range(players):
        assert not leaks(turn_view, s, seat)


def test_two_dice_game_every_deal_gives_the_same_view() -> None:
    """Exhaustive for neller 2x1: a seat's view is the same for all 6 dice of the other."""
    rules = Rules.preset("neller", {"dice": 1})
    for seat in (0, 1):
        for mine in range(1, 7):
            views = set()
            for theirs in range(1, 7):
                hands = [[mine], [theirs]] if seat == 0 else [[theirs], [mine]]
                s = apply(deal(new_match(rules, 2), hands), bid(1, 3))
                views.add(json.dumps(turn_view(s, seat), sort_keys=True))
            assert len(views) == 1


def test_the_leak_check_catches_leaky_views() -> None:
    """The check is not vacuous: views that leak in small ways are caught."""
    s = position()

    def shows_neighbour(state: State, seat: int) -> dict[str, Any]:
        v = turn_view(state, seat)
        v["dice"] = sorted(v["dice"] + list(state.dice[(seat + 1) % len(state.counts)]))  # type: ignore[index]
        return v

    def counts_aces(state: State, seat: int) -> dict[str, Any]:
        v = turn_view(state, seat)
        v["aces_on_table"] = sum(h.count(1) for h in state.dice)  # type: ignore[union-attr]
        return v

    def summary_uses_table(state: State, seat: int) -> dict[str, Any]:
        v = turn_view(state, seat)
        v["round"] += sum(map(sum, state.dice)) % 2  # type: ignore[arg-type]
        return v

    for leaky in (shows_neighbour, counts_aces, summary_uses_table):
        assert any(leaks(leaky, s, seat) for seat in range(3)), leaky.__name__
    assert not any(leaks(turn_view, s, seat) for seat in range(3))


def test_view_errors() -> None:
    s = new_match(Rules.preset("classic"), 3)
    with pytest.raises(StateError):
        turn_view(s, 0)  # not dealt
    d = position()
    for seat in (-1, 3, 10):  # a negative index must not wrap round to seat 2's dice
        with pytest.raises(ArenaError):
            turn_view(d, seat)


def test_views_of_every_seat_across_a_round() -> None:
    s = apply(position("classic", 3, 4), parse_action("5x4"))
    for seat in range(3):
        v = turn_view(s, seat)
        assert v["history"][-1] == [2, 5, 4] and v["seat"] == seat
        assert (v["legal"] is not None) == (seat == s.to_act)
