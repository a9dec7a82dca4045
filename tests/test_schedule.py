"""The schedule is a pure function of the config and the seed, and balanced."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from arena.engine.dice import roll_table
from arena.engine.rules import Rules
from arena.running.schedule import build_schedule

CLASSIC = {"classic": Rules().to_dict()}


def sched(**kw):  # type: ignore[no-untyped-def]
    args = dict(seed=11, n_entrants=6, sizes=(4,), matches=600, fmt="league", seating="roll", variants=CLASSIC)
    args.update(kw)
    return build_schedule(**args)


def test_same_seed_same_schedule_and_ids_unique() -> None:
    a, b = sched(), sched()
    assert a == b
    assert len({s.match for s in a}) == len(a) == 600
    assert sched(seed=12) != a


def test_league_balances_appearances_pairs_and_seats() -> None:
    specs = sched()
    appear = Counter(e for s in specs for e in s.entrants)
    assert max(appear.values()) - min(appear.values()) <= 1
    pairs = Counter(frozenset(p) for s in specs for p in itertools.combinations(s.entrants, 2))
    assert len(pairs) == 15
    assert max(pairs.values()) - min(pairs.values()) <= 0.1 * max(pairs.values())
    seats = Counter((e, pos) for s in specs for pos, e in enumerate(s.entrants))
    assert max(seats.values()) - min(seats.values()) <= 0.1 * max(seats.values())


def test_round_robin_plays_every_combination_equally() -> None:
    specs = sched(fmt="round-robin", sizes=(3,), matches=40)
    combos = Counter(frozenset(s.entrants) for s in specs)
    assert len(combos) == 20 and set(combos.values()) == {2}  # rounded up to whole cycles


def test_gauntlet_puts_the_hero_at_every_table_in_every_seat() -> None:
    specs = sched(fmt="gauntlet", gauntlet=2, matches=200)
    assert all(2 in s.entrants for s in specs)
    seat = Counter(s.entrants.index(2) for s in specs)
    assert set(seat) == {0, 1, 2, 3} and max(seat.values()) - min(seat.values()) <= 1


def test_variants_share_tables_and_dice() -> None:
    v = {"classic": Rules().to_dict(), "lizumo": Rules.preset("lizumo").to_dict()}
    specs = sched(variants=v, matches=50)
    assert len(specs) == 100
    by_table: dict[int, list] = {}
    for s in specs:
        by_table.setdefault(s.table, []).append(s)
    for group in by_table.values():
        assert {s.variant for s in group} == {"classic", "lizumo"}
        assert len({s.entrants for s in group}) == 1 and len({s.dice_seed for s in group}) == 1
        assert len({s.seed for s in group}) == 2


@pytest.mark.parametrize("size", [2, 4, 5])
def test_rotate_is_duplicate_play(size: int) -> None:
    specs = sched(seating="rotate", sizes=(size,), matches=size * 3)
    tables: dict[int, list] = {}
    for s in specs:
        tables.setdefault(s.table, []).append(s)
    for group in tables.values():
        assert len(group) == size
        first = group[0].entrants
        # every rotation of the seats, each entrant once in each seat position
        assert sorted(s.entrants for s in group) == sorted(first[r:] + first[:r] for r in range(size))
        assert all(s.rules["seating"] == "fixed" for s in group)
        # the dice of each seat position in each round are the same across rotations
        for rnd in (1, 2, 7):
            hands = {roll_table(s.dice_seed, rnd, [5] * size) for s in group}
            assert len(hands) == 1
