"""Attack, in-process only (protection off): a bot told the deal on its later plays.

What a bot that decodes a deal through a shared kernel cache (docs/sandbox.md: the
page cache, a name-lookup cache) knows on its second play of a deal, handed
to it directly: a trusted test harness sets :data:`TOLD` to the deal's dice
seed before a match it wants the bot to "remember", and to None before a
first play. With the seed it derives every hand of every round (the dice
follow seat positions, docs/rules.md, Dice from the seed) and plays
knowing every die: it calls dudo on every false bid and only ever bids true
ones, the tightest it can.
Without it, it plays exactly like ``bots/probabilistic.py`` (its honest twin).

The sandbox closes the channels this stands for; the integrity check
(docs/ratings.md, Integrity) is the defence that must catch the bot if one
stays open, and the tests use this bot to show that it does.
"""

from __future__ import annotations

from arena.engine.dice import roll_table
from arena.sdk import DUDO, Action, Bot, Turn, bid

TOLD: dict[str, int | None] = {"seed": None}  # the harness's channel: the deal's dice seed, or None


def _honest(turn: Turn) -> Action:
    """bots/probabilistic.py's play."""
    standing = turn.standing
    if standing is None:
        legal = turn.legal
        face = max(legal.min_quantity, key=lambda f: (turn.expected(f), f))
        q = legal.min_quantity[face]
        while q < legal.max_quantity and turn.probability(bid(q + 1, face)) >= 0.6:
            q += 1
        return bid(q, face)
    if not turn.legal.min_quantity:
        return DUDO
    raise_to, p_raise = turn.best_raise()
    if raise_to is None:
        return DUDO
    p_standing = turn.probability(standing)
    if p_standing < 0.5 and p_standing < p_raise:
        return DUDO
    return raise_to


class ToldDeal(Bot):
    def act(self, turn: Turn) -> Action:
        seed = TOLD["seed"]
        if seed is None:
            return _honest(turn)
        hands = roll_table(seed, turn.round, turn.counts)
        if tuple(sorted(hands[turn.seat])) != tuple(sorted(turn.dice)):
            return _honest(turn)  # told a wrong deal: play honestly
        wild = turn.wild

        def count(face: int) -> int:
            return sum(1 for h in hands for d in h if d == face or (wild and d == 1 and face != 1))

        standing = turn.standing
        if standing is not None and turn.legal.dudo and count(standing.face) < standing.quantity:
            return DUDO
        # The tightest true bid: exactly as many as there are of a face, the most
        # there are of any face it may bid; every raise on that face is false.
        true = [
            (count(face), face)
            for face, low in turn.legal.min_quantity.items()
            if low <= count(face) <= turn.legal.max_quantity
        ]
        if true:
            quantity, face = max(true)
            return bid(quantity, face)
        return DUDO if turn.legal.dudo else _honest(turn)
