"""Random: every legal action equally likely.

The floor of any league: it bids, doubts and calls calza uniformly at random
over ``turn.legal``, so it is legal under every rule set and loses to anything
that looks at its dice. Decisions draw on ``self.rng`` only (seeded from the
match's ``seed``), so the same match is played the same way every time.

It picks an index into the legal actions without building the list (up to
600 bids when ten players hold ten dice each), so a decision stays cheap.
"""

from __future__ import annotations

from arena.sdk import CALZA, DUDO, Action, Bot, Turn, bid


class RandomBot(Bot):
    def act(self, turn: Turn) -> Action:
        legal = turn.legal
        top = legal.max_quantity
        faces = sorted(legal.min_quantity.items())
        total = sum(top - low + 1 for _, low in faces) + legal.dudo + legal.calza
        k = self.rng.randrange(total)
        for face, low in faces:
            width = top - low + 1
            if k < width:
                return bid(low + k, face)
            k -= width
        if legal.dudo and k == 0:
            return DUDO
        return CALZA
