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

import sys
import time
from collections import Counter
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's arena, whatever is installed (for A/B runs)

from _replay import heuristic, league_specs, options, record

from arena.protocol.driver import BotDriver
from arena.protocol.hostloop import _ROUND_END
from arena.protocol.loader import BotFactory
from arena.protocol.messages import hello_message
from arena.protocol.wire import encode


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
    args = options(__doc__.splitlines()[0], matches=300)
    factory = heuristic()
    tapes = [
        seat.sent for seats in record(league_specs(args.matches, args.seed), factory, keep_sent=True) for seat in seats
    ]
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
    print(
        f"{args.matches} matches, {decisions:,} decisions, {sum(lines.values()):,} lines: the bot side alone "
        f"{whole / decisions * 1e6:.2f} us of CPU per decision (best of {args.repeats}); by kind of line, "
        f"timed line by line:"
    )
    for kind in ("turn", "round_end", "match_start", "match_end"):
        print(
            f"  {kind:<12} {best[kind] / decisions / 1000:5.2f} us per decision "
            f"({lines[kind] / decisions:.2f} lines each)"
        )


if __name__ == "__main__":
    main()
