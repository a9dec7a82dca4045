"""How many fewer matches the luck-reduced score needs (arena/analysis/luck.py).

    python benchmarks/luck.py [--matches 1000] [--seed 1] [--pairs probabilistic:cautious,...]
    python benchmarks/luck.py --sprt 200 [--max-pairs 2000] [--cases a:b:elo,...]
    python benchmarks/luck.py --calibrate-table [--matches 20000]
    python benchmarks/luck.py --calibrate [--matches 2000]

For each pair of bots heads up (classic rules, in-process play, so no
sandbox cost), ``--matches`` matches twice over:

- *single*: every match a fresh deal, the bots' seats alternating;
- *paired*: every deal played twice, the bots' seats swapped (``seating:
  rotate``'s duplicate play); one observation per deal, the mean of its two
  (the bots' own random seeds differ between the two plays, as in a run;
  a deterministic bot against itself then wins exactly one of each two:
  no variance, plain or reduced, so no factor: "nan").

For each, the first bot's win share plain with its 95% half-width and
reduced by the regression estimator (``luck.Regression`` on
``luck.match_features``, coefficients from earlier deals only); the
standard deviation per match (a paired deal's times the square root of 2:
it holds two matches); the factor, plain variance over reduced: how many
times fewer matches the reduced score needs for the same interval, for the
regression and for the table model and the linear model each subtracted
alone (coefficient 1); and the matches a 95% interval of +-20 Elo would
take at that share and standard deviation, plain and reduced.

``--sprt TESTS`` simulates TESTS heads-up SPRTs per case on paired deals,
each decided by today's test and by the luck-reduced one on the same pairs
(:func:`sprt_sim`): the share of tests accepting H1 (the false-alarm rate
when the true Elo is 0) with 95% intervals, the average matches to a
decision, and the mean pair score plain and reduced (the same, unbiased).
``--calibrate-table`` writes arena/analysis/luck_table.py from
``bots/probabilistic.py`` against itself on the seed "calibrate-table";
``--calibrate`` prints the least-squares weights of the linear model's two
features (the constants of ``arena.analysis.luck.MODEL``).
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
from arena.running import sprt  # noqa: E402

PAIRS = "probabilistic:probabilistic,bluffer:bluffer,probabilistic:cautious,probabilistic:bluffer"


def bot(name: str) -> BotFactory:
    """A bot of bots/ by name, or any bot file by its path from the repository's root."""
    return load_python_bot(str(ROOT / name if name.endswith(".py") else ROOT / "bots" / f"{name}.py"))


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


def share(deal: list[MatchRecord], model: luck.LuckModel | None | str) -> float:
    """The first bot's mean score over a deal's matches: plain (``model`` "plain"),
    or less its luck by the table model (None) or a linear one."""
    total = 0.0
    for rec in deal:
        won = 1.0 if rec.placements[0] == 1 else 0.0
        seat0 = won - (
            0.0 if model == "plain" else luck.match_luck(rec, model if isinstance(model, luck.LuckModel) else None)
        )
        total += seat0 if rec.bots[0].startswith("a:") else 1.0 - seat0
    return total / len(deal)


def summary(deals: list[list[MatchRecord]]) -> dict[str, float]:
    plain = np.array([share(d, "plain") for d in deals])
    lin = np.array([share(d, luck.MODEL) for d in deals])
    red = np.array([share(d, None) for d in deals])
    reg = luck.Regression()  # as arena ratings --luck reduces (head_to_head)
    regressed = []
    for d in deals:  # in play order: each deal reduced with coefficients from the deals before it
        fs = [a_features(rec) for rec in d]
        feats = [sum(f[i] for f, _ in fs) / len(fs) for i in range(len(luck.FEATURES))]
        regressed.append(reg.reduce(sum(w for _, w in fs) / len(fs), feats))
    rg = np.array(regressed)
    n = len(deals)
    per = len(deals[0])
    sd, sdl, sdr, sdg = plain.std(ddof=1), lin.std(ddof=1), red.std(ddof=1), rg.std(ddof=1)
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
        "factor_lin": (sd / sdl) ** 2 if sdl > 1e-12 else math.nan,
        "mean_g": rg.mean(),
        "sd_g": sdg * math.sqrt(per),
        "factor_g": (sd / sdg) ** 2 if sdg > 1e-12 else math.nan,
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


def round_outcome(change: tuple[int, int] | None) -> int | None:
    """Seat 0's result of a round in halves: 2 won (seat 1 lost a die or seat 0 gained
    one), 0 lost, 1 neither (a right calza at the maximum); None for a void round."""
    if change is None:
        return None
    seat, delta = change
    if delta == 0:
        return 1
    return 2 if (seat == 1) == (delta < 0) else 0


