"""A whole match, solved bottom-up over the dice counts.

A two-player match is a sequence of rounds. At the start of a round
everything that matters is public and small: who opens, and how many dice
each player holds. The dice are dealt afresh each round (independently of
everything before), and a player's view of the round is its own hand and the
round's bids, so nothing a player learnt in an earlier round bears on a
later one: the earlier hands are shown at ``round_end`` and are independent
of the new deal. So the match is a chain of round games linked only through
their outcomes, and backward induction applies:

    V(c_o, c_n) = the value, to the opener, of the round where the opener holds
                  c_o dice and the other player c_n, when every round after it
                  is played at equilibrium.

The round's payoffs are the values of the rounds it leads to: a dudo loser
who keeps dice opens the next round, so "the opener loses k dice" is worth
V(c_o - k, c_n) and "the other loses k dice" is worth -V(c_n - k, c_o) (+-1
when that ends the match). Solving rounds in increasing order of the dice in
play makes every continuation known when it is needed; an equilibrium of each
round with those values, played in every round, is an equilibrium of the
match (a subgame-perfect one: every round start is a public subgame). The unit
is the match: +1 won, -1 lost.

The exploitability of the whole match strategy is computed the same way with
best-response values in place of V: a best responder's value from a round
start is its best response in that round with its own best-response values
of the rounds after as payoffs (the opponent's strategy in a later round does
not depend on how it was reached). So the figure is exact for the match, not
a sum of per-round approximations.

Which round states exist: the loser of a round opens the next, so an opener
holding all its dice opens only the first round; with 2 dice each the rounds
are (2, 2), (1, 2) and (1, 1).

Rounds too large for the exact tree (4 dice in play: the 2-2 round) are
solved in an imperfect-recall abstraction (:mod:`arena.solve.abstract`,
remembering the last ``recall`` bids), and certified by the exact best
response over their full tree (:mod:`arena.solve.fullbr`); ``abstract_from``
sets from how many dice in play rounds are abstracted (3: the 1-2 round too,
for a policy small enough to ship). CFR is not guaranteed to converge with
imperfect recall (the exploitability of the average strategy can rise again),
so an abstract round keeps the average strategy of its least exploitable
checkpoint, every checkpoint being certified exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arena.engine.rules import Rules
from arena.solve.abstract import AbstractGame, AbstractProfile, AbstractSolver, abstract_game
from arena.solve.cfr import Profile, RoundSolver, best_response_value
from arena.solve.fullbr import best_response_full
from arena.solve.game import MAX_NODES, OPENER, OTHER, RoundGame, SolveError, check_solvable, round_game

__all__ = ["Checkpoint", "RoundSolution", "MatchSolution", "round_states", "solve_match", "ABSTRACT_FROM"]

ABSTRACT_FROM = 4  # default: rounds with this many dice in play or more are abstracted (beyond the exact tree)
MAX_FULL_BR = 1 << 24  # the exact best response walks 2^bids histories: up to 4 dice in play


def round_states(dice: int) -> list[tuple[int, int]]:
    """Every round a match of ``dice`` dice each can play, (opener's dice, other's
    dice), fewest dice in play first (the order they are solved in)."""
    states = [(c_o, c_n) for c_o in range(1, dice + 1) for c_n in range(1, dice + 1) if c_o < dice or c_n == dice]
    return sorted(states, key=lambda s: (s[0] + s[1], s))


def fits(counts: tuple[int, int]) -> bool:
    """Whether the round's full tree of histories fits the solver."""
    return 1 << (6 * sum(counts)) <= MAX_NODES


@dataclass
class Checkpoint:
    iterations: int
    seconds: float  # solver time so far (not counting the checkpoints themselves)
    value: float  # the opener's value of the average strategy
    br_opener: float  # what a best response earns as the opener against it
    br_other: float  # ... as the other player

    @property
    def exploitability(self) -> float:
        return (self.br_opener + self.br_other) / 2


@dataclass
class RoundSolution:
    counts: tuple[int, int]
    game: RoundGame
    solver: RoundSolver | AbstractSolver
    profile: Profile | AbstractProfile
    curve: list[Checkpoint] = field(default_factory=list)
    abstract: AbstractGame | None = None  # the abstraction, when the round was solved in one
    kept: int = 0  # abstract rounds: the iteration whose average strategy is kept (least exploitable)

    @property
    def last(self) -> Checkpoint:
        return self.curve[-1]

    @property
    def best(self) -> Checkpoint:
        """The checkpoint of the strategy kept: the last one, or for an abstract
        round the least exploitable."""
        if self.abstract is None or not self.kept:
            return self.curve[-1]
        return next(cp for cp in self.curve if cp.iterations == self.kept)


