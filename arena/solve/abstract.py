"""Rounds too large to solve exactly: an imperfect-recall abstraction solved by
fixed-strategy-iteration CFR with CFR+ updates.

The abstraction. A player's information set in a round is (own hand, the whole
history of bids): with four dice in play that is 2^24 histories and some 352
million information sets per player, beyond a tabular solver here. The
abstract player remembers instead (own hand, the last ``recall`` bids of the
round, and a *recall state* ``m``): ``m`` is the exact number of bids while
there are at most ``recall`` of them (so the start of a round is played with
perfect recall), and afterwards only whether the number of forgotten bids is
odd (``m = recall + 1``) or even (``m = recall + 2``). That one bit is the
parity of the number of bids, which a player always knows (it is its own
seat's turn or not): without it the opener's and the other player's
information sets would merge, and they hold different hands. Neller and
Hnath (2011) found last-three-claims recall close to optimal for two-player
Dudo; ``recall`` is a parameter here so its cost can be measured.

Why the abstract game is a DAG and why that makes it cheap. The bids only
rise, and what can happen after a history (the raises left, the payoff of a
dudo, and the abstract states reached, hence the abstract strategy's moves)
depends only on its abstract state (last bids, ``m``): the next abstract
state is a function of the current one and the bid made. So every real
history with the same abstract state has the same future: the same expected
payoff for every pair of hands. The real tree folds onto a small DAG of
abstract states (5,636 with ``recall = 3`` and 24 bids, against 16.7
million histories), and one CFR iteration over the real tree is exactly a
pass over the DAG:

- forward, in increasing order of the standing bid: each player's own reach
  of each abstract state (per hand), summed over the real histories that
  fold onto it (sum over the state's parents);
- backward, in decreasing order: the opener's expected payoff of each state
  for every pair of hands, ``U[node][a, b]`` (a matrix per node: 21 x 21
  with two dice each), which does not depend on reach;
- the counterfactual regret of each (abstract information set, action) is
  then the opponent's summed reach times the difference in ``U``: exactly
  what CFR over the real tree adds up over the merged histories.

This is Neller and Hnath's fixed-strategy iteration CFR (FSICFR): the
strategy is held fixed during an iteration, which turns the exponential
recursion into dynamic programming over the DAG. Here every deal is
enumerated (no chance sampling: the hands are an axis of the arrays), so an
iteration is deterministic, and the updates are CFR+'s (regret matching+,
alternating updates, linearly weighted average), for the reasons
:mod:`arena.solve.cfr` gives: no parameters, byte-for-byte reproducible, fast
in practice. CFR+ on the abstract game rather than FSICFR with vanilla
regret matching because the 1-die and 1-2 rounds converge an order of
magnitude faster with CFR+'s updates, and nothing in the DAG pass depends on
which regret update is used.

What is lost: with imperfect recall CFR is no longer guaranteed to converge
to anything, and an equilibrium of the abstract game is not one of the real
game. So the abstract strategy is certified in the real game: the exact best
response over the full 2^24 tree (:mod:`arena.solve.fullbr`) gives its true
exploitability, and that is the figure reported.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from arena.solve.cfr import Profile
from arena.solve.game import OPENER, OTHER, RoundGame, SolveError

__all__ = ["AbstractGame", "AbstractProfile", "AbstractSolver", "abstract_game", "popcount", "top_bits"]


def popcount(x: np.ndarray) -> np.ndarray:
    """Set bits of each (non-negative, below 2^32) integer."""
    v: np.ndarray = x.astype(np.uint32)
    v = v - ((v >> 1) & 0x55555555)
    v = (v & 0x33333333) + ((v >> 2) & 0x33333333)
    v = (v + (v >> 4)) & 0x0F0F0F0F
    out: np.ndarray = ((v * 0x01010101) & 0xFFFFFFFF) >> 24
    return out


def top_bits(masks: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` highest set bits of each mask (all of them where fewer are set)."""
    rest = masks.astype(np.int64)
    out = np.zeros_like(rest)
    for _ in range(k):
        _, e = np.frexp(rest.astype(np.float64))  # rest = m * 2^e, 0.5 <= m < 1: the highest bit is e-1
        hb = np.where(rest > 0, np.left_shift(1, np.maximum(e - 1, 0).astype(np.int64)), 0)
        out |= hb
        rest ^= hb
    return out


