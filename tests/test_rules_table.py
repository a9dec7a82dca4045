"""Table-driven tests: one row per rule sentence or example of the rule
book (docs/rules.md) and of the traditional rule texts, plus the choices docs/rules.md writes down.

Each test builds a position by playing real rounds with dice chosen by hand,
so every row runs through the public API only (``new_match``, ``deal``,
``apply``, ``fault``, ``legal_bids``, ``legal_summary``, ``why_illegal``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest

from arena.engine.rules import (
    CALZA,
    DUDO,
    KEYS,
    PRESETS,
    Bid,
    Calza,
    Dudo,
    Rules,
    State,
    apply,
    bid,
    bid_key,
    calza_allowed,
    count_matching,
    deal,
    fault,
    legal_actions,
    legal_bids,
    legal_summary,
    new_match,
    parse_action,
    parse_value,
    why_illegal,
    winner,
)
from arena.errors import ArenaError, IllegalAction, InvalidAction, RulesError, StateError

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def rules(preset: str = "classic", **over: Any) -> Rules:
    return Rules.preset(preset, over)


def start(preset: str = "classic", players: int = 3, opener: int = 0, **over: Any) -> State:
    return new_match(rules(preset, **over), players, opener)


def hands(state: State, face: int = 2) -> list[list[int]]:
    """Every seat still in holds only ``face`` (no aces, so counts are easy)."""
    return [[face] * c for c in state.counts]


def play(state: State, *texts: str) -> State:
    for t in texts:
        state = apply(state, parse_action(t))
    return state


def dealt(state: State, dice: Sequence[Sequence[int]] | None = None) -> State:
    return deal(state, hands(state) if dice is None else dice)


def make_lose(state: State, seat: int) -> State:
    """Play one round (all dice 2s) in which ``seat`` loses exactly one die.

    The opener bids a true 1x2; players raise with true bids of 2s until
    ``seat`` is to act, and ``seat`` calls dudo on a true bid. If ``seat``
    opens, it bids a false 1x3 and the next player calls dudo.
    """
    s = dealt(state)
    if s.to_act == seat:
        return play(s, "1x3", "dudo")
    q = 1
    s = apply(s, bid(q, 2))
    while s.to_act != seat:
        q += 1
        s = apply(s, bid(q, 2))
    return apply(s, DUDO)


def legal(state: State, text: str) -> bool:
    return why_illegal(state, parse_action(text)) is None


def loser(state: State) -> tuple[int, int]:
    assert state.last is not None and state.last.change is not None
    return state.last.change


# ---------------------------------------------------------------------------
# Raising: the examples of the rule book and the traditional texts
# ---------------------------------------------------------------------------

# (preset, overrides, players, bids so far, legal raises, illegal raises)
RAISES = [
    # "after five 3s three aces are enough" (convert: halve, rounding up)
    ("classic", {}, 3, ["5x3"], ["3x1", "4x1", "5x4", "6x2"], ["2x1", "5x2", "5x3", "4x6"]),
    # "after five 4s or six 4s: three 1s"
    ("classic", {}, 3, ["5x4"], ["3x1"], ["2x1"]),
    ("classic", {}, 3, ["6x4"], ["3x1"], ["2x1"]),
    ("classic", {}, 3, ["4x2", "6x4"], ["3x1"], ["2x1"]),
    ("classic", {}, 3, ["4x4"], ["2x1"], ["1x1"]),
    # "after three 1s, at least seven of another face"; more aces is a raise
    ("classic", {}, 3, ["6x2", "3x1"], ["7x2", "7x6", "4x1", "8x3"], ["6x6", "6x2", "3x1", "2x1"]),
    ("classic", {}, 3, ["1x2", "1x1"], ["3x2", "2x1", "3x6"], ["2x6", "1x1"]),
    # "after four 5s: four 6s, five 2s (and five 3s) are legal; four 3s is not"
    ("classic", {}, 3, ["4x5"], ["4x6", "5x2", "5x3", "6x2"], ["4x3", "4x5", "3x6", "4x4"]),
    ("neller", {}, 3, ["4x5"], ["4x6", "5x2", "5x3", "4x1"], ["4x3", "4x5", "3x6", "3x1"]),
    ("plain", {}, 3, ["4x5"], ["4x6", "5x2", "5x3", "5x1"], ["4x3", "4x5", "4x1"]),
    # rank_high: 1x2 < ... < 1x6 < 1x1 < 2x2 < ... < 2x6 < 2x1 < 3x2
    ("neller", {}, 2, ["1x6"], ["1x1", "2x2"], ["1x5"]),
    ("neller", {}, 2, ["1x1"], ["2x2", "2x6", "2x1"], ["1x6", "1x1"]),
    ("neller", {}, 3, ["2x1"], ["3x2"], ["2x6", "2x1"]),
    # plain: 1 is the lowest face, at the same quantity anything beats it
    ("plain", {"open_on_ones": True}, 2, ["1x1"], ["1x2", "1x6", "2x1"], ["1x1"]),
    ("plain", {}, 2, ["1x6"], ["2x1", "2x2"], ["1x1", "1x5"]),
    # quantities run to the dice in play and no further
    ("neller", {"dice": 1}, 2, [], ["2x1", "2x6", "1x1"], ["3x2", "3x1"]),
    ("classic", {}, 3, ["14x6"], ["15x2", "7x1", "15x1"], ["16x2", "6x1", "16x1"]),
]


@pytest.mark.parametrize("preset,over,players,history,ok,bad", RAISES)
def test_raises(
    preset: str, over: dict[str, Any], players: int, history: list[str], ok: list[str], bad: list[str]
) -> None:
    s = play(dealt(start(preset, players, **over)), *history)
    for t in ok:
        assert legal(s, t), f"{t} should be legal after {history} ({preset})"
        assert parse_action(t) in legal_bids(s)
    for t in bad:
        reason = why_illegal(s, parse_action(t))
        assert reason, f"{t} should be illegal after {history} ({preset})"
        assert parse_action(t) not in legal_bids(s)
        with pytest.raises(IllegalAction) as exc:
            apply(s, parse_action(t))
        assert exc.value.reason == reason


@pytest.mark.parametrize("q", range(1, 31))
def test_convert_switch_thresholds_all_quantities(q: int) -> None:
    """Halving to aces (ceil) and doubling plus one back, for every quantity."""
    s = dealt(start("classic", 6, dice=10, open_on_ones=True))  # 60 dice in play
    on4 = play(s, f"{q}x4")
    assert min(b.quantity for b in legal_bids(on4) if b.face == 1) == (q + 1) // 2
    aces = play(s, f"{q}x1")
    summary = legal_summary(aces)
    assert summary.min_quantity[1] == q + 1
    for f in range(2, 7):
        if 2 * q + 1 <= 60:
            assert summary.min_quantity[f] == 2 * q + 1
        else:
            assert f not in summary.min_quantity


def test_bid_order_keys() -> None:
    """The documented keys: convert ranks q aces as (2q, 7); rank_high as (q, 7); plain as (q, 1)."""
    assert bid_key(bid(3, 1), "convert") == bid_key(bid(6, 7), "plain")  # (2q, 7) in the (q, f) order
    assert bid_key(bid(6, 6), "convert") < bid_key(bid(3, 1), "convert") < bid_key(bid(7, 2), "convert")
    order = [
        bid(1, 2),
        bid(1, 3),
        bid(1, 4),
        bid(1, 5),
        bid(1, 6),
        bid(1, 1),
        bid(2, 2),
        bid(2, 6),
        bid(2, 1),
        bid(3, 2),
    ]
    assert sorted(order, key=lambda b: bid_key(b, "rank_high")) == order
    plain = [bid(1, 1), bid(1, 2), bid(1, 6), bid(2, 1), bid(2, 2)]
    assert sorted(plain, key=lambda b: bid_key(b, "plain")) == plain


def test_protocol_example_summary() -> None:
    """docs/protocol.md's turn example: standing 4x4 with 12 dice in play."""
    s = play(dealt(start("classic", 3, dice=4)), "3x4", "4x4")
    summary = legal_summary(s)
    assert summary.min_quantity == {1: 2, 2: 5, 3: 5, 4: 5, 5: 4, 6: 4}
    assert summary.max_quantity == 12 and summary.dudo and summary.calza


