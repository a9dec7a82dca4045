"""One round of a two-player game as arrays, built from the rules engine.

A round of Dudo between two players is a game of its own: chance deals each
player a hand, then the players alternate, the *opener* first, each raising the
standing bid or (after the first bid) calling dudo. Because every raise is
higher in one total order (the engine's bid ladder), a history of bids is a
subset of the ladder taken in increasing order, and who made each bid follows
from its position (the opener makes the 1st, 3rd, ... bids). A player's
information set is (own hand, the history), with perfect recall: a bot sees
the whole round's bids (``turn.history``).

The history tree is stored breadth first: level ``d`` holds the histories of
``d`` bids, and the children of one history are contiguous in the next level,
in ladder order. Every array the solver needs is built once here:

- ``hands[p]``, ``weight[p]``: player p's possible hands (sorted dice, as the
  engine deals them) with their chance probabilities (multinomial, so the 21
  hands of two dice stand for the 36 ordered rolls);
- ``ladder``: every bid for the dice in play, lowest first (the engine's
  order, :func:`arena.engine.rules.bid_key`), and which of them may open
  (:func:`arena.engine.rules.legal_actions` at the start of the round);
- the payoff of a dudo on ladder bid ``t`` for every pair of hands and either
  caller, from the opener's point of view, given the values of the rounds that
  can follow (continuation values; the match is solved bottom-up in
  :mod:`arena.solve.match`).

Player 0 here is always the opener and player 1 the other player; seats are
mapped onto this at the edges (policy keys, the bot, ``arena exploit``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import factorial

import numpy as np

from arena.engine.rules import (
    DUDO,
    FACES,
    Bid,
    Rules,
    State,
    aces_count_as,
    apply,
    bid,
    bid_key,
    count_matching,
    deal,
    legal_actions,
    new_match,
)
from arena.errors import ArenaError

__all__ = ["SolveError", "RoundGame", "Level", "check_solvable", "hands_of", "round_game", "round_start"]

OPENER, OTHER = 0, 1


class SolveError(ArenaError):
    """A game the solver cannot solve (too large, or rules it does not model)."""


def check_solvable(rules: Rules, players: int = 2) -> None:
    """Refuse what the round model does not cover, saying why.

    The model is: two players, every round an ordinary round (no palifico
    round, no calza), dice only ever lost. With two players the presets'
    defaults already rule palifico and calza out (``calza_min_players`` and
    ``palifico_min_players`` are 3), which covers classic, neller, plain and
    lizumo; the wikipedia preset plays both with two players and is refused.
    """
    if players != 2:
        raise SolveError(f"players {players}: the solver plays two-player games only")
    if rules.calza and rules.calza_min_players <= 2:
        raise SolveError(
            "rules: calza is played with two players (calza true, calza_min_players "
            f"{rules.calza_min_players}); the solver models dudo only: set calza=false "
            "or calza_min_players=3"
        )
    if rules.palifico and rules.palifico_min_players <= 2:
        raise SolveError(
            "rules: palifico rounds are played with two players (palifico true, "
            f"palifico_min_players {rules.palifico_min_players}); the solver models ordinary "
            "rounds only: set palifico=false or palifico_min_players=3"
        )
    if rules.max_rounds < 2 * rules.dice - 1:
        raise SolveError(
            f"rules: max_rounds {rules.max_rounds} can stop a match of {rules.dice} dice each "
            f"before it is decided (it takes up to {2 * rules.dice - 1} rounds); the solver "
            "plays matches to the end"
        )


def hands_of(n: int) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Every hand of ``n`` dice (sorted) and its probability."""
    hands = list(itertools.combinations_with_replacement(FACES, n))
    weights = []
    for h in hands:
        ways = factorial(n)
        for f in FACES:
            ways //= factorial(h.count(f))
        weights.append(ways / 6**n)
    return hands, np.array(weights)


@dataclass
class Level:
    """The histories of one depth (a contiguous range of node ids)."""

    start: int
    stop: int
    actor: int  # who acts at these histories: OPENER (even depth) or OTHER
    top: np.ndarray  # ladder index of the standing bid, -1 at the root
    parent: np.ndarray  # node id of each history's parent (-1 at the root)
    n_children: np.ndarray  # raises available (0 at the top of the ladder)
    child_start: np.ndarray  # id of the first child (meaningful where n_children > 0)

    @property
    def size(self) -> int:
        return self.stop - self.start


