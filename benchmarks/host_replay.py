"""A Python bot's side of each decision, with nothing else running: its recorded input played back.

    python benchmarks/host_replay.py [--matches 300] [--repeats 5] [--seed 2026]

The bot side's counterpart of ``referee_replay.py``. First, ``--matches``
5-player ``classic`` matches are played in this process by the real referee
(:func:`arena.match.referee.play_match`) with five copies of
``benchmarks/bots/heuristic.py`` behind the bot host's driver, and every line
each seat is sent is kept, as the referee encodes it. Then each seat's lines
are fed, ``--repeats`` times, to a fresh driver the way the bot host's loop
(:func:`arena.protocol.hostloop.serve`) takes them: a ``round_end`` for a bot
without the hook is dropped unread, anything else is decoded, parsed into the
SDK's types, handed to the bot, and its reply encoded. No pipes, no sandbox,
no referee. Printed, in microseconds of CPU per decision (best of the
repeats): the whole, and by kind of line (the turns: decoding, parsing, the
bot's own ``act`` and the reply; the dropped ``round_end`` lines; a match's
start and end, spread over its decisions).

In the league the same code runs on a core that a worker shares with its
bots, and a microsecond here was worth about three there (docs/performance.md,
"Eighth round").
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's arena, whatever is installed (for A/B runs)

from arena.engine.records import MatchSpec, derive_seed
from arena.engine.rules import Rules
from arena.match.referee import play_match
from arena.protocol.driver import BotDriver
from arena.protocol.hostloop import _ROUND_END
from arena.protocol.loader import BotFactory, load_python_bot
from arena.protocol.messages import Notification, TurnMessage, hello_message
from arena.protocol.parse import RawMessage
from arena.protocol.wire import decode, encode


class Recording:
    """A bot behind its driver; keeps every line it is sent, encoded as the referee does."""

    def __init__(self, factory: BotFactory, tape: list[bytes]) -> None:
        self.driver = BotDriver(factory, "heuristic")
        self.tape = tape

    def notify(self, msg: Notification) -> None:
        line = encode(msg)
        self.tape.append(line)
        self.driver.handle(orjson.loads(line))

    def request(self, msg: TurnMessage) -> tuple[RawMessage, float]:
        line = encode(msg)
        self.tape.append(line)
        reply = self.driver.handle(orjson.loads(line))
        assert reply is not None
        return decode(reply[:-1]), 0.0


def kind_of(line: bytes) -> str:
    return str(orjson.loads(line)["type"])


def _driver(factory: BotFactory) -> BotDriver:
    driver = BotDriver(factory, "heuristic")
    driver.handle(orjson.loads(encode(hello_message())))
    return driver


def replay(factory: BotFactory, tape: list[bytes]) -> None:
    """One seat's lines through a fresh driver, as hostloop.serve takes them."""
    driver = _driver(factory)
    handle, loads, ignores = driver.handle, orjson.loads, driver.ignores_round_end
    for line in tape:
        if not (line.startswith(_ROUND_END) and ignores()):
            handle(loads(line))


def replay_timed(factory: BotFactory, tape: list[bytes], kinds: list[str], spent: Counter[str]) -> None:
    """:func:`replay` with each line's CPU ns added to ``spent`` by its kind (the clock reads cost a little)."""
    driver = _driver(factory)
    handle, loads, ignores = driver.handle, orjson.loads, driver.ignores_round_end
    clock = time.process_time_ns
    for line, kind in zip(tape, kinds):
        t0 = clock()
        if not (line.startswith(_ROUND_END) and ignores()):
            handle(loads(line))
        spent[kind] += clock() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    factory = load_python_bot(str(HERE / "bots" / "heuristic.py"))
    rules = Rules.preset("classic").to_dict()
    names = [f"heuristic#{k}" for k in range(5)]
    tapes: list[list[bytes]] = []
    for i in range(args.matches):
        spec = MatchSpec(index=i, match=f"m-{i:06d}", variant="classic", rules=rules, entrants=tuple(range(5)),
                         seed=derive_seed(args.seed, "bots", i), dice_seed=derive_seed(args.seed, "dice", i),
                         table=0, rotation=0)
        seats: list[list[bytes]] = [[] for _ in names]
        play_match(spec, [Recording(factory, seats[k]) for k in range(len(names))], names, 1000)
        tapes += seats
    kinds = [[kind_of(line) for line in tape] for tape in tapes]
    lines = Counter(k for ks in kinds for k in ks)
    decisions = lines["turn"]
    whole = float("inf")
    best: Counter[str] | None = None
    for _ in range(args.repeats):
        t0 = time.process_time()
        for tape in tapes:
            replay(factory, tape)
        whole = min(whole, time.process_time() - t0)
        spent: Counter[str] = Counter()
        for tape, ks in zip(tapes, kinds):
            replay_timed(factory, tape, ks, spent)
        if best is None or sum(spent.values()) < sum(best.values()):
            best = spent
    assert best is not None
    print(f"{args.matches} matches, {decisions:,} decisions, {sum(lines.values()):,} lines: the bot side alone "
          f"{whole / decisions * 1e6:.2f} us of CPU per decision (best of {args.repeats}); by kind of line, "
          f"timed line by line:")
    for kind in ("turn", "round_end", "match_start", "match_end"):
        print(f"  {kind:<12} {best[kind] / decisions / 1000:5.2f} us per decision "
              f"({lines[kind] / decisions:.2f} lines each)")


if __name__ == "__main__":
    main()
