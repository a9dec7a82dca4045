"""Equivalence with OpenSpiel's ``liars_dice`` (pip package ``open-spiel``).

OpenSpiel's game is two players, one round, the highest face (6) wild and
ranked highest at each quantity. That is our ``neller`` preset with fixed
seating and seat 0 opening: their face 6 is our ace (1), their faces 1-5 are
our 2-6. The mapping of their action ids is read from OpenSpiel itself
(``action_to_string``), not assumed.

The 1-die game is checked exhaustively: every deal (36 dice pairs) and every
reachable action sequence, comparing the legal actions at every decision and
the loser at every terminal. Larger dice counts (their ``numdice``) are
checked along seeded random paths, since their trees are too big to walk.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from arena.engine.rules import (
    DUDO,
    Action,
    Rules,
    State,
    apply,
    bid,
    deal,
    legal_actions,
    new_match,
)

pytest.importorskip("pyspiel", reason="the test extra is not installed (pip install -e '.[test]')")
import pyspiel  # noqa: E402  (after the skip above)

WILD = 6  # OpenSpiel's wild face is its highest (dice_sides)


def our_face(theirs: int) -> int:
    return 1 if theirs == WILD else theirs + 1


def neller(dice: int) -> Rules:
    return Rules.preset("neller", {"dice": dice, "seating": "fixed", "first": "seat0"})


def load(numdice: int) -> Any:
    game = pyspiel.load_game("liars_dice", {"numdice": numdice})
    params = game.get_parameters()
    assert params["players"] == 2 and params["dice_sides"] == WILD
    assert params.get("bidding_rule", "reset-face") == "reset-face"
    return game


def action_map(game: Any) -> dict[int, Action]:
    """OpenSpiel action id -> our action, from their own ``action_to_string``."""
    st = game.new_initial_state()
    while st.is_chance_node():
        st.apply_action(st.legal_actions()[0])
    mapping: dict[int, Action] = {}
    for a in range(game.num_distinct_actions()):
        text = st.action_to_string(0, a)
        if text == "Liar":
            mapping[a] = DUDO
        else:
            q, f = (int(x) for x in text.split("-"))
            mapping[a] = bid(q, our_face(f))
    assert len(set(mapping.values())) == len(mapping)
    return mapping


def chance_map(game: Any) -> dict[int, int]:
    """Our die face -> OpenSpiel's chance outcome id ("Roll k")."""
    st = game.new_initial_state()
    assert st.is_chance_node()
    out: dict[int, int] = {}
    for a in st.legal_actions():
        text = st.action_to_string(pyspiel.PlayerId.CHANCE, a)
        assert text.startswith("Roll ")
        out[our_face(int(text.split()[1]))] = a
    assert sorted(out) == [1, 2, 3, 4, 5, 6]
    return out


def start_both(
    game: Any, rules: Rules, dice: tuple[tuple[int, ...], tuple[int, ...]], rolls: dict[int, int]
) -> tuple[State, Any]:
    ours = deal(new_match(rules, 2, opener=0), dice)
    theirs = game.new_initial_state()
    for hand in dice:  # OpenSpiel rolls player 0's dice first, then player 1's
        for d in hand:
            assert theirs.is_chance_node()
            theirs.apply_action(rolls[d])
    assert not theirs.is_chance_node() and theirs.current_player() == 0
    return ours, theirs


def test_action_mapping_is_the_bid_order() -> None:
    """Their ids ascend exactly along our rank_high order, with Liar last."""
    game = load(1)
    mapping = action_map(game)
    ids = sorted(mapping)
    ours = [mapping[a] for a in ids]
    assert ours[-1] is DUDO
    assert [str(b) for b in ours[:-1]] == [
        "1x2",
        "1x3",
        "1x4",
        "1x5",
        "1x6",
        "1x1",
        "2x2",
        "2x3",
        "2x4",
        "2x5",
        "2x6",
        "2x1",
    ]


def test_exhaustive_one_die_equivalence() -> None:
    game = load(1)
    amap = action_map(game)
    to_id = {v: k for k, v in amap.items()}
    rolls = chance_map(game)
    rules = neller(1)
    totals = {"decisions": 0, "terminals": 0}

    def walk(ours: State, theirs: Any, path: tuple[str, ...]) -> None:
        if theirs.is_terminal():
            assert ours.placements is not None, path
            totals["terminals"] += 1
            their_loser = theirs.returns().index(-1.0)
            assert ours.last is not None and ours.last.change == (their_loser, -1), path
            assert ours.placements[their_loser] == 2 and ours.placements[1 - their_loser] == 1, path
            return
        assert ours.placements is None and ours.to_act == theirs.current_player(), path
        totals["decisions"] += 1
        mine = legal_actions(ours)
        assert [to_id[a] for a in mine] == theirs.legal_actions(), path
        for a in mine:
            child = theirs.clone()
            child.apply_action(to_id[a])
            walk(apply(ours, a), child, path + (str(a),))

    for d0 in range(1, 7):
        for d1 in range(1, 7):
            ours, theirs = start_both(game, rules, ((d0,), (d1,)), rolls)
            walk(ours, theirs, (f"dice {d0} {d1}",))
    # Every increasing bid sequence (2^12 of them, the empty one included) is a
    # decision point, and every non-empty one ends once in a dudo: per deal.
    assert totals == {"decisions": 36 * 4096, "terminals": 36 * 4095}


@pytest.mark.parametrize("numdice", [2, 3, 5])
def test_random_paths_more_dice(numdice: int) -> None:
    """Seeded random paths with more dice: same legal actions, same loser."""
    game = load(numdice)
    amap = action_map(game)
    to_id = {v: k for k, v in amap.items()}
    rolls = chance_map(game)
    rules = neller(numdice)
    rng = random.Random(1000 + numdice)
    for _ in range(1500):
        dice = tuple(tuple(rng.randint(1, 6) for _ in range(numdice)) for _ in range(2))
        ours, theirs = start_both(game, rules, dice, rolls)  # type: ignore[arg-type]
        while not theirs.is_terminal():
            mine = legal_actions(ours)
            assert [to_id[a] for a in mine] == theirs.legal_actions()
            # Favour small raises so paths are long, and call now and then.
            a = mine[min(int(rng.expovariate(0.7)), len(mine) - 1)] if rng.random() < 0.85 else mine[-1]
            theirs.apply_action(to_id[a])
            ours = apply(ours, a)
        assert ours.last is not None and ours.last.call is not None
        their_loser = theirs.returns().index(-1.0)
        assert ours.last.change == (their_loser, -1)
