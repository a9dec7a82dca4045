"""Self-play training of a two-player strategy with checkpoints: ``arena train``.

What it trains. A two-player match is a chain of rounds linked only by their
outcomes (:mod:`arena.solve.match`), so it is trained round by round, fewest
dice in play first, each round against the trained values of the rounds it
leads to. Every round is played by CFR+ (regret matching+, alternating
updates, linear averaging) over a DAG of information states
(:class:`arena.solve.abstract.AbstractSolver`): rounds with at most
``exact_upto`` dice in play with perfect recall (a state is a whole history:
this is CFR+ on the full tree), larger ones remembering the last ``recall``
bids (Neller and Hnath's fixed-strategy-iteration CFR). One solver for every
round means one state to save: four arrays (regrets and average-strategy
sums per edge and per state) and the iteration count.

Why deterministic, full-width CFR and no sampling: every deal is an axis of
the arrays, so an iteration is exact and the same configuration gives the
same policy file byte for byte, whatever the interruptions; a sampled CFR
(MCCFR) would need a seed and many more, noisier iterations for the same
exploitability on games this size. The cost is memory and time per
iteration, which grow with the number of abstract states (``recall``) and
the square of the number of hands: three dice each fit here with ``recall
3``; beyond is the next step (docs/bots.md lists it).

Exploitability as it trains. Every ``every`` iterations the round's average
strategy is measured, the best responder using its own best-response values
of the rounds after it, so the figure of the last round is that of the whole
match:

- exactly (:mod:`arena.solve.fullbr`, every history of the round) where that
  fits in memory: up to four dice in play with one- and two-dice hands;
- beyond, a lower bound (:mod:`arena.solve.dagbr`): the exact value of a
  responder that remembers the last ``br_recall`` bids.

An imperfect-recall round keeps the average strategy of its least
exploitable checkpoint (CFR has no convergence guarantee there).

Checkpoints and resume. The training folder holds ``train.json`` (the
configuration, every checkpoint's figures, the finished rounds) and one
``round-C-D.npz`` per round (the solver's arrays at its last checkpoint and
the sums of the strategy kept), both replaced atomically at each checkpoint.
Run again with the same configuration, training continues from the last
checkpoint; the arrays are saved exactly (float64), so the result is the
same bytes as an uninterrupted run (a test checks it). A different
configuration in the same folder is refused, naming what differs.

The output is a policy file in the format of :mod:`arena.solve.policy`
(every figure in it computed for the pruned strategy written), read by
:class:`arena.sdk.policy.SolvedPolicies`; a round whose exploitability is a
lower bound says so (``"exploitability_bound": "lower"``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from arena.engine.rules import Rules
from arena.solve import policy
from arena.solve.abstract import AbstractGame, AbstractProfile, AbstractSolver, abstract_game, prune
from arena.solve.dagbr import dag_best_response, lift
from arena.solve.fullbr import best_response_full
from arena.solve.game import OPENER, OTHER, RoundGame, SolveError, check_solvable, round_game
from arena.solve.match import _br_payoffs, _cont, round_states

__all__ = ["TrainConfig", "Trainer", "TrainCheckpoint", "EXACT_BR_BYTES", "MAX_DICE"]

EXACT_BR_BYTES = 6_000_000_000  # the exact best response's two arrays of 2^bids x hands (float64) must fit this
MAX_STATE_CELLS = 400_000_000  # a round's payoff matrices (states x hands x hands, float64): 3.2 GB
MAX_DICE = 5
STATE = "train.json"


@dataclass(frozen=True)
class TrainConfig:
    """What is trained; a training folder holds one configuration."""

    rules: Rules
    iterations: int  # per round
    every: int  # a checkpoint (figures, saved state) every this many iterations, and at the end
    recall: int = 4  # bids remembered in rounds beyond exact_upto dice in play
    exact_upto: int = 2  # rounds with at most this many dice in play keep perfect recall
    br_recall: int = 0  # the lower-bound responder's recall where the exact one does not fit (0: recall + 1)

    def check(self) -> None:
        check_solvable(self.rules)
        if not 1 <= self.rules.dice <= MAX_DICE:
            raise SolveError(f"dice {self.rules.dice}: arena train plays 1 to {MAX_DICE} dice each")
        if self.iterations < 1:
            raise SolveError(f"iterations {self.iterations}: give at least 1")
        if self.every < 0:
            raise SolveError(f"every {self.every}: give 0 (only at the end) or a positive number")
        if self.recall < 1:
            raise SolveError(f"recall {self.recall}: remember at least the standing bid (recall >= 1)")
        if self.exact_upto < 1:
            raise SolveError(f"exact_upto {self.exact_upto}: give 1 (every round abstracted) or more")
        if self.br_recall and self.br_recall < self.recall:
            raise SolveError(
                f"br_recall {self.br_recall}: the responder remembers at least recall ({self.recall}) bids"
            )

    @property
    def responder_recall(self) -> int:
        return self.br_recall or self.recall + 1

    def fingerprint(self) -> dict[str, Any]:
        """Everything that shapes the result, as written in ``train.json``."""
        return {
            "rules": policy.rules_key(self.rules),
            "dice": self.rules.dice,
            "iterations": self.iterations,
            "every": self.every,
            "recall": self.recall,
            "exact_upto": self.exact_upto,
            "br_recall": self.responder_recall,
        }


@dataclass
class TrainCheckpoint:
    counts: tuple[int, int]
    iterations: int
    seconds: float  # training time of this round so far (not the measuring)
    value: float
    br_opener: float
    br_other: float
    exact: bool  # False: the best responses are lower bounds (dagbr)

    @property
    def exploitability(self) -> float:
        return (self.br_opener + self.br_other) / 2

    def to_json(self) -> dict[str, Any]:
        return {
            "counts": list(self.counts),
            "iterations": self.iterations,
            "seconds": round(self.seconds, 3),
            "value": self.value,
            "br_opener": self.br_opener,
            "br_other": self.br_other,
            "exploitability": self.exploitability,
            "exact": self.exact,
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> TrainCheckpoint:
        c = d["counts"]
        return TrainCheckpoint(
            (int(c[0]), int(c[1])),
            int(d["iterations"]),
            float(d["seconds"]),
            float(d["value"]),
            float(d["br_opener"]),
            float(d["br_other"]),
            bool(d["exact"]),
        )


@dataclass
class _Round:
    counts: tuple[int, int]
    game: RoundGame
    ag: AbstractGame
    solver: AbstractSolver
    kept: int = 0  # the iteration whose average is kept
    kept_sums: tuple[np.ndarray, np.ndarray] | None = None
    best: TrainCheckpoint | None = None
    done: bool = False
    curve: list[TrainCheckpoint] = field(default_factory=list)

    @property
    def perfect(self) -> bool:
        return self.ag.recall >= self.game.n_bids

    def kept_profile(self) -> AbstractProfile:
        assert self.kept_sums is not None
        return self.solver._normalise(*self.kept_sums)


def _exact_fits(game: RoundGame) -> bool:
    hands = len(game.hands[0]) + len(game.hands[1])
    return (1 << game.n_bids) * hands * 8 <= EXACT_BR_BYTES


def _cells(ag: AbstractGame) -> int:
    return ag.n_nodes * len(ag.game.hands[0]) * len(ag.game.hands[1])


class Trainer:
    """Trains the rounds of one configuration in a folder (module doc)."""

    def __init__(
        self,
        config: TrainConfig,
        folder: str | Path,
        progress: Callable[[TrainCheckpoint, str], None] | None = None,
    ) -> None:
        config.check()
        self.config = config
        self.folder = Path(folder)
        self.progress = progress
        self.rounds: dict[tuple[int, int], _Round] = {}
        self.curve: list[TrainCheckpoint] = []
        self.resumed_at: dict[str, int] = {}
        self._fine: dict[tuple[int, int], AbstractGame] = {}

    # -- the folder ------------------------------------------------------------------

    def _state_path(self) -> Path:
        return self.folder / STATE

    def _round_path(self, counts: tuple[int, int]) -> Path:
        return self.folder / f"round-{counts[0]}-{counts[1]}.npz"

    def _load_state(self) -> dict[str, Any] | None:
        path = self._state_path()
        if not path.exists():
            return None
        try:
            state = json.loads(path.read_text())
            saved = state["config"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SolveError(f"{path}: not a training state ({exc}); remove the folder to start afresh") from None
        mine = self.config.fingerprint()
        for key in mine:
            if saved.get(key) != mine[key]:
                raise SolveError(
                    f"{path}: this folder trains {key} = {saved.get(key)!r}, not {mine[key]!r}; "
                    "give the same settings to resume, or another folder"
                )
        return dict(state)

    def _save(self) -> None:
        state = {
            "format": "dudo-arena-train",
            "version": 1,
            "config": self.config.fingerprint(),
            "curve": [cp.to_json() for cp in self.curve],
            "rounds": {
                f"{c[0]}-{c[1]}": {"iterations": r.solver.iterations, "kept": r.kept, "done": r.done}
                for c, r in self.rounds.items()
            },
        }
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self._state_path().with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=1))
        os.replace(tmp, self._state_path())

    def _save_round(self, r: _Round) -> None:
        s = r.solver
        assert r.kept_sums is not None
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._round_path(r.counts)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(
            tmp,
            reg_edge=s.reg_edge,
            reg_dudo=s.reg_dudo,
            sum_edge=s.sum_edge,
            sum_dudo=s.sum_dudo,
            kept_edge=r.kept_sums[0],
            kept_dudo=r.kept_sums[1],
            meta=np.array([s.iterations, r.kept], dtype=np.int64),
            seconds=np.array([s.seconds]),
        )
        os.replace(tmp, path)

    def _load_round(self, r: _Round) -> None:
        path = self._round_path(r.counts)
        try:
            with np.load(path) as z:
                s = r.solver
                for name in ("reg_edge", "reg_dudo", "sum_edge", "sum_dudo"):
                    arr = z[name]
                    if arr.shape != getattr(s, name).shape:
                        raise ValueError(f"{name} has shape {arr.shape}, expected {getattr(s, name).shape}")
                    setattr(s, name, arr.astype(np.float64))
                s.iterations, r.kept = (int(x) for x in z["meta"])
                s.seconds = float(z["seconds"][0])
                r.kept_sums = (z["kept_edge"].astype(np.float64), z["kept_dudo"].astype(np.float64))
        except (OSError, ValueError, KeyError) as exc:
            raise SolveError(f"{path}: unreadable training state ({exc}); remove the folder to start afresh") from None

    # -- measuring -------------------------------------------------------------------

    def _fine_game(self, r: _Round) -> AbstractGame:
        got = self._fine.get(r.counts)
        if got is None:
            got = abstract_game(r.game, max(self.config.responder_recall, r.ag.recall))
            if _cells(got) > MAX_STATE_CELLS:
                got = r.ag  # the responder's finer states would not fit: it remembers what the strategy does
            self._fine[r.counts] = got
        return got

    def _figures(
        self, r: _Round, prof: AbstractProfile, solver: AbstractSolver, pays: tuple[Any, Any]
    ) -> tuple[float, float, float, bool]:
        """Value, the best responses as opener and other player, and whether they are exact."""
        value = solver.value(prof)
        if _exact_fits(r.game):
            b0 = best_response_full(r.ag, prof, OPENER, pays[0])
            b1 = best_response_full(r.ag, prof, OTHER, pays[1])
            return value, b0, b1, True
        fine = self._fine_game(r)
        lifted = lift(r.ag, fine, prof)
        b0 = dag_best_response(fine, lifted, OPENER, pays[0])
        b1 = dag_best_response(fine, lifted, OTHER, pays[1])
        return value, b0, b1, fine.recall >= r.game.n_bids

    def describe(self, r: _Round) -> str:
        exact = _exact_fits(r.game)
        how = "perfect recall" if r.perfect else f"last {r.ag.recall} bids"
        measure = (
            "exact best response" if exact else f"lower bound: a responder remembering {self._fine_game(r).recall} bids"
        )
        return f"round {r.counts[0]}-{r.counts[1]} ({how}; {measure})"

    # -- training --------------------------------------------------------------------

    def train(self, snapshot: bool = False) -> None:
        """Train every round (resuming from the folder's checkpoints); with ``snapshot``,
        only load the rounds the folder has checkpoints of, up to the first it has none of."""
        cfg = self.config
        state = self._load_state()
        if snapshot and state is None:
            raise SolveError(f"{self.folder}: no training here to take a snapshot of")
        saved_rounds: dict[str, Any] = state["rounds"] if state else {}
        self.curve = [TrainCheckpoint.from_json(d) for d in state["curve"]] if state else []
        values: dict[tuple[int, int], float] = {}
        br_open: dict[tuple[int, int], float] = {}
        br_other: dict[tuple[int, int], float] = {}
        built = {}
        for counts in round_states(cfg.rules.dice):  # every round checked before any is trained
            game = round_game(cfg.rules, counts, tree=False)
            recall = game.n_bids if sum(counts) <= cfg.exact_upto else cfg.recall
            ag = abstract_game(game, recall)
            if _cells(ag) > MAX_STATE_CELLS:
                raise SolveError(
                    f"round {counts[0]}-{counts[1]}: remembering {recall} bids makes {ag.n_nodes} states of "
                    f"{len(game.hands[0])} x {len(game.hands[1])} hands, beyond this trainer's memory budget "
                    f"({MAX_STATE_CELLS * 8 / 1e9:.1f} GB of payoff matrices); give a smaller recall (or a smaller "
                    "exact_upto)"
                )
            built[counts] = (game, ag)
        for counts, (game, ag) in built.items():
            solver = AbstractSolver(ag, _cont(counts, values))
            r = _Round(counts, game, ag, solver)
            self.rounds[counts] = r
            name = f"{counts[0]}-{counts[1]}"
            if name in saved_rounds and self._round_path(counts).exists():
                self._load_round(r)
                r.done = solver.iterations >= cfg.iterations
                self.resumed_at[name] = solver.iterations
            # train.json is written before the round's arrays: drop checkpoints the arrays do not have.
            self.curve = [cp for cp in self.curve if cp.counts != counts or cp.iterations <= solver.iterations]
            r.curve = [cp for cp in self.curve if cp.counts == counts]
            if r.kept:
                r.best = next(cp for cp in r.curve if cp.iterations == r.kept)
            if snapshot:
                if r.best is None:
                    del self.rounds[counts]
                    break
                values[counts] = r.best.value
                br_open[counts] = r.best.br_opener
                br_other[counts] = r.best.br_other
                continue
            pays = _br_payoffs(game, counts, br_open, br_other)
            step = cfg.every if cfg.every > 0 else cfg.iterations
            while solver.iterations < cfg.iterations:
                solver.iterate(min(step - solver.iterations % step, cfg.iterations - solver.iterations))
                avg = solver.average()
                v, b0, b1, exact = self._figures(r, avg, solver, pays)
                cp = TrainCheckpoint(counts, solver.iterations, solver.seconds, v, b0, b1, exact)
                if r.perfect or r.best is None or cp.exploitability < r.best.exploitability:
                    r.best, r.kept = cp, cp.iterations
                    r.kept_sums = (solver.sum_edge.copy(), solver.sum_dudo.copy())
                r.curve.append(cp)
                self.curve.append(cp)
                r.done = solver.iterations >= cfg.iterations
                self._save()  # first: a checkpoint the arrays do not reach is dropped on resume
                self._save_round(r)
                if self.progress is not None:
                    self.progress(cp, self.describe(r))
            if not r.done:
                r.done = True
                self._save()
            assert r.best is not None
            values[counts] = r.best.value
            br_open[counts] = r.best.br_opener
            br_other[counts] = r.best.br_other

    # -- the policy file -------------------------------------------------------------

    def policy(self, eps: float | None = None, partial: bool = False) -> dict[str, Any]:
        """The trained strategy as a policy file's content: each round's kept strategy,
        pruned, with every figure computed for what is written (rounds chained bottom-up).
        With ``partial`` (a snapshot), a round still training is written at its last
        checkpoint (``ran`` says how far it has run) and rounds not reached are ``unsolved``."""
        cfg = self.config
        eps = policy.PRUNE if eps is None else eps
        values: dict[tuple[int, int], float] = {}
        br_open: dict[tuple[int, int], float] = {}
        br_other: dict[tuple[int, int], float] = {}
        rounds: dict[str, Any] = {}
        for counts, r in self.rounds.items():
            if not r.done and not (partial and r.kept):
                raise SolveError(f"round {counts[0]}-{counts[1]} is not trained yet")
            pays = _br_payoffs(r.game, counts, br_open, br_other)
            solver = AbstractSolver(r.ag, _cont(counts, values))
            pruned = prune(solver, r.kept_profile(), eps)
            v, b0, b1, exact = self._figures(r, pruned, solver, pays)
            entry: dict[str, Any] = {"counts": list(counts)}
            if not r.perfect:
                entry["recall"] = r.ag.recall
            entry.update(
                {
                    "algorithm": "cfr+" if r.perfect else "fsicfr, cfr+ updates",
                    "value": v,
                    "br_opener": b0,
                    "br_other": b1,
                    "exploitability": (b0 + b1) / 2,
                }
            )
            if not exact:
                entry["exploitability_bound"] = "lower"
                entry["br_recall"] = self._fine_game(r).recall
            entry["iterations"] = r.kept
            if r.kept != r.solver.iterations or not r.done:
                entry["ran"] = r.solver.iterations
            if not r.done:
                entry["training"] = f"a snapshot: {r.solver.iterations} of {cfg.iterations} iterations run"
            entry["infosets"] = policy.abstract_infosets(solver, pruned)
            rounds[f"{counts[0]}-{counts[1]}"] = entry
            values[counts], br_open[counts], br_other[counts] = v, b0, b1
        top = f"{cfg.rules.dice}-{cfg.rules.dice}"
        data: dict[str, Any] = {
            "format": policy.FORMAT,
            "version": policy.VERSION,
            "rules": policy.rules_key(cfg.rules),
            "players": 2,
            "dice": cfg.rules.dice,
            "solver": {
                "algorithm": "cfr+",
                "averaging": "linear",
                "updates": "alternating",
                "prune": eps,
                "trainer": "arena train",
                "recall": cfg.recall,
                "exact_upto": cfg.exact_upto,
            },
        }
        if top in rounds:
            data["value"] = rounds[top]["value"]
            data["exploitability"] = rounds[top]["exploitability"]
            if "exploitability_bound" in rounds[top]:
                data["exploitability_bound"] = "lower"
        data["rounds"] = rounds
        data["unsolved"] = {
            f"{c[0]}-{c[1]}": "not trained yet (a snapshot)"
            for c in round_states(cfg.rules.dice)
            if f"{c[0]}-{c[1]}" not in rounds
        }
        return data


def write_trained(trainer: Trainer, out: str | Path, partial: bool = False) -> dict[str, Any]:
    """Write the trained policy to ``out`` (``.json``, ``.json.gz`` or packed ``.npz``)."""
    data = trainer.policy(partial=partial)
    policy.write_policy(out, data)
    return data
