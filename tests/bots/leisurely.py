"""Takes its time at the start of each match (0.2 s asleep: no CPU, far
inside the wall-clock cap of its first turn), then doubts whenever it may.

For the Ctrl-C tests: a run with it at every table lasts long enough for the
Ctrl-C to land mid-run whatever the machine's speed (30 matches of built-in
bots take half a second here: the rest of them could finish between the
third record and the signal)."""

import time

from arena.sdk import Bot


class Leisurely(Bot):
    def start(self, match):
        time.sleep(0.2)

    def act(self, turn):
        return "dudo" if turn.legal.dudo else next(turn.legal.bids())