def calibrate_table(rules: Rules, n: int) -> None:
    """Write arena/analysis/luck_table.py: per round start and deal features, how
    often the holder won the round, in ``n`` matches of probabilistic against itself
    on the seed "calibrate-table" (never a run's seed). Every round is counted from
    both players' side, so the table is symmetric: the two players' values of a
    deal add up to exactly 1."""
    deals = play(rules, "probabilistic", "probabilistic", n, "calibrate-table", False)
    cells: dict[tuple[int, ...], list[int]] = {}
    rounds = 0
    for (rec,) in deals:
        for rnd in rec.rounds:
            h0, h1 = rnd.dice
            y = round_outcome(rnd.change)
            if y is None or not h0 or not h1 or max(len(h0), len(h1)) > luck.TABLE_DICE:
                continue
            rounds += 1
            w = int(rec.rules.wild_ones and not rnd.palifico)
            for hand, other, opener, won in ((h0, h1, rnd.opener, y), (h1, h0, 1 - rnd.opener, 2 - y)):
                key = (len(hand), len(other), opener, w, *luck.table_key(hand, other, bool(w)))
                cell = cells.setdefault(key, [0, 0])
                cell[0] += won
                cell[1] += 1
    name = f"dice-table-1 ({n} matches of probabilistic against itself, seed 'calibrate-table')"
    body = "\n".join(f"    {k!r}: ({v[0]}, {v[1]})," for k, v in sorted(cells.items()))
    text = (
        '"""The table model of arena/analysis/luck.py, written by\n\n'
        f"    python benchmarks/luck.py --calibrate-table --matches {n}\n\n"
        "Key: (own dice, other's dice, 0 if the holder opens the round else 1, aces wild,\n"
        "own best face's count in own hand, the other's in theirs, own best face's count\n"
        "over both hands, the other's over both). Value: (round wins in halves, rounds).\n"
        "Generated, fixed: no run's results ever change it.\n"
        '"""\n\n'
        f"NAME = {name!r}\n"
        f"CELLS: dict[tuple[int, ...], tuple[int, int]] = {{\n{body}\n}}\n"
    )
    (ROOT / "arena" / "analysis" / "luck_table.py").write_text(text)
    print(f"{name}: {rounds} rounds, {len(cells)} cells")


def a_features(rec: MatchRecord) -> tuple[list[float], float]:
    """Bot ``a``'s luck features and result in one match (labels from :func:`play`'s pattern)."""
    seat = 0 if rec.bots[0].startswith("a:") else 1
    sign = 1.0 if seat == 0 else -1.0
    return [sign * x for x in luck.match_features(rec)], 1.0 if rec.placements[seat] == 1 else 0.0


def sprt_sim(rules: Rules, a: str, b: str, tests: int, max_pairs: int, seed: object) -> dict[str, float]:
    """``tests`` heads-up SPRTs (elo0 0, elo1 20, alpha = beta = 0.05) of ``a`` against ``b``
    on paired deals as ``arena sprt`` schedules them (one deal, ``a`` at a seat then
    ``b`` at it, the seat alternating; the bots' own seeds differ), each test
    decided twice over the same stream of pairs: today's trinomial test on the plain
    pair scores (arena.running.sprt.llr, without the integrity check, which never
    concerns honest bots here) and the luck-reduced one (luck.LuckSprt)."""
    fa, fb = bot(a), bot(b)
    lower, upper = sprt.wald_bounds(0.05, 0.05)
    out = {"h1_plain": 0, "h1_red": 0, "none_plain": 0, "none_red": 0, "pairs_plain": 0, "pairs_red": 0}
    plain_all: list[float] = []
    red_all: list[float] = []
    for i in range(tests):
        counts = [0.0, 0.0, 0.0]
        verdict: str | None = None
        reduced = luck.LuckSprt(0.0, 20.0, 0.05, 0.05)
        t = 0
        while t < max_pairs and (verdict is None or reduced.verdict is None):
            dice = derive_seed(seed, a, b, "sprt", i, t)
            feats = [0.0, 0.0, 0.0]
            score = 0.0
            for r, order in enumerate([(0, 1), (1, 0)] if t % 2 == 0 else [(1, 0), (0, 1)]):
                rec = play_record(
                    rules,
                    [(fa, fb)[k] for k in order],
                    dice,
                    names=[("a:" + a, "b:" + b)[k] for k in order],
                    match=f"m-{2 * t + r:06d}",
                    strict=False,
                    bots_seed=derive_seed(seed, a, b, "sprt", i, t, r),
                )
                f, won = a_features(rec)
                feats = [x + y / 2 for x, y in zip(feats, f)]
                score += won / 2
            t += 1
            if verdict is None:
                counts[int(score * 2)] += 1
                v = sprt.llr(counts, 0.0, 20.0)
                if v >= upper or v <= lower:
                    verdict = "H1" if v >= upper else "H0"
                    out["h1_plain"] += verdict == "H1"
                    out["pairs_plain"] += t
            if reduced.verdict is None:
                before = reduced.regression.coefficients()
                red_all.append(score - sum(c * x for c, x in zip(before, feats)))
                plain_all.append(score)
                if reduced.add(score, feats) is not None:
                    out["h1_red"] += reduced.verdict == "H1"
                    out["pairs_red"] += t
        if verdict is None:
            out["none_plain"] += 1
            out["pairs_plain"] += t
        if reduced.verdict is None:
            out["none_red"] += 1
            out["pairs_red"] += t
    out["mean_plain"] = float(np.mean(plain_all))
    out["mean_red"] = float(np.mean(red_all))
    out["se_plain"] = float(np.std(plain_all, ddof=1) / math.sqrt(len(plain_all)))
    out["se_red"] = float(np.std(red_all, ddof=1) / math.sqrt(len(red_all)))
    return out