def test_nobody_calls_before_the_first_bid() -> None:
    s = dealt(start())
    assert DUDO not in legal_actions(s) and CALZA not in legal_actions(s)
    assert why_illegal(s, DUDO) == "nobody may call before the first bid"
    assert why_illegal(s, CALZA) == "nobody may call before the first bid"
    with pytest.raises(IllegalAction):
        apply(s, DUDO)
    with pytest.raises(IllegalAction):
        apply(s, CALZA)
    summary = legal_summary(s)
    assert not summary.dudo and not summary.calza


# ---------------------------------------------------------------------------
# Opening on aces
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "preset,over,allowed",
    [
        ("classic", {}, False),
        ("lizumo", {}, False),
        ("wikipedia", {}, True),
        ("neller", {}, True),
        ("plain", {}, False),  # the plain preset keeps open_on_ones: false
        ("plain", {"open_on_ones": True}, True),
        ("classic", {"open_on_ones": True}, True),
    ],
)
def test_opening_on_aces(preset: str, over: dict[str, Any], allowed: bool) -> None:
    r = rules(preset, **over)
    assert r.open_on_ones is allowed
    s = dealt(new_match(r, 3))
    assert legal(s, "1x1") is allowed
    assert (1 in legal_summary(s).min_quantity) is allowed
    if not allowed:
        assert "open_on_ones" in (why_illegal(s, bid(1, 1)) or "")
        assert why_illegal(s, bid(2, 1)) is not None


def test_palifico_opening_may_be_on_aces() -> None:
    """open_on_ones: false does not apply in palifico rounds (aces are an ordinary face)."""
    s = make_lose(start("classic", 3, dice=2), 1)
    assert s.palifico and s.opener == 1
    s = dealt(s)
    assert legal(s, "1x1") and legal(s, "3x1")


# ---------------------------------------------------------------------------
# Counting
# ---------------------------------------------------------------------------

COUNTS = [
    # dice, face, wild, count
    ([[1, 3, 3], [1, 1, 5], [6]], 3, True, 5),  # "five threes" counts threes and aces
    ([[1, 3, 3], [1, 1, 5], [6]], 3, False, 2),
    ([[1, 3, 3], [1, 1, 5], [6]], 1, False, 3),  # bids on aces count aces once
    ([[], [2, 2], [2]], 2, True, 3),
    ([[], [], []], 4, True, 0),
]


