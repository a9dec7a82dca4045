"""Fit the population prior of ``bots/bayes.py``'s opponent model from run folders.

    python tools/fit_bayes.py RUN [RUN ...] [--exclude bayes] [--pseudo 8] [--out bots/bayes/params.json]

Every decision of every player in the runs' match records (``games.jsonl``:
every hand, every bid and call) is scored under each point of the bot's three
parameter grids (face choice, quantity, calling), bot by bot, with the bot's
own likelihood code. Each bot's scores become a posterior over the grid as if
it had been seen making ``--pseudo`` decisions (its average log-likelihood per
decision, times ``--pseudo``); the prior is the mean of these posteriors over
the bots, mixed with a little of the uniform so no point is ruled out. A new
opponent therefore starts as "one of the bots seen so far, not yet known
which", and a few rounds of its own shown hands decide.

"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.engine.rules import Rules  # noqa: E402
from arena.sdk import Bid  # noqa: E402


def load_bot_module(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("_fit_bayes_bot", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def records(run: Path) -> Iterator[dict[str, Any]]:
    for name in ("games.jsonl", "games.jsonl.gz"):
        path = run / name
        if path.exists():
            opener = gzip.open if name.endswith(".gz") else open
            with opener(path, "rt") as fh:
                for line in fh:
                    try:
                        yield json.loads(line)
                    except ValueError:
                        continue  # a line cut short by an interrupted writer
            return
    raise SystemExit(f"{run}: no games.jsonl or games.jsonl.gz (is it a run folder?)")


def logsumexp(xs: list[float]) -> float:
    m = max(xs)
    return m + math.log(sum(math.exp(x - m) for x in xs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--bot", type=Path, default=ROOT / "bots" / "bayes.py")
    ap.add_argument("--exclude", action="append", default=[], help="bot names not to learn from")
    ap.add_argument("--pseudo", type=float, default=8.0, help="decisions each bot's posterior stands for")
    ap.add_argument("--uniform", type=float, default=0.05, help="weight of the uniform in the prior")
    ap.add_argument("--out", type=Path, default=ROOT / "bots" / "bayes" / "params.json")
    args = ap.parse_args()

    bot = load_bot_module(args.bot)
    flat = {name: [0.0] * len(grid) for name, grid in bot.PARTS}
    profiles: dict[str, Any] = {}
    decisions: dict[str, list[int]] = {}  # name -> [bids, calls faced]
    matches = 0
    for run in args.runs:
        for rec in records(run):
            matches += 1
            rules = Rules.from_dict(rec["rules"])
            names = [n.split("#")[0] for n in rec["bots"]]
            for rnd in rec["rounds"]:
                hands = rnd["dice"]
                counts = [len(h) for h in hands]
                palifico = bool(rnd["palifico"])
                wild = rules.wild_ones and not palifico
                hist: list[tuple[int, Bid]] = []
                call: tuple[int, str] | None = None
                for a in rnd["actions"]:
                    if a[1] == "bid":
                        hist.append((a[0], Bid(a[2], a[3])))
                    else:
                        call = (a[0], a[1])
                for i, (seat, b) in enumerate(hist):
                    name = names[seat]
                    if name in args.exclude:
                        continue
                    prof = profiles.get(name)
                    if prof is None:
                        prof = profiles[name] = bot.Profile(flat)
                        decisions[name] = [0, 0, 0]
                    ctx = bot.context(rules, seat, hist[:i], counts, palifico, wild)
                    if b.face not in ctx.mins:
                        continue
                    prof.observe_bid(ctx, bot.kvec_of(hands[seat], wild), b)
                    decisions[name][0] += 1
                    decisions[name][1] += i > 0
                    decisions[name][2] += i > 0 and ctx.calza
                if call is not None and hist and "fault" not in rnd:
                    seat, kind = call
                    name = names[seat]
                    if name in args.exclude or name not in profiles:
                        continue
                    ctx = bot.context(rules, seat, hist, counts, palifico, wild)
                    profiles[name].observe_call(ctx, bot.kvec_of(hands[seat], wild), kind)
                    decisions[name][1] += 1
                    decisions[name][2] += ctx.calza

    if not profiles:
        raise SystemExit("no decisions found in the runs given")

    per = {"face": 0, "qty": 0, "dudo": 1, "calza": 2}

    def prior(part: str) -> list[float]:
        cells = len(flat[part])
        mix = [0.0] * cells
        used = 0
        for name, prof in profiles.items():
            n = decisions[name][per[part]]
            if n == 0:
                continue
            used += 1
            scaled = [args.pseudo * x / n for x in prof.logp[part]]
            z = logsumexp(scaled)
            for i, x in enumerate(scaled):
                mix[i] += math.exp(x - z)
        return [math.log((1 - args.uniform) * m / max(1, used) + args.uniform / cells) for m in mix]

    out = {
        "fitted_by": "tools/fit_bayes.py",
        "matches": matches,
        "pseudo": args.pseudo,
        "bots": {name: {"bids": d[0], "calls_faced": d[1], "calza_allowed": d[2]}
                 for name, d in sorted(decisions.items())},
        "prior": {part: [round(x, 4) for x in prior(part)] for part in flat},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    for name, prof in sorted(profiles.items()):
        m = prof.best()
        sys.stdout.write(f"{name:<20} bids {decisions[name][0]:6d}  face beta {m.beta:+.0f} eps {m.eps_face} kappa {m.face_kappa}  "
              f"qty pi {m.pi_min} delta {m.delta} sigma {m.sigma} eps {m.eps_q}  "
              f"dudo t {m.dudo_t} w {m.dudo_w} a {m.dudo_a} kappa {m.dudo_kappa}  "
              f"calza t {m.calza_t} a {m.calza_a} eps {m.eps_calza}\n")
    sys.stdout.write(f"wrote {args.out} from {matches} matches\n")


if __name__ == "__main__":
    main()
