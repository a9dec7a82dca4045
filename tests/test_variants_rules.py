"""Table tests of the two variants of protocol 2 (docs/rules.md, "Dead man's
calza" and "Veteran palifico"), each case played through the public engine
API with dice chosen by hand, and the replay checker on records that break
them.
"""

from __future__ import annotations

from typing import Any

import pytest

from arena.engine.records import ActionRecord, DiceChange, EndReason, MatchRecord, RoundRecord, seat_outcome
from arena.engine.replay import ReplayMismatch, replay
from arena.engine.rules import (
    CALZA,
    DUDO,
    PASS,
    Rules,
    State,
    apply,
    bid,
    deal,
    fault,
    legal_actions,
    legal_bids,
    legal_summary,
    new_match,
    parse_action,
    why_illegal,
)
from arena.errors import IllegalAction

DEAD = {"dead_mans_calza": True}


def start(players: int, dice: int = 2, opener: int = 0, **over: Any) -> State:
    return new_match(Rules.preset("classic", {"dice": dice, **over}), players, opener)


def twos(state: State) -> list[list[int]]:
    return [[2] * c for c in state.counts]


def pass_dead(state: State) -> State:
    """Every player who is out and asked lets the bid go."""
    while state.dice is not None and not state.counts[state.to_act]:
        state = apply(state, PASS)
    return state


def lose(state: State, seat: int) -> State:
    """One round, all dice 2s, in which ``seat`` loses one die: it calls dudo
    on a true bid of 2s, or, opening, bids a false 1x3 and is doubted."""
    s = deal(state, twos(state))
    if s.to_act == seat:
        return apply(pass_dead(apply(s, bid(1, 3))), DUDO)
    s, q = apply(s, bid(1, 2)), 1
    while True:
        s = pass_dead(s)
        if s.to_act == seat:
            return apply(s, DUDO)
        q += 1
        s = apply(s, bid(q, 2))


def knock_out(state: State, seat: int) -> State:
    while state.counts[seat]:
        state = lose(state, seat)
    return state


# ---------------------------------------------------------------------------
# Dead man's calza
# ---------------------------------------------------------------------------


def test_off_by_default_a_player_who_is_out_is_never_asked() -> None:
    s = knock_out(start(3, palifico=False), 1)
    s = apply(deal(s, twos(s)), bid(1, 2))
    assert s.counts[1] == 0 and s.to_act != 1
    assert why_illegal(s, PASS) is not None


def test_after_a_bid_the_dead_man_is_asked_before_the_next_player_and_may_only_calza_or_pass() -> None:
    s = knock_out(start(4, palifico=False, **DEAD), 1)
    s = deal(s, twos(s))
    bidder = s.to_act
    s = apply(s, bid(1, 2))
    assert s.to_act == 1
    assert legal_actions(s) == (CALZA, PASS)
    assert legal_bids(s) == ()
    summary = legal_summary(s)
    assert (summary.dudo, summary.calza, summary.min_quantity, summary.may_pass) == (False, True, {}, True)
    assert why_illegal(s, DUDO) == "a player who is out may only call calza (dead man's calza) or pass"
    assert why_illegal(s, bid(2, 2)) is not None
    with pytest.raises(IllegalAction):
        apply(s, bid(2, 2))
    s = apply(s, PASS)  # the next player still in after the bidder acts, the bid unchanged
    assert s.counts[s.to_act] and s.to_act == next(x % 4 for x in range(bidder + 1, bidder + 5) if s.counts[x % 4])
    assert why_illegal(s, PASS) == "only a player who is out passes (dead man's calza); a player in bids or calls"


def test_several_dead_men_are_asked_clockwise_from_the_bidder() -> None:
    s = start(5, dice=1, palifico=False, **DEAD)
    s = knock_out(s, 3)
    s = knock_out(s, 1)
    s = deal(s, twos(s))
    while s.to_act != 4:  # let seat 4 bid: seat 1 then seat 3 are asked, clockwise from 4
        s = pass_dead(apply(s, bid(len(s.history) + 1, 2)))
    s = apply(s, bid(len(s.history) + 1, 2))
    assert s.to_act == 1
    s = apply(s, PASS)
    assert s.to_act == 3
    s = apply(s, PASS)
    assert s.to_act == 0