@dataclass
class MatchSolution:
    rules: Rules
    dice: int
    rounds: dict[tuple[int, int], RoundSolution]
    unsolved: dict[tuple[int, int], str]  # round -> why it was not solved

    @property
    def complete(self) -> bool:
        return not self.unsolved


def _cont(
    counts: tuple[int, int],
    values: dict[tuple[int, int], float],
    other_values: dict[tuple[int, int], float] | None = None,
) -> Callable[[int, int, int], float]:
    """Opener's payoff once ``loser`` gives up ``k`` dice, from next-round values.

    ``values[s]`` is the value of round ``s`` to the player who opens it and
    ``other_values[s]`` to the other one (equal to ``-values`` at equilibrium;
    best-response values differ)."""
    c_o, c_n = counts
    other = other_values if other_values is not None else {s: -v for s, v in values.items()}

    def cont(loser: int, k: int, _: int) -> float:
        if loser == OPENER:
            left = c_o - min(k, c_o)
            return -1.0 if left == 0 else values[(left, c_n)]  # the opener opens again
        left = c_n - min(k, c_n)
        return 1.0 if left == 0 else other[(left, c_o)]  # the other player opens next

    return cont


def _br_payoffs(
    game: RoundGame,
    counts: tuple[int, int],
    br_open: dict[tuple[int, int], float],
    br_other: dict[tuple[int, int], float],
) -> tuple[Any, Any]:
    """Best-response payoffs of a round: the best responder's own values of the rounds after."""
    pay_open = game.payoff(_cont(counts, br_open, br_other))  # BR as opener: its values
    pay_other = game.payoff(_cont(counts, {s: -v for s, v in br_other.items()}, {s: -v for s, v in br_open.items()}))
    return pay_open, pay_other


def _figures(
    sol: RoundSolution, prof: Profile | AbstractProfile, pay_open: Any, pay_other: Any
) -> tuple[float, float, float]:
    """Value, and the exact best responses as the opener and as the other player."""
    solver = sol.solver
    if isinstance(solver, AbstractSolver):
        assert isinstance(prof, AbstractProfile) and sol.abstract is not None
        return (
            solver.value(prof),
            best_response_full(sol.abstract, prof, OPENER, pay_open),
            best_response_full(sol.abstract, prof, OTHER, pay_other),
        )
    assert isinstance(prof, Profile)
    return (
        solver.value(prof),
        best_response_value(solver, prof, OPENER, pay_open),
        best_response_value(solver, prof, OTHER, pay_other),
    )


def solve_match(
    rules: Rules,
    iterations: int,
    *,
    every: int = 0,
    progress: Callable[[tuple[int, int], Checkpoint], None] | None = None,
    recall: int = 3,
    abstract_from: int = ABSTRACT_FROM,
    upto: int | None = None,
) -> MatchSolution:
    """Solve every round of a match of ``rules.dice`` dice each that fits, bottom-up.

    ``iterations`` iterations per round; a checkpoint (value and exact best
    responses) every ``every`` iterations (and at the end). Rounds with at
    least ``abstract_from`` dice in play are solved in the abstraction
    remembering the last ``recall`` bids (the default: those beyond the exact
    tree), keeping their least exploitable checkpoint; with ``upto``, only
    rounds with at most that many dice in play are solved. A round whose
    continuation is unsolved, or too large, is listed in ``unsolved`` with
    the reason.
    """
    check_solvable(rules)
    if iterations < 1:
        raise SolveError(f"iterations {iterations}: give at least 1")
    if abstract_from < 2:
        raise SolveError(f"abstract_from {abstract_from}: a round has at least 2 dice in play")
    if recall < 1:
        raise SolveError(f"recall {recall}: remember at least the standing bid (recall >= 1)")
    values: dict[tuple[int, int], float] = {}
    br_open: dict[tuple[int, int], float] = {}  # best response's value as the opener of a round
    br_other: dict[tuple[int, int], float] = {}  # ... as the other player
    rounds: dict[tuple[int, int], RoundSolution] = {}
    unsolved: dict[tuple[int, int], str] = {}
    for counts in round_states(rules.dice):
        c_o, c_n = counts
        # The rounds it can lead to (a dudo loser gives up 1 die, or more with penalty: difference).
        most = max(c_o, c_n) if rules.penalty == "difference" else 1
        needed = [(c_o - k, c_n) for k in range(1, most + 1) if k < c_o] + [
            (c_n - k, c_o) for k in range(1, most + 1) if k < c_n
        ]
        missing = [s for s in needed if s not in values]
        bids = 6 * sum(counts)
        use_abstract = sum(counts) >= abstract_from
        if upto is not None and sum(counts) > upto:
            unsolved[counts] = f"not asked for (only rounds of at most {upto} dice in play)"
            continue
        if not fits(counts) and not use_abstract:
            unsolved[counts] = (
                f"{sum(counts)} dice in play make {bids} bids and "
                f"2^{bids} histories per deal, beyond the tabular solver (abstract_from "
                f"{abstract_from})"
            )
            continue
        if use_abstract and 1 << bids > MAX_FULL_BR:
            unsolved[counts] = (
                f"{sum(counts)} dice in play make {bids} bids: the exact best response that "
                f"certifies an abstract strategy walks 2^{bids} histories, beyond 2^24"
            )
            continue
        if missing:
            unsolved[counts] = "a round it leads to is unsolved: " + ", ".join(map(str, missing))
            continue
        game = round_game(rules, counts, tree=not use_abstract)
        pay_open, pay_other = _br_payoffs(game, counts, br_open, br_other)
        if use_abstract:
            ag = abstract_game(game, recall)
            asolver = AbstractSolver(ag, _cont(counts, values))
            sol = RoundSolution(counts, game, asolver, asolver.average(), abstract=ag)
        else:
            solver = RoundSolver(game, _cont(counts, values))
            sol = RoundSolution(counts, game, solver, solver.average())
        step = every if every > 0 else iterations
        while sol.solver.iterations < iterations:
            sol.solver.iterate(min(step, iterations - sol.solver.iterations))
            avg = sol.solver.average()
            v, b0, b1 = _figures(sol, avg, pay_open, pay_other)
            cp = Checkpoint(sol.solver.iterations, sol.solver.seconds, v, b0, b1)
            if sol.abstract is not None and (not sol.kept or cp.exploitability < sol.best.exploitability):
                sol.profile, sol.kept = avg, cp.iterations
            sol.curve.append(cp)
            if progress is not None:
                progress(counts, cp)
        if sol.abstract is None:
            sol.profile = sol.solver.average()
        rounds[counts] = sol
        values[counts] = sol.best.value
        br_open[counts] = sol.best.br_opener
        br_other[counts] = sol.best.br_other
    return MatchSolution(rules, rules.dice, rounds, unsolved)


