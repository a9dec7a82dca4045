"""What the imperfect-recall abstraction costs: exploitability against the
number of bids remembered (docs/solver.md, "What forgetting costs").

For each rule set and recall K, solves the 1-2 round of a 2-dice match in
the abstraction (``arena solve --abstract-from 3 --recall K``; the 1-1 round
exactly, as in the shipped policies), certifies it with the exact best
response over its full tree, and prints one CSV row per (game, round,
recall): the least exploitable checkpoint, its iteration, the abstract
states and the information sets written. The exact solver's figure
for the same round is the row with recall ``exact`` (when asked for).

    python benchmarks/solver_recall.py neller exact,1,2,3,4,5 400 > docs/solver/recall-neller.csv
"""

from __future__ import annotations

import argparse
import time

from arena.engine.rules import Rules
from arena.solve.match import solve_match, to_policy

GAMES = {"neller": ("neller", {}), "plain-wild": ("plain", {"wild_ones": True}), "classic": ("classic", {})}


def main(game: str = "neller", recalls: str = "1,2,3,4,5", iterations: str = "400", every: str = "100") -> None:
    preset, over = GAMES[game]
    rules = Rules.preset(preset, {**over, "dice": 2})
    print("game,round,recall,iterations,exploitability,value,abstract_states,infosets_written,seconds")
    runs = [(k, 99 if k == "exact" else 3) for k in recalls.split(",")]  # 1-1 exact, as shipped
    for label, abstract_from in runs:
        t0 = time.perf_counter()
        recall = 3 if label == "exact" else int(label)
        sol = solve_match(rules, int(iterations), every=int(every), recall=recall, abstract_from=abstract_from, upto=3)
        data = to_policy(sol)
        for counts, rs in sol.rounds.items():
            name = f"{counts[0]}-{counts[1]}"
            entry = data["rounds"][name]
            states = rs.abstract.n_nodes if rs.abstract is not None else rs.game.n_nodes
            print(
                f"{game},{name},{label},{entry['iterations']},{entry['exploitability']:.6f},{entry['value']:.6f},"
                f"{states},{len(entry['infosets'])},{time.perf_counter() - t0:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("game", nargs="?", default="neller", choices=sorted(GAMES))
    ap.add_argument("recalls", nargs="?", default="1,2,3,4,5", help="comma-separated: exact and/or numbers")
    ap.add_argument("iterations", nargs="?", default="400")
    ap.add_argument("every", nargs="?", default="100", help="iterations between checkpoints")
    a = ap.parse_args()
    main(a.game, a.recalls, a.iterations, a.every)
