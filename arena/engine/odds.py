"""The odds of a bid: exact binomial arithmetic, no sampling.

These are the figures of Lizumo's "assisted mode": how likely a bid is to be
true, given your own dice and how many dice you cannot see. Each unseen die is
an independent fair die, so the number of unseen dice that match a face is
binomial: a die matches face ``f`` with probability 1/3 when aces are wild and
``f`` is not 1 (the face itself or an ace), else 1/6. In a palifico round aces
are not wild (docs/rules.md, Palifico), so every face is 1/6 there.

Every function takes plain data (a bid, your dice, the unseen count), so the
assist display, the built-in bots and any bot author call the same code;
:class:`arena.sdk.Turn` wraps them as ``turn.probability(bid)`` and friends.

Speed: a bot evaluates dozens of candidate bids per decision, so the binomial
tails are cached per ``(k, n, p)``; there are only two values of ``p`` and at
most 100 dice, so the cache stays small (a few thousand entries at most).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from math import comb
from typing import Final

from arena.engine.rules import Bid, parse_action
from arena.errors import InvalidAction

__all__ = [
    "P_FACE",
    "P_WILD_FACE",
    "BidLike",
    "as_bid",
    "expected_count",
    "face_probability",
    "matching",
    "p_at_least",
    "p_exactly",
    "probability",
    "probability_exact",
]

P_FACE: Final = 1 / 6  # one face, no wilds (aces, palifico, or wild_ones off)
P_WILD_FACE: Final = 1 / 3  # the face or an ace, when aces are wild

BidLike = Bid | tuple[int, int] | str  # Bid(5, 3), (5, 3) or "5x3"


def as_bid(b: BidLike) -> Bid:
    """``b`` as a :class:`Bid`; accepts ``Bid``, a ``(quantity, face)`` pair or ``"5x3"``."""
    if isinstance(b, str):
        action = parse_action(b)
        if not isinstance(action, Bid):
            raise InvalidAction(f"{b!r} is a call, not a bid; the odds are for bids like '5x3'")
        return action
    parts: tuple[object, ...] = tuple(b) if isinstance(b, tuple) else ()
    if len(parts) != 2 or type(parts[0]) is not int or type(parts[1]) is not int or not 1 <= parts[1] <= 6:
        raise InvalidAction(f"bid {b!r}: write (quantity, face) with integers and a face from 1 to 6")
    return b if isinstance(b, Bid) else Bid(parts[0], parts[1])


def face_probability(face: int, wild: bool) -> float:
    """The chance that one unseen die counts for ``face``: 1/3 with wild aces (face != 1), else 1/6."""
    return P_WILD_FACE if wild and face != 1 else P_FACE


def matching(face: int, dice: Sequence[int], wild: bool) -> int:
    """How many of ``dice`` count for ``face`` (aces included when wild and face != 1)."""
    n = 0
    for d in dice:
        if d == face or (wild and d == 1 and face != 1):
            n += 1
    return n


@lru_cache(maxsize=8192)
def p_at_least(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), exact (summed term by term)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    # Sum the tail away from the mean: a small upper tail summed directly keeps
    # its relative precision, which 1 - (lower tail) would lose.
    if k <= n * p:
        below = sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k))
        return max(0.0, min(1.0, 1.0 - below))
    return min(1.0, sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1)))


@lru_cache(maxsize=8192)
def p_exactly(k: int, n: int, p: float) -> float:
    """P(X == k) for X ~ Binomial(n, p)."""
    if k < 0 or k > n:
        return 0.0
    return comb(n, k) * p**k * (1 - p) ** (n - k)


def _wild(wild: bool, palifico: bool) -> bool:
    return wild and not palifico


def probability(b: BidLike, dice: Sequence[int], unseen: int, *, wild: bool = True, palifico: bool = False) -> float:
    """The chance that bid ``b`` is true: at least ``quantity`` dice on the table count for ``face``.

    ``dice`` are your own, ``unseen`` the number of dice in play that are not
    yours. ``wild`` is the rule set's ``wild_ones``; ``palifico=True`` turns
    the wilds off, as a palifico round does (docs/rules.md). A bid on aces never
    counts wilds.
    """
    q, f = as_bid(b)
    w = _wild(wild, palifico)
    return p_at_least(q - matching(f, dice, w), unseen, face_probability(f, w))


def probability_exact(
    b: BidLike, dice: Sequence[int], unseen: int, *, wild: bool = True, palifico: bool = False
) -> float:
    """The chance that exactly ``quantity`` dice count for ``face``: a calza's chance of being right."""
    q, f = as_bid(b)
    w = _wild(wild, palifico)
    return p_exactly(q - matching(f, dice, w), unseen, face_probability(f, w))


def expected_count(face: int, dice: Sequence[int], unseen: int, *, wild: bool = True, palifico: bool = False) -> float:
    """The expected number of dice on the table counting for ``face``: yours plus unseen x p."""
    w = _wild(wild, palifico)
    return matching(face, dice, w) + unseen * face_probability(face, w)
