"""How many fewer matches the luck-reduced score needs (arena/analysis/luck.py).

    python benchmarks/luck.py [--matches 1000] [--seed 1] [--pairs probabilistic:cautious,...]
    python benchmarks/luck.py --calibrate [--matches 2000]

For each pair of built-in bots heads up (classic rules, in-process play, so
no sandbox cost), ``--matches`` matches twice over:

- *single*: every match a fresh deal, the bots' seats alternating;
- *paired*: every deal played twice, the bots' seats swapped (``seating:
  rotate``'s duplicate play); one observation per deal, the mean of its two
  (the bots' own random seeds differ between the two plays, as in a run;
  a deterministic bot against itself then wins exactly one of each two:
  no variance, plain or reduced, so no factor: "nan").

For each, the first bot's win share, plain and with the luck of the deal
removed, with 95% half-widths; the standard deviation per match (a paired
deal's times the square root of 2: it holds two matches); and
the factor, plain variance over reduced: how many times fewer matches the
reduced score needs for the same interval; and the matches a 95% interval
of +-20 Elo would take at that share and standard deviation, each way.
``--calibrate`` instead plays ``bots/probabilistic.py`` against itself on
the seed "calibrate" and prints
the least-squares weights of the two features (the constants of
``arena.analysis.luck.MODEL``).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.analysis import luck  # noqa: E402
from arena.engine.records import MatchRecord, derive_seed  # noqa: E402
from arena.engine.rules import Rules  # noqa: E402
from arena.match.inprocess import play_record  # noqa: E402
from arena.protocol.loader import BotFactory, load_python_bot  # noqa: E402

PAIRS = "probabilistic:probabilistic,bluffer:bluffer,probabilistic:cautious,probabilistic:bluffer"


def bot(name: str) -> BotFactory:
    return load_python_bot(str(ROOT / "bots" / f"{name}.py"))


def play(rules: Rules, a: str, b: str, n: int, seed: object, paired: bool) -> list[list[MatchRecord]]:
    """``n`` matches of ``a`` against ``b``, grouped by deal; ``a`` labelled ``a`` even against itself."""
    fa, fb = bot(a), bot(b)
    la, lb = "a:" + a, "b:" + b
    deals: list[list[MatchRecord]] = []
    for i in range(n // 2 if paired else n):
        dice = derive_seed(seed, a, b, i)
        sits = [(0, 1), (1, 0)] if paired else [(0, 1) if i % 2 == 0 else (1, 0)]
        group = []
        for j, order in enumerate(sits):
            factories = [(fa, fb)[k] for k in order]
            names = [(la, lb)[k] for k in order]
            # The bots' own seeds differ between the two plays of a deal, as in a run.
            group.append(
                play_record(
                    rules,
                    factories,
                    dice,
                    names=names,
                    match=f"m-{i:06d}",
                    bots_seed=derive_seed(seed, a, b, i, "bots", j),
                )
            )
        deals.append(group)
    return deals


def share(deal: list[MatchRecord], reduced: bool) -> float:
    """The first bot's mean score over a deal's matches."""
    total = 0.0
    for rec in deal:
        s = luck.scores(rec)
        seat = 0 if s.bots[0].startswith("a:") else 1
        total += (s.reduced if reduced else s.plain)[seat]
    return total / len(deal)


def summary(deals: list[list[MatchRecord]]) -> dict[str, float]:
    plain = np.array([share(d, False) for d in deals])
    red = np.array([share(d, True) for d in deals])
    n = len(deals)
    per = len(deals[0])
    sd, sdr = plain.std(ddof=1), red.std(ddof=1)
    return {
        "matches": n * per,
        "deals": n,
        "mean": plain.mean(),
        "half": luck.Z95 * sd / math.sqrt(n),
        "mean_r": red.mean(),
        "half_r": luck.Z95 * sdr / math.sqrt(n),
        # Per match: a deal of two matches is worth two, so its sd scales by sqrt(2).
        "sd": sd * math.sqrt(per),
        "sd_r": sdr * math.sqrt(per),
        # A deterministic bot against itself on replayed deals wins exactly one of each two:
        # nothing varies, plain or reduced, and there is no factor to speak of.
        "factor": (sd / sdr) ** 2 if sdr > 1e-12 else math.nan,
    }


def elo_matches(share: float, sd: float) -> str:
    """Matches for a 95% interval of +-20 Elo around ``share``: near ``share`` one
    Elo moves the share by share * (1 - share) * ln(10) / 400 (the logistic scale)."""
    slope = share * (1 - share) * math.log(10) / 400
    if slope <= 0 or sd <= 1e-12:  # nothing varies (a deterministic bot against itself, paired)
        return "-"
    return f"{math.ceil((luck.Z95 * sd / (20 * slope)) ** 2)}"


def calibrate(rules: Rules, n: int) -> None:
    deals = play(rules, "probabilistic", "probabilistic", n, "calibrate", False)
    y, x = [], []
    for (rec,) in deals:
        wild = rec.rules.wild_ones
        f = np.zeros(2)
        for rnd in rec.rounds:
            h0, h1 = rnd.dice
            w = wild and not rnd.palifico
            s0, c0 = luck.features(h0, h1, w)
            s1, c1 = luck.features(h1, h0, w)
            f += np.array([s0 - s1, c0 - c1]) / (len(h0) + len(h1) - 1)
        x.append(f)
        y.append(1.0 if rec.placements[0] == 1 else 0.0)
    xa, ya = np.array(x), np.array(y)
    beta, *_ = np.linalg.lstsq(xa - xa.mean(0), ya - ya.mean(), rcond=None)
    print(f"calibration: {n} matches of probabilistic against itself, seed 'calibrate'")
    print(
        f"least-squares weights: strength {beta[0]:.3f}, cross {beta[1]:.3f} "
        f"(in use: {luck.MODEL.strength}, {luck.MODEL.cross})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matches", type=int, default=1000, help="matches per pair and mode")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--pairs", default=PAIRS, help="comma-separated a:b pairs of bots/ files")
    ap.add_argument("--calibrate", action="store_true")
    args = ap.parse_args()
    rules = Rules.preset("classic")
    if args.calibrate:
        calibrate(rules, args.matches)
        return
    print(f"$ python benchmarks/luck.py --matches {args.matches} --seed {args.seed}")
    print(f"model {luck.MODEL.name} (strength {luck.MODEL.strength}, cross {luck.MODEL.cross}); classic, heads up\n")
    print(
        "| pair | deals | matches | share plain | share reduced | sd/match plain | reduced | factor "
        "| matches for ±20 Elo plain | reduced |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    t0 = time.perf_counter()
    for pair in args.pairs.split(","):
        a, b = pair.split(":")
        for paired in (False, True):
            s = summary(play(rules, a, b, args.matches, args.seed, paired))
            print(
                f"| {a} v {b}, {'paired' if paired else 'single'} | {s['deals']} | {s['matches']} "
                f"| {s['mean']:.3f} ± {s['half']:.3f} | {s['mean_r']:.3f} ± {s['half_r']:.3f} "
                f"| {s['sd']:.3f} | {s['sd_r']:.3f} | {s['factor']:.2f} "
                f"| {elo_matches(s['mean'], s['sd'])} | {elo_matches(s['mean'], s['sd_r'])} |"
            )
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
