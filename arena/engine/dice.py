"""Dice from a generator keyed per match, round and seat (docs/rules.md, Dice from the seed).

A die is never drawn from a shared stream: each (seed, round, seat) has its own
BLAKE2b digest, so one match's dice do not depend on any other match, on how
many workers run, or on how long any bot thinks. The algorithm is simple on
purpose, so an auditor can re-derive every die from a record's ``seed``:

    digest = blake2b(b"dice" + seed(8 bytes, big-endian) + round(4) + seat(2)
                     + block(2), digest_size=64)
    every byte b < 252 gives the die 1 + b % 6, in order; other bytes are
    skipped (rejection keeps the faces uniform); block counts up from 0 if a
    digest runs out.

Seats are positions at the table, so the same seed gives the same dice to the
same seat position: the basis of duplicate play (``seating: rotate``).

Seating and the round-1 opener (``seating: roll``, ``first: roll``) come from
two more streams of the same kind, tagged ``b"seat"`` and ``b"open"`` instead
of ``b"dice"``, with the roll-off attempt in place of the round and the
candidate (schedule position, or seat) in place of the seat: each roll is the
first accepted byte of its digest. :func:`roll_off` is the procedure (highest
first, ties re-rolled among the tied); the referee applies it to the schedule
positions with :func:`seating_die` and to the seats with :func:`opener_die`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from typing import Final

_LIMIT = 252  # largest multiple of 6 that fits in a byte


def _stream(tag: bytes, seed: int, a: int, b: int) -> Iterator[int]:
    block = 0
    prefix = tag + (seed & (2**64 - 1)).to_bytes(8, "big") + a.to_bytes(4, "big") + b.to_bytes(2, "big")
    while True:
        digest = hashlib.blake2b(prefix + block.to_bytes(2, "big"), digest_size=64).digest()
        for byte in digest:
            if byte < _LIMIT:
                yield 1 + byte % 6
        block += 1


# Every byte's die (1 + b % 6), and the bytes rejected: ``digest.translate`` does
# the loop of _stream over a whole digest in C, in the same order.
_FACE_OF: Final = bytes(1 + b % 6 for b in range(256))
_REJECTED: Final = bytes(range(_LIMIT, 256))


def roll(seed: int, round_: int, seat: int, n: int) -> tuple[int, ...]:
    """The ``n`` dice seat ``seat`` rolls in round ``round_`` of the match keyed by ``seed``."""
    if n <= 0:
        return ()
    # The first digest (block 0) almost always holds enough accepted bytes: 64
    # of them, each kept with probability 252/256. Only past that, the stream.
    prefix = b"dice" + (seed & (2**64 - 1)).to_bytes(8, "big") + round_.to_bytes(4, "big") + seat.to_bytes(2, "big")
    faces = hashlib.blake2b(prefix + b"\0\0", digest_size=64).digest().translate(_FACE_OF, _REJECTED)
    if len(faces) >= n:
        return tuple(faces[:n])
    stream = _stream(b"dice", seed, round_, seat)
    return tuple(next(stream) for _ in range(n))


# A seat's two bytes and block 0's, for the seats of any table (docs/rules.md: 2 to 10).
_SEAT_BLOCK0: Final = tuple(seat.to_bytes(2, "big") + b"\0\0" for seat in range(64))
_blake2b = hashlib.blake2b  # digest_size 64 is its default


def roll_table(seed: int, round_: int, counts: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """Every seat's dice for a round (an empty hand for a seat that is out):
    :func:`roll` for each seat, with the key's seed and round bytes built once
    (once per round on the referee's per-decision path)."""
    if len(counts) > len(_SEAT_BLOCK0):
        return tuple(roll(seed, round_, seat, c) for seat, c in enumerate(counts))
    head = b"dice" + (seed & (2**64 - 1)).to_bytes(8, "big") + round_.to_bytes(4, "big")
    hands: list[tuple[int, ...]] = []
    for seat, n in enumerate(counts):
        if n <= 0:
            hands.append(())
            continue
        faces = _blake2b(head + _SEAT_BLOCK0[seat]).digest().translate(_FACE_OF, _REJECTED)
        hands.append(tuple(faces[:n]) if len(faces) >= n else roll(seed, round_, seat, n))
    return tuple(hands)


def roll_off(candidates: Sequence[int], die: Callable[[int, int], int]) -> list[int]:
    """Order ``candidates`` by a dice roll, highest first, ties re-rolled among the tied.

    ``die(attempt, candidate)`` returns the die ``candidate`` shows on its
    ``attempt``-th roll (1-6), so the outcome is a pure function of the key.
    """

    def order(group: list[int], attempt: int) -> list[int]:
        if len(group) <= 1:
            return group
        rolls = {c: die(attempt, c) for c in group}
        result: list[int] = []
        for face in range(6, 0, -1):
            tied = [c for c in group if rolls[c] == face]
            result.extend(order(tied, attempt + 1))
        return result

    return order(list(candidates), 0)


def seating_die(seed: int) -> Callable[[int, int], int]:
    """The die used to roll for seats (docs/rules.md, Seating), keyed apart from the round dice."""
    return lambda attempt, who: next(_stream(b"seat", seed, attempt, who))


def opener_die(seed: int) -> Callable[[int, int], int]:
    """The die used to roll for the round-1 opener, keyed apart from everything else."""
    return lambda attempt, who: next(_stream(b"open", seed, attempt, who))
