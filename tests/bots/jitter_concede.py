"""tests/bots/jitter.py made weaker by a known amount: in a share ``CONCEDE``
of its matches (drawn from ``self.rng`` at its first turn, so independent of
the dice) it raises at that turn and forfeits the match. Against jitter its
expected win share is exactly ``(1 - CONCEDE) / 2``; CONCEDE is chosen so
that jitter's share, ``(1 + CONCEDE) / 2``, is 20 logistic Elo:
``2 / (1 + 10 ** (-20 / 400)) - 1``.
"""

import importlib.util
from pathlib import Path

from arena.sdk import Action, Turn

CONCEDE = 2 / (1 + 10 ** (-20 / 400)) - 1

_spec = importlib.util.spec_from_file_location("_jitter_for_concede", Path(__file__).resolve().parent / "jitter.py")
assert _spec is not None and _spec.loader is not None
_jitter = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_jitter)


class JitterConcede(_jitter.Jitter):
    def start(self, match: object) -> None:
        self.decided = False

    def act(self, turn: Turn) -> Action:
        if not self.decided:
            self.decided = True
            if self.rng.random() < CONCEDE:
                raise RuntimeError("jitter_concede: forfeiting this match (a known handicap)")
        return super().act(turn)
