"""Probabilistic: bids and calls from the binomial odds, nothing else.

Each unseen die counts for a face with probability 1/3 when aces are wild
(1/6 for aces, in palifico rounds, or with ``wild_ones`` off), so the chance
that a bid is true is a binomial tail given one's own dice (``turn.probability``,
the figures of Lizumo's assisted mode).

- Opening: the face it holds most of, at the largest quantity that is still
  true with probability >= ``OPEN_CONFIDENCE``.
- Later: the most likely true raise is the smallest legal quantity of the
  face with the best odds. It calls dudo when the standing bid is true with
  probability below ``DOUBT_BELOW`` and less likely than its best raise;
  otherwise it raises. It never calls calza.

Ties between faces go to the higher face (the higher bid), so no randomness
is needed: the bot is a pure function of what it sees.
"""

from __future__ import annotations

from arena.sdk import DUDO, Action, Bid, Bot, Turn, bid, dead_mans_call

# Plays the protocol 2 variants too (a dead man's turn: arena.sdk.dead_mans_call).
SUPPORTS = {"rules": {"dead_mans_calza": [True, False], "veteran_palifico": [True, False]}}

OPEN_CONFIDENCE = 0.6
DOUBT_BELOW = 0.5


def opening(turn: Turn, confidence: float) -> Bid:
    """The face with the most expected dice, at the largest quantity true with ``confidence``."""
    legal = turn.legal
    face = max(legal.min_quantity, key=lambda f: (turn.expected(f), f))
    q = legal.min_quantity[face]
    while q < legal.max_quantity and turn.probability(bid(q + 1, face)) >= confidence:
        q += 1
    return bid(q, face)


class Probabilistic(Bot):
    def act(self, turn: Turn) -> Action:
        if turn.dead:  # out, asked for a dead man\'s calza
            return dead_mans_call(turn)
        standing = turn.standing
        if standing is None:
            return opening(turn, OPEN_CONFIDENCE)
        if not turn.legal.min_quantity:
            return DUDO
        raise_to, p_raise = turn.best_raise()
        if raise_to is None:
            return DUDO
        p_standing = turn.probability(standing)
        if p_standing < DOUBT_BELOW and p_standing < p_raise:
            return DUDO
        return raise_to
