"""Answers every turn with ``pass``, the dead man's word, while it is still
in: the referee must refuse it as illegal (a player in bids or calls), with
the reason, and void the round as for any illegal action."""

from arena.sdk import PASS, Bot, Turn

SUPPORTS = {"rules": {"dead_mans_calza": [True, False]}}


class Passer(Bot):
    def act(self, turn: Turn):
        return PASS