@dataclass
class RoundGame:
    """One round: opener holds ``counts[0]`` dice, the other player ``counts[1]``."""

    rules: Rules
    counts: tuple[int, int]
    hands: tuple[list[tuple[int, ...]], list[tuple[int, ...]]]
    weight: tuple[np.ndarray, np.ndarray]
    ladder: tuple[Bid, ...]
    openers: np.ndarray  # ladder indices allowed as the opening bid
    levels: list[Level]
    n_nodes: int
    # true[t][a, b]: ladder bid t is true for opener hand a, other hand b (count >= quantity)
    true: np.ndarray
    # loss[t][a, b]: dice the dudo loser gives up (1, or the difference under penalty: difference)
    loss: np.ndarray
    node_top: np.ndarray = field(repr=False)
    node_depth: np.ndarray = field(repr=False)
    node_parent: np.ndarray = field(repr=False)

    @property
    def n_bids(self) -> int:
        return len(self.ladder)

    def history(self, node: int) -> tuple[Bid, ...]:
        """The bids of history ``node``, oldest first."""
        out = []
        while node > 0:
            out.append(self.ladder[int(self.node_top[node])])
            node = int(self.node_parent[node])
        return tuple(reversed(out))

    def node_of(self, bids: Sequence[Bid]) -> int | None:
        """The node id of a history, or None if it is not one of this round's."""
        node, top = 0, -1
        for b in bids:
            try:
                t = self.ladder.index(b)
            except ValueError:
                return None
            depth = int(self.node_depth[node])
            lv = self.levels[depth]
            i = node - lv.start
            if lv.n_children[i] == 0 or t <= top:
                return None
            lo = int(lv.child_start[i])
            tops = self.node_top[lo : lo + int(lv.n_children[i])]
            hit = np.nonzero(tops == t)[0]
            if not len(hit):
                return None
            node, top = lo + int(hit[0]), t
        return node

    def payoff(self, cont: Callable[[int, int, int], float]) -> tuple[np.ndarray, np.ndarray]:
        """Opener's payoff of a dudo on each ladder bid, per hand pair, for each caller.

        ``cont(loser, lost, _)`` is the opener's value once ``loser`` (OPENER or
        OTHER) gives up ``lost`` dice: +-1 when that ends the match, else the
        value of the next round (:mod:`arena.solve.match`). Returns
        ``(by_opener, by_other)``: arrays ``[t, a, b]`` for a dudo called by the
        opener (so the other player made bid t) and by the other player.
        """
        n_t = self.n_bids
        losses = sorted(set(int(x) for x in np.unique(self.loss)))
        table = {(who, k): cont(who, k, 0) for who in (OPENER, OTHER) for k in losses}
        by_opener = np.empty_like(self.true, dtype=float)
        by_other = np.empty_like(self.true, dtype=float)
        for k in losses:
            sel = self.loss == k
            # A true bid: the caller loses; a false one: the bidder loses.
            by_opener[sel & self.true] = table[(OPENER, k)]
            by_opener[sel & ~self.true] = table[(OTHER, k)]
            by_other[sel & self.true] = table[(OTHER, k)]
            by_other[sel & ~self.true] = table[(OPENER, k)]
        assert by_opener.shape == (n_t, len(self.hands[0]), len(self.hands[1]))
        return by_opener, by_other


def round_start(rules: Rules, counts: tuple[int, int], opener: int = 0) -> State:
    """An engine state about to deal the round where seat ``opener`` opens holding
    ``counts[0]`` dice and the other seat holds ``counts[1]``, reached the way a
    match reaches it: by earlier rounds in which the right seats lost their dice.

    Only states a match can reach exist: the loser of a round opens the next,
    so an opener who still holds every die opens only the first round.
    """
    d = rules.dice
    c_o, c_n = counts
    if not (1 <= c_o <= d and 1 <= c_n <= d):
        raise SolveError(f"counts {counts}: each player holds 1 to {d} dice (rules dice {d})")
    if c_o == d and c_n < d:
        raise SolveError(
            f"counts {counts}: the opener of a round is the loser of the one before, so an "
            f"opener holding all {d} dice opens only the first round"
        )
    seat_o, seat_n = opener, 1 - opener
    losers = [seat_n] * (d - c_n) + [seat_o] * (d - c_o)  # the opener loses last: then it opens
    state = new_match(rules, 2, opener=losers[0] if losers else opener)
    for loser in losers:
        cur = state.opener
        total = sum(state.counts)
        hands = tuple((2,) * c for c in state.counts)  # all 2s: no aces, nothing wild
        state = deal(state, hands)
        # The opener loses with a bid one short (1x3, no 3s: off by one die); the
        # other loses by doubting an exact bid (every die a 2): one die either way.
        state = apply(state, bid(1, 3) if loser == cur else bid(total, 2))
        state = apply(state, DUDO)
    if state.counts[seat_o] != c_o or state.counts[seat_n] != c_n or state.opener != seat_o:
        raise SolveError(f"counts {counts}: could not reach that round (got {state.counts}, opener {state.opener})")
    return state


