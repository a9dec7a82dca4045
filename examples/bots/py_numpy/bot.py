"""A program bot in Python without Dudo Arena's SDK: it speaks the protocol
itself (JSON lines on stdin/stdout) and computes its odds with numpy, from the
venv next to it (built by examples/bots/build.sh).

Strategy: every unseen die shows a face with probability 1/6, or 1/3 for a
non-ace face when aces are wild. Call dudo when the standing bid is less
likely to be true than the best raise; otherwise bid the likeliest face at its
smallest legal quantity. It never calls calza and draws no randomness.
"""

import json
import sys
from functools import lru_cache

import numpy as np


@lru_cache(maxsize=512)
def tails(n: int, p: float) -> np.ndarray:
    """tails[k] = P(X >= k) for X ~ Binomial(n, p), k = 0..n+1."""
    k = np.arange(n + 1)
    logfact = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1)))))
    logpmf = logfact[n] - logfact[k] - logfact[n - k] + k * np.log(p) + (n - k) * np.log1p(-p)
    pmf = np.exp(logpmf)
    return np.concatenate((np.cumsum(pmf[::-1])[::-1], [0.0]))


def probability(quantity: int, face: int, dice: list[int], unseen: int, wild: bool) -> float:
    """P(at least ``quantity`` dice count for ``face``), given my dice."""
    mine = sum(1 for d in dice if d == face or (wild and face != 1 and d == 1))
    need = quantity - mine
    if need <= 0:
        return 1.0
    if need > unseen:
        return 0.0
    return float(tails(unseen, 1 / 3 if wild and face != 1 else 1 / 6)[need])


def decide(turn: dict, wild_ones: bool) -> dict:
    dice = turn["dice"]
    unseen = sum(turn["counts"]) - len(dice)
    wild = wild_ones and not turn["palifico"]
    legal = turn["legal"]
    raises = [(probability(q, int(f), dice, unseen, wild), int(f), q) for f, q in legal["min_quantity"].items()]
    best = max(raises) if raises else None  # the likeliest; ties go to the higher face
    if turn["history"] and legal["dudo"]:
        _, quantity, face = turn["history"][-1]
        if best is None or 1 - probability(quantity, face, dice, unseen, wild) > best[0]:
            return {"action": "dudo"}
    assert best is not None, "no legal bid and no dudo"
    return {"action": "bid", "quantity": best[2], "face": best[1]}


def main() -> None:
    print(f"py_numpy: numpy {np.__version__} from {np.__file__}", file=sys.stderr, flush=True)
    wild_ones = True
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            reply = {"type": "ready", "name": "py_numpy", "version": "1.0"}
        elif kind == "match_start":
            wild_ones = bool(msg["rules"]["wild_ones"])
            continue
        elif kind == "turn":
            reply = decide(msg, wild_ones)
        else:
            continue  # round_end, match_end and anything new: nothing to answer
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
