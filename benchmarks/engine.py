"""Engine speed: random legal play in-process, beside OpenSpiel's own Python loop.

    python benchmarks/engine.py [--trials 7] [--seconds 1.0] [--seed 2026] [--cpu N]
                                [--write docs/performance.md]

Three workloads, each a loop of whole games with uniformly random legal moves:

(a) ``neller``, 2 players x 1 die, fixed seating, seat 0 opens: our engine
    through its public API (``new_match``, ``deal``, ``legal_actions``,
    ``apply``), dice drawn with ``rng.choice`` from a seeded ``random.Random``;
(a') the same game in OpenSpiel (``liars_dice``, pip ``open-spiel``), played
    by the Python loop OpenSpiel users write: chance outcomes and actions both
    drawn with ``rng.choice(state.legal_actions())``;
(b) ``classic``, 6 players x 5 dice, seat 0 opens round 1, our engine only.

The machine is shared and noisy, so the workloads run as interleaved trials
of about ``--seconds`` each (the order flips every trial), and the report
gives medians and the median of the per-trial ratios (a) / (a'). A decision
is one player action (bid, dudo or calza); dice rolls (deals, chance nodes)
are not counted as decisions but are inside the timed loop.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from arena.engine.rules import FACES, Rules, apply, deal, legal_actions, new_match  # noqa: E402

Batch = Callable[[int], tuple[int, int, int]]  # games -> (games, decisions, rounds)

NELLER = Rules.preset("neller", {"dice": 1, "seating": "fixed", "first": "seat0"})
CLASSIC = Rules.preset("classic")


def ours(rules: Rules, players: int, seed: int) -> Batch:
    """Random legal play through the engine's public API."""
    rng = random.Random(seed)
    choice = rng.choice

    def batch(games: int) -> tuple[int, int, int]:
        decisions = rounds = 0
        for _ in range(games):
            state = new_match(rules, players, 0)
            while state.placements is None:
                if state.dice is None:
                    state = deal(state, [[choice(FACES) for _ in range(c)] for c in state.counts])
                else:
                    state = apply(state, choice(legal_actions(state)))
                    decisions += 1
            rounds += state.round - 1
        return games, decisions, rounds

    return batch


def openspiel(seed: int) -> Batch:
    """OpenSpiel's liars_dice (2 players x 1 die) from its Python API."""
    import pyspiel

    game = pyspiel.load_game("liars_dice")
    rng = random.Random(seed)
    choice = rng.choice

    def batch(games: int) -> tuple[int, int, int]:
        decisions = 0
        for _ in range(games):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(choice(state.legal_actions()))
                else:
                    state.apply_action(choice(state.legal_actions()))
                    decisions += 1
        return games, decisions, games

    return batch


def openspiel_outcomes(seed: int) -> Batch:
    """The same game, chance nodes sampled from ``chance_outcomes()`` by their
    probabilities, decisions from ``legal_actions(current_player())``: the shape
    of OpenSpiel's documented loop (which samples with ``np.random.choice``;
    ``rng.choices`` here, seeded and cheaper)."""
    import pyspiel

    game = pyspiel.load_game("liars_dice")
    rng = random.Random(seed)
    choice, choices = rng.choice, rng.choices

    def batch(games: int) -> tuple[int, int, int]:
        decisions = 0
        for _ in range(games):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    actions, probs = zip(*state.chance_outcomes())
                    state.apply_action(choices(actions, probs)[0])
                else:
                    state.apply_action(choice(state.legal_actions(state.current_player())))
                    decisions += 1
        return games, decisions, games

    return batch


class Trial(NamedTuple):
    games_s: float  # games per wall-clock second
    decisions_s: float
    per_game: float  # decisions per game
    rounds: float  # rounds per game
    cpu_games_s: float  # games per second of this process's CPU time


def trial(batch: Batch, seconds: float, chunk: int) -> Trial:
    """Play chunks of games for about ``seconds`` of wall time."""
    games = decisions = rounds = 0
    start, cpu = time.perf_counter(), time.process_time()
    while True:
        g, d, r = batch(chunk)
        games += g
        decisions += d
        rounds += r
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            used = time.process_time() - cpu
            return Trial(games / elapsed, decisions / elapsed, decisions / games, rounds / games, games / used)


def measure(trials: int, seconds: float, seed: int) -> dict[str, Any]:
    work = {
        "ours_neller": (ours(NELLER, 2, seed), 500),
        "openspiel": (openspiel(seed), 500),
        "openspiel_outcomes": (openspiel_outcomes(seed), 500),
        "ours_classic": (ours(CLASSIC, 6, seed), 5),
    }
    for batch, chunk in work.values():  # warm up caches before timing
        trial(batch, min(0.2, seconds), chunk)
    results: dict[str, list[Trial]] = {k: [] for k in work}
    order = list(work)
    for t in range(trials):
        for name in order if t % 2 == 0 else order[::-1]:
            batch, chunk = work[name]
            results[name].append(trial(batch, seconds, chunk))

    def ratios(base: str, field: str) -> list[float]:
        return [getattr(a, field) / getattr(b, field) for a, b in zip(results["ours_neller"], results[base])]

    med = {
        name: Trial(*(statistics.median(r[i] for r in rs) for i in range(len(Trial._fields))))
        for name, rs in results.items()
    }
    return {
        "median": med,
        "trials": trials,
        "seconds": seconds,
        "ratios": ratios("openspiel", "games_s"),
        "ratio": statistics.median(ratios("openspiel", "games_s")),
        "cpu_ratio": statistics.median(ratios("openspiel", "cpu_games_s")),
        "ratio2": statistics.median(ratios("openspiel_outcomes", "games_s")),
        "cpu_ratio2": statistics.median(ratios("openspiel_outcomes", "cpu_games_s")),
    }


