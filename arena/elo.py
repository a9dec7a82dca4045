"""The Elo scale and the 95% interval, in one place.

Every rating the project prints is on the logistic Elo scale: a player
``d`` Elo stronger is expected to score ``1 / (1 + 10^(-d/400))`` against
the other. The sequential test (running/sprt.py), the Plackett-Luce fit
(analysis/ratings.py, whose log-strengths are nats) and the K-factor Elo of
the standings all convert through here, so a second rating model has one
seam to meet. Pure arithmetic: imports nothing of ``arena``.
"""

from __future__ import annotations

import math

ELO_SCALE = 400.0
"""Elo points per factor of 10 in the odds of winning."""

ELO_PER_NAT = ELO_SCALE / math.log(10.0)
"""Elo points per unit of natural log-strength: Elo uses 400 * log10(strength)."""

Z95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval (``NormalDist().inv_cdf(0.975)``)."""


def score_of_elo(elo: float) -> float:
    """The expected score of a player ``elo`` logistic Elo stronger."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / ELO_SCALE))


def elo_of_score(score: float) -> float:
    """The Elo difference that expects ``score`` (clamped off 0 and 1, where it is infinite)."""
    score = min(max(score, 1e-9), 1 - 1e-9)
    return float(-ELO_SCALE * math.log10(1.0 / score - 1.0))
