"""The solver (arena solve), the equilibrium bot and arena exploit (docs/solver.md).

Every figure is checked against something independent: the published value of
one-die Dudo, OpenSpiel's own exploitability, the rules engine itself, and a
brute-force best response written here over engine states.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arena.engine.rules import DUDO, Bid, Rules, apply, deal, legal_actions, winner
from arena.protocol.loader import load_python_bot
from arena.protocol.messages import match_start_message, turn_message
from arena.protocol.parse import parse_match_start, parse_reply, parse_turn
from arena.sdk import Turn
from arena.solve.cfr import RoundSolver, exploitability
from arena.solve.game import OPENER, SolveError, round_game, round_start
from arena.solve.match import round_states, solve_match, to_policy
from arena.solve.policy import read_policy, write_policy

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "bots"
PUBLISHED = -7 / 258  # Neller and Lanctot: the first claimant's value of two-player one-die Dudo
GAMES = [("neller", {}), ("plain", {"wild_ones": True}), ("classic", {})]


def rules_of(preset: str, over: dict[str, Any], dice: int = 1) -> Rules:
    return Rules.preset(preset, {**over, "dice": dice})


# --- the solver -------------------------------------------------------------------


def test_published_value_and_exploitability_under_1e3() -> None:
    """400 CFR+ iterations (about 2 s): the published value within 1e-3, exploitability below 1e-3."""
    sol = solve_match(rules_of("neller", {}), 400, every=100)
    last = sol.rounds[(1, 1)].last
    assert abs(last.value - PUBLISHED) < 1e-3
    assert last.exploitability < 1e-3
    curve = [cp.exploitability for cp in sol.rounds[(1, 1)].curve]
    assert curve == sorted(curve, reverse=True)  # it goes down
    # The value is bracketed by the two best responses (b0 >= v >= -b1).
    assert last.br_opener >= last.value - 1e-12 and -last.br_other <= last.value + 1e-12


@pytest.mark.slow
def test_openspiel_exploitability_agrees() -> None:
    """The average strategy as an OpenSpiel tabular policy: their exploitability is ours."""
    from open_spiel.python import policy as osp
    from open_spiel.python.algorithms import exploitability as os_exploitability
    from test_openspiel import action_map, chance_map, load, neller, start_both

    rules = neller(1)
    sol = solve_match(rules, 150)
    rs = sol.rounds[(1, 1)]
    game, prof = rs.game, rs.profile
    spiel = load(1)
    to_id = {v: k for k, v in action_map(spiel).items()}
    rolls = chance_map(spiel)
    table = osp.TabularPolicy(spiel)

    def walk(ours: Any, theirs: Any, node: int) -> None:
        if theirs.is_terminal():
            return
        p = theirs.current_player()
        h = game.hands[p].index(tuple(ours.dice[p]))
        d = int(game.node_depth[node])
        lv = game.levels[d]
        i = node - lv.start
        row = np.zeros(spiel.num_distinct_actions())
        kids = range(int(lv.child_start[i]), int(lv.child_start[i] + lv.n_children[i]))
        for c in kids:
            row[to_id[game.ladder[int(game.node_top[c])]]] = prof.child[d][c - game.levels[d + 1].start, h]
        if d > 0:
            row[to_id[DUDO]] = prof.dudo[d][i, h]
        table.action_probability_array[table.state_lookup[theirs.information_state_string(p)]] = row
        for c in kids:
            b = game.ladder[int(game.node_top[c])]
            nxt = theirs.clone()
            nxt.apply_action(to_id[b])
            walk(apply(ours, b), nxt, c)

    for d0 in range(1, 7):
        for d1 in range(1, 7):
            ours, theirs = start_both(spiel, rules, ((d0,), (d1,)), rolls)
            walk(ours, theirs, 0)
    assert os_exploitability.exploitability(spiel, table) == pytest.approx(rs.last.exploitability, abs=1e-9)


@pytest.mark.parametrize("preset,over", GAMES)
def test_round_tree_and_payoffs_are_the_engines(preset: str, over: dict[str, Any]) -> None:
    """Legal actions at every history and the loser of every call, against the engine."""
    rules = rules_of(preset, over, dice=2)
    rng = random.Random(7)
    for counts in ((1, 1), (1, 2)):
        game = round_game(rules, counts)
        start = round_start(rules, counts)
        assert start.counts == counts and start.opener == 0
        for _ in range(300):
            a = rng.randrange(len(game.hands[0]))
            b = rng.randrange(len(game.hands[1]))
            state = deal(start, (game.hands[0][a], game.hands[1][b]))
            node = 0
            while True:
                d = int(game.node_depth[node])
                lv = game.levels[d]
                i = node - lv.start
                kids = [
                    game.ladder[int(game.node_top[c])]
                    for c in range(int(lv.child_start[i]), int(lv.child_start[i] + lv.n_children[i]))
                ]
                assert list(legal_actions(state)) == kids + ([DUDO] if d > 0 else [])
                if d > 0 and (not kids or rng.random() < 0.3):
                    t = int(game.node_top[node])
                    bidder = state.history[-1][0]
                    after = apply(state, DUDO)
                    loser = after.last.change[0]
                    assert (loser != bidder) == bool(game.true[t, a, b])
                    assert -after.last.change[1] == game.loss[t, a, b]
                    break
                b_ = rng.choice(kids)
                state = apply(state, b_)
                node = game.node_of(game.history(node) + (b_,))  # type: ignore[assignment]


def test_refusals_name_the_reason() -> None:
    with pytest.raises(SolveError, match="calza"):
        solve_match(Rules.preset("wikipedia", {"dice": 1}), 1)
    with pytest.raises(SolveError, match="2\\^24"):
        round_game(rules_of("neller", {}, dice=2), (2, 2))
    with pytest.raises(SolveError, match="opens only the first round"):
        round_start(rules_of("neller", {}, dice=2), (2, 1))
    assert round_states(2) == [(1, 1), (1, 2), (2, 2)]
    # Abstraction off (it solves 2-2 by default: tests/test_abstract.py), 2-2 is refused, saying why.
    sol = solve_match(rules_of("neller", {}, dice=2), 1, abstract_from=5)
    assert set(sol.rounds) == {(1, 1), (1, 2)} and "2^24" in sol.unsolved[(2, 2)]
    # Five dice in play and more: beyond the exact best response that would certify an abstraction.
    sol = solve_match(rules_of("neller", {}, dice=3), 1, abstract_from=5)
    assert "beyond 2^24" in sol.unsolved[(2, 3)] and "beyond 2^24" in sol.unsolved[(3, 3)]
    assert "a round it leads to is unsolved" in sol.unsolved[(1, 3)] or "2^24" in sol.unsolved[(1, 3)]


def test_policy_file_round_trip(tmp_path: Path) -> None:
    sol = solve_match(rules_of("neller", {}), 200)
    data = to_policy(sol)
    path = write_policy(tmp_path / "p.json.gz", data)
    back = read_policy(path)
    assert back == __import__("json").loads(__import__("json").dumps(data))
    assert write_policy(tmp_path / "q.json.gz", data).read_bytes() == path.read_bytes()  # reproducible
    for probs in back["rounds"]["1-1"]["infosets"].values():
        assert abs(sum(probs.values()) - 1) < 1e-4 and all(p > 0 for p in probs.values())
    path.write_text('{"format": "dudo-arena-policy", "version": 99}')
    with pytest.raises(SolveError, match="version 99"):
        read_policy(path)


@pytest.mark.parametrize("name", ["neller-1", "plain-wild-1", "classic-1"])
def test_shipped_policies(name: str) -> None:
    """The files the equilibrium bot plays: exploitability below 1e-3 (neller: the published value)."""
    data = read_policy(BOTS / "equilibrium" / f"{name}.json.gz")
    assert data["players"] == 2 and data["dice"] == 1 and not data["unsolved"]
    assert data["exploitability"] < 1e-3
    if name == "neller-1":
        assert abs(data["value"] - PUBLISHED) < 1e-3


# --- the equilibrium bot ------------------------------------------------------------


def _turn(
    rules: Rules, seat: int, hands: list[tuple[int, ...]], bids: list[Bid], seed: int, counts: tuple[int, int] = (1, 1)
) -> tuple[Turn, Any]:
    state = deal(round_start(rules, counts), hands)
    for b in bids:
        state = apply(state, b)
    start = match_start_message("m", seat, ["a", "b"], rules.to_dict(), seed)
    return parse_turn(turn_message("m", state, 1000), parse_match_start(start), random.Random(seed)), state


def test_equilibrium_bot_plays_the_policy() -> None:
    cls = load_python_bot(BOTS / "equilibrium.py").make
    assert cls is not None
    rules = rules_of("neller", {})
    data = read_policy(BOTS / "equilibrium" / "neller-1.json.gz")
    for key in ("3|", "5|1x2"):
        hand, _, hist = key.partition("|")
        bids = [Bid(int(t.split("x")[0]), int(t.split("x")[1])) for t in hist.split(",") if t]
        seat = len(bids) % 2
        hands = [(2,), (2,)]
        hands[seat] = (int(hand),)
        want = data["rounds"]["1-1"]["infosets"][key]
        seen: dict[str, int] = {}
        n = 3000
        for seed in range(n):
            turn, _ = _turn(rules, seat, hands, bids, seed)
            bot = cls()
            bot.rng = turn.rng
            bot.match = turn.match
            a = str(bot.act(turn))
            seen[a] = seen.get(a, 0) + 1
        assert set(seen) <= set(want)
        for a, p in want.items():
            assert abs(seen.get(a, 0) / n - p) < 4 * (p * (1 - p) / n) ** 0.5 + 1e-3, (key, a)


def test_equilibrium_bot_elsewhere_is_legal() -> None:
    """Outside a solved state (four players, classic, palifico on) it plays its heuristic, legally."""
    cls = load_python_bot(BOTS / "equilibrium.py").make
    from arena.engine.dice import roll_table
    from arena.engine.rules import new_match

    rng = random.Random(3)
    for preset in ("classic", "wikipedia", "lizumo"):
        rules = Rules.preset(preset)
        state = new_match(rules, 4)
        for _ in range(60):
            if state.placements is not None:
                break
            state = deal(state, roll_table(rng.randrange(1 << 30), state.round, state.counts))
            while state.dice is not None:
                start = match_start_message("m", state.to_act, list("abcd"), rules.to_dict(), 1)
                turn = parse_turn(turn_message("m", state, 1000), parse_match_start(start), random.Random(1))
                bot = cls()
                bot.rng, bot.match = turn.rng, turn.match
                action = bot.act(turn)
                assert action in legal_actions(state)
                state = apply(state, action)


# --- arena exploit --------------------------------------------------------------------


Policy = Callable[[Any, int], dict[Any, float]]  # (engine state, seat to act) -> action probabilities


def brute_force_br(rules: Rules, policy: Policy, br_seat: int) -> float:
    """What a best response earns in seat ``br_seat`` against ``policy`` in the other seat:
    a plain recursion over engine states (one die each, seat 0 opens), written
    independently of arena.solve: beliefs as vectors over the opponent's die."""
    faces = range(1, 7)
    cache: dict[tuple[Any, ...], dict[Any, float]] = {}

    def pol(state: Any, opp_die: int) -> dict[Any, float]:
        key = (opp_die, state.history)
        if key not in cache:
            cache[key] = policy(state, 1 - br_seat)
        return cache[key]

    def rec(states: list[Any], reach: list[float]) -> float:
        s0 = states[0]
        acts = legal_actions(s0)
        if s0.to_act == br_seat:
            return max(step(states, reach, a, None) for a in acts)
        return sum(step(states, reach, a, [pol(s, o).get(a, 0.0) for s, o in zip(states, faces)]) for a in acts)

    def step(states: list[Any], reach: list[float], a: Any, probs: list[float] | None) -> float:
        r = reach if probs is None else [x * p for x, p in zip(reach, probs)]
        if not any(r):
            return 0.0
        nxt = [apply(s, a) for s in states]
        if a is DUDO:
            return sum(x * (1.0 if winner(s) == br_seat else -1.0) for x, s in zip(r, nxt))
        return rec(nxt, r)

    total = 0.0
    start = round_start(rules, (1, 1))
    for mine in faces:
        states = [deal(start, ((mine,), (o,)) if br_seat == 0 else ((o,), (mine,))) for o in faces]
        total += rec(states, [1 / 36] * 6)
    return total