@pytest.mark.parametrize("dice,face,wild,count", COUNTS)
def test_count_matching(dice: list[list[int]], face: int, wild: bool, count: int) -> None:
    assert count_matching(dice, face, wild) == count


@pytest.mark.parametrize(
    "preset,palifico,face,expected",
    [
        ("classic", False, 3, 5),  # wild aces count as threes
        ("classic", False, 1, 3),  # a bid on aces counts only aces
        ("classic", True, 3, 2),  # palifico: aces are not wild
        ("plain", False, 3, 2),  # wild_ones false
        ("neller", False, 3, 5),
        ("neller", False, 1, 3),
    ],
)
def test_round_count(preset: str, palifico: bool, face: int, expected: int) -> None:
    """The count a dudo is judged on, as recorded in ``state.last.count``."""
    s = start(preset, 3, dice=3, open_on_ones=True)
    if palifico:
        s = make_lose(make_lose(s, 2), 2)  # seat 2 down to one die: palifico round next
        assert s.palifico
        dice = [[1, 3, 3], [1, 1, 5], [6]]
    else:
        dice = [[1, 3, 3], [1, 1, 5], [6, 4, 4]]
    s = deal(s, dice)
    s = play(s, f"1x{face}", "dudo")
    assert s.last is not None and s.last.count == expected


# ---------------------------------------------------------------------------
# Dudo and the penalty
# ---------------------------------------------------------------------------

# (dice, bid, penalty, (loser seat, delta))  seat 0 bids, seat 1 calls dudo
DUDOS = [
    ([[3, 3], [1, 5], [2, 2]], "4x3", "one", (0, -1)),  # count 3 < 4: bidder loses
    ([[3, 3], [1, 5], [2, 2]], "3x3", "one", (1, -1)),  # count == q: caller loses
    ([[3, 3], [1, 5], [2, 2]], "2x3", "one", (1, -1)),  # count > q: caller loses
    ([[3, 3], [1, 5], [2, 2]], "6x3", "difference", (0, -2)),  # |6 - 3| = 3, capped at 2 held
    ([[3, 3], [1, 5], [2, 2]], "5x3", "difference", (0, -2)),  # |5 - 3| = 2
    ([[3, 3], [1, 5], [2, 2]], "4x3", "difference", (0, -1)),  # |4 - 3| = 1
    ([[3, 3], [1, 5], [2, 2]], "3x3", "difference", (1, -1)),  # exact: max(1, 0) = 1
    ([[3, 3], [1, 5], [2, 2]], "1x3", "difference", (1, -2)),  # |1 - 3| = 2, caller loses 2
    ([[2, 2], [2, 2], [2, 2]], "1x2", "difference", (1, -2)),  # |1 - 6| = 5, capped at 2
]


@pytest.mark.parametrize("dice,b,penalty,change", DUDOS)
def test_dudo(dice: list[list[int]], b: str, penalty: str, change: tuple[int, int]) -> None:
    s = deal(start("classic", 3, dice=2, penalty=penalty), dice)
    s = play(s, b, "dudo")
    assert loser(s) == change
    seat, delta = change
    assert s.counts[seat] == 2 + delta
    assert all(c == 2 for i, c in enumerate(s.counts) if i != seat)
    assert s.last is not None and s.last.call == (1, "dudo") and s.last.fault is None


def test_difference_penalty_can_eliminate() -> None:
    s = deal(start("classic", 3, dice=2, penalty="difference"), [[3, 3], [1, 5], [2, 2]])
    s = play(s, "6x3", "dudo")
    assert s.counts == (0, 2, 2) and s.out == (0,)
    assert s.opener == 1  # the loser is out: the next seat still in opens


# ---------------------------------------------------------------------------
# Calza
# ---------------------------------------------------------------------------

# (reward, bid, dice held by seat 1 before, change)   seat 0 bids, seat 1 calls calza
CALZAS = [
    ("regain", "3x3", 2, (1, 1)),  # right: the caller regains a die
    ("regain", "3x3", 3, (1, 0)),  # right at the maximum: nothing changes
    ("regain", "4x3", 2, (1, -1)),  # wrong (too high): the caller loses one
    ("regain", "2x3", 2, (1, -1)),  # wrong (too low): the caller loses one
    ("bidder_loses", "3x3", 2, (0, -1)),  # right: the bidder loses one
    ("bidder_loses", "4x3", 2, (1, -1)),  # wrong: the caller loses one
    ("bidder_loses", "2x3", 3, (1, -1)),
]


