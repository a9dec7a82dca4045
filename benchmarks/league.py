"""The default league's speed: wall time, matches/s, and the speed-up of 2 workers over 1.

    python benchmarks/league.py [--config configs/league.yaml] [--subset N] [--trials 1]
                                [--write docs/performance.md]

The whole default league (or its first ``--subset`` matches) is played with 2
workers and with 1 worker, sandboxed bots as `arena run` plays it, alternated
``--trials`` times so both see the same machine load. Reported: wall time and
matches/s of each, and the median of the per-trial speed-ups.

Every run plays into a fresh temporary folder with a fixed seed, so both
sides play the very same matches.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.running.config import load_config  # noqa: E402
from arena.running.runner import run  # noqa: E402


def timed_run(config: str, out: Path, workers: int, matches: int | None, seed: int) -> tuple[float, int]:
    cfg = load_config(config, (), workers=workers, matches=matches, seed=seed, out=str(out))
    t0 = time.perf_counter()
    result = run(cfg)
    wall = time.perf_counter() - t0
    if result.status != "complete":
        raise SystemExit(f"run did not complete: {result.status} {result.error}")
    return wall, result.played


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="configs/league.yaml")
    ap.add_argument("--subset", type=int, default=None, help="play only this many matches (default: all)")
    ap.add_argument("--trials", type=int, default=1)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--write", help="update the '## League' section of this markdown file")
    args = ap.parse_args()
    os.chdir(ROOT)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()

    with tempfile.TemporaryDirectory() as tmp:
        ratios, one, two = [], [], []
        for t in range(args.trials):
            w2, n2 = timed_run(args.config, Path(tmp) / f"two{t}", 2, args.subset, args.seed)
            w1, n1 = timed_run(args.config, Path(tmp) / f"one{t}", 1, args.subset, args.seed)
            two.append((w2, n2))
            one.append((w1, n1))
            ratios.append((n2 / w2) / (n1 / w1))
            print(
                f"trial {t + 1}: 2 workers {n2} matches in {w2:.1f} s, 1 worker {w1:.1f} s, speed-up {ratios[-1]:.2f}x",
                file=sys.stderr,
            )
    full_wall, full_n = sorted(two)[len(two) // 2]
    one_wall, one_n = sorted(one)[len(one) // 2]

    cmd = f"python benchmarks/league.py --config {args.config} --trials {args.trials}" + (
        f" --subset {args.subset}" if args.subset else ""
    )
    lines = [
        "## League",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on {cores} cores, Python {platform.python_version()}, with `{cmd}`.",
        "",
        "| what | figure |",
        "|---|---|",
        f"| matches of {args.config} played | {full_n} |",
        f"| 2 workers: wall time (median of {args.trials}) | {full_wall:.1f} s |",
        f"| 2 workers: matches/s | {full_n / full_wall:.1f} |",
        f"| 1 worker: wall time (median of {args.trials}) | {one_wall:.1f} s |",
        f"| 1 worker: matches/s | {one_n / one_wall:.1f} |",
        f"| speed-up of 2 workers over 1 (median of per-trial ratios) | {statistics.median(ratios):.2f}x |",
        "",
        "Wall time is what `arena run` takes, start to end: the handshake of every bot, the start "
        "of the worker pool and of each worker's bots, the matches, and matches.parquet. Targets: "
        "speed-up at least 1.8x; the default league under 60 s on 2 cores.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from _markdown import replace_section  # noqa: E402

        replace_section(Path(args.write), "## League", text)


if __name__ == "__main__":
    main()
