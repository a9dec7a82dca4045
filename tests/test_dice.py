"""Keyed dice (arena/engine/dice.py): re-derivable from the docstring, uniform,
independent per (seed, round, seat), and the seating / opener roll-offs."""

from __future__ import annotations

import hashlib
from collections import Counter
from itertools import permutations

import pytest

from arena.engine.dice import opener_die, roll, roll_off, roll_table, seating_die


def seat_order(seed: int, players: int) -> tuple[int, ...]:
    """Seating by roll (docs/rules.md, Seating), as the referee applies it: element i is the
    schedule position of the player in seat i."""
    return tuple(roll_off(range(players), seating_die(seed)))


def first_opener(seed: int, players: int) -> int:
    """The round-1 opener by roll: the winner of a roll-off among the seats."""
    return roll_off(range(players), opener_die(seed))[0]


def reference(tag: bytes, seed: int, a: int, b: int, n: int) -> tuple[int, ...]:
    """The algorithm exactly as dice.py's docstring states it, written afresh."""
    out: list[int] = []
    block = 0
    while len(out) < n:
        msg = (
            tag
            + (seed % 2**64).to_bytes(8, "big")
            + a.to_bytes(4, "big")
            + b.to_bytes(2, "big")
            + block.to_bytes(2, "big")
        )
        for byte in hashlib.blake2b(msg, digest_size=64).digest():
            if byte < 252 and len(out) < n:
                out.append(1 + byte % 6)
        block += 1
    return tuple(out)


@pytest.mark.parametrize(
    "seed,rnd,seat,n",
    [
        (0, 1, 0, 5),
        (1234567, 7, 3, 5),
        (2**64 - 1, 1, 9, 10),
        (42, 1000, 65535, 1),
        (99, 3, 2, 200),  # long enough to run past the first 64-byte digest
    ],
)
def test_roll_matches_the_documented_algorithm(seed: int, rnd: int, seat: int, n: int) -> None:
    assert roll(seed, rnd, seat, n) == reference(b"dice", seed, rnd, seat, n)


def test_roll_matches_the_documented_algorithm_where_the_first_digest_runs_out() -> None:
    """A hand exactly as long as the first digest's accepted bytes, and one die longer."""
    for seed in range(300):
        fit = sum(
            b < 252
            for b in hashlib.blake2b(
                b"dice" + seed.to_bytes(8, "big") + (3).to_bytes(4, "big") + (1).to_bytes(2, "big") + b"\0\0",
                digest_size=64,
            ).digest()
        )
        for n in (fit, fit + 1):
            assert roll(seed, 3, 1, n) == reference(b"dice", seed, 3, 1, n)


def test_golden_values() -> None:
    """Pinned: records carry the seed, so the dice must never change silently."""
    assert roll(1234567, 1, 0, 5) == (1, 5, 3, 1, 4)
    assert roll(0, 1, 0, 5) == (3, 6, 4, 2, 5)
    assert roll(2**64 - 1, 7, 3, 4) == (5, 2, 6, 3)
    assert seat_order(42, 6) == (0, 2, 1, 4, 5, 3)
    assert first_opener(42, 6) == 5


def test_negative_and_large_seeds_use_the_low_64_bits() -> None:
    assert roll(-1, 1, 0, 5) == roll(2**64 - 1, 1, 0, 5)
    assert roll(2**64 + 5, 1, 0, 5) == roll(5, 1, 0, 5)


def test_shape_and_prefix() -> None:
    assert roll(1, 1, 0, 0) == () and roll(1, 1, 0, -3) == ()
    long = roll(7, 2, 1, 10)
    assert len(long) == 10 and set(long) <= {1, 2, 3, 4, 5, 6}
    for k in range(11):
        assert roll(7, 2, 1, k) == long[:k]  # fewer dice: a prefix of the same stream


def test_roll_table() -> None:
    counts = (5, 0, 3, 1)
    table = roll_table(11, 4, counts)
    assert table == tuple(roll(11, 4, s, c) for s, c in enumerate(counts))
    assert [len(h) for h in table] == list(counts) and table[1] == ()


def test_roll_table_is_the_documented_algorithm_for_every_seat() -> None:
    """The referee's per-round path (one key prefix per round) gives each seat
    the dice of the documented algorithm: negative and 64-bit seeds, tables of 2
    to 10 and past the 64 seats it keeps a prefix for, hands that run past the
    first digest."""
    for seed in (0, -1, 2**64 - 1, 2**70 + 5, 987654321):
        for counts in ((5, 5), (0, 1, 2, 3, 4, 5, 6, 0, 1, 2), (200, 0, 62), tuple(range(66)) + (3,)):
            table = roll_table(seed, 12, counts)
            assert table == tuple(reference(b"dice", seed, 12, s, c) for s, c in enumerate(counts))


