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

In a run with paired deals (``paired``), a bot flagged by the paired-play
integrity check (:mod:`arena.running.integrity`: it does better on later
plays of a deal than on the first) gets one warning line too; the check runs
when a display is due, on the first :data:`INTEGRITY_DEALS` deals (a bot
that remembers deals shows within dozens; ``arena ratings`` checks the whole run).

On a terminal each display redraws the last in place (a block of lines, the
leaders and the bots followed); in a file or a CI log, which keeps every
line, each display is one line.

A host stall (a bot held up by the machine's load past a wall-clock limit,
replayed rather than charged: docs/sandbox.md, "Host stalls") warns that the
host is overloaded, at the first replay and again at 10, 100, 1000 ...
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from arena.analysis.ratings import bootstrap, design, fit_design, to_elo
from arena.elo import Z95
from arena.errors import ArenaError
from arena.running.integrity import IntegrityCollector
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
INTEGRITY_DEALS = 5000  # deals the live integrity check keeps (memory stays bounded in any run)
MIN_INTERVAL = 5  # matches a bot plays before its interval means anything ("?" until then)


@dataclass
class _Bot:
    matches: int = 0
    faulted: int = 0  # matches with at least one fault of this bot
    kinds: Counter[str] = field(default_factory=Counter)


class LiveStandings:
    """Collects records; shows the standings every ``every`` seconds and warns once per faulty bot."""

    def __init__(
        self,
        write: Write,
        *,
        every: float,
        tty: bool,
        enabled: bool = True,
        paths: Mapping[str, str] | None = None,
        leaders: int | None = LEADERS,
        follow: Sequence[str] = (),
        clock: Callable[[], float] = time.monotonic,
        paired: bool = False,
    ) -> None:
        self.write = write
        self.every = every
        self.tty = tty
        self.enabled = enabled
        self.paths = dict(paths or {})
        self.leaders = leaders  # None: every bot
        self.follow = list(follow)  # labels shown whatever their rank
        self.clock = clock
        self.block_lines = 0  # lines of the block last drawn on a terminal, if nothing was written below it
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
        self.integrity = IntegrityCollector() if paired else None
        self.deals: set[int] = set()
        self.checked = 0  # plays the integrity check last saw
        self.checks = 0
        self.check_seconds = 0.0
        self.next_check = self.started + every
        self.flagged: set[str] = set()

    @staticmethod
    def for_terminal(
        tty: bool,
        live: bool | None,
        every: float | None,
        write: Write,
        paths: Mapping[str, str] | None = None,
        paired: bool = False,
        *,
        every_bot: bool = False,
        follow: Sequence[str] = (),
    ) -> LiveStandings:
        """On by default (every 5 s on a terminal, 60 s otherwise); ``live=False`` turns it off;
        ``paired``: the run plays deals more than once (the integrity check's warnings);
        ``every_bot``: the whole table rather than the leaders; ``follow``: labels always shown."""
        pace = every if every is not None else (TTY_EVERY if tty else PIPE_EVERY)
        return LiveStandings(
            write,
            every=pace,
            tty=tty,
            enabled=live is not False,
            paths=paths,
            leaders=None if every_bot else LEADERS,
            follow=follow,
            paired=paired,
        )

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
            if label not in self.warned and bot.matches >= WARN_AFTER and bot.faulted >= WARN_RATE * bot.matches:
                self.warned.add(label)
                self.pending.append(self.warning(label))
        if self.integrity is not None and rec.deal is not None:
            if rec.deal in self.deals or len(self.deals) < INTEGRITY_DEALS:
                self.deals.add(rec.deal)
                try:
                    index = int(rec.match.removeprefix("m-"))  # schedule order
                except ValueError:
                    index = len(self.rankings)
                self.integrity.add(
                    deal=rec.deal, order=index, variant=rec.variant, bots=rec.bots, placements=rec.placements
                )
        return False

    def check_integrity(self) -> None:
        """The integrity check on what has arrived; one warning per newly flagged bot."""
        if self.integrity is None or len(self.integrity.plays) == self.checked:
            return
        t0 = time.perf_counter()
        self.checked = len(self.integrity.plays)
        report = self.integrity.check()
        for c in report.flagged:
            if c.bot not in self.flagged:
                self.flagged.add(c.bot)
                words = printable(c.words(report.alpha, len(report.checks)), newlines=False)
                self.pending.append(
                    f"warning: integrity: {words}; it may be remembering deals, so its "
                    f"results cannot be trusted (docs/ratings.md, Integrity)"
                )
        self.check_seconds += time.perf_counter() - t0
        self.checks += 1

    def overloaded(self) -> str:
        bots = ", ".join(f"{printable(label, newlines=False)} {n}" for label, n in self.replayed_by.most_common(3))
        return (
            f"warning: the host is overloaded: {self.replayed} matches replayed so far (a bot held up by "
            f"other work on this machine past its wall-clock limit, not charged to it; by bot: {bots}); "
            f"fewer workers or a quieter machine make the run faster"
        )

    def warning(self, label: str) -> str:
        bot = self.bots[label]
        kind, _ = bot.kinds.most_common(1)[0]
        target = self.paths.get(label, label)
        return (
            f"warning: {printable(label, newlines=False)} faulted in {bot.faulted} of its {bot.matches} "
            f"matches (mostly {kind}); see why with: arena check {printable(target, newlines=False)}"
        )

    # -- the runner's progress ---------------------------------------------------

    def tick(self, done: int, total: int) -> bool:
        """Show what is due; True if anything was written (the progress line must be redrawn)."""
        wrote = False
        now = self.clock()
        if self.integrity is not None and (now >= self.next_check or done >= total):
            self.check_integrity()
            # As for the fit: the next check late enough that checking stays under MAX_SHARE.
            self.next_check = now + max(self.every, self.check_seconds / MAX_SHARE / max(1, self.checks))
        if self.pending:
            self._emit(self.pending)
            self.pending = []
            self.block_lines = 0  # the warnings stay: the next block goes below them
            wrote = True
        if self.enabled and self.rankings and (now >= self.next_show or (done >= total and self.shown)):
            if self.tty:
                lines = self.render(done, total, now - self.started)
                # Redraw in place: up over the last block, clear it and what is below (the progress line).
                up = f"\x1b[{self.block_lines}A" if self.block_lines else ""
                self.write("\r" + up + "\x1b[J" + "\n".join(lines) + "\n")
                self.block_lines = len(lines)
            else:
                self._emit([self.line(done, total, now - self.started)])
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
        half = Z95 * to_elo(boot).std(axis=0, ddof=1)
        self.fit_seconds += time.perf_counter() - t0
        self.shown += 1
        return labels, elo, half

    def _shown(self, labels: list[str], elo: np.ndarray) -> tuple[list[int], list[int]]:
        """Indices of the bots to show, in rank order, and the rank (1 first) of every bot."""
        order = [int(i) for i in np.argsort(-elo)]
        rank = {i: r for r, i in enumerate(order, 1)}
        top = order if self.leaders is None else order[: self.leaders]
        followed = [i for i in order if i not in top and _follows(labels[i], self.follow)]
        return top + followed, [rank[i] for i in range(len(labels))]

    def _interval(self, bot: _Bot, half: float) -> str:
        """``± 38``, or ``±  ?`` while a bot has too few matches for an interval to mean anything."""
        if bot.matches < MIN_INTERVAL or not np.isfinite(half):
            return "±   ?"
        return f"± {half:3.0f}"

    def render(self, done: int, total: int, elapsed: float) -> list[str]:
        labels, elo, half = self.elo()
        shown, rank = self._shown(labels, elo)
        faults = sum(b.faulted for b in self.bots.values())
        minutes = int(elapsed) // 60
        lines = [
            f"live standings after {done}/{total} matches ({minutes}:{int(elapsed) % 60:02d}), "
            f"{faults} with faults"
            + (f", {self.replayed} replayed (host stalls)" if self.replayed else "")
            + "; Elo (mean 1500) with a rough 95% interval:"
        ]
        width = min(24, max(len(printable(x, newlines=False)) for x in labels))
        for i in shown:
            bot = self.bots[labels[i]]
            name = printable(labels[i], newlines=False)[:width]
            lines.append(
                f"  {rank[i]}. {name:<{width}}  {elo[i]:6.0f} {self._interval(bot, half[i])}   "
                f"{bot.matches:>6} matches" + (f"   {bot.faulted} with faults" if bot.faulted else "")
            )
        if len(labels) > len(shown):
            lines.append(f"  ... and {len(labels) - len(shown)} more (--live all shows every bot, --follow BOT one)")
        return lines

    def line(self, done: int, total: int, elapsed: float) -> str:
        """The standings as one line, for a file or a CI log."""
        labels, elo, half = self.elo()
        shown, rank = self._shown(labels, elo)
        faults = sum(b.faulted for b in self.bots.values())
        parts = []
        for i in shown:
            bot = self.bots[labels[i]]
            interval = self._interval(bot, half[i]).replace(" ", "")
            parts.append(f"{rank[i]}. {printable(labels[i], newlines=False)} {elo[i]:.0f}{interval}")
        more = f" (+{len(labels) - len(shown)} more)" if len(labels) > len(shown) else ""
        return (
            f"live after {done}/{total} matches ({int(elapsed) // 60}:{int(elapsed) % 60:02d}, "
            f"{faults} with faults), Elo: " + ", ".join(parts) + more
        )


def _follows(label: str, follow: Sequence[str]) -> bool:
    """Whether ``label`` is a bot followed: by its label, or its name for every entry and version of
    it (``mybot`` follows ``mybot#2`` and ``mybot@1a2b3c4d``)."""
    return any(label == f or label.split("#")[0].split("@")[0] == f for f in follow)


def check_follow(follow: Sequence[str], labels: Sequence[str]) -> None:
    """``--follow`` names bots of the run: one clear error, with the closest name, otherwise."""
    import difflib

    for name in follow:
        if not any(_follows(label, [name]) for label in labels):
            close = difflib.get_close_matches(name, list(labels), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ArenaError(f"--follow {name}: no such bot in this run{hint}; the bots are {', '.join(labels)}")


def live_progress(
    bar: Callable[[int, int, float], None], standings: LiveStandings
) -> Callable[[int, int, float], None]:
    """One progress callback: the standings (when due), then the progress line."""

    def progress(done: int, total: int, elapsed: float) -> None:
        standings.tick(done, total)
        bar(done, total, elapsed)

    return progress
