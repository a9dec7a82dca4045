"""Attack: derives the dice from what ``match_start`` carries.

The ``arena`` package is importable inside the sandbox, so a bot can run the
project's own seed derivation and dice stream on whatever it is sent: the
match id (``play-<seed>`` once carried the seed of ``arena play``;
``check-<n>`` is the n-th match of ``arena check``, whose seed defaulted to
0), its own ``seed``, small guessable run seeds. Each round it keeps the
candidate dice keys that reproduce its own hand; a key that has reproduced
at least fifteen of its dice gives it every hand at the table (``DERIVED
<match> <round>`` on stderr), and it then plays perfectly. Without a key it plays like ``probabilistic``.
``DERIVE_HONEST=1`` in its environment turns the trick off (the honest twin).
At every match_end it prints ``TRIED <match> candidates=<n>`` so a test can
see that the attack ran.
"""

from __future__ import annotations

import os
import sys

from arena.engine.dice import roll, roll_table
from arena.engine.records import derive_seed
from arena.sdk import CALZA, DUDO, Bot, Turn, bid

HONEST = os.environ.get("DERIVE_HONEST") == "1"


def candidates(match: str, bot_seed: int, seat: int) -> list[int]:
    """Every dice key this bot can think of."""
    out = [bot_seed]
    prefix, _, rest = match.rpartition("-")
    if rest.isdigit():
        n = int(rest)
        out += [derive_seed("play", n, "dice"), n]  # arena play: play-<seed>
        for s in range(4):  # arena check with a small seed: check-<index>, the key of match index + 1
            out += [derive_seed(s, "dice", n + 1), derive_seed(s, "dice", n)]
        for s in range(64):  # a run with a small seed: m-<index>, tables near the index
            out += [derive_seed(s, "dice", t) for t in range(max(0, n - 2), n + 3)]
    for s in range(64):  # the bot seed derived from a small match seed
        out.append(derive_seed(s, "dice", 0))
    return out


EVIDENCE_DICE = 15  # own dice a key must reproduce before it is trusted (chance matches are common)


class Derive(Bot):
    def start(self, match) -> None:  # type: ignore[no-untyped-def]
        self.keys = [] if HONEST else candidates(match.match, match.seed, match.seat)
        self.tried = len(self.keys)
        self.seen_round = 0
        self.evidence = 0

    def act(self, turn: Turn):  # type: ignore[no-untyped-def]
        mine = tuple(sorted(turn.dice))
        if turn.round != self.seen_round:  # a new hand: keep the keys that reproduce it too
            self.seen_round = turn.round
            self.evidence += len(mine)
            self.keys = [k for k in self.keys if tuple(sorted(roll(k, turn.round, turn.seat, len(mine)))) == mine]
        if self.keys and self.evidence >= EVIDENCE_DICE:
            print(f"DERIVED {turn.match.match} {turn.round}", file=sys.stderr, flush=True)
            return self._perfect(turn, roll_table(self.keys[0], turn.round, turn.counts))
        return self._odds(turn)

    def match_end(self, placements) -> None:  # type: ignore[no-untyped-def]
        print(f"TRIED {self.match.match} candidates={self.tried}", file=sys.stderr, flush=True)

    def _odds(self, turn: Turn):  # type: ignore[no-untyped-def]
        standing = turn.standing
        if standing is None:
            face = max(turn.legal.min_quantity, key=lambda f: (turn.expected(f), f))
            return bid(turn.legal.min_quantity[face], face)
        raise_to, p_raise = turn.best_raise()
        if raise_to is None or turn.probability(standing) < min(0.5, p_raise):
            return DUDO
        return raise_to

    def _perfect(self, turn: Turn, table):  # type: ignore[no-untyped-def]
        wild = turn.rules.wild_ones and not turn.palifico

        def count(face: int) -> int:
            return sum(1 for h in table for d in h if d == face or (wild and d == 1 and face != 1))

        standing = turn.standing
        if standing is not None:
            real = count(standing.face)
            if turn.legal.calza and real == standing.quantity:
                return CALZA
            if turn.legal.dudo and real < standing.quantity:
                return DUDO
        for face, low in sorted(turn.legal.min_quantity.items()):
            if low <= count(face) <= turn.legal.max_quantity:
                return bid(low, face)
        return DUDO if turn.legal.dudo else self._odds(turn)
