"""Plays like any bot, then spins on the CPU once it hears its match is over.

Its last match's match_end reaches it only when its worker closes it at the
end of a run, at the same moment as the other bots of that worker, which it
would starve of the CPU they need to write their last words and exit.
"""

from arena.sdk import DUDO, Bot


class CloseSpinner(Bot):
    def act(self, turn):
        if turn.legal.dudo:
            return DUDO
        face = min(turn.legal.min_quantity)
        return f"{turn.legal.min_quantity[face]}x{face}"

    def match_end(self, placements) -> None:
        n = 0
        while True:  # never returns, never reads its EOF
            n += 1