def in_process(path: Path, rules: Rules) -> Policy:
    cls = load_python_bot(path).make
    assert cls is not None

    def policy(state: Any, seat: int) -> dict[Any, float]:
        start = match_start_message("m", seat, ["a", "b"], rules.to_dict(), 5)
        turn = parse_turn(turn_message("m", state, 1000), parse_match_start(start), random.Random(5))
        bot = cls()
        bot.rng, bot.match = turn.rng, turn.match
        return {parse_reply(_reply(bot.act(turn))): 1.0}

    return policy


def _reply(action: Any) -> dict[str, Any]:
    if isinstance(action, Bid):
        return {"action": "bid", "quantity": action.quantity, "face": action.face}
    return {"action": str(action)}


def uniform(state: Any, seat: int) -> dict[Any, float]:
    acts = legal_actions(state)
    return {a: 1 / len(acts) for a in acts}


def _measure(bot: str, rules: Rules, **kw: Any) -> Any:
    from arena.botfile.spec import load_bot
    from arena.exploit.measure import measure
    from arena.match.process import BotProcess

    spec = load_bot(BOTS / bot)
    return measure(rules, lambda: BotProcess(spec), bot=spec.name, **kw)


@pytest.mark.sandbox
def test_exploit_deterministic_bot_is_the_brute_force_best_response() -> None:
    """cautious, sandboxed and asked through the protocol: exactly the best response
    computed by brute force over engine states with the bot run in-process."""
    rules = rules_of("neller", {})
    rep = _measure("cautious.py", rules, samples=2)
    assert rep.deterministic and rep.interval is None and not rep.faults
    pol = in_process(BOTS / "cautious.py", rules)
    assert rep.br_opener == pytest.approx(brute_force_br(rules, pol, 0), abs=1e-9)
    assert rep.br_other == pytest.approx(brute_force_br(rules, pol, 1), abs=1e-9)
    assert rep.worst and rep.worst[0]["loss"] >= rep.worst[-1]["loss"] > 0


