"""Plays only two-player tables, and says so; anywhere else it crashes on purpose.

``SUPPORTS`` is read from this file's syntax tree: the scheduler must never
seat it at a larger table and ``arena check`` must fuzz only 2-player tables.
Were it seated at a table of 3 or more, it would exit at match_start and the
run would record a crash fault, which the tests look for.
"""

import sys

from arena.sdk import DUDO, Bot, MatchInfo, Turn

SUPPORTS = {"players": [2]}


class TwoSeater(Bot):
    def start(self, match: MatchInfo) -> None:
        if match.players != 2:
            print(f"two_seater: seated at a table of {match.players}", file=sys.stderr, flush=True)
            raise SystemExit(3)

    def act(self, turn: Turn):
        if turn.standing is not None and turn.probability(turn.standing) < 0.5:
            return DUDO
        face = max(turn.legal.min_quantity, key=turn.expected)
        return f"{turn.legal.min_quantity[face]}x{face}"
