"""Random: every legal action equally likely.

The floor of any league: it bids, doubts, calls calza and (out, under dead
man's calza) passes uniformly at random over ``turn.legal``, so it is legal
under every rule set and loses to anything that looks at its dice. Decisions draw on ``self.rng`` only (seeded from the
match's ``seed``), so the same match is played the same way every time.

It picks an index into the legal actions without building the list (up to
600 bids when ten players hold ten dice each), so a decision stays cheap.
"""

from __future__ import annotations

from arena.sdk import CALZA, DUDO, PASS, Action, Bot, Turn, bid

# Plays the protocol 2 variants too: a dead man's turn is calza or pass, at random.
SUPPORTS = {"rules": {"dead_mans_calza": [True, False], "veteran_palifico": [True, False]}}


class RandomBot(Bot):
    def act(self, turn: Turn) -> Action:
        legal = turn.legal
        top = legal.max_quantity
        faces = sorted(legal.min_quantity.items())
        total = sum(top - low + 1 for _, low in faces) + legal.dudo + legal.calza + legal.may_pass
        k = self.rng.randrange(total)
        for face, low in faces:
            width = top - low + 1
            if k < width:
                return bid(low + k, face)
            k -= width
        if legal.dudo:
            if k == 0:
                return DUDO
            k -= 1
        if legal.calza and k == 0:
            return CALZA
        return PASS
