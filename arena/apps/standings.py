"""Live standings during ``arena run``: Elo leaders with intervals, matches, faults.

Fed by the runner (:func:`arena.running.runner.run`): its observer sees each
record as it is written (the ones a resumed run already had first) and its
progress callback drives the display. Lives at the apps layer because the
Elo estimate is the analysis's (:mod:`arena.analysis.ratings`), which the
running layer may not import.

Cheap by construction: a record costs a few dictionary updates; the
Plackett-Luce fit (with a small bootstrap for the intervals) runs only when a
display is due, and the pace adapts so that fitting takes at most
:data:`MAX_SHARE` of the run's wall time however large the run grows (the
parent process shares the cores with the workers).

A bot whose matches fault often gets one warning line, naming the bot, its
most common fault kind and the command that diagnoses it (``arena check``).
A host stall (a bot held up by the machine's load past a wall-clock limit,
replayed rather than charged: docs/sandbox.md, "Host stalls") warns that the
host is overloaded, at the first replay and again at 10, 100, 1000 ...
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from arena.analysis.ratings import bootstrap, design, fit_design, to_elo
from arena.running.observe import ARENA_FAULT, Finished
from arena.untrusted import printable

Write = Callable[[str], None]  # writes text as it is (control characters included) to the terminal

TTY_EVERY = 5.0  # seconds between displays on a terminal
PIPE_EVERY = 60.0  # ... and when stderr is a file or a pipe
LEADERS = 5  # bots shown
MAX_SHARE = 0.01  # at most this share of wall time spent fitting
RESAMPLES = 8  # bootstrap fits for the live intervals (the final table uses the full bootstrap)
WARN_AFTER = 20  # matches a bot plays before its fault rate can warn
WARN_RATE = 0.2  # share of a bot's matches with a fault of its own that warns


@dataclass
class _Bot:
    matches: int = 0
    faulted: int = 0  # matches with at least one fault of this bot
    kinds: Counter[str] = field(default_factory=Counter)


class LiveStandings:
    """Collects records; shows the standings every ``every`` seconds and warns once per faulty bot."""

    def __init__(self, write: Write, *, every: float, tty: bool, enabled: bool = True,
                 paths: Mapping[str, str] | None = None, leaders: int = LEADERS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.write = write
        self.every = every
        self.tty = tty
        self.enabled = enabled
        self.paths = dict(paths or {})
        self.leaders = leaders
        self.clock = clock
        self.bots: dict[str, _Bot] = {}
        self.index: dict[str, int] = {}
        self.rankings: list[list[int]] = []
        self.warned: set[str] = set()
        self.replayed = 0  # matches replayed after a host stall
        self.replayed_by: Counter[str] = Counter()
        self.pending: list[str] = []
        self.started = clock()
        self.next_show = self.started + every
        self.fit_seconds = 0.0
        self.shown = 0

    @staticmethod
    def for_terminal(tty: bool, live: bool | None, every: float | None, write: Write,
                     paths: Mapping[str, str] | None = None) -> LiveStandings:
        """On by default (every 5 s on a terminal, 60 s otherwise); ``live=False`` turns it off."""
        pace = every if every is not None else (TTY_EVERY if tty else PIPE_EVERY)
        return LiveStandings(write, every=pace, tty=tty, enabled=live is not False, paths=paths)

    # -- the runner's observer ---------------------------------------------------

    def observe(self, rec: Finished) -> bool:
        """Take one record; never stops the run."""
        order = sorted(range(len(rec.bots)), key=lambda s: rec.placements[s])
        ranking = []
        for s in order:
            label = rec.bots[s]
            if label not in self.index:
                self.index[label] = len(self.index)
            ranking.append(self.index[label])
        self.rankings.append(ranking)
        faulty: dict[int, str] = {}
        for seat, kind in rec.faults:
            if kind != ARENA_FAULT:  # the arena's own failures are not the bot's
                faulty.setdefault(seat, kind)
        if rec.replays:
            before = self.replayed
            self.replayed += len(rec.replays)
            self.replayed_by.update(rec.replays)
            if before == 0 or len(str(self.replayed)) > len(str(before)):  # 1, then each power of ten
                self.pending.append(self.overloaded())
        for s, label in enumerate(rec.bots):
            bot = self.bots.setdefault(label, _Bot())
            bot.matches += 1
            if s in faulty:
                bot.faulted += 1
                bot.kinds[faulty[s]] += 1
            if (label not in self.warned and bot.matches >= WARN_AFTER
                    and bot.faulted >= WARN_RATE * bot.matches):
                self.warned.add(label)
                self.pending.append(self.warning(label))
        return False

    def overloaded(self) -> str:
        bots = ", ".join(f"{printable(label, newlines=False)} {n}" for label, n in self.replayed_by.most_common(3))
        return (f"warning: the host is overloaded: {self.replayed} matches replayed so far (a bot held up by "
                f"other work on this machine past its wall-clock limit, not charged to it; by bot: {bots}); "
                f"fewer workers or a quieter machine make the run faster")

    def warning(self, label: str) -> str:
        bot = self.bots[label]
        kind, _ = bot.kinds.most_common(1)[0]
        target = self.paths.get(label, label)
        return (f"warning: {printable(label, newlines=False)} faulted in {bot.faulted} of its {bot.matches} "
                f"matches (mostly {kind}); see why with: arena check {printable(target, newlines=False)}")

    # -- the runner's progress ---------------------------------------------------

    def tick(self, done: int, total: int) -> bool:
        """Show what is due; True if anything was written (the progress line must be redrawn)."""
        wrote = False
        if self.pending:
            self._emit(self.pending)
            self.pending = []
            wrote = True
        now = self.clock()
        if self.enabled and self.rankings and (now >= self.next_show or (done >= total and self.shown)):
            lines = self.render(done, total, now - self.started)
            self._emit(lines)
            wrote = True
            # The next display: after `every`, and late enough that fitting stays under MAX_SHARE.
            self.next_show = now + max(self.every, self.fit_seconds / MAX_SHARE / max(1, self.shown))
        return wrote

    def _emit(self, lines: list[str]) -> None:
        text = "\n".join(lines) + "\n"
        self.write(("\r" + " " * 79 + "\r" + text) if self.tty else text)

    def elo(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """Labels, Elo estimates (mean 1500) and the half-width of a 95% interval."""
        t0 = time.perf_counter()
        labels = list(self.index)
        d = design(len(labels), self.rankings)
        theta = fit_design(d)
        boot = bootstrap(d, theta, resamples=RESAMPLES, seed=len(self.rankings))
        elo = to_elo(theta)
        half = 1.96 * to_elo(boot).std(axis=0, ddof=1)
        self.fit_seconds += time.perf_counter() - t0
        self.shown += 1
        return labels, elo, half

    def render(self, done: int, total: int, elapsed: float) -> list[str]:
        labels, elo, half = self.elo()
        order = np.argsort(-elo)
        faults = sum(b.faulted for b in self.bots.values())
        minutes = int(elapsed) // 60
        lines = [f"live standings after {done}/{total} matches ({minutes}:{int(elapsed) % 60:02d}), "
                 f"{faults} with faults" + (f", {self.replayed} replayed (host stalls)" if self.replayed else "")
                 + "; Elo (mean 1500) with a rough 95% interval:"]
        width = min(24, max(len(printable(x, newlines=False)) for x in labels))
        for rank, i in enumerate(order[: self.leaders], 1):
            bot = self.bots[labels[i]]
            name = printable(labels[i], newlines=False)[:width]
            lines.append(f"  {rank}. {name:<{width}}  {elo[i]:6.0f} ± {half[i]:3.0f}   {bot.matches:>6} matches"
                         + (f"   {bot.faulted} with faults" if bot.faulted else ""))
        if len(order) > self.leaders:
            lines.append(f"  ... and {len(order) - self.leaders} more")
        return lines


def live_progress(bar: Callable[[int, int, float], None],
                  standings: LiveStandings) -> Callable[[int, int, float], None]:
    """One progress callback: the standings (when due), then the progress line."""
    def progress(done: int, total: int, elapsed: float) -> None:
        standings.tick(done, total)
        bar(done, total, elapsed)
    return progress