@dataclass
class AbstractGame:
    """The DAG of abstract states of one round (nodes sorted by standing bid, then actor).

    A node is (tail, m): ``tail`` the remembered bids as a bitmask over the
    ladder (bids only rise, so the set says the order), ``m`` the recall state
    (module docstring). Edges are raises, sorted by parent then bid.
    """

    game: RoundGame
    recall: int
    tail: np.ndarray  # remembered bids, bitmask
    m: np.ndarray  # recall state
    top: np.ndarray  # standing bid (ladder index), -1 at the root
    actor: np.ndarray  # who acts: OPENER after an even number of bids
    e_parent: np.ndarray
    e_child: np.ndarray
    e_bid: np.ndarray
    codes: np.ndarray  # sorted (m << n_bids | tail) codes, for looking states up
    code_node: np.ndarray  # node id of each sorted code
    # (top, actor) groups: node range, out-edge range, and in-edge range in child order
    groups: list[tuple[int, int, int, int, int, int, int, int]]
    by_child: np.ndarray  # edge ids sorted by child
    n_children: np.ndarray
    _mask_nodes: np.ndarray | None = None

    @property
    def n_nodes(self) -> int:
        return len(self.top)

    @property
    def n_edges(self) -> int:
        return len(self.e_parent)

    def state_of(self, masks: np.ndarray) -> np.ndarray:
        """The abstract node of every real history (a bitmask of its bids); -1
        where none (a history no legal play reaches: its first bid cannot open)."""
        n_bids, k = self.game.n_bids, self.recall
        masks = np.asarray(masks, dtype=np.int64)
        count = popcount(masks).astype(np.int64)
        tail = np.where(count <= k, masks, top_bits(masks, k))
        m = np.where(count <= k, count, np.where((count - k) % 2 == 1, k + 1, k + 2))
        code = (m << n_bids) | tail
        pos = np.searchsorted(self.codes, code)
        pos = np.minimum(pos, len(self.codes) - 1)
        hit = self.codes[pos] == code
        return np.where(hit, self.code_node[pos], -1)

    def mask_nodes(self) -> np.ndarray:
        """:meth:`state_of` for every history of the round (2^n_bids, int32), cached."""
        if self._mask_nodes is None:
            n = 1 << self.game.n_bids
            out = np.empty(n, dtype=np.int32)
            step = 1 << 20
            for lo in range(0, n, step):
                out[lo : lo + step] = self.state_of(np.arange(lo, min(n, lo + step)))
            self._mask_nodes = out
        return self._mask_nodes

    def key(self, node: int) -> str:
        """The history part of a policy key: the bids remembered, oldest first, in
        the protocol's text, after ``*1,`` (an odd number of earlier bids forgotten)
        or ``*2,`` (an even number, at least two) once bids are forgotten."""
        tail, m = int(self.tail[node]), int(self.m[node])
        text = ",".join(f"{b.quantity}x{b.face}" for i, b in enumerate(self.game.ladder) if tail >> i & 1)
        if m <= self.recall:
            return text
        return f"*{1 if m == self.recall + 1 else 2}," + text


