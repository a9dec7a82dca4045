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
raise by the expected change in its own dice, as ``calza`` does
(:mod:`arena.sdk.heuristic`, shared with ``bots/trained.py``).

The policy files are read by :class:`arena.sdk.policy.SolvedPolicies`: once
per process, lazily (only when a solved state comes up, and only the files
solving the rules being played: the rules are read from the head of each file
first). Reading the largest packed file takes about 0.05 s of CPU and a
lookup about 10 microseconds, well inside the turn's budget.
It plays any table, the protocol 2 variants too (``SUPPORTS``; a dead man's turn: ``arena.sdk.dead_mans_call``).
"""

from __future__ import annotations

import os

from arena.sdk import Action, Bot, Turn, dead_mans_call
from arena.sdk.heuristic import credited_odds
from arena.sdk.policy import SolvedPolicies

# Plays the protocol 2 variants too (a dead man's turn: arena.sdk.dead_mans_call).
SUPPORTS = {"rules": {"dead_mans_calza": [True, False], "veteran_palifico": [True, False]}}

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "equilibrium")

POLICIES = SolvedPolicies(DATA)  # read once per process, when a solved state first comes up


class Equilibrium(Bot):
    def act(self, turn: Turn) -> Action:
        if turn.dead:  # out, asked for a dead man\'s calza
            return dead_mans_call(turn)
        action = POLICIES.action(turn, self.rng)
        return action if action is not None else credited_odds(turn)
