"""Rounds too large for the exact solver: the imperfect-recall abstraction
(arena/solve/abstract.py) and the exact best response over the full tree
that certifies it (arena/solve/fullbr.py); docs/solver.md.

The bitmask best response is checked against the exact solver's own best
response (arena/solve/cfr.py) on rounds small enough for both; the abstract
solver with recall long enough to forget nothing is checked to be CFR+
itself; the policy keys the equilibrium bot builds from a turn are checked
against the solver's keys.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from arena.engine.rules import Rules
from arena.protocol.loader import load_python_bot
from arena.solve.abstract import AbstractSolver, abstract_game, to_profile
from arena.solve.cfr import RoundSolver, best_response_value, expected_value
from arena.solve.fullbr import best_response_full
from arena.solve.game import OPENER, OTHER, round_game
from arena.solve.match import _br_payoffs, _cont, solve_match, to_policy
from arena.solve.policy import abstract_profile, read_policy, write_policy

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "bots"


def neller(dice: int) -> Rules:
    return Rules.preset("neller", {"dice": dice})


@pytest.mark.parametrize("counts,recall", [((1, 1), 2), ((1, 1), 3), pytest.param((1, 2), 3, marks=pytest.mark.slow)])
def test_full_best_response_equals_the_exact_one(counts: tuple[int, int], recall: int) -> None:
    """The bitmask best response over the whole tree equals arena.solve.cfr's
    (the level tree) on the same strategy, to 1e-9, as opener and as the other
    player, with equilibrium payoffs and with best-response continuations."""
    game = round_game(neller(2), counts)
    values = {(1, 1): -0.0271}
    cont = _cont(counts, values)
    ag = abstract_game(game, recall)
    solver = AbstractSolver(ag, cont)
    solver.iterate(30)
    prof = solver.average()
    exact = RoundSolver(game, cont)
    as_tree = to_profile(ag, prof, game)
    assert solver.value(prof) == pytest.approx(expected_value(exact, as_tree), abs=1e-12)
    br_payoffs = _br_payoffs(game, counts, {(1, 1): 0.01}, {(1, 1): 0.05})
    for pays in ((exact.by_opener, exact.by_other), *br_payoffs):
        for player in (OPENER, OTHER):
            ours = best_response_full(ag, prof, player, pays)
            theirs = best_response_value(exact, as_tree, player, pays)
            assert ours == pytest.approx(theirs, abs=1e-9)


def test_perfect_recall_abstraction_is_cfr_plus() -> None:
    """Remembering every bid, the DAG is the tree and the solver is CFR+: the
    same average strategy, the same exploitability, as arena.solve.cfr."""
    game = round_game(neller(1), (1, 1))
    cont = _cont((1, 1), {})
    ag = abstract_game(game, game.n_bids)
    assert ag.n_nodes == 1 << game.n_bids
    ours, theirs = AbstractSolver(ag, cont), RoundSolver(game, cont)
    ours.iterate(60)
    theirs.iterate(60)
    mine, ref = to_profile(ag, ours.average(), game), theirs.average()
    for player in (OPENER, OTHER):
        assert best_response_value(theirs, mine, player) == pytest.approx(
            best_response_value(theirs, ref, player), abs=1e-9
        )
    for d in range(1, len(game.levels)):
        np.testing.assert_allclose(mine.dudo[d], ref.dudo[d], atol=1e-9)


def test_abstract_solve_exploitability_goes_down() -> None:
    """One die each, last three bids remembered (about 3 s): the certified
    exploitability falls at every checkpoint to below 0.0035 after 300
    iterations (exact CFR+ is at 0.001 there: the rest is what forgetting costs)."""
    sol = solve_match(neller(1), 300, every=50, recall=3, abstract_from=2)
    rs = sol.rounds[(1, 1)]
    curve = [cp.exploitability for cp in rs.curve]
    assert curve == sorted(curve, reverse=True)
    assert curve[-1] < 0.0035
    best = rs.best
    assert best.br_opener >= best.value - 1e-12 and -best.br_other <= best.value + 1e-12


def test_policy_file_holds_the_abstract_strategy(tmp_path: Path) -> None:
    """Written and read back (pruned, keys with forgotten bids), the strategy has
    the figures the file states, recomputed over the full tree."""
    sol = solve_match(neller(1), 60, every=60, recall=2, abstract_from=2)
    path = write_policy(tmp_path / "p.json.gz", to_policy(sol))
    entry = read_policy(path)["rounds"]["1-1"]
    assert (
        entry["recall"] == 2
        and any("|*1," in k for k in entry["infosets"])
        and any("|*2," in k for k in entry["infosets"])
    )
    rs = sol.rounds[(1, 1)]
    assert rs.abstract is not None
    prof = abstract_profile(rs.abstract, entry["infosets"])
    solver = AbstractSolver(rs.abstract, _cont((1, 1), {}))
    assert solver.value(prof) == pytest.approx(entry["value"], abs=1e-5)
    pays = (solver.by_opener, solver.by_other)
    br = [best_response_full(rs.abstract, prof, p, pays) for p in (OPENER, OTHER)]
    assert br == pytest.approx([entry["br_opener"], entry["br_other"]], abs=1e-5)


def test_bot_keys_are_the_solvers() -> None:
    """The key the bots' policy reader builds from a turn's hand and bids is the
    solver's key of that history's abstract state, on random histories."""
    from arena.sdk.policy import policy_key as key

    game = round_game(neller(2), (1, 2), tree=False)
    rng = random.Random(5)
    for recall in (1, 3):
        ag = abstract_game(game, recall)
        for _ in range(300):
            bids = sorted(rng.sample(range(game.n_bids), rng.randrange(1, 9)))
            if bids[0] not in set(game.openers.tolist()):
                continue
            mask = sum(1 << b for b in bids)
            node = int(ag.state_of(np.array([mask]))[0])
            actor = len(bids) % 2
            hand = rng.choice(game.hands[actor])
            want = "".join(map(str, sorted(hand))) + "|" + ag.key(node)
            assert key(list(hand), [game.ladder[b] for b in bids], recall) == want
            assert key(list(hand), [game.ladder[b] for b in bids], 0).count(",") == len(bids) - 1


# --- the shipped 2-dice policies and the equilibrium bot ----------------------------------

SHIPPED = [("neller-2", "neller", {}), ("plain-wild-2", "plain", {"wild_ones": True}), ("classic-2", "classic", {})]


@pytest.mark.parametrize("name,preset,over", SHIPPED)
def test_shipped_two_dice_policy(name: str, preset: str, over: dict[str, object]) -> None:
    """Every round of the 2-dice match is in the file, and the 1-2 round's
    figures, recomputed from the file's own strategy over its full tree (with
    the file's 1-1 figures as continuations), are the ones it states."""
    data = read_policy(BOTS / "equilibrium" / f"{name}.npz")
    assert data["dice"] == 2 and not data["unsolved"] and set(data["rounds"]) == {"1-1", "1-2", "2-2"}
    assert data["exploitability"] == data["rounds"]["2-2"]["exploitability"] < 0.1
    one, entry = data["rounds"]["1-1"], data["rounds"]["1-2"]
    rules = Rules.preset(preset, {**over, "dice": 2})
    ag = abstract_game(round_game(rules, (1, 2), tree=False), entry["recall"])
    prof = abstract_profile(ag, entry["infosets"])
    solver = AbstractSolver(ag, _cont((1, 2), {(1, 1): one["value"]}))
    assert solver.value(prof) == pytest.approx(entry["value"], abs=1e-5)
    pay_open, pay_other = _br_payoffs(ag.game, (1, 2), {(1, 1): one["br_opener"]}, {(1, 1): one["br_other"]})
    assert best_response_full(ag, prof, OPENER, pay_open) == pytest.approx(entry["br_opener"], abs=1e-5)
    assert best_response_full(ag, prof, OTHER, pay_other) == pytest.approx(entry["br_other"], abs=1e-5)