def test_brute_force_agrees_with_the_solver_on_uniform_play() -> None:
    """The two best responses (brute force here, the solver's) on the uniform strategy."""
    rules = rules_of("neller", {})
    solver = RoundSolver(round_game(rules, (1, 1)), lambda loser, k, _: -1.0 if loser == OPENER else 1.0)
    uni = solver._normalise(
        [np.zeros_like(c) for c in solver.regret_child], [np.zeros_like(u) for u in solver.regret_dudo], clip=True
    )
    brute = (brute_force_br(rules, uniform, 0) + brute_force_br(rules, uniform, 1)) / 2
    assert exploitability(solver, uni) == pytest.approx(brute, abs=1e-9)


@pytest.mark.slow
@pytest.mark.sandbox
def test_exploit_random_brackets_the_brute_force_value() -> None:
    """random is stochastic: the interval (held-out lower estimate to plug-in upper)
    contains the exact exploitability of uniform play, computed by brute force."""
    rules = rules_of("neller", {})
    exact = (brute_force_br(rules, uniform, 0) + brute_force_br(rules, uniform, 1)) / 2
    rep = _measure("random.py", rules, samples=4, focus=4, resamples=40)
    assert not rep.deterministic and rep.interval is not None
    low, high = rep.interval
    assert low <= exact <= high
    assert rep.held_out <= exact + 0.05 and rep.exploitability >= exact - 0.05


