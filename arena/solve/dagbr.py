"""A best response on a DAG of abstract states: a lower bound on the
exploitability where the exact best response does not fit.

The exact best response (:mod:`arena.solve.fullbr`) walks every history of a
round: 2^(6 x dice in play) of them, so nothing beyond four dice in play (and
with three-dice hands not even that, in memory). Beyond, the trainer logs
this instead: the exact value of a *specific* responder, one that remembers
the last ``K'`` bids of the round (``K'`` at least the strategy's own
recall) and picks at each of its abstract information sets the action with
the highest counterfactual value. Any strategy's exact value against the
fixed strategy is at most what a best response wins, so the figure is a
**lower bound** on the true exploitability; with ``K'`` at least the number
of bids the responder has perfect recall, every abstract state is one
history, and the figure is the exact best response (a test checks it
against :mod:`arena.solve.fullbr`).

Why it is exact as a value although the responder forgets: the fixed
strategy's moves depend only on its own abstract state, which is a function
of the responder's finer one, so everything after a fine abstract state (the
raises left, the dudo payoffs, both players' moves) depends only on that
state. The opener's payoff of each state for every pair of hands,
``V[node, own hand, other hand]``, is then one backward pass over the DAG,
with the responder's choice made per (state, hand) as the pass reaches it.

Why the choice is not always the best one: a fine state can be reached by
several real histories, with different own reach for the responder (its own
earlier choices differ between them). The choice weighs the opponent's reach
summed over all of them as if the responder reached each, which is what a
perfect-recall responder would not need; so the responder is good, not best,
and the figure a lower bound. It is computed in the same memory as one
training pass of the abstraction it runs on (a matrix per state).
"""

from __future__ import annotations

import numpy as np

from arena.solve.abstract import AbstractGame, AbstractProfile, top_bits
from arena.solve.game import OPENER, SolveError

__all__ = ["lift", "dag_best_response"]


def lift(coarse: AbstractGame, fine: AbstractGame, prof: AbstractProfile) -> AbstractProfile:
    """``prof`` (on ``coarse``) on the states of ``fine``, the same round remembering
    at least as many bids: every fine state plays its coarse state's move."""
    k, kf, n = coarse.recall, fine.recall, fine.game.n_bids
    if kf < k or fine.game is not coarse.game:
        raise SolveError(f"lift: recall {kf} does not refine recall {k} of the same round")
    tail, m = fine.tail, fine.m
    forgot_f = m > kf  # the fine state forgot bids: only their parity is known
    # Parity of the number of bids the coarse state forgets (count - k), where it forgets any.
    parity = np.where(forgot_f, ((m == kf + 1).astype(np.int64) + (kf - k)) % 2, (m - k) % 2)
    coarse_forgets = forgot_f | (m > k)
    c_tail = np.where(coarse_forgets, top_bits(tail, k), tail)
    c_m = np.where(coarse_forgets, np.where(parity == 1, k + 1, k + 2), m)
    code = (c_m << n) | c_tail
    pos = np.minimum(np.searchsorted(coarse.codes, code), len(coarse.codes) - 1)
    if not np.all(coarse.codes[pos] == code):
        raise SolveError("lift: a fine state has no coarse state (not the same round)")
    c_node = coarse.code_node[pos]
    # Coarse edges are sorted by (parent, bid): find each fine edge's.
    c_key = coarse.e_parent * (n + 1) + coarse.e_bid
    f_key = c_node[fine.e_parent] * (n + 1) + fine.e_bid
    epos = np.searchsorted(c_key, f_key)
    assert np.all(c_key[np.minimum(epos, len(c_key) - 1)] == f_key)
    return AbstractProfile(prof.edge[epos], prof.dudo[c_node])


def _opp_reach(ag: AbstractGame, prof: AbstractProfile, opp: int, h_o: int) -> np.ndarray:
    """The opponent's own reach of every state per hand, summed over the histories folded onto it."""
    r = np.zeros((ag.n_nodes, h_o))
    r[0] = 1.0
    for s, t, _es, _ee, is_, ie, _top, actor in ag.groups:
        if ie == is_:
            continue
        eids = ag.by_child[is_:ie]
        contrib = r[ag.e_parent[eids]]
        if actor != opp:  # the parent's actor is the opponent: its move counts
            contrib = contrib * prof.edge[eids, :h_o]
        seg = np.searchsorted(ag.e_child[eids], np.arange(s, t))
        r[s:t] = np.add.reduceat(contrib, seg, axis=0)
    return r


def dag_best_response(
    ag: AbstractGame, prof: AbstractProfile, player: int, payoff: tuple[np.ndarray, np.ndarray]
) -> float:
    """What the responder of the module doc (remembering ``ag.recall`` bids) wins as
    ``player`` against the other player's part of ``prof`` (on ``ag``: :func:`lift`
    it first), exactly; ``payoff`` as for :func:`arena.solve.fullbr.best_response_full`."""
    game = ag.game
    opp = 1 - player
    h_p, h_o = len(game.hands[player]), len(game.hands[opp])
    w_o = game.weight[opp]
    reach = _opp_reach(ag, prof, opp, h_o) * w_o
    by_opener, by_other = payoff
    sign = 1.0 if player == OPENER else -1.0

    def oriented(mat: np.ndarray) -> np.ndarray:  # [opener hand, other hand] -> the responder's [own, opponent's]
        return sign * (mat if player == OPENER else mat.T)

    v = np.zeros((ag.n_nodes, h_p, h_o))
    for s, t, es, ee, _is, _ie, top, actor in reversed(ag.groups):
        n_par = t - s
        n_kid = (ee - es) // n_par
        pay = oriented((by_opener if actor == OPENER else by_other)[top]) if top >= 0 else None
        kids = v[ag.e_child[es:ee]] if ee > es else None  # [edge, own, opponent's]
        if actor == player:
            options = []  # per option: [n_par, h_p] counterfactual values, and [n_par, h_p, h_o] payoffs
            if kids is not None:
                ro = np.repeat(reach[s:t], n_kid, axis=0)
                q = np.matmul(kids, ro[:, :, None])[:, :, 0].reshape(n_par, n_kid, h_p)
                kv = kids.reshape(n_par, n_kid, h_p, h_o)
                for j in range(n_kid):
                    options.append((q[:, j], kv[:, j]))
            if pay is not None:
                qd = reach[s:t] @ pay.T
                options.append((qd, np.broadcast_to(pay, (n_par, h_p, h_o))))
            qs = np.stack([o[0] for o in options])  # [option, n_par, h_p]
            best = np.argmax(qs, axis=0)  # ties: the first (raises in ladder order, then dudo)
            out = np.zeros((n_par, h_p, h_o))
            for j, (_, val) in enumerate(options):
                sel = best == j
                out[sel] = val[sel]
            v[s:t] = out
        else:
            out = np.zeros((n_par, h_p, h_o))
            if kids is not None:
                kids *= prof.edge[es:ee, None, :h_o]
                out += kids.reshape(n_par, n_kid, h_p, h_o).sum(axis=1)
            if pay is not None:
                out += prof.dudo[s:t, None, :h_o] * pay[None]
            v[s:t] = out
    return float(game.weight[player] @ v[0] @ w_o)