# Above this many histories the tree does not fit (2^bids grows fast: 4 dice
# in play make 24 bids, 16.7 million histories per deal).
MAX_NODES = 1 << 19


def round_game(rules: Rules, counts: tuple[int, int], tree: bool = True) -> RoundGame:
    """Build the round where the opener holds ``counts[0]`` dice and the other ``counts[1]``.

    With ``tree=False`` the history tree is left out (``levels`` empty): the
    hands, ladder, openers and call outcomes only, which is what the abstract
    solver and the bitmask best response (:mod:`arena.solve.abstract`) need
    for rounds whose tree does not fit."""
    check_solvable(rules)
    c0, c1 = counts
    if c0 < 1 or c1 < 1:
        raise SolveError(f"counts {counts}: both players need dice")
    total = c0 + c1
    n_bids = 6 * total
    if tree and 1 << n_bids > MAX_NODES:
        raise SolveError(
            f"a round with {total} dice in play has {n_bids} bids and 2^{n_bids} histories; "
            f"the solver walks at most {MAX_NODES} (3 dice in play)"
        )
    ladder = tuple(
        sorted((bid(q, f) for q in range(1, total + 1) for f in FACES), key=lambda b: bid_key(b, rules.ones))
    )
    index = {b: i for i, b in enumerate(ladder)}
    h0, w0 = hands_of(c0)
    h1, w1 = hands_of(c1)
    # The engine says which bids may open (open_on_ones) and checks the ladder:
    # after the lowest opener, the raises must be the rest of the ladder, in order.
    root = deal(round_start(rules, (c0, c1)), (h0[0], h1[0]))
    openers = [index[a] for a in legal_actions(root) if isinstance(a, Bid)]
    if not openers:
        raise SolveError("no opening bid is legal under these rules")

    true, loss = _outcomes(rules, ladder, h0, h1)
    if not tree:
        none = np.zeros(0, dtype=np.int64)
        return RoundGame(
            rules, (c0, c1), (h0, h1), (w0, w1), ladder, np.array(openers), [], 0, true, loss, none, none, none
        )
    # Breadth-first tree of histories.
    tops = [np.array([-1])]
    parents = [np.array([-1])]
    levels: list[Level] = []
    start = 0
    depth = 0
    while True:
        top = tops[depth]
        n = len(top)
        if depth == 0:
            n_children = np.array([len(openers)])
        else:
            n_children = (n_bids - 1 - top).astype(np.int64)
        offsets = np.concatenate(([0], np.cumsum(n_children)))
        child_start = start + n + offsets[:-1]
        levels.append(Level(start, start + n, depth % 2, top, parents[depth], n_children, child_start))
        total_children = int(offsets[-1])
        if total_children == 0:
            break
        par = np.repeat(np.arange(start, start + n), n_children)
        if depth == 0:
            child_top = np.array(openers)
        else:
            # Children of a history with top t are t+1 .. n_bids-1, in order.
            first = np.repeat(top + 1, n_children)
            rank = np.arange(total_children) - np.repeat(offsets[:-1], n_children)
            child_top = first + rank
        tops.append(child_top)
        parents.append(par)
        start += n
        depth += 1
    node_top = np.concatenate(tops)
    node_parent = np.concatenate(parents)
    node_depth = np.concatenate([np.full(len(t), d) for d, t in enumerate(tops)])

    return RoundGame(
        rules,
        (c0, c1),
        (h0, h1),
        (w0, w1),
        ladder,
        np.array(openers),
        levels,
        len(node_top),
        true,
        loss,
        node_top,
        node_depth,
        node_parent,
    )


def _outcomes(
    rules: Rules, ladder: tuple[Bid, ...], h0: list[tuple[int, ...]], h1: list[tuple[int, ...]]
) -> tuple[np.ndarray, np.ndarray]:
    """Every call's outcome, per hand pair: the count of the bid's face (aces
    wild as the engine counts them) against its quantity, and the dice lost."""
    n_bids = len(ladder)
    true = np.zeros((n_bids, len(h0), len(h1)), dtype=bool)
    loss = np.ones((n_bids, len(h0), len(h1)), dtype=np.int64)
    for t, b in enumerate(ladder):
        wild = aces_count_as(rules, False, b.face)  # a solved round is never palifico
        for i, a in enumerate(h0):
            for j, c in enumerate(h1):
                count = count_matching((a, c), b.face, wild)
                true[t, i, j] = count >= b.quantity
                if rules.penalty == "difference":
                    loss[t, i, j] = max(1, abs(b.quantity - count))
    return true, loss
