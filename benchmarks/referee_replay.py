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

import argparse
import sys
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's arena, whatever is installed (for A/B runs)

from arena.engine.records import MatchSpec, derive_seed
from arena.engine.rules import Rules
from arena.match.referee import play_match
from arena.protocol.driver import BotDriver
from arena.protocol.loader import BotFactory, load_python_bot
from arena.protocol.messages import Notification, TurnMessage
from arena.protocol.parse import RawMessage
from arena.protocol.wire import decode, encode


class Recording:
    """A bot behind its driver, every message encoded and decoded; keeps its replies."""

    def __init__(self, factory: BotFactory, tape: list[bytes]) -> None:
        self.driver = BotDriver(factory, "heuristic")
        self.tape = tape

    def notify(self, msg: Notification) -> None:
        self.driver.handle(orjson.loads(encode(msg)))

    def request(self, msg: TurnMessage) -> tuple[RawMessage, float]:
        reply = self.driver.handle(orjson.loads(encode(msg)))
        assert reply is not None
        self.tape.append(reply[:-1])
        return decode(reply[:-1]), 0.0


class Playback:
    """The replies of a :class:`Recording`, in order; messages still encoded."""

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
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    factory = load_python_bot(str(HERE / "bots" / "heuristic.py"))
    rules = Rules.preset("classic").to_dict()
    names = [f"heuristic#{k}" for k in range(5)]
    specs = [MatchSpec(index=i, match=f"m-{i:06d}", variant="classic", rules=rules, entrants=tuple(range(5)),
                       seed=derive_seed(args.seed, "bots", i), dice_seed=derive_seed(args.seed, "dice", i),
                       table=0, rotation=0) for i in range(args.matches)]
    tapes: list[list[list[bytes]]] = []
    t0 = time.process_time()
    for spec in specs:
        tape: list[list[bytes]] = [[] for _ in names]
        play_match(spec, [Recording(factory, tape[k]) for k in range(len(names))], names, 1000)
        tapes.append(tape)
    recorded = time.process_time() - t0
    best = float("inf")
    decisions = 0
    for _ in range(args.repeats):
        decisions = 0
        t0 = time.process_time()
        for spec, tape in zip(specs, tapes):
            record = play_match(spec, [Playback(t) for t in tape], names, 1000).record
            decisions += sum(len(r.actions) for r in record.rounds)
        best = min(best, time.process_time() - t0)
    print(f"{args.matches} matches, {decisions:,} decisions: the referee alone {best / decisions * 1e6:.2f} us "
          f"of CPU per decision (best of {args.repeats}); with the bots, first pass, "
          f"{recorded / decisions * 1e6:.2f} us")


if __name__ == "__main__":
    main()
