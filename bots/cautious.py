"""Cautious: raises only what is very likely true, and doubts readily.

It uses the same binomial odds as the probabilistic bot (``turn.probability``)
with stricter thresholds:

- Opening: the face it holds most of, at the largest quantity true with
  probability >= ``OPEN_CONFIDENCE`` (high: it opens low).
- Later: its best raise is the smallest legal quantity of the face with the
  best odds. It raises only when that raise is true with probability >=
  ``RAISE_IF``; it calls dudo whenever the standing bid is true with
  probability below ``DOUBT_BELOW``, and also whenever no raise is safe
  enough and the standing bid is less likely than the raise. It never calls
  calza.

A tight player: it rarely loses a die for a bluff, but it calls dudo on bids
that are merely unlikely, and the bid it had to make can be the one doubted.
Deterministic: no randomness.
"""

from __future__ import annotations

from arena.sdk import DUDO, Action, Bot, Turn, bid, dead_mans_call

# Plays the protocol 2 variants too (a dead man's turn: arena.sdk.dead_mans_call).
SUPPORTS = {"rules": {"dead_mans_calza": [True, False], "veteran_palifico": [True, False]}}

OPEN_CONFIDENCE = 0.8
RAISE_IF = 0.75
DOUBT_BELOW = 0.6


class Cautious(Bot):
    def act(self, turn: Turn) -> Action:
        if turn.dead:  # out, asked for a dead man\'s calza
            return dead_mans_call(turn)
        legal = turn.legal
        standing = turn.standing
        if standing is None:
            face = max(legal.min_quantity, key=lambda f: (turn.expected(f), f))
            q = legal.min_quantity[face]
            while q < legal.max_quantity and turn.probability(bid(q + 1, face)) >= OPEN_CONFIDENCE:
                q += 1
            return bid(q, face)
        raise_to, p_raise = turn.best_raise()
        if raise_to is None:
            return DUDO
        p_standing = turn.probability(standing)
        if p_standing < DOUBT_BELOW:
            return DUDO
        if p_raise >= RAISE_IF or p_raise > p_standing:
            return raise_to
        return DUDO
