"""The policy file: a solved average strategy, versioned, keyed by rules, dice
counts and information set (docs/solver.md has the format with an example).

```
{"format": "dudo-arena-policy", "version": 1,
 "rules": {"wild_ones": true, "ones": "rank_high", "open_on_ones": true, "penalty": "one"},
 "players": 2, "dice": 1,
 "solver": {"algorithm": "cfr+", "iterations": 1000, ...},
 "value": -0.0271, "exploitability": 0.0001,         # the match, when every round is solved
 "rounds": {
   "1-1": {"counts": [1, 1], "value": ..., "br_opener": ..., "br_other": ..., "exploitability": ...,
           "infosets": {"3|": {"1x3": 0.61, "1x4": 0.39},          # opener holding a 3, no bid yet
                        "25|1x4": {"2x4": 0.2, "dudo": 0.8}, ...}}},
 "unsolved": {"2-2": "why"}}
```

- ``rules``: the keys that shape a two-player round (:data:`ROUND_KEYS`); any
  rule set with those values and without calza or palifico at two players
  plays the same rounds (``seating``, ``first`` and ``max_rounds`` do not
  change a round, and the starting dice only say which rounds exist).
- a round ``"C-D"``: the opener holds C dice, the other player D.
- an information set ``"HAND|BIDS"``: the acting player's dice, sorted, as
  digits (``"25"``), and the round's bids so far, oldest first, comma
  separated in the protocol's text form (``"1x4,2x2"``); who acts follows from
  the number of bids (the opener acts after an even number).
- its value: action text (``"QxF"`` or ``"dudo"``) -> probability. Actions left
  out have probability 0; probabilities are rounded to 6 digits (renormalise
  on reading).

A round solved in the imperfect-recall abstraction (:mod:`arena.solve.abstract`;
with two dice each the 2-2 round, or every round with ``--abstract all``)
has ``"recall": K`` in its entry (absent: perfect recall, as above) and
``"algorithm": "fsicfr, cfr+ updates"``. Its strategy remembers the last K
bids only, so its keys are:

- ``"HAND|BIDS"`` as above while the round has at most K bids (the whole
  history is remembered);
- after that ``"HAND|*1,BIDS"`` or ``"HAND|*2,BIDS"``, BIDS the last K bids:
  ``*1`` when an odd number of earlier bids was forgotten, ``*2`` an even
  number (at least two). With K = 3, after ``1x2,1x4,2x3,2x5,3x2`` the other
  player looks up ``"HAND|*2,2x3,2x5,3x2"``.

A reader that does not know ``recall`` finds no ``*`` key and so plays
elsewhere past the K-th bid; a file without it reads exactly as before.

Only information sets the strategy itself can reach are written (one whose
own earlier bids the strategy never makes with that hand is never met by a
player following it), and probabilities below :data:`PRUNE` are dropped
before that. The figures written (value, exploitability) are those of the
pruned strategy, computed exactly.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np

from arena.engine.rules import ROUND_KEYS, Rules
from arena.solve.abstract import AbstractGame, AbstractProfile, AbstractSolver
from arena.solve.cfr import Profile, RoundSolver, _segsum, best_response_value, expected_value
from arena.solve.fullbr import best_response_full
from arena.solve.game import OTHER, RoundGame, SolveError

__all__ = [
    "FORMAT",
    "VERSION",
    "PRUNE",
    "ROUND_KEYS",
    "rules_key",
    "prune",
    "infosets",
    "write_policy",
    "read_policy",
    "hand_key",
    "history_key",
    "abstract_infosets",
    "abstract_round_entry",
    "abstract_profile",
]

FORMAT = "dudo-arena-policy"
VERSION = 1
PRUNE = 1e-4  # probabilities below this are dropped (the figures written are after this)


def rules_key(rules: Rules) -> dict[str, Any]:
    """The rule keys that shape a two-player round."""
    d = rules.to_dict()
    return {k: d[k] for k in ROUND_KEYS}


def hand_key(hand: tuple[int, ...] | list[int]) -> str:
    return "".join(str(d) for d in sorted(hand))


def history_key(bids: Any) -> str:
    return ",".join(f"{b.quantity}x{b.face}" for b in bids)


def prune(solver: RoundSolver, prof: Profile, eps: float = PRUNE) -> Profile:
    """``prof`` with every probability below ``eps`` set to 0, renormalised."""
    child, dudo = [], []
    for d, lv in enumerate(solver.game.levels):
        ix = solver.ix[d]
        c = np.where(prof.child[d] >= eps, prof.child[d], 0.0)
        u = np.where(prof.dudo[d] >= eps, prof.dudo[d], 0.0)
        total = _segsum(c, ix, lv.size)
        if d > 0:
            total = total + u
        total = np.where(total > 0, total, 1.0)
        child.append(c / total[ix.child_parent] if len(c) else c)
        dudo.append(u / total if d > 0 else u)
    return Profile(child, dudo)


def infosets(solver: RoundSolver, prof: Profile, digits: int = 6) -> dict[str, dict[str, float]]:
    """The information sets ``prof`` reaches itself, with their action probabilities."""
    game: RoundGame = solver.game
    reach = solver._reach(prof)
    out: dict[str, dict[str, float]] = {}
    hkeys = [[hand_key(h) for h in game.hands[p]] for p in (0, 1)]
    bid_text = [f"{b.quantity}x{b.face}" for b in game.ladder]
    hist_cache: dict[int, str] = {0: ""}

    def hist(node: int) -> str:
        if node not in hist_cache:
            parent = int(game.node_parent[node])
            prev = hist(parent)
            text = bid_text[int(game.node_top[node])]
            hist_cache[node] = f"{prev},{text}" if prev else text
        return hist_cache[node]

    for d, lv in enumerate(game.levels):
        p = lv.actor
        live = reach[p][d] > 0
        ix = solver.ix[d]
        for i, h in zip(*np.nonzero(live)):
            node = lv.start + int(i)
            acts: dict[str, float] = {}
            n = int(lv.n_children[i])
            if n:
                nxt = game.levels[d + 1]
                lo = int(lv.child_start[i] - nxt.start)
                probs = prof.child[d][lo : lo + n, h]
                for k in np.nonzero(probs > 0)[0]:
                    acts[bid_text[int(game.node_top[nxt.start + lo + int(k)])]] = round(float(probs[k]), digits)
            if d > 0 and prof.dudo[d][i, h] > 0:
                acts["dudo"] = round(float(prof.dudo[d][i, h]), digits)
            out[f"{hkeys[p][h]}|{hist(node)}"] = acts
        del ix
    return out


def round_entry(solver: RoundSolver, prof: Profile, pay_open: Any = None, pay_other: Any = None) -> dict[str, Any]:
    """One round of the file: its figures (of ``prof`` exactly) and information sets."""
    b0 = best_response_value(solver, prof, 0, pay_open)
    b1 = best_response_value(solver, prof, OTHER, pay_other)
    return {
        "counts": list(solver.game.counts),
        "value": expected_value(solver, prof),
        "br_opener": b0,
        "br_other": b1,
        "exploitability": (b0 + b1) / 2,
        "infosets": infosets(solver, prof),
    }


def abstract_infosets(solver: AbstractSolver, prof: AbstractProfile, digits: int = 6) -> dict[str, dict[str, float]]:
    """The abstract information sets ``prof`` reaches itself, keyed as the module says."""
    ag = solver.ag
    game = ag.game
    reach = solver.reach(prof)
    bid_text = [f"{b.quantity}x{b.face}" for b in game.ladder]
    hkeys = [[hand_key(h) for h in game.hands[p]] for p in (0, 1)]
    starts = np.searchsorted(ag.e_parent, np.arange(ag.n_nodes + 1))
    out: dict[str, dict[str, float]] = {}
    for node in range(ag.n_nodes):
        p = int(ag.actor[node])
        live = np.nonzero(reach[p][node] > 0)[0]
        if not len(live):
            continue
        hist = ag.key(node)
        es, ee = int(starts[node]), int(starts[node + 1])
        for h in live:
            acts: dict[str, float] = {}
            probs = prof.edge[es:ee, h]
            for k in np.nonzero(probs > 0)[0]:
                acts[bid_text[int(ag.e_bid[es + k])]] = round(float(probs[k]), digits)
            if ag.top[node] >= 0 and prof.dudo[node, h] > 0:
                acts["dudo"] = round(float(prof.dudo[node, h]), digits)
            out[f"{hkeys[p][h]}|{hist}"] = acts
    return out


def abstract_round_entry(
    solver: AbstractSolver, prof: AbstractProfile, pay_open: Any, pay_other: Any
) -> dict[str, Any]:
    """One abstract round of the file: its figures (exact, over the full tree) and information sets."""
    ag = solver.ag
    b0 = best_response_full(ag, prof, 0, pay_open)
    b1 = best_response_full(ag, prof, OTHER, pay_other)
    return {
        "counts": list(ag.game.counts),
        "recall": ag.recall,
        "algorithm": "fsicfr, cfr+ updates",
        "value": solver.value(prof),
        "br_opener": b0,
        "br_other": b1,
        "exploitability": (b0 + b1) / 2,
        "infosets": abstract_infosets(solver, prof),
    }


def abstract_profile(ag: AbstractGame, infosets_: dict[str, dict[str, float]]) -> AbstractProfile:
    """The strategy a file's abstract round holds, on ``ag`` (the same round and
    recall): information sets the file leaves out get probability 0 everywhere
    (the strategy never reaches them itself, so no figure depends on them)."""
    game = ag.game
    hw = max(len(game.hands[0]), len(game.hands[1]))
    edge = np.zeros((ag.n_edges, hw))
    dudo = np.zeros((ag.n_nodes, hw))
    bid_text = [f"{b.quantity}x{b.face}" for b in game.ladder]
    starts = np.searchsorted(ag.e_parent, np.arange(ag.n_nodes + 1))
    for node in range(ag.n_nodes):
        p = int(ag.actor[node])
        hist = ag.key(node)
        es, ee = int(starts[node]), int(starts[node + 1])
        col = {bid_text[int(ag.e_bid[e])]: e for e in range(es, ee)}
        for h, hand in enumerate(game.hands[p]):
            acts = infosets_.get(f"{hand_key(hand)}|{hist}")
            if not acts:
                continue
            total = sum(acts.values())
            for text, prob in acts.items():
                if text == "dudo":
                    dudo[node, h] = prob / total
                else:
                    edge[col[text], h] = prob / total
    return AbstractProfile(edge, dudo)


def write_policy(path: str | Path, data: dict[str, Any]) -> Path:
    """Write a policy (``.json``, gzip-compressed ``.json.gz``, or packed ``.npz``:
    :mod:`arena.solve.packed`), atomically."""
    path = Path(path)
    if path.suffix == ".npz":
        from arena.solve.packed import write_packed

        return write_packed(path, data)
    body = json.dumps(data, separators=(",", ":"), sort_keys=False).encode()
    tmp = path.with_name(path.name + ".tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gz":
        # mtime 0: the same policy gives the same bytes.
        with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as f:
            f.write(body)
    else:
        tmp.write_bytes(body)
    tmp.replace(path)
    return path


def read_policy(path: str | Path) -> dict[str, Any]:
    """Read and check a policy file; raises :class:`SolveError` naming what is wrong."""
    path = Path(path)
    if path.suffix == ".npz":
        from arena.solve.packed import unpack

        data = unpack(path)
    else:
        data = _read_json(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SolveError(f"{path}: not a policy file (format is not {FORMAT!r})")
    if data.get("version") != VERSION:
        raise SolveError(f"{path}: policy version {data.get('version')!r}; this Dudo Arena reads version {VERSION}")
    return data


def _read_json(path: Path) -> Any:
    try:
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        data = json.loads(raw)
    except (OSError, ValueError, EOFError) as exc:
        raise SolveError(f"{path}: not a readable policy file ({exc})") from None
    return data