@pytest.mark.parametrize("reward,b,held,change", CALZAS)
def test_calza(reward: str, b: str, held: int, change: tuple[int, int]) -> None:
    s = start("classic", 3, dice=3, calza_reward=reward)
    if held < 3:
        s = make_lose(s, 1)  # seat 1 holds 2 dice (and opens the next round)
    before = s.counts
    # 3s with wild aces: seat 0 shows a 3 and an ace, seat 2 a 3: the count is 3.
    s = deal(s, [[3, 1, 5][: before[0]], [4, 4, 4][: before[1]], [3, 6, 6][: before[2]]])
    while s.to_act != 0:  # low bids on 2s until seat 0 bids, so seat 1 calls next
        s = apply(s, bid(len(s.history) + 1, 2))
    s = play(s, b, "calza")
    assert s.last is not None and s.last.call == (1, "calza") and s.last.count == 3
    assert loser(s) == change
    seat, delta = change
    assert s.counts == tuple(c + (delta if i == seat else 0) for i, c in enumerate(before))
    assert max(s.counts) <= 3  # a right calza never lifts a player above `dice`
    # The next round is opened by whom the outcome fell on: the loser, or the
    # caller of a right calza with regain (even when nothing changed).
    assert s.opener == seat


def test_right_calza_never_lifts_above_dice() -> None:
    s = deal(start("classic", 3, dice=1), [[3], [4], [3]])
    s = play(s, "2x3", "calza")
    assert loser(s) == (1, 0) and s.counts == (1, 1, 1) and s.opener == 1


@pytest.mark.parametrize(
    "preset,over,players,alive_needed",
    [
        ("classic", {}, 3, 3),
        ("classic", {}, 2, 3),
        ("wikipedia", {}, 2, 2),
        ("classic", {"calza_min_players": 4}, 4, 4),
        ("classic", {"calza_min_players": 4}, 3, 4),
    ],
)
def test_calza_only_while_enough_players(preset: str, over: dict[str, Any], players: int, alive_needed: int) -> None:
    s = play(dealt(start(preset, players, **over)), "1x2")
    ok = players >= alive_needed
    assert calza_allowed(s) is ok
    assert (CALZA in legal_actions(s)) is ok
    assert legal_summary(s).calza is ok
    if not ok:
        assert f"at least {alive_needed} players" in (why_illegal(s, CALZA) or "")
        with pytest.raises(IllegalAction):
            apply(s, CALZA)


def test_calza_stops_when_players_drop_below_minimum() -> None:
    s = start("classic", 3, dice=1)
    s = make_lose(s, 2)  # seat 2 out: two players left, classic needs 3
    assert s.counts == (1, 1, 0)
    s = play(dealt(s), "1x2")
    assert not calza_allowed(s) and CALZA not in legal_actions(s)


@pytest.mark.parametrize("preset", ["lizumo", "neller", "plain"])
def test_no_calza_presets(preset: str) -> None:
    s = play(dealt(start(preset, 4)), "1x2")
    assert CALZA not in legal_actions(s)
    assert why_illegal(s, CALZA) == "calza is not played under these rules"


# ---------------------------------------------------------------------------
# Next opener, elimination, placements, max_rounds
# ---------------------------------------------------------------------------


def test_loser_opens_next_round() -> None:
    s = make_lose(start("classic", 4), 2)
    assert loser(s) == (2, -1) and s.opener == 2 and s.round == 2
    s = dealt(s)
    assert s.to_act == 2


@pytest.mark.parametrize(
    "players,out_first,loser_seat,expected_opener",
    [
        (3, None, 1, 2),  # seat 1 out: seat 2 opens
        (3, None, 2, 0),  # wraps around clockwise
        (4, 2, 1, 3),  # seat 2 is already out, so it is skipped
        (4, 3, 2, 0),  # seat 3 out already: from seat 2 the next in is seat 0
    ],
)
def test_next_opener_when_loser_is_eliminated(
    players: int, out_first: int | None, loser_seat: int, expected_opener: int
) -> None:
    s = start("classic", players, dice=1)
    if out_first is not None:
        s = make_lose(s, out_first)
        assert s.counts[out_first] == 0
    s = make_lose(s, loser_seat)
    assert s.counts[loser_seat] == 0
    assert s.opener == expected_opener
    assert dealt(s).to_act == expected_opener


def test_placements_by_elimination_order() -> None:
    s = start("classic", 4, dice=1)
    for seat in (2, 0, 3):
        assert s.placements is None
        s = make_lose(s, seat)
    assert s.out == (2, 0, 3)
    assert s.placements == (3, 1, 4, 2)  # winner 1, then the later out the better
    assert winner(s) == 1
    with pytest.raises(StateError):
        deal(s, hands(s))
    assert why_illegal(s, DUDO) == "the match is over"


def test_winner_none_while_playing() -> None:
    assert winner(start()) is None


@pytest.mark.parametrize(
    "opener,expected",
    [
        # after one round (seat 1 loses a die): 3 dice each for seats 0 and 2, 2 for seat 1.
        # Ties rank by seat order from the opener of the last round played.
        (0, (1, 3, 2)),
        (2, (2, 3, 1)),
        (1, (2, 3, 1)),  # from seat 1: seat 2 comes before seat 0
    ],
)
def test_max_rounds_ranking(opener: int, expected: tuple[int, ...]) -> None:
    s = start("classic", 3, opener=opener, dice=3, max_rounds=1)
    s = make_lose(s, 1)
    assert s.round == 2 and s.placements == expected


def test_max_rounds_puts_the_eliminated_last() -> None:
    s = start("classic", 4, dice=1, max_rounds=2)
    s = make_lose(s, 1)
    assert s.placements is None
    s = make_lose(s, 3)
    # rounds 1 and 2 played: seats 0 and 2 still in with one die each;
    # the last opener was seat 2 (seat 1 was out, so seat 2 opened round 2).
    assert s.placements == (2, 4, 1, 3)


