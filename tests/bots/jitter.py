"""The probabilistic bot with a random streak: its doubt threshold and opening
confidence are drawn afresh at every turn from ``self.rng`` (uniform within
0.1 of probabilistic's 0.5 and 0.6), so two copies on the same deal play
differently, as two honest, dice-driven bots with their own random choices
do. benchmarks/luck.py tests the luck-reduced SPRT on it: against a copy of
itself the truth is exactly 0 Elo (tests/bots/jitter_concede.py is the
same bot made weaker by a known amount).
"""

import importlib.util
from pathlib import Path

from arena.sdk import DUDO, Action, Bot, Turn, dead_mans_call

_spec = importlib.util.spec_from_file_location(
    "_probabilistic_for_jitter", Path(__file__).resolve().parents[2] / "bots" / "probabilistic.py"
)
assert _spec is not None and _spec.loader is not None
_prob = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_prob)

SPREAD = 0.1


class Jitter(Bot):
    def act(self, turn: Turn) -> Action:
        if turn.dead:
            return dead_mans_call(turn)
        standing = turn.standing
        if standing is None:
            return _prob.opening(turn, _prob.OPEN_CONFIDENCE + self.rng.uniform(-SPREAD, SPREAD))
        if not turn.legal.min_quantity:
            return DUDO
        raise_to, p_raise = turn.best_raise()
        if raise_to is None:
            return DUDO
        p_standing = turn.probability(standing)
        doubt = _prob.DOUBT_BELOW + self.rng.uniform(-SPREAD, SPREAD)
        if p_standing < doubt and p_standing < p_raise:
            return DUDO
        return raise_to