def abstract_game(game: RoundGame, recall: int) -> AbstractGame:
    """Every abstract state a round can reach, from the root by legal raises."""
    if recall < 1:
        raise SolveError(f"recall {recall}: remember at least the standing bid (recall >= 1)")
    n_bids, k = game.n_bids, recall
    openers = [int(a) for a in game.openers]
    states: list[tuple[int, int]] = [(0, 0)]
    index = {(0, 0): 0}
    edges: list[tuple[int, int, int]] = []
    i = 0
    while i < len(states):
        tail, m = states[i]
        top = tail.bit_length() - 1
        for a in openers if i == 0 else range(top + 1, n_bids):
            nt = tail | (1 << a)
            if m < k:
                nm = m + 1
            else:
                nt ^= nt & -nt  # forget the oldest remembered bid
                nm = k + 2 if m == k + 1 else k + 1
            s = (nt, nm)
            j = index.get(s)
            if j is None:
                j = index[s] = len(states)
                states.append(s)
            edges.append((i, j, a))
        i += 1
    tail_a = np.array([s[0] for s in states], dtype=np.int64)
    m_a = np.array([s[1] for s in states], dtype=np.int64)
    top_a = np.array([s[0].bit_length() - 1 for s in states], dtype=np.int64)
    actor_a = m_a % 2
    code = (m_a << n_bids) | tail_a
    order = np.lexsort((code, actor_a, top_a))  # by standing bid, then actor (root first)
    relabel = np.empty_like(order)
    relabel[order] = np.arange(len(order))
    e = np.array(edges, dtype=np.int64)
    e_parent, e_child, e_bid = relabel[e[:, 0]], relabel[e[:, 1]], e[:, 2]
    eo = np.lexsort((e_bid, e_parent))
    e_parent, e_child, e_bid = e_parent[eo], e_child[eo], e_bid[eo]
    tail_a, m_a, top_a, actor_a, code = tail_a[order], m_a[order], top_a[order], actor_a[order], code[order]
    corder = np.argsort(code)
    by_child = np.argsort(e_child, kind="stable")
    n_children = np.bincount(e_parent, minlength=len(top_a))
    groups = []
    keys = top_a * 2 + actor_a
    cuts = np.concatenate(([0], np.nonzero(np.diff(keys))[0] + 1, [len(keys)]))
    for s, t in zip(cuts[:-1], cuts[1:]):
        es, ee = np.searchsorted(e_parent, [s, t])
        assert (ee - es) % (t - s) == 0 and len(set(n_children[s:t].tolist())) == 1  # same raises per group
        cs = e_child[by_child]
        is_, ie = np.searchsorted(cs, [s, t])
        groups.append((int(s), int(t), int(es), int(ee), int(is_), int(ie), int(top_a[s]), int(actor_a[s])))
    return AbstractGame(
        game,
        recall,
        tail_a,
        m_a,
        top_a,
        actor_a,
        e_parent,
        e_child,
        e_bid,
        code[corder],
        corder,
        groups,
        by_child,
        n_children,
    )


@dataclass
class AbstractProfile:
    """A behaviour strategy on the abstract states: ``edge[e, h]`` the probability
    of raise ``e`` for hand h of the actor at its parent, ``dudo[node, h]``.
    Columns past the actor's number of hands are padding."""

    edge: np.ndarray
    dudo: np.ndarray

    def table(self, ag: AbstractGame, player: int) -> np.ndarray:
        """Dense ``[node, action, hand]`` probabilities of ``player``'s states
        (actions: ladder indices, then dudo at ``n_bids``), with one extra node
        of zeros last (the state -1 maps to)."""
        n_bids = ag.game.n_bids
        h = len(ag.game.hands[player])
        out = np.zeros((ag.n_nodes + 1, n_bids + 1, h))
        sel = ag.actor[ag.e_parent] == player
        out[ag.e_parent[sel], ag.e_bid[sel]] = self.edge[sel, :h]
        mine = ag.actor == player
        out[np.nonzero(mine)[0], n_bids] = self.dudo[mine, :h]
        return out