def test_max_rounds_ranks_by_dice_left() -> None:
    s = start("classic", 3, dice=3, max_rounds=2)
    s = make_lose(s, 0)
    s = make_lose(s, 0)
    assert s.counts == (1, 3, 3)
    assert s.placements is not None and s.placements[0] == 3


# ---------------------------------------------------------------------------
# Faults
# ---------------------------------------------------------------------------


def test_fault_puts_the_player_out_and_voids_the_round() -> None:
    s = play(dealt(start("classic", 4, dice=3)), "2x2", "3x2")
    s = fault(s, 2)  # seat 2 is to act and faults
    assert s.counts == (3, 3, 0, 3)
    assert s.out == (2,)
    assert s.last is not None
    assert s.last.fault == 2 and s.last.change is None and s.last.call is None and s.last.count is None
    assert s.last.bids == ((0, bid(2, 2)), (1, bid(3, 2)))
    assert s.opener == 3 and s.dice is None and s.round == 2
    assert not s.palifico  # a void round is followed by an ordinary round


def test_fault_of_a_seat_not_to_act() -> None:
    s = play(dealt(start("classic", 4, dice=3)), "2x2")
    s = fault(s, 3)
    assert s.counts == (3, 3, 3, 0) and s.opener == 0


def test_fault_places_below_everyone_still_in() -> None:
    s = start("classic", 3, dice=1)
    s = make_lose(s, 0)  # seat 0 out first
    s = fault(dealt(s), 1)  # seat 1 faults: out after seat 0
    assert s.placements == (3, 2, 1)


def test_fault_in_a_two_player_match_ends_it() -> None:
    s = fault(dealt(start("neller", 2, dice=1)), 0)
    assert s.placements == (2, 1)


def test_fault_during_palifico_then_ordinary_round() -> None:
    s = make_lose(start("classic", 4, dice=2), 1)
    assert s.palifico
    s = fault(dealt(s), 3)
    assert not s.palifico and s.opener == 0
    assert s.palifico_used[1]  # seat 1 had its chance


def test_fault_errors() -> None:
    s = start("classic", 3)
    with pytest.raises(StateError):
        fault(s, 0)  # not dealt
    s = make_lose(start("classic", 3, dice=1), 1)
    with pytest.raises(StateError):
        fault(dealt(s), 1)  # already out
    with pytest.raises(StateError):
        fault(dealt(s), 7)


# ---------------------------------------------------------------------------
# Palifico
# ---------------------------------------------------------------------------


def test_palifico_round_rules() -> None:
    s = make_lose(start("classic", 3, dice=2), 1)  # seat 1: 2 -> 1 die
    assert s.palifico and s.opener == 1 and s.palifico_used == (False, True, False)
    s = dealt(s)
    assert s.to_act == 1
    s = play(s, "2x4")  # "two fours": the next player may only raise the quantity
    bids = legal_bids(s)
    assert bids and all(b.face == 4 for b in bids)
    assert [b.quantity for b in bids] == list(range(3, 6))
    assert legal(s, "3x4") and not legal(s, "2x6") and not legal(s, "3x5") and not legal(s, "2x1")
    assert "fixed" in (why_illegal(s, bid(3, 5)) or "")
    assert legal_summary(s).min_quantity == {4: 3}


def test_palifico_bid_at_the_top_leaves_only_calls() -> None:
    s = make_lose(start("classic", 3, dice=2), 1)  # palifico, 5 dice in play
    s = play(dealt(s), "4x4", "5x4")
    assert legal_bids(s) == () and legal_summary(s).min_quantity == {}
    assert legal_actions(s) == (DUDO, CALZA)
    assert "from 1 to 5" in (why_illegal(s, bid(6, 4)) or "")


def test_palifico_aces_not_wild() -> None:
    s = make_lose(start("classic", 3, dice=2), 1)
    s = deal(s, [[1, 4], [1], [4, 1]])
    s = play(s, "2x4", "dudo")  # two real 4s: the bid stands even without aces
    assert s.last is not None and s.last.palifico and s.last.count == 2 and loser(s) == (2, -1)
    s2 = make_lose(start("classic", 3, dice=2), 1)
    s2 = deal(s2, [[1, 4], [1], [6, 1]])
    s2 = play(s2, "2x4", "dudo")  # one 4 and three aces: aces are not wild
    assert s2.last is not None and s2.last.count == 1 and loser(s2) == (1, -1)


def test_palifico_triggers_for_each_player_in_turn() -> None:
    s = make_lose(start("classic", 3, dice=2), 0)  # seat 0 -> 1 die, palifico
    assert s.palifico and s.opener == 0
    s = make_lose(s, 2)  # in that palifico round seat 2 loses (2 -> 1): its own palifico
    assert s.palifico and s.opener == 2
    s = make_lose(s, 1)
    assert s.palifico and s.opener == 1 and s.palifico_used == (True, True, True)
    s = make_lose(s, 1)  # seat 1 out: an ordinary round follows
    assert s.counts == (1, 0, 1) and not s.palifico


