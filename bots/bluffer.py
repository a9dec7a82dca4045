"""Bluffer: bids on faces it does not hold, overbids, and rarely doubts.

- Opening and raising: it picks the face it holds fewest of (counting its wild
  aces), ties broken at random, and bids one or two above the smallest legal
  quantity of that face (``self.rng`` decides); an opening bid is at least
  the expected count of that face. Capped at the dice in play.
  The table hears confident bids on faces that are not there.
- Calls: dudo only when the standing bid is nearly impossible given its own
  dice (true with probability below ``DOUBT_BELOW``), or when no raise is left.
  It never calls calza.

Bluffs cost dice against players who count: it is a weak, loose player that
gives a league a distinct style. Every choice draws on ``self.rng`` only, so
a match seed replays it exactly.
"""

from __future__ import annotations

from arena.sdk import DUDO, Action, Bot, Turn, bid, dead_mans_call

# Plays the protocol 2 variants too (a dead man's turn: arena.sdk.dead_mans_call).
SUPPORTS = {"rules": {"dead_mans_calza": [True, False], "veteran_palifico": [True, False]}}

DOUBT_BELOW = 0.1


class Bluffer(Bot):
    def act(self, turn: Turn) -> Action:
        if turn.dead:  # out, asked for a dead man\'s calza
            return dead_mans_call(turn)
        legal = turn.legal
        standing = turn.standing
        if standing is not None:
            if not legal.min_quantity or turn.probability(standing) < DOUBT_BELOW:
                return DUDO
        fewest = min(turn.mine(f) for f in legal.min_quantity)
        faces = sorted(f for f in legal.min_quantity if turn.mine(f) == fewest)
        face = self.rng.choice(faces)
        q = legal.min_quantity[face] + self.rng.randint(1, 2)
        if standing is None:  # open above the average count: a confident bid on a face it lacks
            q = max(q, round(turn.expected(face)) + self.rng.randint(0, 1))
        q = min(q, legal.max_quantity)
        return bid(q, face)