def test_keys_are_independent() -> None:
    """Changing any one of seed, round or seat changes the dice (no shared stream)."""
    base = roll(5, 3, 2, 10)
    assert roll(6, 3, 2, 10) != base
    assert roll(5, 4, 2, 10) != base
    assert roll(5, 3, 1, 10) != base
    hands = {roll(5, r, s, 5) for r in range(1, 41) for s in range(10)}
    assert len(hands) > 390  # 400 hands of 5 dice: collisions are rare (7776 outcomes)


def test_faces_are_uniform() -> None:
    """Chi-square over 120,000 dice (deterministic: no flakes). df = 5; the
    0.1% critical value is 20.5."""
    faces: Counter[int] = Counter()
    for r in range(1, 401):
        for seat in range(10):
            faces.update(roll(2024, r, seat, 30))
    n = sum(faces.values())
    expected = n / 6
    chi2 = sum((faces[f] - expected) ** 2 / expected for f in range(1, 7))
    assert n == 120_000 and chi2 < 20.5, (chi2, faces)


def test_seating_and_opener_dice_are_keyed_apart() -> None:
    for who in range(4):
        for attempt in range(3):
            assert seating_die(9)(attempt, who) == reference(b"seat", 9, attempt, who, 1)[0]
            assert opener_die(9)(attempt, who) == reference(b"open", 9, attempt, who, 1)[0]
    seat = [seating_die(s)(0, 0) for s in range(200)]
    opener = [opener_die(s)(0, 0) for s in range(200)]
    dice = [roll(s, 0, 0, 1)[0] for s in range(200)]
    assert seat != opener and seat != dice and opener != dice


def scripted(rolls: dict[tuple[int, int], int]):  # type: ignore[no-untyped-def]
    calls: list[tuple[int, int]] = []

    def die(attempt: int, who: int) -> int:
        calls.append((attempt, who))
        return rolls[(attempt, who)]

    return die, calls


def test_roll_off_highest_first() -> None:
    die, _ = scripted({(0, 0): 2, (0, 1): 6, (0, 2): 4, (0, 3): 1})
    assert roll_off([0, 1, 2, 3], die) == [1, 2, 0, 3]


def test_roll_off_ties_reroll_among_the_tied_only() -> None:
    die, calls = scripted(
        {
            (0, 0): 5,
            (0, 1): 5,
            (0, 2): 6,
            (0, 3): 2,
            (0, 4): 2,
            (1, 0): 3,
            (1, 1): 3,  # 0 and 1 tie again
            (2, 0): 1,
            (2, 1): 4,  # 1 beats 0
            (1, 3): 6,
            (1, 4): 1,  # the tie at 2 resolves
        }
    )
    assert roll_off([0, 1, 2, 3, 4], die) == [2, 1, 0, 3, 4]
    # Seat 2 (the clear winner) never rolled again; nobody outside a tie re-rolled.
    assert (1, 2) not in calls and (2, 3) not in calls and (2, 4) not in calls


def test_roll_off_deterministic_and_a_permutation() -> None:
    for seed in range(50):
        order = roll_off(range(7), seating_die(seed))
        assert sorted(order) == list(range(7))
        assert roll_off(range(7), seating_die(seed)) == order


def test_seating_and_opener_roll_offs_are_fair() -> None:
    orders = Counter(seat_order(s, 3) for s in range(3000))
    assert set(orders) == set(permutations(range(3)))  # every seating occurs
    assert min(orders.values()) > 400  # and about equally often (500 each)
    openers = Counter(first_opener(s, 4) for s in range(4000))
    assert set(openers) == {0, 1, 2, 3} and min(openers.values()) > 850


def test_referee_uses_these_roll_offs() -> None:
    from arena.engine.rules import Rules
    from arena.match import referee

    for seed in range(30):
        rolled = Rules.preset("classic")
        assert list(referee.seat_order(rolled, 6, seed)) == list(seat_order(seed, 6))
        assert referee.first_opener(rolled, 6, seed) == first_opener(seed, 6)
        fixed = Rules.preset("classic", {"seating": "fixed", "first": "seat0"})
        assert list(referee.seat_order(fixed, 6, seed)) == list(range(6))
        assert referee.first_opener(fixed, 6, seed) == 0