class AbstractSolver:
    """CFR+ updates over the DAG of abstract states of one round (FSICFR)."""

    def __init__(self, ag: AbstractGame, cont: Callable[[int, int, int], float]) -> None:
        self.ag = ag
        game = ag.game
        self.by_opener, self.by_other = game.payoff(cont)
        self.nh = (len(game.hands[0]), len(game.hands[1]))
        hw = max(self.nh)
        self.hw = hw
        self.allowed = (ag.top >= 0).astype(float)  # no dudo before the first bid
        self.n_actions = ag.n_children + self.allowed
        self.reg_edge = np.zeros((ag.n_edges, hw))
        self.reg_dudo = np.zeros((ag.n_nodes, hw))
        self.sum_edge = np.zeros((ag.n_edges, hw))
        self.sum_dudo = np.zeros((ag.n_nodes, hw))
        self.iterations = 0
        self.seconds = 0.0

    # -- strategies --------------------------------------------------------------

    def _normalise(self, edge: np.ndarray, dudo: np.ndarray) -> AbstractProfile:
        ag = self.ag
        total = np.zeros((ag.n_nodes, self.hw))
        self._segsum_into(total, edge)
        total += dudo * self.allowed[:, None]
        ok = total > 0
        inv = np.where(ok, 1.0 / np.where(ok, total, 1.0), 0.0)
        uniform = (~ok) / np.maximum(self.n_actions, 1)[:, None]
        pe = edge * inv[ag.e_parent] + uniform[ag.e_parent]
        pd = (dudo * inv + uniform) * self.allowed[:, None]
        return AbstractProfile(pe, pd)

    def _segsum_into(self, total: np.ndarray, edge: np.ndarray) -> None:
        ag = self.ag
        has = np.nonzero(ag.n_children)[0]
        starts = np.searchsorted(ag.e_parent, has)
        total[has] += np.add.reduceat(edge, starts, axis=0)

    def current(self) -> AbstractProfile:
        return self._normalise(self.reg_edge, self.reg_dudo)

    def average(self) -> AbstractProfile:
        return self._normalise(self.sum_edge, self.sum_dudo)

    # -- passes -------------------------------------------------------------------

    def reach(self, prof: AbstractProfile) -> list[np.ndarray]:
        """reach[p][node, h]: player p's own probability of reaching each abstract
        state (summed over the real histories folded onto it), per hand."""
        ag = self.ag
        out = []
        for p in (OPENER, OTHER):
            r = np.zeros((ag.n_nodes, self.nh[p]))
            r[0] = 1.0
            for s, t, _es, _ee, is_, ie, _top, actor in ag.groups:
                if ie == is_:
                    continue
                eids = ag.by_child[is_:ie]
                contrib = r[ag.e_parent[eids]]
                if actor != p:  # the parent's actor (1 - actor) is p: its move counts
                    contrib = contrib * prof.edge[eids, : self.nh[p]]
                seg = np.searchsorted(ag.e_child[eids], np.arange(s, t))
                r[s:t] = np.add.reduceat(contrib, seg, axis=0)
            out.append(r)
        return out

    def utilities(
        self,
        prof: AbstractProfile,
        payoff: tuple[np.ndarray, np.ndarray] | None = None,
        *,
        update: tuple[int, list[np.ndarray], float] | None = None,
    ) -> np.ndarray:
        """U[node, a, b]: the opener's expected payoff from each abstract state for
        opener hand a and other hand b, both following ``prof``.

        With ``update = (player, reach, weight)`` the same backward pass does
        ``player``'s CFR+ regret and average-strategy updates (``reach`` from
        :meth:`reach`, ``weight`` the averaging weight of the iteration)."""
        ag = self.ag
        by_opener, by_other = payoff or (self.by_opener, self.by_other)
        n0, n1 = self.nh
        u = np.zeros((ag.n_nodes, n0, n1))
        for s, t, es, ee, _is, _ie, top, actor in reversed(ag.groups):
            n_par, n_kid = t - s, (ee - es) // (t - s)  # every state of a group has the same raises
            pay = (by_opener if actor == OPENER else by_other)[top] if top >= 0 else None
            kids = u[ag.e_child[es:ee]] if ee > es else None
            if update is not None and update[0] == actor:
                self._regrets(actor, prof, update[1], update[2], s, t, es, ee, kids, pay)
            if kids is not None:
                if actor == OPENER:
                    kids *= prof.edge[es:ee, :n0, None]
                else:
                    kids *= prof.edge[es:ee, None, :n1]
                u[s:t] = kids.reshape(n_par, n_kid, n0, n1).sum(axis=1)
            if pay is not None:
                if actor == OPENER:
                    u[s:t] += prof.dudo[s:t, :n0, None] * pay[None]
                else:
                    u[s:t] += prof.dudo[s:t, None, :n1] * pay[None]
        return u

    def _regrets(
        self,
        player: int,
        prof: AbstractProfile,
        reach: list[np.ndarray],
        weight: float,
        s: int,
        t: int,
        es: int,
        ee: int,
        kids: np.ndarray | None,
        pay: np.ndarray | None,
    ) -> None:
        """CFR+ updates at the states ``s:t`` (one group, ``player`` acting there)."""
        n_p = self.nh[player]
        n_par = t - s
        ro = reach[1 - player][s:t] * self.ag.game.weight[1 - player]  # the opponent's reach times chance
        v = np.zeros((n_par, n_p))
        q = None
        if kids is not None:
            n_kid = (ee - es) // n_par
            rp = np.repeat(ro, n_kid, axis=0)
            # The counterfactual value of each raise, per own hand.
            q = (
                np.matmul(kids, rp[:, :, None])[:, :, 0]
                if player == OPENER
                else -np.matmul(rp[:, None, :], kids)[:, 0, :]
            )
            v += (q * prof.edge[es:ee, :n_p]).reshape(n_par, n_kid, n_p).sum(axis=1)
        if pay is not None:
            qd = ro @ pay.T if player == OPENER else -(ro @ pay)
            v += qd * prof.dudo[s:t, :n_p]
            rd = self.reg_dudo[s:t, :n_p]
            rd += qd - v
            np.maximum(rd, 0.0, out=rd)
            self.sum_dudo[s:t, :n_p] += weight * reach[player][s:t] * prof.dudo[s:t, :n_p]
        if q is not None:
            n_kid = (ee - es) // n_par
            re = self.reg_edge[es:ee, :n_p]
            re += q - np.repeat(v, n_kid, axis=0)
            np.maximum(re, 0.0, out=re)
            own = np.repeat(reach[player][s:t], n_kid, axis=0)
            self.sum_edge[es:ee, :n_p] += weight * own * prof.edge[es:ee, :n_p]

    def _update(self, player: int, prof: AbstractProfile, weight: float) -> None:
        self.utilities(prof, update=(player, self.reach(prof), weight))

    def iterate(self, n: int = 1) -> None:
        """``n`` iterations (alternating: the opener updates, then the other player)."""
        t0 = time.perf_counter()
        for _ in range(n):
            self.iterations += 1
            weight = float(self.iterations)
            self._update(OPENER, self.current(), weight)
            self._update(OTHER, self.current(), weight)
        self.seconds += time.perf_counter() - t0

    def value(self, prof: AbstractProfile | None = None) -> float:
        """The opener's expected value (exact for the real game: the abstraction
        only ties moves together, every real history's payoff is counted)."""
        u = self.utilities(prof or self.average())
        g = self.ag.game
        return float(g.weight[0] @ u[0] @ g.weight[1])