@pytest.mark.slow
@pytest.mark.sandbox
def test_exploit_equilibrium_bot_is_near_zero() -> None:
    rules = rules_of("neller", {})
    rep = _measure("equilibrium.py", rules, samples=4, focus=8, resamples=20)
    assert rep.interval is not None and rep.interval[0] < 0.01
    assert abs(rep.held_out) < 0.02


def test_report_shows_exploitability_when_computed(tmp_path: Path) -> None:
    """`arena report` gains a section when RUN/exploit/ has reports, escaped; none otherwise."""
    import json
    import shutil

    from arena.analysis.report import build_report

    run = tmp_path / "run"
    shutil.copytree(ROOT / "tests" / "data" / "run-2026-12-01", run)
    assert 'id="exploitability"' not in build_report(run, resamples=2)
    (run / "exploit").mkdir()
    rep = {
        "bot": "<b>evil</b>",
        "game": "two players, dice=1",
        "exploitability": 0.25,
        "interval": None,
        "br_opener": 0.2,
        "br_other": 0.3,
        "worst": [{"role": "opener", "hand": "3", "bids": [], "best": "1x4", "loss": 0.1}],
    }
    (run / "exploit" / "evil-neller-1.json").write_text(json.dumps(rep))
    (run / "exploit" / "broken.json").write_text("{not json")
    page = build_report(run, resamples=2)
    assert "id='exploitability-table'" in page and "&lt;b&gt;evil&lt;/b&gt;" in page and "<b>evil</b>" not in page
