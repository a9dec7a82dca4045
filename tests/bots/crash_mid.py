"""Plays two turns, then raises on the third (a crash mid-match)."""

from arena.sdk import Bot


class CrashMid(Bot):
    def start(self, match):
        self.turns = 0

    def act(self, turn):
        self.turns += 1
        if self.turns == 3:
            raise RuntimeError("crash_mid: deliberate failure on turn 3")
        return next(turn.legal.bids())