def prune(solver: AbstractSolver, prof: AbstractProfile, eps: float) -> AbstractProfile:
    """``prof`` with every probability below ``eps`` dropped, renormalised."""
    edge = np.where(prof.edge >= eps, prof.edge, 0.0)
    dudo = np.where(prof.dudo >= eps, prof.dudo, 0.0)
    return solver._normalise(edge, dudo)


def to_profile(ag: AbstractGame, prof: AbstractProfile, game: RoundGame) -> Profile:
    """The abstract strategy as a perfect-recall profile on ``game``'s tree (the
    same round, built with its tree): every history plays its abstract state's move."""
    masks = np.zeros(game.n_nodes, dtype=np.int64)
    for d, lv in enumerate(game.levels):
        if d:
            masks[lv.start : lv.stop] = masks[lv.parent] | (np.int64(1) << lv.top)
    node = ag.state_of(masks)
    tables = [prof.table(ag, p) for p in (OPENER, OTHER)]
    child, dudo = [], []
    for d, lv in enumerate(game.levels):
        p = lv.actor
        tab = tables[p]
        if d + 1 < len(game.levels):
            nxt = game.levels[d + 1]
            child.append(tab[node[nxt.parent], nxt.top])
        else:
            child.append(np.zeros((0, len(game.hands[p]))))
        dudo.append(tab[node[lv.start : lv.stop], ag.game.n_bids] if d else np.zeros((0, len(game.hands[p]))))
    return Profile(child, dudo)
