"""A bot made weaker by a known amount: the probabilistic bot's policy, but in
a share ``CONCEDE`` of its matches (drawn from ``self.rng`` at its first turn,
so independent of the dice) it raises at that turn and forfeits the match.

Against the probabilistic bot itself its expected win share is therefore
exactly ``(1 - CONCEDE) / 2``: half of the matches it plays out, none of the
ones it concedes. tests/test_luck.py checks the luck-reduced estimate centres
there.
"""

import importlib.util
from pathlib import Path

from arena.sdk import Bot

CONCEDE = 0.4

_spec = importlib.util.spec_from_file_location(
    "_probabilistic_for_concede", Path(__file__).resolve().parents[2] / "bots" / "probabilistic.py"
)
assert _spec is not None and _spec.loader is not None
_prob = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_prob)


class Concede(Bot):
    def start(self, match):
        self.decided = False

    def act(self, turn):
        if not self.decided:
            self.decided = True
            if self.rng.random() < CONCEDE:
                raise RuntimeError("concede: forfeiting this match (a known handicap)")
        return _prob.Probabilistic.act(self, turn)