def test_a_right_dead_mans_call_returns_the_player_with_two_dice_unplaced_and_opening() -> None:
    s = knock_out(start(4, dice=3, palifico=False, **DEAD), 1)
    assert s.out == (1,)
    hands = [[2] * c for c in s.counts]
    hands[next(x for x in range(4) if s.counts[x])][0] = 5  # exactly one 5, no aces
    s = deal(s, hands)
    s = apply(s, bid(1, 5))
    assert s.to_act == 1
    s = apply(s, CALZA)
    last = s.last
    assert last is not None and last.call == (1, "calza") and last.count == 1 and last.change == (1, 2)
    assert s.counts[1] == 2 and s.out == () and s.opener == 1 and s.spent[1]


def test_dead_mans_dice_sets_the_return_and_never_above_dice() -> None:
    for dice, back, expect in ((3, 1, 1), (3, 3, 3), (2, 3, 2)):
        s = knock_out(start(3, dice=dice, palifico=False, dead_mans_dice=back, **DEAD), 2)
        s = deal(s, twos(s))
        s = apply(s, bid(s.total, 2))  # every die is a 2: exactly right
        s = apply(s, CALZA)
        assert s.counts[2] == expect and s.last is not None and s.last.change == (2, expect)


def test_a_wrong_dead_mans_call_moves_no_die_spends_the_call_and_the_next_player_in_opens() -> None:
    s = knock_out(start(4, dice=2, palifico=False, **DEAD), 1)
    before = s.counts
    s = deal(s, twos(s))
    s = apply(s, bid(1, 2))  # there are six 2s: a calza on one is wrong
    s = apply(s, CALZA)
    last = s.last
    assert last is not None and last.change == (1, 0) and last.count == 6
    assert s.counts == before and s.out == (1,) and s.spent[1] and s.opener == 2


def test_a_second_attempt_is_refused_the_spent_seat_is_never_asked_again() -> None:
    s = knock_out(start(4, dice=2, palifico=False, **DEAD), 1)
    s = apply(apply(deal(s, twos(s)), bid(1, 2)), CALZA)  # wrong: spent
    for _ in range(3):
        s = apply(deal(s, twos(s)), bid(1, 2))
        assert s.to_act != 1
        s = apply(s, DUDO)
    # and after a right call, out again, it is not asked either
    s = knock_out(start(3, dice=2, palifico=False, **DEAD), 1)
    s = apply(apply(deal(s, twos(s)), bid(4, 2)), CALZA)
    assert s.counts[1] == 2
    s = knock_out(s, 1)
    s = apply(deal(s, twos(s)), bid(1, 2))
    assert s.to_act != 1


def check(record: MatchRecord) -> None:
    """Replay every round (dice chosen by hand, not from the seed)."""
    for _ in replay(record, check_dice=False):
        pass


def test_a_replayed_second_call_is_a_rule_violation() -> None:
    rules = Rules.preset("classic", {"dice": 1, "palifico": False, "seating": "fixed", "first": "seat0", **DEAD})
    r1 = RoundRecord(
        1, 0, False, ((2,), (3,), (4,)), (ActionRecord(0, bid(1, 2)), ActionRecord(1, DUDO)), 1, DiceChange(1, -1)
    )
    r2 = RoundRecord(
        2, 2, False, ((2,), (), (4,)), (ActionRecord(2, bid(1, 4)), ActionRecord(1, CALZA)), 1, DiceChange(1, 1)
    )
    ok = MatchRecord("m-1", "v", rules, 7, ("a", "b", "c"), 0, (r1, r2), (1, 2, 3), 2, EndReason.ELIMINATION)
    with pytest.raises(ReplayMismatch, match="the record ends before the match does"):
        check(ok)  # the call was right: seat 1 is back, the match goes on
    r2w = RoundRecord(
        2, 2, False, ((2,), (), (4,)), (ActionRecord(2, bid(1, 3)), ActionRecord(1, CALZA)), 0, DiceChange(1, 1)
    )
    with pytest.raises(ReplayMismatch, match=r"change \(1, 1\), the rules give \(1, 0\)"):
        check(MatchRecord("m-1", "v", rules, 7, ("a", "b", "c"), 0, (r1, r2w), (1, 2, 3), 2, EndReason.ELIMINATION))
    r3 = RoundRecord(
        3, 2, False, ((2,), (), (4,)), (ActionRecord(2, bid(1, 2)), ActionRecord(1, CALZA)), 1, DiceChange(1, 0)
    )
    r2x = RoundRecord(
        2, 2, False, ((2,), (), (4,)), (ActionRecord(2, bid(1, 3)), ActionRecord(1, CALZA)), 0, DiceChange(1, 0)
    )
    with pytest.raises(ReplayMismatch, match="seat 1 acted, but seat 0 was to act"):
        check(MatchRecord("m-1", "v", rules, 7, ("a", "b", "c"), 0, (r1, r2x, r3), (1, 3, 2), 3, EndReason.ELIMINATION))


