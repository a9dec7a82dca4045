"""How long the analysis of a run takes: loading, rating, variant statistics.

    python benchmarks/ratings.py [--matches 2000] [--bots 10] [--resamples 200] [--trials 3]

1. Rating: ``--matches`` finishing orders of 2 to 6 of ``--bots`` bots drawn
   from known Plackett-Luce strengths (no bots play), written as a run folder,
   then ``arena.analysis.stats.rate_results`` with ``--resamples`` bootstrap resamples.
   Reported with the time of one fit of the same data, measured in the same
   trial, so the ratio (fits' worth of work per table) does not depend on the
   machine's load.
2. Loading and statistics: a league of matches played by the rules engine
   with simple in-process policies (tests/synth_records.py), loaded with
   ``arena.analysis.results.load`` and summarised by ``arena.analysis.stats.variant_stats``.

Medians over ``--trials``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import synth_records as S  # noqa: E402

from arena.analysis import ratings as rt  # noqa: E402
from arena.analysis import results, stats  # noqa: E402


def orders(matches: int, bots: int, seed: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    theta = np.linspace(-1.5, 1.5, bots)
    recs = []
    for i in range(matches):
        k = int(rng.integers(2, min(6, bots) + 1))
        players = rng.choice(bots, k, replace=False)
        order = players[np.argsort(-(theta[players] + rng.gumbel(size=k)))]
        place = {int(p): j + 1 for j, p in enumerate(order)}
        recs.append(
            {
                "match": f"m{i:05d}",
                "variant": "classic",
                "rules": {},
                "seed": i,
                "bots": [f"bot{p}" for p in players],
                "placements": [place[int(p)] for p in players],
                "first": 0,
                "rounds": [],
                "rounds_played": 0,
            }
        )
    return recs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--matches", type=int, default=2000)
    ap.add_argument("--bots", type=int, default=10)
    ap.add_argument("--resamples", type=int, default=200)
    ap.add_argument("--trials", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = S.write_run(Path(tmp) / "orders", orders(args.matches, args.bots, 0), {"classic": {}})
        league = S.league(Path(tmp) / "league", matches_per_variant=500)
        rate_s, fit_s, load_s, stats_s = [], [], [], []
        for _ in range(args.trials):
            res = results.load(folder)
            bots, ranks = stats.rankings(res.seats, res.matches)
            t = time.perf_counter()
            rt.fit_plackett_luce(len(bots), ranks)
            fit_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            stats.rate_results(res, resamples=args.resamples)
            rate_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            played = results.load(league)
            load_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            stats.variant_stats(played)
            stats_s.append(time.perf_counter() - t)
        rate, fit = statistics.median(rate_s), statistics.median(fit_s)
        print(
            f"rating {args.matches} matches, {args.bots} bots, {args.resamples} resamples: {rate:.2f} s "
            f"(one fit {fit * 1000:.1f} ms; the table costs {rate / fit:.0f} fits)"
        )
        print(
            f"loading {len(played.matches)} played matches ({len(played.rounds)} rounds, "
            f"{len(played.actions)} actions): {statistics.median(load_s):.2f} s; "
            f"variant statistics: {statistics.median(stats_s):.2f} s"
        )


if __name__ == "__main__":
    main()
