"""Matches played in one process, with Python bots called directly: no sandbox.

For tests, for tuning the built-in bots, for ``arena check`` without a
sandbox, and for a quick league (:func:`mini_league`). The matches are the
real referee's (:func:`arena.match.referee.play_match`), and each bot is
played by the same driver as in the sandboxed host
(:class:`arena.protocol.driver.BotDriver`), loaded by the same loader
(:func:`arena.protocol.loader.load_python_bot`), so a bot sees no difference.

Only trusted code belongs here: a bot called in-process can read anything.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.engine.records import MatchRecord, MatchSpec, derive_seed
from arena.engine.rules import Rules
from arena.errors import BotCrashed, BotFault, RunError
from arena.match.referee import play_match
from arena.protocol.driver import BotDriver
from arena.protocol.loader import BotFactory, load_python_bot
from arena.protocol.messages import Notification, ReadyMessage, RefereeMessage, TurnMessage, hello_message
from arena.protocol.parse import MessageError, RawMessage, parse_ready
from arena.protocol.wire import decode


class InProcessTransport:
    """A Python bot as a :class:`~arena.protocol.player.Player`, without a process or sandbox.

    The bot host's own :class:`~arena.protocol.driver.BotDriver` plays it
    (a fresh instance per match, seeded from ``match_start``), and its reply
    lines are decoded as the referee decodes a process's, so the bot, the
    referee and ``arena check`` see what they would with a sandboxed process.
    As :class:`arena.match.process.BotProcess` does, a fault noticed while
    notifying (the bot raised) is raised by the next request; a bot that
    raises is a ``crash``. Trusted code only: the bot runs inside this process.
    """

    def __init__(self, factory: BotFactory, name: str = "bot", version: str | None = None) -> None:
        self.name = name
        self._driver = BotDriver(factory, name, version)
        self._fault: BotFault | None = None

    def start(self) -> ReadyMessage:
        line = self._call(hello_message(), "hello")
        if line is None:
            raise BotCrashed(f"{self.name} gave no ready")
        return parse_ready(decode(line))

    def notify(self, msg: Notification) -> None:
        if self._fault is not None:
            return
        try:
            self._call(msg, str(msg.get("type")))
        except BotFault as exc:
            self._fault = exc

    def request(self, msg: TurnMessage) -> tuple[RawMessage, float]:
        if self._fault is not None:
            raise self._fault
        t0 = time.process_time()
        line = self._call(msg, "act")
        used = time.process_time() - t0
        if line is None:
            raise BotCrashed(f"{self.name} gave no reply to a turn")
        return decode(line), used

    def close(self) -> None:
        if self._fault is None:
            self._fault = BotCrashed(f"{self.name} is closed (start a new transport)")

    def _call(self, msg: RefereeMessage, what: str) -> bytes | None:
        # The builders' messages are JSON-shaped already (lists, string keys), so
        # the driver reads them as the host reads the line; the reply line goes
        # through the referee's decoder, as from a pipe.
        try:
            return self._driver.handle(msg)
        except MessageError:
            raise  # the caller's message is wrong: a bug on this side, not the bot's
        except Exception as exc:
            raise BotCrashed(f"{self.name} raised in {what}: {type(exc).__name__}: {exc}") from exc


# ---------------------------------------------------------------------------
# Playing a match in-process
# ---------------------------------------------------------------------------


def play_inprocess(
    rules: Rules,
    bots: Sequence[BotFactory],
    seed: int,
    *,
    names: Sequence[str] | None = None,
    match: str = "m-local",
    strict: bool = True,
    time_ms: int = 1000,
) -> tuple[int, ...]:
    """Play one match through the referee; ``bots[s]`` sits at seat ``s``. Returns the placements.

    The same referee as ``arena run`` (:func:`arena.match.referee.play_match`), with
    each bot behind an :class:`InProcessTransport` instead of a sandboxed
    process. Dice are keyed by ``seed``. A bot that raises or returns an
    illegal action raises :class:`RunError` (``strict``), or faults out of the
    match as in a run.
    """
    return play_record(rules, bots, seed, names=names, match=match, strict=strict, time_ms=time_ms).placements


def play_record(
    rules: Rules,
    bots: Sequence[BotFactory],
    seed: int,
    *,
    names: Sequence[str] | None = None,
    match: str = "m-local",
    strict: bool = True,
    time_ms: int = 1000,
    bots_seed: int | None = None,
) -> MatchRecord:
    """:func:`play_inprocess`, returning the whole match record (every round's dice:
    what the luck estimator, :mod:`arena.analysis.luck`, reads). ``bots_seed``
    keys the bots' own random seeds apart from the dice (by default derived from
    ``seed``): a deal replayed with other seeds, as a run's paired deals are."""
    n = len(bots)
    names = list(names) if names is not None else [f"seat{s}" for s in range(n)]
    if len(names) != n:
        raise RunError(f"play_inprocess: {len(names)} names for {n} bots")
    spec = MatchSpec(
        index=0,
        match=match,
        variant="local",
        rules=rules.replace(seating="fixed").to_dict(),
        entrants=tuple(range(n)),
        seed=derive_seed(seed, "bots") if bots_seed is None else bots_seed,
        dice_seed=seed,
        table=0,
        rotation=0,
    )
    players = [InProcessTransport(factory, name) for factory, name in zip(bots, names)]
    record = play_match(spec, players, names, time_ms).record
    if strict and record.faults:
        f = record.faults[0]
        raise RunError(f"{names[f.seat]} (seat {f.seat}) failed in {match} round {f.round}: {f.kind}: {f.detail}")
    return record


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


def mini_league(
    rules: Rules, bots: Mapping[str, BotFactory], matches: int, seed: int, *, players: tuple[int, int] = (4, 6)
) -> list[LeagueRow]:
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
        places = play_inprocess(
            rules, [bots[s] for s in seats], derive_seed(seed, "match", i), names=seats, match=f"m-{i:06d}"
        )
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
        print(f"{r.name:<16} matches {r.matches:>4}  wins {r.win_rate:6.1%}  mean place {r.mean_place:.3f}")  # noqa: T201
