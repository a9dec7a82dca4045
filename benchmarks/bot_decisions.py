"""Decision time of the built-in Python bots, in-process (no sandbox, no pipe).

    python benchmarks/bot_decisions.py [--turns 5000]

Each bot answers the same fuzzed turns ``arena check`` uses (every preset, 2-10
players, 1-10 dice); the figures are the bot's own CPU time per decision,
parsing of the turn message included, beside the floor measured in the same
run: a bot that returns its first legal action without looking at anything.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from arena.apps.check import percentiles, run_check
from arena.match.inprocess import InProcessTransport
from arena.protocol.loader import load_python_bot
from arena.sdk import DUDO, Bot, Turn

BOTS = Path(__file__).resolve().parent.parent / "bots"


class Floor(Bot):
    def act(self, turn: Turn) -> Any:
        return DUDO if turn.legal.dudo else next(iter(turn.legal.bids()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=5000)
    args = ap.parse_args()
    bots: dict[str, Any] = {"(floor)": Floor}
    bots.update({p.stem: load_python_bot(p) for p in sorted(BOTS.glob("*.py"))})
    floor = 0.0
    print(f"{'bot':<16} {'p50 us':>8} {'p99 us':>8} {'max us':>8}  p50 / floor")
    for name, factory in bots.items():
        report = run_check(lambda f=factory, n=name: InProcessTransport(f, n), turns=args.turns, seed=1, repeat=False)
        pc = {k: v * 1000 for k, v in percentiles(report.cpu_ms).items()}
        floor = floor or pc["p50"]
        print(f"{name:<16} {pc['p50']:8.1f} {pc['p99']:8.1f} {pc['max']:8.1f}  {pc['p50'] / floor:5.1f}x")


if __name__ == "__main__":
    main()