def test_palifico_once_after_regain() -> None:
    """Regaining a die by a right calza and dropping to one again: no second palifico."""
    s = make_lose(start("classic", 3, dice=2), 0)  # seat 0: 2 -> 1, palifico
    assert s.palifico and s.opener == 0
    s = deal(s, [[3], [3, 2], [3, 2]])
    s = play(s, "1x3", "2x3", "3x3", "calza")  # three real 3s: seat 0's calza is right
    assert s.last is not None and s.last.count == 3
    assert s.counts == (2, 2, 2) and s.opener == 0 and not s.palifico
    s = make_lose(s, 0)  # 2 -> 1 again: seat 0 already had its palifico
    assert s.counts[0] == 1 and not s.palifico


def test_palifico_by_difference_penalty() -> None:
    """'By any loss': dropping from 3 dice straight to 1 triggers it too."""
    s = deal(start("classic", 3, dice=3, penalty="difference"), [[2, 2, 2], [2, 2, 2], [2, 2, 2]])
    s = play(s, "7x3", "dudo")  # no 3s: seat 0 loses min(7, 3 held)... all 3 -> out
    assert s.counts[0] == 0 and not s.palifico
    s = deal(start("classic", 3, dice=3, penalty="difference"), [[2, 2, 2], [2, 2, 2], [2, 2, 2]])
    s = play(s, "2x3", "dudo")  # count 0: seat 0 loses 2 dice, 3 -> 1
    assert s.counts[0] == 1 and s.palifico and s.opener == 0


@pytest.mark.parametrize(
    "preset,over,players,expected",
    [
        ("classic", {}, 3, True),
        ("classic", {}, 2, False),  # palifico_min_players 3
        ("wikipedia", {}, 2, True),  # palifico_min_players 2
        ("classic", {"palifico": False}, 3, False),
        ("lizumo", {"dice": 2}, 3, False),
        ("classic", {"palifico_min_players": 4}, 3, False),
    ],
)
def test_palifico_min_players(preset: str, over: dict[str, Any], players: int, expected: bool) -> None:
    s = make_lose(start(preset, players, **{"dice": 2, **over}), 1)
    assert s.palifico is expected
    assert s.palifico_used[1]  # the first time at one die is the only chance either way


def test_palifico_not_once_fewer_players_remain() -> None:
    """Seat 0 reaches one die while 3 are in (palifico); seat 1 reaches one die after
    a player left, with 2 in: no palifico, and seat 1's chance is gone for good."""
    s = start("classic", 3, dice=2)
    s = make_lose(make_lose(s, 2), 2)  # seat 2 out (its palifico round came first)
    assert s.counts == (2, 2, 0)
    s = make_lose(s, 1)
    assert s.counts == (2, 1, 0) and not s.palifico and s.palifico_used[1]


def test_palifico_change_face() -> None:
    base = make_lose(start("classic", 3, dice=2, palifico_change_face=True), 1)
    assert base.palifico and base.counts == (2, 1, 2)
    # Seat 0 (2 dice) may not change the face; seat 1 (one die) may, ordinary order, aces not wild.
    s = play(dealt(base), "1x4", "2x4")  # seat 1 opens 1x4, seat 2 raises; seat 0 to act
    assert s.to_act == 0
    assert not legal(s, "2x5") and legal(s, "3x4")
    s = play(s, "3x4")  # seat 1 (one die) to act
    assert s.to_act == 1
    assert legal(s, "3x5") and legal(s, "4x1") and legal(s, "4x2")
    assert not legal(s, "3x3") and not legal(s, "3x1")  # plain order: 1 is the lowest face
    s = play(s, "3x6")
    assert s.to_act == 2 and not legal(s, "4x5") and legal(s, "4x6")
    # Without the key, the one-die player may not change face either.
    s2 = play(dealt(make_lose(start("classic", 3, dice=2), 1)), "1x4", "2x4", "3x4")
    assert s2.to_act == 1 and not legal(s2, "3x5")


# ---------------------------------------------------------------------------
# Actions: text form and errors
# ---------------------------------------------------------------------------


def test_parse_action_round_trip() -> None:
    for q in range(1, 101):
        for f in range(1, 7):
            b = bid(q, f)
            assert str(b) == f"{q}x{f}"
            assert parse_action(str(b)) == b and parse_action(str(b)) is b
    assert parse_action("dudo") is DUDO and str(DUDO) == "dudo"
    assert parse_action("calza") is CALZA and str(CALZA) == "calza"
    assert parse_action(" 5X3 ") == Bid(5, 3)
    assert parse_action("DUDO") == Dudo() and parse_action("Calza") == Calza()


@pytest.mark.parametrize(
    "junk",
    [
        "",
        " ",
        "5",
        "5x",
        "x3",
        "5x0",
        "5x7",
        "0x3",
        "-1x3",
        "5y3",
        "5x3x",
        "5 x 3",
        "5x3.0",
        "five threes",
        "dudo!",
        "doubt",
        "1e1x3",
        "\u0663x3",
        "5x\uff13",
        "101x3",
        "+5x3",
        "5x+3",
        "bid 5 3",
        "None",
    ],
)
def test_parse_action_rejects_junk(junk: str) -> None:
    with pytest.raises(InvalidAction) as exc:
        parse_action(junk)
    assert repr(junk) in str(exc.value)
    assert isinstance(exc.value, ArenaError)