def to_policy(sol: MatchSolution, eps: float | None = None) -> dict[str, Any]:
    """The policy file's content (:mod:`arena.solve.policy`) for a solved match.

    Each round's strategy is pruned (probabilities below ``eps`` dropped), and
    every figure written is computed exactly for the pruned strategy, the
    rounds chained bottom-up as in :func:`solve_match`.
    """
    from arena.solve import policy

    eps = policy.PRUNE if eps is None else eps
    values: dict[tuple[int, int], float] = {}
    br_open: dict[tuple[int, int], float] = {}
    br_other: dict[tuple[int, int], float] = {}
    rounds: dict[str, Any] = {}
    for counts, rs in sol.rounds.items():
        game, solver = rs.game, rs.solver
        pay_open, pay_other = _br_payoffs(game, counts, br_open, br_other)
        # The value at equilibrium uses the pruned values of the rounds after.
        if isinstance(solver, AbstractSolver):
            from arena.solve import abstract as ab

            assert rs.abstract is not None and isinstance(rs.profile, AbstractProfile)
            a_v = AbstractSolver(rs.abstract, _cont(counts, values))
            entry = policy.abstract_round_entry(a_v, ab.prune(a_v, rs.profile, eps), pay_open, pay_other)
        else:
            assert isinstance(rs.profile, Profile)
            pruned = policy.prune(solver, rs.profile, eps)
            solver_v = RoundSolver(game, _cont(counts, values))
            entry = policy.round_entry(solver_v, pruned, pay_open, pay_other)
        entry["iterations"] = rs.kept or solver.iterations
        if rs.kept:
            entry["ran"] = solver.iterations  # iterations run; the strategy kept is the average at "iterations"
        entry["seconds"] = round(solver.seconds, 3)
        rounds[f"{counts[0]}-{counts[1]}"] = entry
        values[counts] = entry["value"]
        br_open[counts] = entry["br_opener"]
        br_other[counts] = entry["br_other"]
    top = (sol.dice, sol.dice)
    data: dict[str, Any] = {
        "format": policy.FORMAT,
        "version": policy.VERSION,
        "rules": policy.rules_key(sol.rules),
        "players": 2,
        "dice": sol.dice,
        "solver": {"algorithm": "cfr+", "averaging": "linear", "updates": "alternating", "prune": eps},
    }
    if f"{top[0]}-{top[1]}" in rounds:
        data["value"] = rounds[f"{sol.dice}-{sol.dice}"]["value"]
        data["exploitability"] = rounds[f"{sol.dice}-{sol.dice}"]["exploitability"]
    data["rounds"] = rounds
    data["unsolved"] = {f"{c[0]}-{c[1]}": why for c, why in sol.unsolved.items()}
    return data