def test_equilibrium_bot_plays_the_abstract_policy() -> None:
    """In the 2-2 round, past the bids it remembers, the bot draws from the
    file's probabilities for its abstract information set."""
    from arena.engine.rules import Bid, apply, deal
    from arena.protocol.messages import match_start_message, turn_message
    from arena.protocol.parse import parse_match_start, parse_turn
    from arena.solve.game import round_start

    cls = load_python_bot(BOTS / "equilibrium.py").make
    rules = neller(2)
    entry = read_policy(BOTS / "equilibrium" / "neller-2.npz")["rounds"]["2-2"]
    recall = entry["recall"]
    # Two bids forgotten ("*2"), the last ``recall`` remembered.
    bids = [Bid(1, 2), Bid(1, 3), Bid(1, 5), Bid(2, 3), Bid(2, 4), Bid(2, 5), Bid(3, 2)][: recall + 2]
    seat = len(bids) % 2
    tail = ",".join(f"{b.quantity}x{b.face}" for b in bids[-recall:])
    hand, want = next(
        (k.split("|")[0], v) for k, v in entry["infosets"].items() if k.endswith(f"|*2,{tail}") and len(v) > 1
    )
    hands = [(2, 2), (2, 2)]
    hands[seat] = tuple(int(c) for c in hand)
    state = deal(round_start(rules, (2, 2)), hands)
    for b in bids:
        state = apply(state, b)
    seen: dict[str, int] = {}
    n = 2000
    for seed in range(n):
        start = match_start_message("m", seat, ["a", "b"], rules.to_dict(), seed)
        turn = parse_turn(turn_message("m", state, 1000), parse_match_start(start), random.Random(seed))
        bot = cls()
        bot.rng, bot.match = turn.rng, turn.match
        a = str(bot.act(turn))
        seen[a] = seen.get(a, 0) + 1
    assert set(seen) <= set(want)
    for a, p in want.items():
        assert abs(seen.get(a, 0) / n - p) < 4 * (p * (1 - p) / n) ** 0.5 + 1e-3, a
