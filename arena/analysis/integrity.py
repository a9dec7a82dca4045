"""The paired-play integrity check of a loaded run (docs/ratings.md, Integrity).

The statistic is :mod:`arena.running.integrity`'s (the SPRT and the live
standings use it too); this module makes its plays from a run's seat table:
the deal of a match is its dice seed (the record's ``seed``, shared by every
play of one deal), its order among the deal's plays the match's schedule
order, each seat's result its place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from arena.analysis.results import Results
from arena.running.integrity import ALPHA, IntegrityReport, Play, check_plays

__all__ = ["integrity_of", "paired_run"]


def paired_run(meta: Mapping[str, Any]) -> bool:
    """Whether run.json describes a run that plays deals more than once:
    rotated seats, several variants of each table, or an SPRT's pairs."""
    schedule = meta.get("schedule") or {}
    return (
        isinstance(schedule, Mapping)
        and schedule.get("seating") == "rotate"
        or len(meta.get("variants") or {}) > 1
        or bool(meta.get("sprt"))
        or (meta.get("config") or {}).get("format") == "sprt"
    )


def integrity_of(res: Results, seeds: Mapping[str, int] | None = None, alpha: float = ALPHA) -> IntegrityReport | None:
    """The check over ``res``'s matches, or None when the deals are unknown
    (a seat table loaded without the match seeds, and no ``seeds`` given)."""
    matches = res.matches
    if seeds is None:
        if matches.empty or matches["seed"].isna().any():
            return None
        seeds = dict(zip(matches["match"].tolist(), matches["seed"].tolist()))
    if len(set(seeds.values())) == len(seeds):  # no deal played twice: nothing to compare (cheap for any run)
        return check_plays([], alpha)
    seats = res.seats
    order = {m: i for i, m in enumerate(sorted(matches["match"].tolist()))}  # schedule order: by match id
    plays = []
    for m, seat, bot, place, players, variant in zip(
        *(seats[c].tolist() for c in ("match", "seat", "bot", "place", "players", "variant"))
    ):
        deal = seeds.get(m)
        if deal is None or pd.isna(place):
            continue
        plays.append(Play(int(deal), order.get(m, 0), str(bot), int(seat), int(players), str(variant), int(place)))
    return check_plays(plays, alpha)
