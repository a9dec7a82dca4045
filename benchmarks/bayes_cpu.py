"""CPU per decision of the strong bot (bots/bayes.py) against a baseline version of it, interleaved.

    python benchmarks/bayes_cpu.py [--baseline main] [--matches 40] [--trials 3] [--warmup 20] [--profile]

Both versions play the same in-process matches, shaped as the default league's
(``classic``, 4 to 6 players, the other seats drawn from the league's Python
bots), one bayes seat per table. A bot's CPU is everything it does in its own
calls (``start``, ``act``, ``round_end``, ``match_end``: in a sandbox the work
done on a notification is charged to the next turn's CPU), divided by its
decisions. The baseline is ``bots/bayes.py`` and ``bots/bayes/`` as committed at
``--baseline`` (extracted with ``git archive``); the two play each match in turn,
alternating which goes first, and the figure that matters is the per-trial ratio.
Each match's decisions of the two versions are compared too: the last line says in
how many matches they were all the same (a cut that keeps the method exact keeps them). ``--profile``
instead runs cProfile over the current version's matches and prints the top of it.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from arena.engine.rules import Rules
from arena.match.inprocess import play_inprocess
from arena.protocol.loader import BotFactory, load_python_bot
from arena.sdk import Bot

ROOT = Path(__file__).resolve().parent.parent
OTHERS = ("calza", "cautious", "bluffer", "equilibrium", "probabilistic", "random")


class Meter:
    """CPU time (this thread's) spent in one bot version's calls, and its decisions."""

    def __init__(self) -> None:
        self.cpu = 0.0
        self.decisions = 0
        self.actions: list[str] = []  # every decision's action, in order: the versions must agree

    def wrap(self, factory: BotFactory) -> Callable[[], Bot]:
        def make() -> Bot:
            bot = factory()
            for name in ("start", "act", "round_end", "match_end"):
                setattr(bot, name, self._timed(getattr(bot, name), name == "act"))  # the bot's own calls, timed
            return bot

        return make

    def _timed(self, fn: Callable[..., Any], counts: bool) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            t0 = time.thread_time()
            try:
                out = fn(*args)
            finally:
                self.cpu += time.thread_time() - t0
                self.decisions += counts
            if counts:
                self.actions.append(str(out))
            return out

        return call


def tables(matches: int, seed: int) -> list[tuple[int, list[str], int]]:
    """(match seed, seats with "bayes" at one of them, bayes's seat) for each match."""
    rng = random.Random(seed)
    out = []
    for i in range(matches):
        n = rng.choice((4, 5, 6))
        seats = [rng.choice(OTHERS) for _ in range(n - 1)]
        at = rng.randrange(n)
        seats.insert(at, "bayes")
        out.append((seed * 100_000 + i, seats, at))
    return out


def play(
    bayes: BotFactory,
    others: Mapping[str, BotFactory],
    plan: list[tuple[int, list[str], int]],
    meter: Meter | None = None,
) -> Meter:
    meter = meter or Meter()
    timed = meter.wrap(bayes)
    rules = Rules.preset("classic")
    for seed, seats, _ in plan:
        play_inprocess(rules, [timed if s == "bayes" else others[s] for s in seats], seed, names=seats)
    return meter


def baseline_bot(ref: str, into: str) -> BotFactory:
    blob = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "bots/bayes.py", "bots/bayes"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(into, filter="data")
    return load_python_bot(os.path.join(into, "bots", "bayes.py"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", default="main", help="git ref of the baseline bots/bayes.py")
    ap.add_argument("--matches", type=int, default=40)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--warmup", type=int, default=20, help="unmeasured matches each version plays first")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    others = {name: load_python_bot(ROOT / "bots" / f"{name}.py") for name in OTHERS}
    current = load_python_bot(ROOT / "bots" / "bayes.py")
    if args.profile:
        play(current, others, tables(args.warmup, args.seed - 1))  # warm, as in the timed runs
        prof = cProfile.Profile()
        prof.enable()
        m = play(current, others, tables(args.matches, args.seed))
        prof.disable()
        print(f"{m.decisions} decisions, {1000 * m.cpu / m.decisions:.3f} ms CPU each (under cProfile)")
        pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(25)
        return
    with tempfile.TemporaryDirectory() as tmp:
        base = baseline_bot(args.baseline, tmp)
        # both versions first play a few unmeasured matches: a bot process of a league plays
        # hundreds, so what either keeps from match to match is warm there too
        for bot in (base, current):
            play(bot, others, tables(args.warmup, args.seed - 1))
        print(
            f"load: {os.getloadavg()[0]:.2f} (1 min)  matches per trial: {args.matches}, after {args.warmup} unmeasured"
        )
        print(f"{'trial':>5} {'baseline ms':>12} {'current ms':>11} {'ratio':>7} {'decisions':>10}")
        ratios, per_base, per_cur = [], [], []
        same = played = 0
        for t in range(args.trials):
            got = {"base": Meter(), "cur": Meter()}
            # match by match, alternating which version plays it first: a load that comes and
            # goes falls on both alike
            for i, one in enumerate(tables(args.matches, args.seed + t)):
                order: list[tuple[str, BotFactory]] = [("base", base), ("cur", current)]
                if (i + t) % 2:
                    order.reverse()
                marks = {label: len(m.actions) for label, m in got.items()}
                for label, bot in order:
                    play(bot, others, [one], got[label])
                # the same seeds and the same other bots: the match goes the same if, and only
                # if, every one of the bot's decisions is the same
                same += got["base"].actions[marks["base"] :] == got["cur"].actions[marks["cur"] :]
                played += 1
            b = 1000 * got["base"].cpu / got["base"].decisions
            c = 1000 * got["cur"].cpu / got["cur"].decisions
            per_base.append(b)
            per_cur.append(c)
            ratios.append(b / c)
            print(f"{t:>5} {b:12.3f} {c:11.3f} {b / c:6.2f}x {got['cur'].decisions:>5}/{got['base'].decisions}")
        print(
            f"median: baseline {statistics.median(per_base):.3f} ms, current {statistics.median(per_cur):.3f} ms,"
            f" speed-up {statistics.median(ratios):.2f}x  (load now {os.getloadavg()[0]:.2f})"
        )
        print(f"identical decisions in {same} of {played} matches")


if __name__ == "__main__":
    main()
