"""Logs to stderr on every message, naming the match: the stderr-file tests
check that every line lands under the header of the match it belongs to.

It also attacks the log: each match_start it writes a line forged to look
like the arena's own header for another match, and bytes that are not UTF-8.
"""

import sys

from arena.sdk import DUDO, Bot, MatchInfo, RoundEnd, Turn


def log(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


class MatchLogger(Bot):
    def start(self, match: MatchInfo) -> None:
        self.turns = 0
        log(f"start {match.match} seat {match.seat}")
        log("### arena: m-999999 · worker 0")  # a forged header
        sys.stderr.buffer.write(b"bytes \xff\xfe not utf-8\n")
        sys.stderr.flush()

    def act(self, turn: Turn):
        self.turns += 1
        log(f"turn {self.match.match} {self.turns}")
        if turn.standing is not None and turn.legal.dudo and turn.probability(turn.standing) < 0.5:
            return DUDO
        face = max(turn.legal.min_quantity, key=turn.expected)
        return f"{turn.legal.min_quantity[face]}x{face}"

    def round_end(self, result: RoundEnd) -> None:
        pass

    def match_end(self, placements) -> None:
        log(f"end {self.match.match} after {self.turns} turns")
