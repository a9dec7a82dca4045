"""The exact best response over a round's full tree, against a fixed abstract
strategy: what certifies an imperfect-recall solution (:mod:`arena.solve.abstract`).

The best responder has perfect recall (an information set is its hand and
the whole history), the other player plays the abstract strategy. With 24
bids the tree has 2^24 = 16.7 million histories, too many for the level
lists of :mod:`arena.solve.game`, but bids only rise, so a history is a
bitmask over the ladder and the tree needs no index at all:

- the histories whose standing (highest) bid is ladder index ``k`` are the
  masks ``(1 << k) | low`` with ``low < 2^k``: rows ``[2^k, 2^(k+1))`` of a
  flat array;
- a history's parent is the mask without its highest bit, and the children
  of the histories of group ``k`` by bid ``a > k`` are rows
  ``(1 << a) + [2^k, 2^(k+1))``, a contiguous slice;
- who acts is the parity of the number of bids (``popcount``).

So the two passes are loops of slice operations. Top-down, the opponent's
reach (per its hands) of every history: the rows of group ``a`` are the
rows ``[0, 2^a)`` times the opponent's probability of bid ``a`` there (1 where
the best responder moves). Bottom-up, the best responder's counterfactual
value (per its hands): at its own histories the maximum over its raises and
its dudo, at the opponent's the sum (the opponent's probabilities are in the
reach already). A dudo at any history of group ``k`` is a call on ladder bid
``k``, so its value for a block of histories is one matrix product with that
bid's payoff matrix. Memory: two arrays of 2^n x hands (float64: 2.8 GB each
for 24 bids and 21 hands), walked in blocks of 2^20 rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.solve.abstract import AbstractGame, AbstractProfile, popcount
from arena.solve.game import OPENER

__all__ = ["best_response_full", "BLOCK"]

BLOCK = 1 << 20  # rows per slice operation: bounds the temporaries (21 hands: 170 MB)


def _blocks(lo: int, hi: int) -> list[tuple[int, int]]:
    return [(s, min(hi, s + BLOCK)) for s in range(lo, hi, BLOCK)]


def best_response_full(
    ag: AbstractGame, prof: AbstractProfile, player: int, payoff: tuple[np.ndarray, np.ndarray], dtype: Any = np.float64
) -> float:
    """What a best response earns as ``player`` over the full tree of the round,
    against the other player's part of ``prof`` (``payoff``: the opener's payoff
    of a dudo per ladder bid and hand pair, by the opener and by the other
    player calling, as ``RoundGame.payoff`` gives, with the continuation values
    the best responder gets)."""
    game = ag.game
    n = game.n_bids
    opp = 1 - player
    table = prof.table(ag, opp)  # [node, action, hand]; row -1: zeros
    nodes = ag.mask_nodes()
    h_o, h_p = len(game.hands[opp]), len(game.hands[player])
    w_o: np.ndarray = game.weight[opp].astype(dtype)
    size = 1 << n
    openers = set(int(a) for a in game.openers)

    reach: np.ndarray = np.empty((size, h_o), dtype=dtype)
    reach[0] = 1.0
    for a in range(n):  # group a: rows (1 << a) + [0, 2^a)
        base = 1 << a
        for lo, hi in _blocks(0, base):
            r = reach[lo:hi]
            moves = table[nodes[lo:hi], a]  # the opponent's probability of bid a there
            opp_acts = (popcount(np.arange(lo, hi)) % 2) == opp
            f = np.where(opp_acts[:, None], moves, 1.0)
            if lo == 0:
                f[0] = moves[0] if opp == OPENER else 1.0
                if a not in openers:
                    f[0] = 0.0
            reach[base + lo : base + hi] = r * f

    by_opener, by_other = payoff
    value: np.ndarray = np.empty((size, h_p), dtype=dtype)
    sign = 1.0 if player == OPENER else -1.0
    for k in range(n - 1, -1, -1):
        base = 1 << k
        pay = (by_opener[k], by_other[k])  # caller: the opener, the other player
        for lo, hi in _blocks(base, 2 * base):
            masks = np.arange(lo, hi)
            caller = popcount(masks) % 2
            mine = caller == player
            ro = reach[lo:hi] * w_o
            ro = np.where(mine[:, None], ro, ro * table[nodes[lo:hi], n])
            dv: np.ndarray = np.empty((hi - lo, h_p), dtype=dtype)
            for c in (0, 1):
                rows = caller == c
                if rows.any():
                    m = pay[c]
                    dv[rows] = sign * (ro[rows] @ m.T if player == OPENER else ro[rows] @ m)
            best, total = dv.copy(), dv
            for a in range(k + 1, n):  # the raises: contiguous slices of the higher groups
                kid = value[(1 << a) + lo : (1 << a) + hi]
                np.maximum(best, kid, out=best)
                total += kid
            value[lo:hi] = np.where(mine[:, None], best, total)
    kids = [value[1 << a] for a in sorted(openers)]
    root = np.maximum.reduce(kids) if player == OPENER else np.add.reduce(kids)
    del reach, value
    return float(root.astype(np.float64) @ game.weight[player])