def test_a_returned_player_is_placed_by_its_last_elimination() -> None:
    s = start(4, dice=2, palifico=False, **DEAD)
    s = knock_out(s, 1)  # first out
    s = apply(apply(deal(s, twos(s)), bid(s.total, 2)), CALZA)  # right: back with 2
    assert s.out == ()
    s = knock_out(s, 3)
    s = knock_out(s, 1)  # out again, after seat 3
    s = knock_out(s, 2)
    assert s.placements is not None
    assert s.placements[3] == 4 and s.placements[1] == 3 and s.placements[2] == 2 and s.placements[0] == 1
    assert sorted(s.placements) == [1, 2, 3, 4]


def test_seat_outcome_follows_a_return() -> None:
    r1 = RoundRecord(1, 0, False, ((2,), (3,), (4,)), (), 1, DiceChange(1, -1))
    r2 = RoundRecord(2, 2, False, ((2,), (), (4,)), (), 1, DiceChange(1, 1))
    r3 = RoundRecord(3, 1, False, ((2,), (1,), (4,)), (), 1, DiceChange(2, -1))
    out = seat_outcome(1, 3, (r1, r2, r3), ())
    assert out.dice_left == (1, 1, 0) and out.out_round == (None, None, 3)


def test_the_dead_mans_count_follows_the_round_no_wild_aces_in_palifico() -> None:
    s = start(4, dice=2, palifico=True, **DEAD)
    s = knock_out(s, 1)  # seat 1 went 2 -> 1 (its palifico round) -> 0
    s = lose(s, 2)  # seat 2 left with one die: a palifico round, opened by seat 2
    assert s.palifico and s.opener == 2
    hands = [[1] * c for c in s.counts]
    hands[2] = [5]  # one 5 and aces: in palifico aces do not count
    s = apply(deal(s, hands), bid(1, 5))
    assert s.to_act == 1
    s = apply(s, CALZA)
    assert s.last is not None and s.last.count == 1 and s.last.change == (1, 2)


def test_a_dead_man_who_faults_loses_the_call_and_the_round_goes_on() -> None:
    """A player who is out holds no dice in the round: its fault voids nothing
    (else a player out could void a round its ally was losing)."""
    s = knock_out(start(4, dice=2, palifico=False, **DEAD), 1)
    placed_out, last = s.out, s.last
    s = apply(deal(s, twos(s)), bid(1, 2))
    bidder, history = s.history[-1][0], s.history
    assert s.to_act == 1
    s = fault(s, 1)
    assert s.dice is not None and s.history == history and s.last is last  # the round goes on
    assert s.to_act == next(x % 4 for x in range(bidder + 1, bidder + 5) if s.counts[x % 4])
    assert s.out == placed_out and s.spent[1]
    s = apply(apply(s, bid(2, 2)), DUDO)
    s = apply(deal(s, twos(s)), bid(1, 2))
    assert s.to_act != 1


def test_a_fault_makes_a_live_player_out_for_good() -> None:
    s = start(3, dice=2, palifico=False, **DEAD)
    s = fault(deal(s, twos(s)), 0)
    s = apply(deal(s, twos(s)), bid(1, 2))
    assert s.counts[0] == 0 and s.spent[0] and s.to_act != 0


