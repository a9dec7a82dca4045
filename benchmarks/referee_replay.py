"""The referee's own CPU per decision, with nothing else running: recorded replies played back.

    python benchmarks/referee_replay.py [--matches 400] [--repeats 5] [--seed 2026]

First, ``--matches`` 5-player ``classic`` matches are played in this process by
the real referee (:func:`arena.match.referee.play_match`) with five copies of
``benchmarks/bots/heuristic.py`` behind the bot host's driver, every message
through JSON both ways, and each seat's reply lines are kept. Then the same
matches (the same dice) are played again ``--repeats`` times with the replies
played back: each message is still encoded and each reply decoded, as a
sandboxed bot's would be, but no bot runs and there are no pipes or sandbox.
What is timed is then the referee's own work (rules and dice, building and
encoding the messages, decoding and parsing the replies, the match record),
in a warm loop; the best of the repeats is printed, in microseconds of CPU
per decision, with the first pass's (bots included) beside it.

In the league the same code runs on a core that a worker shares with its
bots, so each decision costs more there (docs/performance.md, "Sixth
round"): this is the figure a cut to the referee's Python moves first.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's arena, whatever is installed (for A/B runs)

from _replay import NAMES, heuristic, league_specs, options, record

from arena.match.referee import play_match
from arena.protocol.messages import Notification, TurnMessage
from arena.protocol.parse import RawMessage
from arena.protocol.wire import decode, encode


class Playback:
    """The replies of a recorded seat (:class:`_replay.Recording`), in order; messages still encoded."""

    def __init__(self, tape: list[bytes]) -> None:
        self.tape = tape
        self.at = 0

    def notify(self, msg: Notification) -> None:
        encode(msg)

    def request(self, msg: TurnMessage) -> tuple[RawMessage, float]:
        encode(msg)
        line = self.tape[self.at]
        self.at += 1
        return decode(line), 0.0


def main() -> None:
    args = options(__doc__.splitlines()[0], matches=400)
    specs, factory = league_specs(args.matches, args.seed), heuristic()
    t0 = time.process_time()
    played = record(specs, factory)
    recorded = time.process_time() - t0
    tapes = [[seat.replies for seat in seats] for seats in played]
    best = float("inf")
    decisions = 0
    for _ in range(args.repeats):
        decisions = 0
        t0 = time.process_time()
        for spec, tape in zip(specs, tapes):
            rec = play_match(spec, [Playback(t) for t in tape], NAMES, 1000).record
            decisions += sum(len(r.actions) for r in rec.rounds)
        best = min(best, time.process_time() - t0)
    print(
        f"{args.matches} matches, {decisions:,} decisions: the referee alone {best / decisions * 1e6:.2f} us "
        f"of CPU per decision (best of {args.repeats}); with the bots, first pass, "
        f"{recorded / decisions * 1e6:.2f} us"
    )


if __name__ == "__main__":
    main()
