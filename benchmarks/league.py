"""The default league's speed: wall time, matches/s, and the speed-up of 2 workers over 1.

    python benchmarks/league.py [--config configs/league.yaml] [--subset 300] [--trials 3]
                                [--write docs/performance.md]

1. The whole default league with 2 workers (sandboxed bots, as `arena run`
   plays it): wall time and matches/s.
2. The speed-up: the first ``--subset`` matches of the same league with 1
   worker and with 2 workers, alternated ``--trials`` times so both see the
   same machine load; the median of the per-pair ratios is reported.

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

from arena.config import load_config  # noqa: E402
from arena.runner import run  # noqa: E402


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
    ap.add_argument("--subset", type=int, default=300, help="matches for the 1-vs-2-worker comparison")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--write", help="update the '## League' section of this markdown file")
    args = ap.parse_args()
    os.chdir(ROOT)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()

    with tempfile.TemporaryDirectory() as tmp:
        full_wall, full_n = timed_run(args.config, Path(tmp) / "full", 2, None, args.seed)
        ratios, one_w, two_w = [], [], []
        for t in range(args.trials):
            w1, n1 = timed_run(args.config, Path(tmp) / f"one{t}", 1, args.subset, args.seed)
            w2, n2 = timed_run(args.config, Path(tmp) / f"two{t}", 2, args.subset, args.seed)
            one_w.append(n1 / w1)
            two_w.append(n2 / w2)
            ratios.append((n2 / w2) / (n1 / w1))
            print(f"trial {t + 1}: 1 worker {n1 / w1:.1f} matches/s, 2 workers {n2 / w2:.1f} matches/s, "
                  f"speed-up {ratios[-1]:.2f}x", file=sys.stderr)

    cmd = f"python benchmarks/league.py --config {args.config} --subset {args.subset} --trials {args.trials}"
    lines = [
        "## League",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on {cores} cores, Python {platform.python_version()}, "
        f"with `{cmd}`.",
        "",
        "| what | figure |",
        "|---|---|",
        f"| default league ({args.config}), 2 workers: matches | {full_n} |",
        f"| default league, 2 workers: wall time | {full_wall:.1f} s |",
        f"| default league, 2 workers: matches/s | {full_n / full_wall:.1f} |",
        f"| first {args.subset} matches, 1 worker: matches/s (median of {args.trials}) | "
        f"{statistics.median(one_w):.1f} |",
        f"| first {args.subset} matches, 2 workers: matches/s (median of {args.trials}) | "
        f"{statistics.median(two_w):.1f} |",
        f"| speed-up of 2 workers over 1 (median of per-trial ratios) | {statistics.median(ratios):.2f}x |",
        "",
        "Wall time includes the handshake of every bot and the start of the worker pool. Targets: "
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
