"""What live standings cost a run: matches/s with and without them.

    python benchmarks/live_standings.py [--config configs/league.yaml] [--subset 300] [--trials 3]
                                        [--every 5]

The same league matches (fixed seed, 2 workers, sandboxed bots as `arena run`
plays them) are played with the live standings of `arena run` (the observer
parsing every record, the Elo fit with its bootstrap every ``--every``
seconds, written to a null terminal) and without any observer, alternated
``--trials`` times so both see the same machine load. Reported: matches/s of
each and the median of the per-trial ratios (with / without; 1.00 = free),
and, less at the mercy of the machine's load, the time spent inside the
standings' callbacks as a share of the run's wall time (on 2 cores the
parent process's work is taken from the workers).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.apps.standings import LiveStandings, live_progress  # noqa: E402
from arena.running.config import load_config  # noqa: E402
from arena.running.observe import Finished  # noqa: E402
from arena.running.runner import run  # noqa: E402


def timed(config: str, out: Path, matches: int | None, seed: int, every: float | None) -> tuple[float, int, int, float]:
    cfg = load_config(config, (), workers=2, matches=matches, seed=seed, out=str(out))
    shown = [0]
    inside = [0.0]
    observer = progress = None
    if every is not None:

        def sink(text: str) -> None:
            shown[0] += 1

        standings = LiveStandings(sink, every=every, tty=True)
        tick = live_progress(lambda done, total, elapsed: None, standings)

        def observer(rec: Finished) -> bool:
            t = time.perf_counter()
            standings.observe(rec)
            inside[0] += time.perf_counter() - t
            return False

        def progress(done: int, total: int, elapsed: float) -> None:
            t = time.perf_counter()
            tick(done, total, elapsed)
            inside[0] += time.perf_counter() - t

    t0 = time.perf_counter()
    result = run(cfg, progress=progress, observer=observer)
    wall = time.perf_counter() - t0
    if result.status != "complete":
        raise SystemExit(f"run did not complete: {result.status} {result.error}")
    return wall, result.played, shown[0], inside[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="configs/league.yaml")
    ap.add_argument("--subset", type=int, default=300)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--every", type=float, default=5.0)
    args = ap.parse_args()
    os.chdir(ROOT)
    ratios: list[float] = []
    shares: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for t in range(args.trials):
            w0, n0, _, _ = timed(args.config, Path(tmp) / f"off{t}", args.subset, args.seed, None)
            w1, n1, shown, inside = timed(args.config, Path(tmp) / f"on{t}", args.subset, args.seed, args.every)
            ratios.append((n1 / w1) / (n0 / w0))
            shares.append(inside / w1)
            print(
                f"trial {t + 1}: without {n0 / w0:.1f} matches/s, with live standings {n1 / w1:.1f} matches/s "
                f"({shown} displays, {inside:.2f} s of {w1:.1f} s in them), ratio {ratios[-1]:.3f}",
                file=sys.stderr,
            )
    print(
        f"median ratio with/without live standings over {args.trials} trials: {statistics.median(ratios):.3f}; "
        f"time in the standings: median {100 * statistics.median(shares):.2f}% of wall time "
        f"(load {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    main()