def wilson(k: int, n: int) -> str:
    """k of n with a 95% Wilson interval."""
    p, z = k / n, luck.Z95
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return f"{k}/{n} = {p:.3f} [{max(centre - half, 0):.3f}, {min(centre + half, 1):.3f}]"


SPRT_CASES = "tests/bots/jitter.py:tests/bots/jitter.py:0,tests/bots/jitter.py:tests/bots/jitter_concede.py:20"


def sprt_main(rules: Rules, tests: int, max_pairs: int, seed: str, cases: str) -> None:
    print(f"$ python benchmarks/luck.py --sprt {tests} --max-pairs {max_pairs} --seed {seed} --cases {cases}")
    print("heads up, classic, paired deals; elo0 0, elo1 20, alpha = beta = 0.05\n")
    print(
        "| A v B | true Elo | tests | H1 plain | H1 reduced | undecided plain / reduced "
        "| matches to decide plain | reduced | ratio | mean pair score plain | reduced |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for case in cases.split(","):
        a, b, elo = case.split(":")
        t0 = time.perf_counter()
        r = sprt_sim(rules, a, b, tests, max_pairs, seed)
        mp, mr = 2 * r["pairs_plain"] / tests, 2 * r["pairs_red"] / tests
        name = lambda x: Path(x).stem  # noqa: E731
        print(
            f"| {name(a)} v {name(b)} | {elo} | {tests} | {wilson(int(r['h1_plain']), tests)} "
            f"| {wilson(int(r['h1_red']), tests)} | {int(r['none_plain'])} / {int(r['none_red'])} "
            f"| {mp:.0f} | {mr:.0f} | {mp / mr:.2f} | {r['mean_plain']:.4f} ± {r['se_plain']:.4f} "
            f"| {r['mean_red']:.4f} ± {r['se_red']:.4f} |",
            flush=True,
        )
        print(f"<!-- {time.perf_counter() - t0:.0f} s -->", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matches", type=int, default=1000, help="matches per pair and mode")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--pairs", default=PAIRS, help="comma-separated a:b pairs of bots/ files")
    ap.add_argument("--sprt", type=int, metavar="TESTS", help="simulate TESTS SPRTs per case instead")
    ap.add_argument("--max-pairs", type=int, default=2000, help="pairs at most per simulated SPRT")
    ap.add_argument("--cases", default=SPRT_CASES, help="comma-separated a:b:true-elo SPRT cases")
    ap.add_argument("--calibrate", action="store_true", help="print the linear model's least-squares weights")
    ap.add_argument("--calibrate-table", action="store_true", help="write arena/analysis/luck_table.py")
    args = ap.parse_args()
    rules = Rules.preset("classic")
    if args.calibrate:
        calibrate(rules, args.matches)
        return
    if args.sprt:
        sprt_main(rules, args.sprt, args.max_pairs, args.seed, args.cases)
        return
    if args.calibrate_table:
        calibrate_table(rules, args.matches)
        return
    print(f"$ python benchmarks/luck.py --matches {args.matches} --seed {args.seed} --pairs {args.pairs}")
    print(
        f"model {luck.luck_table.NAME}; linear model {luck.MODEL.name} (strength {luck.MODEL.strength}, "
        f"cross {luck.MODEL.cross}); classic, heads up\n"
    )
    print(
        "| pair | deals | matches | share plain | share, regression | sd/match plain | regression "
        "| factor: regression | table alone | linear alone | matches for ±20 Elo plain | regression |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    t0 = time.perf_counter()
    for pair in args.pairs.split(","):
        a, b = pair.split(":")
        for paired in (False, True):
            s = summary(play(rules, a, b, args.matches, args.seed, paired))
            print(
                f"| {a} v {b}, {'paired' if paired else 'single'} | {s['deals']} | {s['matches']} "
                f"| {s['mean']:.3f} ± {s['half']:.3f} | {s['mean_g']:.3f} "
                f"| {s['sd']:.3f} | {s['sd_g']:.3f} | {s['factor_g']:.2f} | {s['factor']:.2f} | {s['factor_lin']:.2f} "
                f"| {elo_matches(s['mean'], s['sd'])} | {elo_matches(s['mean'], s['sd_g'])} |",
                flush=True,
            )
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
