"""What ``referee_replay.py`` and ``host_replay.py`` share: the matches they
play, and a bot that records both sides of its pipe while it plays them.

Imported after the script has put its own checkout first on ``sys.path``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import orjson

from arena.engine.records import MatchSpec, derive_seed
from arena.engine.rules import Rules
from arena.match.referee import play_match
from arena.protocol.driver import BotDriver
from arena.protocol.loader import BotFactory, load_python_bot
from arena.protocol.messages import Notification, TurnMessage
from arena.protocol.parse import RawMessage
from arena.protocol.wire import decode, encode

HERE = Path(__file__).resolve().parent
NAMES = [f"heuristic#{k}" for k in range(5)]


def options(description: str, matches: int) -> argparse.Namespace:
    """The command line both scripts take: ``--matches``, ``--repeats``, ``--seed``."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--matches", type=int, default=matches)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=2026)
    return ap.parse_args()


def heuristic() -> BotFactory:
    """The league benchmark's bot, ``benchmarks/bots/heuristic.py``."""
    return load_python_bot(str(HERE / "bots" / "heuristic.py"))


def league_specs(matches: int, seed: int) -> list[MatchSpec]:
    """``matches`` 5-player ``classic`` matches, the five seats taken by :data:`NAMES`."""
    rules = Rules.preset("classic").to_dict()
    return [
        MatchSpec(
            index=i,
            match=f"m-{i:06d}",
            variant="classic",
            rules=rules,
            entrants=tuple(range(5)),
            seed=derive_seed(seed, "bots", i),
            dice_seed=derive_seed(seed, "dice", i),
            table=0,
            rotation=0,
        )
        for i in range(matches)
    ]


class Recording:
    """A bot behind its driver, every message encoded and decoded as over a pipe;
    keeps each reply it writes (``replies``) and, with ``keep_sent``, each line
    it is sent (``sent``: they take memory, and time to keep, of the pass that
    records them)."""

    def __init__(self, factory: BotFactory, keep_sent: bool = False) -> None:
        self.driver = BotDriver(factory, "heuristic")
        self.keep_sent = keep_sent
        self.sent: list[bytes] = []
        self.replies: list[bytes] = []

    def notify(self, msg: Notification) -> None:
        line = encode(msg)
        if self.keep_sent:
            self.sent.append(line)
        self.driver.handle(orjson.loads(line))

    def request(self, msg: TurnMessage) -> tuple[RawMessage, float]:
        line = encode(msg)
        if self.keep_sent:
            self.sent.append(line)
        reply = self.driver.handle(orjson.loads(line))
        assert reply is not None
        self.replies.append(reply[:-1])
        return decode(reply[:-1]), 0.0


def record(specs: list[MatchSpec], factory: BotFactory, keep_sent: bool = False) -> list[list[Recording]]:
    """Each match played by the referee with a :class:`Recording` in every seat."""
    played = []
    for spec in specs:
        seats = [Recording(factory, keep_sent) for _ in NAMES]
        play_match(spec, seats, NAMES, 1000)
        played.append(seats)
    return played
