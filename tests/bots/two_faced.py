"""Answers questions differently from how it plays, and crashes on some.

A measurement that models a bot by asking it questions (``arena exploit``'s
local best response asks a second process, with a fresh ``match_start`` per
question) sees the bot's first turn of a match every time. This bot plays its
first turn of a match one way (dudo whenever it may, else the lowest bid) and
every later turn another (the lowest legal bid, never a call), so its real
moves have probability 0 under every hand the questions describe. A first
turn in round 3 or later can only be a question (in a real two-player match a
bot acts in every round): there it crashes, so the questioner's process dies
and must be restarted.
"""

from arena.sdk import DUDO, Bot


class TwoFaced(Bot):
    def start(self, match):
        self.turns = 0

    def act(self, turn):
        self.turns += 1
        if self.turns == 1:
            if turn.round >= 3:
                raise RuntimeError("two_faced: a question, not a match")
            if turn.legal.dudo:
                return DUDO
        return next(turn.legal.bids(), DUDO)