def test_the_last_two_the_match_ends_when_one_player_is_left_whatever_the_dead_may_call() -> None:
    s = start(2, dice=1, **DEAD)
    s = lose(s, 0)
    assert s.placements == (2, 1)


def test_pass_parses_and_prints() -> None:
    assert parse_action(" PASS ") is PASS and str(PASS) == "pass"


# ---------------------------------------------------------------------------
# Veteran palifico
# ---------------------------------------------------------------------------

VET = {"veteran_palifico": True}


def survive_own_palifico(s: State, seat: int, caller: int) -> State:
    """``seat`` (left with one die) opens its palifico round with a true 1x2 and ``caller`` doubts it."""
    assert s.palifico and s.opener == seat
    s = apply(deal(s, twos(s)), bid(1, 2))
    while s.to_act != caller:
        s = apply(s, bid(s.history[-1][1].quantity + 1, 2))
    return apply(s, DUDO)


def test_a_veteran_may_change_face_in_a_later_palifico_round_and_a_non_veteran_may_not() -> None:
    s = start(3, dice=2, **VET)
    s = lose(s, 0)  # seat 0 left with one die
    s = survive_own_palifico(s, 0, 1)  # seat 1 doubts a true bid: loses, left with one: palifico
    assert s.veterans == (True, False, False)
    assert s.palifico and s.opener == 1
    s = apply(deal(s, twos(s)), bid(1, 2))
    assert s.to_act == 2  # not a veteran: the face is fixed
    assert why_illegal(s, bid(2, 3)) == "in a palifico round the face is fixed at 2; raise the quantity"
    assert set(legal_summary(s).min_quantity) == {2}
    s = apply(s, bid(2, 2))
    assert s.to_act == 0  # the veteran: any higher bid in the plain order
    assert why_illegal(s, bid(2, 3)) is None
    assert legal_summary(s).min_quantity == {1: 3, 2: 3, 3: 2, 4: 2, 5: 2, 6: 2}
    s = apply(s, bid(2, 3))
    assert s.to_act == 1  # the others are then held to the new face
    assert why_illegal(s, bid(3, 2)) == "in a palifico round the face is fixed at 3; raise the quantity"
    assert why_illegal(s, bid(3, 3)) is None


def test_without_the_key_surviving_a_palifico_round_gives_nothing() -> None:
    s = start(3, dice=2)
    s = survive_own_palifico(lose(s, 0), 0, 1)
    s = apply(apply(deal(s, twos(s)), bid(1, 2)), bid(2, 2))
    assert s.to_act == 0 and why_illegal(s, bid(2, 3)) is not None


def test_veteran_from_own_is_the_palifico_player_and_any_is_everyone_who_came_through() -> None:
    own = survive_own_palifico(lose(start(4, dice=2, **VET), 0), 0, 1)
    assert own.veterans == (True, False, False, False)
    anyone = survive_own_palifico(lose(start(4, dice=2, veteran_from="any", **VET), 0), 0, 1)
    assert anyone.veterans == (True, True, True, True)
    # the palifico player who loses its round is out: no veteran
    s = lose(start(3, dice=2, **VET), 0)
    s = apply(deal(s, twos(s)), bid(1, 3))  # a false bid, doubted: seat 0 loses its last die
    s = apply(s, DUDO)
    assert s.counts[0] == 0 and s.veterans == (False, False, False)


def test_a_void_palifico_round_makes_no_veteran() -> None:
    s = lose(start(3, dice=2, veteran_from="any", **VET), 0)
    s = fault(apply(deal(s, twos(s)), bid(1, 2)), 1)
    assert s.veterans == (False, False, False)


def test_a_veteran_opening_and_the_change_face_key_together() -> None:
    """A veteran with one die under palifico_change_face changes face once either way."""
    s = start(3, dice=2, palifico_change_face=True, **VET)
    s = survive_own_palifico(lose(s, 0), 0, 1)
    s = apply(deal(s, twos(s)), bid(1, 2))
    s = apply(s, bid(2, 2))
    assert s.to_act == 0 and s.counts[0] == 1 and why_illegal(s, bid(2, 4)) is None