@pytest.mark.parametrize("junk", [None, 53, b"5x3", ["5x3"]])
def test_parse_action_rejects_non_text(junk: object) -> None:
    with pytest.raises(InvalidAction):
        parse_action(junk)  # type: ignore[arg-type]


def test_illegal_action_reasons() -> None:
    s = dealt(start("classic", 3, dice=2))  # 6 dice in play
    cases = {
        bid(7, 2): "from 1 to 6",
        bid(1, 1): "open_on_ones",
        Bid(1, 9): "face from 1 to 6",
        Bid(0, 3): "from 1 to 6",
    }
    for action, words in cases.items():
        reason = why_illegal(s, action)
        assert reason is not None and words in reason, (action, reason)
        with pytest.raises(IllegalAction) as exc:
            apply(s, action)
        assert exc.value.reason == reason and exc.value.action == action
        assert str(action) in str(exc.value)
    s = play(s, "2x4")
    assert "not higher than the standing bid 2x4" in (why_illegal(s, bid(2, 3)) or "")
    assert "at least 1 aces" in (why_illegal(s, bid(0, 1)) or "") or why_illegal(s, bid(0, 1))
    s = play(s, "2x1")
    assert "at least 5" in (why_illegal(s, bid(4, 6)) or "")
    assert why_illegal(s, "5x3") is not None  # type: ignore[arg-type]
    with pytest.raises(IllegalAction):
        apply(s, "dudo")  # type: ignore[arg-type]


def test_not_dealt_and_bad_deals() -> None:
    s = start("classic", 3, dice=2)
    assert why_illegal(s, bid(1, 2)) == "the round has not been dealt"
    assert legal_actions(s) == () and legal_bids(s) == ()
    with pytest.raises(IllegalAction):
        apply(s, bid(1, 2))
    for bad in (
        [[2, 2], [2, 2]],
        [[2, 2], [2, 2], [2]],
        [[2, 2], [2, 2], [2, 7]],
        [[2, 2], [2, 2], [2, 0]],
        [[2, 2], [2, 2], [2, 2, 2]],
    ):
        with pytest.raises(StateError):
            deal(s, bad)
    d = dealt(s)
    with pytest.raises(StateError):
        deal(d, hands(d))


def test_new_match_errors() -> None:
    for players in (0, 1, 11):
        with pytest.raises(StateError):
            new_match(rules(), players)
    with pytest.raises(StateError):
        new_match(rules(), 3, opener=3)
    with pytest.raises(StateError):
        new_match(rules(), 3, opener=-1)


def test_state_properties() -> None:
    s = start("classic", 3, dice=2)
    assert s.total == 6 and s.players == 3 and s.alive == (0, 1, 2) and not s.over
    assert s.standing is None
    s = play(dealt(s), "2x3")
    assert s.standing == (0, bid(2, 3))
    s = make_lose(start("classic", 3, dice=1), 1)
    assert s.alive == (0, 2) and s.total == 2


# ---------------------------------------------------------------------------
# Rule sets: keys, values, presets
# ---------------------------------------------------------------------------

BAD_VALUES: list[tuple[str, object]] = [
    ("dice", 0),
    ("dice", 11),
    ("dice", "5"),
    ("dice", True),
    ("dice", 2.0),
    ("dice", None),
    ("wild_ones", "yes"),
    ("wild_ones", 1),
    ("wild_ones", None),
    ("ones", "high"),
    ("ones", 1),
    ("ones", "Convert"),
    ("open_on_ones", "false"),
    ("calza", 0),
    ("calza_reward", "double"),
    ("calza_min_players", 1),
    ("calza_min_players", "3"),
    ("palifico", "no"),
    ("palifico_change_face", 1),
    ("palifico_min_players", 1),
    ("palifico_min_players", 2.5),
    ("penalty", "two"),
    ("penalty", None),
    ("seating", "rotate"),
    ("seating", "random"),
    ("first", "seat1"),
    ("first", 0),
    ("max_rounds", 0),
    ("max_rounds", -5),
    ("max_rounds", "1000"),
    ("max_rounds", False),
    ("dead_mans_calza", 1),
    ("dead_mans_calza", "yes"),
    ("dead_mans_dice", 0),
    ("dead_mans_dice", 11),
    ("dead_mans_dice", True),
    ("veteran_palifico", "on"),
    ("veteran_from", "all"),
    ("veteran_from", True),
]


def test_every_key_has_bad_value_rows() -> None:
    assert {k for k, _ in BAD_VALUES} == set(KEYS)


@pytest.mark.parametrize("key,value", BAD_VALUES)
def test_bad_value_names_key_value_and_allowed(key: str, value: object) -> None:
    for make in (
        lambda: Rules.preset("classic", {key: value}),
        lambda: Rules.from_dict({key: value}),
        lambda: Rules(**{key: value}),
        lambda: Rules().replace(**{key: value}),
    ):
        with pytest.raises(RulesError) as exc:
            make()
        msg = str(exc.value)
        assert key in msg and repr(value) in msg and KEYS[key].allowed() in msg, msg


@pytest.mark.parametrize("key,value", BAD_VALUES)
def test_a_bad_value_equal_to_a_good_one_is_refused_after_the_good_one(key: str, value: object) -> None:
    """from_dict remembers the mappings it has validated; one that compares
    equal to a remembered one but holds another type (True == 1, 5.0 == 5)
    is still validated, and refused."""
    good = KEYS[key].default
    assert Rules.from_dict({key: good}) is Rules.from_dict({key: good})  # remembered
    if value == good:
        with pytest.raises(RulesError):
            Rules.from_dict({key: value})


