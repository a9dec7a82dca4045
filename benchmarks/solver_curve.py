"""Draw the solver's convergence curves (docs/solver.png) from the CSV tables
`arena solve ... --curve docs/solver/GAME.csv` wrote: exploitability against
iterations, log-log, one line per solved round."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from matplotlib.figure import Figure

ROOT = Path(__file__).resolve().parent.parent


def main(out: str = str(ROOT / "docs" / "solver.png")) -> None:
    fig = Figure(figsize=(8, 4.8), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    for path in sorted((ROOT / "docs" / "solver").glob("*.csv")):
        rows = list(csv.DictReader(path.open()))
        for rnd in dict.fromkeys(r["round"] for r in rows):
            if path.stem.endswith("-2") and rnd == "1-1":
                continue  # the same round as the 1-die game's
            pts = [(int(r["iterations"]), float(r["exploitability"])) for r in rows if r["round"] == rnd]
            label = f"{path.stem.rsplit('-', 1)[0]}, round {rnd} (opener's dice - other's)"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=label)
    ax.axhline(1e-3, color="grey", linestyle="--", linewidth=1)
    ax.text(30, 1.1e-3, "1e-3", color="grey")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("CFR+ iterations")
    ax.set_ylabel("exploitability (matches won per match)")
    ax.set_title("CFR+ on two-player Dudo rounds: exact exploitability of the average strategy")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out)
    print(out)


if __name__ == "__main__":
    main(*sys.argv[1:])
