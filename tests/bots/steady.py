"""A well-behaved test bot: opens with the lowest legal bid, otherwise doubts.

Its replies carry extra fields the protocol says to ignore: which CPUs it may
run on (the pinning test) and how many turns it has seen this match.
"""

from arena.sdk import Bot, Turn

__version__ = "2.5"


class Steady(Bot):
    def start(self, match):
        self.turns = 0

    def act(self, turn: Turn):
        import os

        self.turns += 1
        if turn.legal.dudo:
            return {"action": "dudo", "cpus": sorted(os.sched_getaffinity(0)), "turns": self.turns}
        first = next(turn.legal.bids())  # no dudo: an opening, where some bid is always legal
        return {
            "action": "bid",
            "quantity": first.quantity,
            "face": first.face,
            "cpus": sorted(os.sched_getaffinity(0)),
            "turns": self.turns,
        }