def machine() -> str:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    try:
        spiel = importlib.metadata.version("open-spiel")
    except importlib.metadata.PackageNotFoundError:
        spiel = "?"
    return (
        f"{dt.date.today().isoformat()}, Python {platform.python_version()}, {platform.machine()}, "
        f"{cores} usable core(s), load average {load:.1f} at the end, open-spiel {spiel}"
    )


def table(res: dict[str, Any]) -> str:
    med = res["median"]
    rows = [
        ("(a) `neller`, 2 players x 1 die, our engine", med["ours_neller"], ""),
        (
            "(a') OpenSpiel `liars_dice`, chance by `choice(legal_actions())`",
            med["openspiel"],
            f"**{res['ratio']:.2f}x** (CPU time {res['cpu_ratio']:.2f}x)",
        ),
        (
            "(a'') OpenSpiel `liars_dice`, chance by `chance_outcomes()`",
            med["openspiel_outcomes"],
            f"{res['ratio2']:.2f}x (CPU time {res['cpu_ratio2']:.2f}x)",
        ),
        ("(b) `classic`, 6 players x 5 dice, our engine", med["ours_classic"], ""),
    ]
    out = [
        "| workload | games/s | decisions/s | decisions per game | rounds per game | (a) / this row |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, t, ratio in rows:
        out.append(
            f"| {label} | {t.games_s:,.0f} | {t.decisions_s:,.0f} | {t.per_game:.2f} | {t.rounds:.1f} | {ratio} |"
        )
    return "\n".join(out)


def section(res: dict[str, Any], command: str) -> str:
    ratios = ", ".join(f"{r:.2f}" for r in sorted(res["ratios"]))
    return f"""## Engine

Random legal play in-process, measured by `benchmarks/engine.py` (command
below): whole games with a uniformly random legal move at every decision.
Our engine runs through its public API (`new_match`, `deal`,
`legal_actions`, `apply`), dice drawn one by one with `rng.choice(FACES)`
from a seeded `random.Random`. OpenSpiel's `liars_dice` (pip `open-spiel`,
the same game as (a)) runs from its Python API in the same process, two
ways: (a') chance outcomes and actions both drawn with
`rng.choice(state.legal_actions())`, the leanest Python loop; (a'') chance
outcomes drawn from `state.chance_outcomes()` by their probabilities and
actions from `state.legal_actions(state.current_player())`, the shape of
OpenSpiel's documented loop (which uses `np.random.choice`; `rng.choices`
here). {res["trials"]} interleaved trials of about {res["seconds"]:g} s per workload, the
order flipped every trial; medians. A decision is one player
action (bid, dudo or calza); dealing and chance nodes are inside the timed
loop but not counted as decisions.

{table(res)}

- (a) against (a'): median of the per-trial ratios **{res["ratio"]:.2f}x**
  (trials, sorted: {ratios}).
- (a) against (a''): {res["ratio2"]:.2f}x.
- By CPU time (`time.process_time`, which leaves out time the process spent
  preempted on a loaded machine): {res["cpu_ratio"]:.2f}x and
  {res["cpu_ratio2"]:.2f}x.
- Machine: {machine()}.
- (b) plays a whole 6-player match per game, every die lost one by one, so
  its games/s is not comparable with (a); its decisions/s is.

Command:

```console
$ {command}
```
"""


INTRO = """Every figure in this file comes from a script in `benchmarks/`, run with the
command shown under its section, on the project's 2-core machine. Where a
figure is compared with a baseline (OpenSpiel, a floor, one worker), the
baseline was measured in the same run, with trials interleaved so that
machine load hits both alike, and the ratio is the median of the per-trial
ratios: absolute figures drift with the machine's load, the ratios much less.
Each section is self-contained and names its script."""


def write(path: Path, text: str) -> None:
    """Put ``text`` in place of the Engine section, and the intro paragraph
    under the title if the file has none yet (other sections are left alone)."""
    from _markdown import replace_section

    old = path.read_text(encoding="utf-8") if path.exists() else "# Performance\n"
    if "run with the\ncommand shown under its section" not in old:
        lines = old.splitlines()
        first = next((i for i, line in enumerate(lines) if line.startswith("## ")), len(lines))
        body = "\n".join(lines[first:])
        path.write_text("# Performance\n\n" + INTRO + "\n\n" + body.rstrip("\n") + "\n", encoding="utf-8")
    replace_section(path, "## Engine", text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=1.0, help="length of one trial of one workload")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--cpu", type=int, default=None, help="pin this process to one core")
    ap.add_argument("--write", help="update the '## Engine' section of this markdown file")
    args = ap.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    command = "python benchmarks/engine.py" + "".join(
        f" {flag} {value}"
        for flag, value in (
            ("--trials", args.trials),
            ("--seconds", args.seconds),
            ("--seed", args.seed),
            ("--cpu", args.cpu),
            ("--write", args.write),
        )
        if value is not None
    )
    res = measure(args.trials, args.seconds, args.seed)
    text = section(res, command)
    print(text)
    if args.write:
        write(ROOT / args.write if not Path(args.write).is_absolute() else Path(args.write), text)
        print(f"wrote the Engine section of {args.write}")


if __name__ == "__main__":
    main()
