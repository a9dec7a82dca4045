"""Equilibrium: plays a solved CFR+ strategy where one exists, a sound heuristic elsewhere.

Where it plays the equilibrium: a round with exactly two players still in,
under rules whose two-player rounds have been solved (`arena solve`, policies
shipped in this bot's data folder ``bots/equilibrium/``: the 1-die games as
``.json.gz``, the 2-dice games packed as ``.npz``; docs/solver.md has both
forms), for a round whose dice counts the file
covers (every round of a 1-die-each and of a 2-dice-each game under the
three shipped rule sets). There it looks up its information set (its hand
and the round's bids; in a round solved with imperfect recall, its hand, the
last few bids and whether an odd or even number of earlier bids was
forgotten: the key documented in ``arena/solve/policy.py``) and draws the action from the solved
probabilities with ``self.rng``: the mixing is the point of an equilibrium
(a pure strategy would be exploitable), and the seed makes it reproducible.

Everywhere else (more players, more dice, calza or palifico in play, other
rules) it plays a heuristic on the binomial odds that reads the other
players' bids: each bidder is taken to hold one die of each face it bid,
with probability ``CREDIT``; it weighs dudo, calza (where legal) and its best
raise by the expected change in its own dice, as ``calza`` does.

The policy files are read by :class:`arena.sdk.policy.SolvedPolicies`: once
per process, lazily (only when a solved state comes up, and only the files
solving the rules being played: the rules are read from the head of each file
first). Reading the largest packed file takes about 0.05 s of CPU and a
lookup about 10 microseconds, well inside the turn's budget.
It plays any table, the protocol 2 variants too (``SUPPORTS``; a dead man's turn: ``arena.sdk.dead_mans_call``).
"""

from __future__ import annotations

import os

from arena.sdk import CALZA, DUDO, Action, Bid, Bot, Turn, bid, dead_mans_call, face_probability, p_at_least, p_exactly
from arena.sdk.policy import SolvedPolicies

# Plays the protocol 2 variants too (a dead man's turn: arena.sdk.dead_mans_call).
SUPPORTS = {"rules": {"dead_mans_calza": [True, False], "veteran_palifico": [True, False]}}

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "equilibrium")

OTHER_LOSS = 0.35  # value of another player losing a die, in our own dice
CREDIT = 0.9  # chance that a bidder's die shows the face it bid
CALLED = 0.5  # rough chance that a raise gets doubted
OPEN_CONFIDENCE = 0.6

POLICIES = SolvedPolicies(DATA)  # read once per process, when a solved state first comes up


class Equilibrium(Bot):
    def act(self, turn: Turn) -> Action:
        if turn.dead:  # out, asked for a dead man\'s calza
            return dead_mans_call(turn)
        action = POLICIES.action(turn, self.rng)
        return action if action is not None else self._heuristic(turn)

    # -- elsewhere: odds plus the other players' bids ------------------------------

    def _split(self, turn: Turn, face: int) -> tuple[int, int, float]:
        credited = len({s for s, b in turn.history if b.face == face and s != turn.seat and turn.counts[s]})
        return turn.mine(face), min(credited, turn.unseen), face_probability(face, turn.wild)

    def _p(self, turn: Turn, b: Bid, exact: bool = False) -> float:
        mine, credited, p = self._split(turn, b.face)
        plain = turn.unseen - credited
        tail = p_exactly if exact else p_at_least
        return sum(p_exactly(j, credited, CREDIT) * tail(b.quantity - mine - j, plain, p) for j in range(credited + 1))

    def _heuristic(self, turn: Turn) -> Action:
        legal = turn.legal
        standing = turn.standing
        if standing is None:
            if turn.palifico and len(turn.dice) == 1 and turn.dice[0] in legal.min_quantity:
                face = turn.dice[0]
            else:
                face = max(legal.min_quantity, key=lambda f: (turn.expected(f), f))
            q = legal.min_quantity[face]
            while q < legal.max_quantity and turn.probability(bid(q + 1, face)) >= OPEN_CONFIDENCE:
                q += 1
            return bid(q, face)
        p_true = self._p(turn, standing)
        options: list[tuple[float, Action]] = [(-p_true + (1 - p_true) * OTHER_LOSS, DUDO)]
        if legal.calza:
            p_ex = self._p(turn, standing, exact=True)
            regain = turn.rules.calza_reward == "regain" and len(turn.dice) < turn.rules.dice
            options.append((p_ex * (1.0 if regain else OTHER_LOSS) - (1 - p_ex), CALZA))
        raise_to, p_raise = turn.best_raise(lambda b: self._p(turn, b))
        if raise_to is not None:
            called = CALLED * (1.5 if turn.palifico else 1.0)
            options.append((-(1 - p_raise) * called, raise_to))
        return max(options, key=lambda o: o[0])[1]
