"""Trained: plays the strategies ``arena train`` wrote, for two players, where they apply.

Where it plays a trained strategy: a round with exactly two players still in,
under rules a file of its data folder ``bots/trained/`` was trained for, for a
round whose dice counts that file covers (a file trained for N dice each
covers every round of such a match: 3-3, 2-3, 1-3, 2-2, 1-2, 1-1 for three).
There it looks up its information set (its hand and the round's bids, or in a
round trained with imperfect recall its hand, the last few bids and the parity
of the forgotten ones: the key of ``arena/solve/policy.py``) and draws its
action from the trained probabilities with ``self.rng``: the mixing is what
keeps it hard to exploit, and the match seed makes it reproducible. Of two
files covering a round it plays the less exploitable (the figure each file
holds; docs/bots.md says which are exact and which lower bounds).

Everywhere else (more players, other rules or dice counts, calza or palifico
in play) it plays the same odds heuristic as ``equilibrium``
(:mod:`arena.sdk.heuristic`).

The files are packed policies (``.npz``) read by
:class:`arena.sdk.policy.SolvedPolicies`: lazily, once per process, only those
of the rules being played, on the first turn a file may cover, inside that
turn's CPU budget (docs/bots.md gives the measured read times). It is
sandboxed like every bot: it sees its own file and its data folder only,
read-only, and opens nothing else.
"""

from __future__ import annotations

import os

from arena.sdk import Action, Bot, Turn, dead_mans_call
from arena.sdk.heuristic import credited_odds
from arena.sdk.policy import SolvedPolicies

# Plays the protocol 2 variants too (a dead man's turn: arena.sdk.dead_mans_call).
SUPPORTS = {"rules": {"dead_mans_calza": [True, False], "veteran_palifico": [True, False]}}

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trained")

POLICIES = SolvedPolicies(DATA)  # read once per process, when a covered state first comes up


class Trained(Bot):
    def act(self, turn: Turn) -> Action:
        if turn.dead:  # out, asked for a dead man's calza
            return dead_mans_call(turn)
        action = POLICIES.action(turn, self.rng)
        return action if action is not None else credited_odds(turn)