def test_a_remembered_mapping_gives_the_rules_it_names() -> None:
    for rounds in range(1, 400):  # more rule sets than it keeps: it starts over, and goes on remembering
        Rules.from_dict({"max_rounds": rounds})
    for name in PRESETS:
        data = Rules.preset(name).to_dict()
        assert Rules.from_dict(dict(data)).to_dict() == data
        assert Rules.from_dict(dict(data)) is Rules.from_dict(dict(data))


@pytest.mark.parametrize("key", ["dices", "Dice", "wild", "calza_rewards", "preset", ""])
def test_unknown_key(key: str) -> None:
    for make in (lambda: Rules.preset("classic", {key: 3}), lambda: Rules.from_dict({key: 3})):
        with pytest.raises(RulesError) as exc:
            make()
        msg = str(exc.value)
        assert repr(key) in msg and "3" in msg
        assert all(k in msg for k in KEYS)  # what is allowed: every key
    with pytest.raises(RulesError):
        parse_value(key, "3")


def test_unknown_preset() -> None:
    with pytest.raises(RulesError) as exc:
        Rules.preset("perudo")
    assert "'perudo'" in str(exc.value) and all(p in str(exc.value) for p in PRESETS)


DEFAULTS = {
    "dice": 5,
    "wild_ones": True,
    "ones": "convert",
    "open_on_ones": False,
    "calza": True,
    "calza_reward": "regain",
    "calza_min_players": 3,
    "palifico": True,
    "palifico_change_face": False,
    "palifico_min_players": 3,
    "penalty": "one",
    "seating": "roll",
    "first": "roll",
    "max_rounds": 1000,
}
# The variant keys: written out (records, match_start) only where not at their default.
VARIANT_DEFAULTS = {"dead_mans_calza": False, "dead_mans_dice": 2, "veteran_palifico": False, "veteran_from": "own"}

PRESET_TABLE = {
    "classic": {},
    "lizumo": {"dice": 3, "calza": False, "palifico": False, "open_on_ones": False},
    "wikipedia": {"open_on_ones": True, "calza_min_players": 2, "palifico_min_players": 2},
    "neller": {"ones": "rank_high", "open_on_ones": True, "calza": False, "palifico": False},
    "plain": {"wild_ones": False, "ones": "plain", "calza": False, "palifico": False},
}


def test_defaults_are_rules_md_table() -> None:
    assert Rules().to_dict() == DEFAULTS
    assert list(Rules().to_dict()) == list(DEFAULTS)  # the rule book's order
    assert {k: s.default for k, s in KEYS.items()} == {**DEFAULTS, **VARIANT_DEFAULTS}


def test_variant_keys_are_written_only_when_not_default() -> None:
    """A rule set without the variants reads as it did before they existed
    (records, match_start); a key set away from its default is written, after
    the others, in the rule book's order."""
    r = Rules.preset("classic", {"veteran_from": "any", "dead_mans_calza": True})
    assert r.to_dict() == {**DEFAULTS, "dead_mans_calza": True, "veteran_from": "any"}
    assert list(r.to_dict())[-2:] == ["dead_mans_calza", "veteran_from"]
    assert Rules.from_dict(r.to_dict()) == r


@pytest.mark.parametrize("name", sorted(PRESET_TABLE))
def test_presets_resolve(name: str) -> None:
    assert set(PRESETS) == set(PRESET_TABLE)
    assert Rules.preset(name).to_dict() == {**DEFAULTS, **PRESET_TABLE[name]}
    over = Rules.preset(name, {"dice": 2, "penalty": "difference"})
    assert over.to_dict() == {**DEFAULTS, **PRESET_TABLE[name], "dice": 2, "penalty": "difference"}


def test_rules_are_immutable_and_hashable() -> None:
    r = Rules.preset("lizumo")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.dice = 4  # type: ignore[misc]
    assert r == Rules.preset("lizumo") and hash(r) == hash(Rules.preset("lizumo"))
    assert r.replace(dice=4).dice == 4 and r.dice == 3
    assert Rules.from_dict(r.to_dict()) == r


@pytest.mark.parametrize(
    "key,text,value",
    [
        ("dice", "3", 3),
        ("dice", " 10 ", 10),
        ("wild_ones", "false", False),
        ("wild_ones", "Yes", True),
        ("calza", "off", False),
        ("calza", "1", True),
        ("ones", "rank_high", "rank_high"),
        ("max_rounds", "50", 50),
        ("seating", "fixed", "fixed"),
    ],
)
def test_parse_value(key: str, text: str, value: object) -> None:
    assert parse_value(key, text) == value


@pytest.mark.parametrize(
    "key,text",
    [
        ("dice", "three"),
        ("dice", "11"),
        ("wild_ones", "maybe"),
        ("ones", "high"),
        ("max_rounds", "0"),
    ],
)
def test_parse_value_errors(key: str, text: str) -> None:
    with pytest.raises(RulesError) as exc:
        parse_value(key, text)
    assert key in str(exc.value) and KEYS[key].allowed() in str(exc.value)
