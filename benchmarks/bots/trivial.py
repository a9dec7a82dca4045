"""The benchmark's bot: always doubts (or opens with the first legal bid),
so what is measured is the protocol path, not a strategy."""

from arena.sdk import DUDO, Turn


def act(turn: Turn):
    return DUDO if turn.legal.dudo else next(turn.legal.bids())
