"""The Ray backend's overhead per match against the local backend, side by side.

    python benchmarks/backends.py [--config configs/quick.yaml] [--matches 200] [--workers 2]
                                  [--trials 2] [--write docs/performance.md]

Both backends play the very same matches (same config and seed) with the same
number of workers (CPUs), alternately, each into a fresh folder. Reported per
backend: the start-up (from the call to the first recorded match), the steady
per-match time (from the first to the last recorded match, divided by the
matches in between), and the wall time of the whole run.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from arena.running.config import load_config  # noqa: E402
from arena.running.runner import run  # noqa: E402


def measure(config: str, out: Path, backend: str, workers: int, matches: int, seed: int) -> dict[str, float]:
    cfg = load_config(config, (), workers=workers, matches=matches, seed=seed, out=str(out), backend=backend)
    stamps: list[float] = []
    t0 = time.perf_counter()
    result = run(cfg, progress=lambda done, total, el: stamps.append(time.perf_counter()))
    wall = time.perf_counter() - t0
    if result.status != "complete":
        raise SystemExit(f"{backend} run did not complete: {result.error}")
    done = stamps[1:]  # the first call reports the start, before any match
    return {
        "startup": done[0] - t0,
        "per_match_ms": 1000 * (done[-1] - done[0]) / max(1, len(done) - 1),
        "wall": wall,
        "matches": result.played,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="configs/quick.yaml")
    ap.add_argument("--matches", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--write")
    args = ap.parse_args()
    os.chdir(ROOT)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    res: dict[str, list[dict[str, float]]] = {"local": [], "ray": []}
    with tempfile.TemporaryDirectory() as tmp:
        for t in range(args.trials):
            for backend in ("local", "ray"):
                m = measure(args.config, Path(tmp) / f"{backend}{t}", backend, args.workers, args.matches, args.seed)
                res[backend].append(m)
                print(f"trial {t + 1} {backend}: {m}", file=sys.stderr)

    def med(backend: str, key: str) -> float:
        return statistics.median(r[key] for r in res[backend])

    overhead = med("ray", "per_match_ms") - med("local", "per_match_ms")
    ratio = med("ray", "per_match_ms") / med("local", "per_match_ms")
    cmd = (
        f"python benchmarks/backends.py --config {args.config} --matches {args.matches} "
        f"--workers {args.workers} --trials {args.trials}"
    )
    text = "\n".join(
        [
            "## Backends",
            "",
            f"Measured {time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, {args.workers} workers "
            f"(CPUs) for both, {args.matches} matches of `{args.config}`, medians of {args.trials} alternated "
            f"trials, with `{cmd}`.",
            "",
            "| backend | start-up to first record | steady time per match | wall time |",
            "|---|---|---|---|",
            *(
                f"| {b} | {med(b, 'startup'):.2f} s | {med(b, 'per_match_ms'):.1f} ms | {med(b, 'wall'):.1f} s |"
                for b in ("local", "ray")
            ),
            "",
            f"Ray's overhead per match: {overhead:+.1f} ms ({ratio:.2f}x the local backend's steady time per "
            f"match); its start-up (a local Ray instance, actors, shipping the bot files) is paid once per run.",
            "",
        ]
    )
    print(text)
    if args.write:
        from _markdown import replace_section

        replace_section(Path(args.write), "## Backends", text)


if __name__ == "__main__":
    main()
