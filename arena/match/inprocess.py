"""Matches played in one process, with Python bots called directly: no sandbox.

For tests, for tuning the built-in bots, for ``arena check``'s message
building, and for a quick league (:func:`mini_league`). The real referee
(sandboxed processes, time control, records) lives elsewhere; this module
plays by the same rules engine and feeds the bots the same messages
PROTOCOL.md defines (built by :mod:`arena.protocol.messages`), parsed by the same
:mod:`arena.sdk` types the bot host uses, so a bot sees no difference.

Only trusted code belongs here: a bot called in-process can read anything.
"""

from __future__ import annotations

import importlib.util
import inspect
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.errors import (BotCrashed, ConfigError, InvalidAction, ProtocolError,
                          RunError)
from arena.engine.records import derive_seed
from arena.engine.rules import Action, Bid, Calza, Dudo, Rules, parse_action
from arena.sdk import Bot, MatchInfo, RoundEnd, Turn

BotFactory = Callable[[], Bot]  # a fresh bot instance per match


# ---------------------------------------------------------------------------
# Loading a Python bot file in-process
# ---------------------------------------------------------------------------


class FunctionBot(Bot):
    """Adapts a bot file's module-level ``act(turn)`` to the :class:`Bot` interface."""

    def __init__(self, act: Callable[[Turn], Any]) -> None:
        self._act = act

    def act(self, turn: Turn) -> Any:
        return self._act(turn)


def load_python_bot(path: str | Path) -> BotFactory:
    """A factory for the bot in ``bots/<name>.py``: its one :class:`Bot` subclass, or its ``act``.

    The file is imported as a fresh module each call (no ``sys.modules`` entry),
    so two files with the same stem do not collide.
    """
    p = Path(path)
    if p.suffix != ".py" or not p.is_file():
        raise ConfigError(f"bot file {str(p)!r}: not a readable .py file")
    spec = importlib.util.spec_from_file_location(f"_arena_bot_{p.stem}", p)
    if spec is None or spec.loader is None:
        raise ConfigError(f"bot file {str(p)!r}: Python cannot import it")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the bot author's import-time error
        raise ConfigError(f"bot file {str(p)!r} failed to import: {type(exc).__name__}: {exc}") from exc
    classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
               if issubclass(c, Bot) and c is not Bot and c.__module__ == module.__name__]
    if len(classes) == 1:
        return classes[0]
    if len(classes) > 1:
        names = ", ".join(sorted(c.__name__ for c in classes))
        raise ConfigError(f"bot file {str(p)!r} defines several Bot subclasses ({names}); keep one")
    act = getattr(module, "act", None)
    if callable(act):
        return lambda: FunctionBot(act)
    raise ConfigError(f"bot file {str(p)!r} defines neither a Bot subclass nor a function act(turn)")


# ---------------------------------------------------------------------------
# Replies
# ---------------------------------------------------------------------------


def as_action(reply: object) -> Action:
    """A bot's return value as an action: an action object, or its text form."""
    if isinstance(reply, str):
        return parse_action(reply)
    if isinstance(reply, Bid) and type(reply.quantity) is int and type(reply.face) is int:
        return reply
    if isinstance(reply, (Dudo, Calza)):
        return reply
    raise InvalidAction(f"{reply!r} is not an action; return a Bid, DUDO, CALZA or text like '5x3'")


def reply_message(action: Action) -> dict[str, Any]:
    """The protocol's reply object for ``action``."""
    if isinstance(action, Bid):
        return {"action": "bid", "quantity": action.quantity, "face": action.face}
    return {"action": str(action)}


class InProcessTransport:
    """Speaks the player protocol for a Python bot without a process or sandbox.

    The same interface as :class:`arena.match.process.BotProcess` (``start``,
    ``notify``, ``request``, ``close``), so ``arena check``'s logic and tests
    run without processes. Like the bot host, it makes a fresh bot per match,
    seeded from ``match_start``. A bot that raises is reported as a crash.
    Trusted code only: the bot runs inside this process.
    """

    def __init__(self, factory: BotFactory, name: str = "bot", version: str | None = None) -> None:
        self.factory = factory
        self.name = name
        self.version = version
        self.bot: Bot | None = None
        self.info: MatchInfo | None = None

    def start(self) -> dict[str, Any]:
        return {"type": "ready", "name": self.name, "version": self.version}

    def notify(self, msg: Mapping[str, Any]) -> None:
        kind = msg.get("type")
        try:
            if kind == "match_start":
                self.info = MatchInfo.from_message(msg)
                self.bot = self.factory()
                self.bot.match = self.info
                self.bot.rng = random.Random(self.info.seed)
                self.bot.start(self.info)
            elif kind == "round_end" and self.bot is not None:
                self.bot.round_end(RoundEnd.from_message(msg))
            elif kind == "match_end" and self.bot is not None:
                self.bot.match_end(tuple(int(p) for p in msg["placements"]))
                self.bot = None
        except Exception as exc:
            raise BotCrashed(f"{self.name} raised in {kind}: {type(exc).__name__}: {exc}") from exc

    def request(self, msg: Mapping[str, Any]) -> tuple[dict[str, Any], float]:
        if self.bot is None or self.info is None:
            raise BotCrashed(f"{self.name}: a turn arrived before match_start")
        t0 = time.process_time()
        try:
            action = as_action(self.bot.act(Turn.from_message(msg, self.info, self.bot.rng)))
        except InvalidAction as exc:
            raise ProtocolError(f"{self.name} returned {exc}", "malformed") from exc
        except Exception as exc:
            raise BotCrashed(f"{self.name} raised in act: {type(exc).__name__}: {exc}") from exc
        return reply_message(action), time.process_time() - t0

    def close(self) -> None:
        self.bot = None


