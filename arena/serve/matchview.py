"""One recorded match as the browser's match viewer draws it (docs/serve.md).

A finished match's record is public (every hand, every bid, every fault), so
the viewer shows it whole: :func:`view_data` is the report's step-through
data (:func:`arena.analysis.viewer.match_data`: rounds, hands, actions,
outcomes) and, for every decision, the odds the player who made it faced,
from its own dice alone: the chance the standing bid was true (so 1 minus
it, the chance a dudo won), the chance it was exact (a calza's), the chance
of the bid the player made, and per face the largest quantity still at
least even odds, computed by :mod:`arena.engine.odds` as ``arena play
--assist`` computes them.

The steps are the report viewer's: per round its deal, then each action,
then the reveal; a link ``/match/ID#step=N`` opens step N (1 the first)
in either viewer.
"""

from __future__ import annotations

from typing import Any

from arena.analysis.viewer import match_data
from arena.engine.odds import probability, probability_exact
from arena.engine.records import MatchRecord
from arena.engine.rules import Bid, aces_wild

__all__ = ["decision_odds", "view_data"]

HALF = 0.5


def decision_odds(rec: MatchRecord) -> list[list[dict[str, Any]]]:
    """Per round, per action: what its player faced, from its own dice."""
    wild_rule = rec.rules.wild_ones
    out = []
    for rnd in rec.rounds:
        total = sum(len(h) for h in rnd.dice)
        standing: Bid | None = None
        acts = []
        for seat, action in rnd.actions:
            hand = rnd.dice[seat] if 0 <= seat < len(rnd.dice) else ()
            unseen = total - len(hand)
            kw = {"wild": wild_rule, "palifico": rnd.palifico}
            odds: dict[str, Any] = {"seat": seat, "own": list(hand), "unseen": unseen}
            if standing is not None:
                odds["standing"] = [standing.quantity, standing.face]
                odds["p_standing"] = probability(standing, hand, unseen, **kw)
                odds["p_exact"] = probability_exact(standing, hand, unseen, **kw)
            if type(action) is Bid:
                odds["p_bid"] = probability(action, hand, unseen, **kw)
                standing = action
            likely = []
            for face in range(1, 7):
                q = 0
                while q < total and probability(Bid(q + 1, face), hand, unseen, **kw) >= HALF:
                    q += 1
                likely.append(q)
            odds["likely"] = likely
            acts.append(odds)
        out.append(acts)
    return out


def view_data(rec: MatchRecord) -> dict[str, Any]:
    """The viewer's JSON of ``rec``: the report viewer's data, each round's
    wilds, the odds of every decision, the end."""
    data = match_data(rec, "")
    del data["why"]
    for entry, rnd, odds in zip(data["rounds"], rec.rounds, decision_odds(rec), strict=True):
        entry["wild"] = aces_wild(rec.rules, rnd.palifico)
        for act, o in zip(entry["actions"], odds, strict=True):
            act["odds"] = o
    data["end"] = rec.end.value
    data["dice"] = rec.rules.dice
    data["faults"] = [
        {"seat": f.seat, "bot": rec.bots[f.seat], "round": f.round, "kind": f.kind.value, "detail": f.detail}
        for f in rec.faults
    ]
    return data
