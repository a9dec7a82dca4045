"""Draw the solver's convergence curves (docs/solver.png) from the CSV tables
`arena solve ... --curve docs/solver/GAME.csv` wrote: exploitability against
iterations, log-log, one line per solved round. Left, the rounds solved
exactly (CFR+); right, the 2-dice matches solved with the last bids
remembered (tables named ``*-recallK.csv``), where the figure of a round is
the exploitability of the match from that round on, certified by the exact
best response over the full tree."""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from matplotlib.figure import Figure

ROOT = Path(__file__).resolve().parent.parent


def main(out: str = str(ROOT / "docs" / "solver.png")) -> None:
    fig = Figure(figsize=(12, 4.8), dpi=100)
    exact, abstract = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    for path in sorted((ROOT / "docs" / "solver").glob("*.csv")):
        if path.stem.startswith("recall-"):
            continue  # the recall sweep (benchmarks/solver_recall.py), a table in docs
        rows = list(csv.DictReader(path.open()))
        recall = "-recall" in path.stem
        game = path.stem.split("-recall")[0]
        ax = abstract if recall else exact
        for rnd in dict.fromkeys(r["round"] for r in rows):
            if "-2" in game and rnd == "1-1":
                continue  # the same round as the 1-die game's
            pts = [(int(r["iterations"]), float(r["exploitability"])) for r in rows if r["round"] == rnd]
            name = game.rsplit("-", 1)[0] if game.endswith(("-1", "-2")) else game
            label = f"{name}, round {rnd}" + (f" (last {path.stem.split('-recall')[1]} bids)" if recall else "")
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=label)
    for ax, title in (
        (exact, "exact rounds, CFR+: the round's exploitability"),
        (abstract, "last bids remembered: the match from that round on, certified exactly"),
    ):
        ax.axhline(1e-3, color="grey", linestyle="--", linewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("iterations")
        ax.set_ylabel("exploitability (matches won per match)")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out)
    print(out)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", default=str(ROOT / "docs" / "solver.png"), help="the PNG to write")
    main(ap.parse_args().out)