# ---------------------------------------------------------------------------
# Playing a match in-process
# ---------------------------------------------------------------------------


def play_inprocess(rules: Rules, bots: Sequence[BotFactory], seed: int, *,
                   names: Sequence[str] | None = None, match: str = "m-local",
                   strict: bool = True, time_ms: int = 1000) -> tuple[int, ...]:
    """Play one match through the referee; ``bots[s]`` sits at seat ``s``. Returns the placements.

    The same referee as ``arena run`` (:func:`arena.match.referee.play_match`), with
    each bot behind an :class:`InProcessTransport` instead of a sandboxed
    process. Dice are keyed by ``seed``. A bot that raises or returns an
    illegal action raises :class:`RunError` (``strict``), or faults out of the
    match as in a run.
    """
    from arena.engine.records import MatchSpec
    from arena.match.referee import play_match

    n = len(bots)
    names = list(names) if names is not None else [f"seat{s}" for s in range(n)]
    if len(names) != n:
        raise RunError(f"play_inprocess: {len(names)} names for {n} bots")
    spec = MatchSpec(index=0, match=match, variant="local", rules=rules.replace(seating="fixed").to_dict(),
                     entrants=tuple(range(n)), seed=derive_seed(seed, "bots"), dice_seed=seed, table=0,
                     rotation=0)
    players = [InProcessTransport(factory, name) for factory, name in zip(bots, names)]
    record = play_match(spec, players, names, time_ms).record
    if strict and record.faults:
        f = record.faults[0]
        raise RunError(f"{names[f.seat]} (seat {f.seat}) failed in {match} round {f.round}: "
                       f"{f.kind}: {f.detail}")
    return record.placements


# ---------------------------------------------------------------------------
# A quick league, for tuning and for tests
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LeagueRow:
    name: str
    matches: int
    wins: int
    mean_place: float  # mean of (place - 1) / (players - 1): 0 = always first, 1 = always last

    @property
    def win_rate(self) -> float:
        return self.wins / self.matches if self.matches else 0.0


def mini_league(rules: Rules, bots: Mapping[str, BotFactory], matches: int, seed: int, *,
                players: tuple[int, int] = (4, 6)) -> list[LeagueRow]:
    """Play ``matches`` in-process matches, each of ``players[0]``..``players[1]`` seats
    drawn at random (with repeats) from ``bots``; rows sorted best first.

    Places are normalised so tables of different sizes compare.
    """
    rng = random.Random(derive_seed(seed, "league"))
    names = sorted(bots)
    tally = {name: [0, 0, 0.0] for name in names}  # matches, wins, sum of normalised places
    for i in range(matches):
        n = rng.randint(players[0], players[1])
        seats = [names[i % len(names)]] + [rng.choice(names) for _ in range(n - 1)]
        rng.shuffle(seats)
        places = play_inprocess(rules, [bots[s] for s in seats], derive_seed(seed, "match", i),
                                names=seats, match=f"m-{i:06d}")
        for name, place in zip(seats, places):
            row = tally[name]
            row[0] += 1
            row[1] += place == 1
            row[2] += (place - 1) / (n - 1)
    rows = [LeagueRow(name, int(t[0]), int(t[1]), t[2] / t[0] if t[0] else 1.0) for name, t in tally.items()]
    return sorted(rows, key=lambda r: r.mean_place)


if __name__ == "__main__":  # pragma: no cover - a tuning aid: python -m arena.match.inprocess bots/*.py
    files = sys.argv[1:]
    table = mini_league(Rules.preset("classic"), {Path(f).stem: load_python_bot(f) for f in files}, 200, 1)
    for r in table:
        print(f"{r.name:<16} matches {r.matches:>4}  wins {r.win_rate:6.1%}  mean place {r.mean_place:.3f}")
