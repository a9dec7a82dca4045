"""The league benchmark's bot: the bare referee's heuristic (benchmarks/bare_referee.py,
``decide``) written against the SDK, so both sides do comparable work per decision.

It bids its best face (aces count as any face) at about what it expects on the
table, and doubts a standing bid that exceeds its expectation by a random margin.
"""

from arena.sdk import DUDO, Bot, bid


class Heuristic(Bot):
    def act(self, turn):
        dice = turn.dice
        aces = dice.count(1)
        others = (turn.total - len(dice)) / 3.0
        best = max(range(2, 7), key=lambda f: dice.count(f) + aces)
        low = turn.legal.min_quantity
        standing = turn.standing
        if standing is None:
            want = max(low.get(best, 1), int(dice.count(best) + aces + others) - 2)
            if best in low:
                return bid(want, best)
            face = min(low)
            return bid(low[face], face)
        expect = dice.count(standing.face) + aces + others
        if turn.legal.dudo and standing.quantity > expect + self.rng.random() * 1.2 - 0.3:
            return DUDO
        if best in low:
            return bid(low[best], best)
        return DUDO
