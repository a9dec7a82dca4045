"""The strong bot (bots/bayes.py): legal and deterministic everywhere, the solved policy where
one covers the state, and clearly stronger than calza heads-up."""

from __future__ import annotations

import gzip
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_bots import factory, transcript

from arena.engine.rules import CALZA, PRESETS, Rules, deal, new_match
from arena.match.inprocess import play_inprocess
from arena.protocol.messages import match_start_message, turn_message
from arena.protocol.parse import parse_match_start, parse_turn
from arena.sdk import Bot, Turn

BOTS = Path(__file__).resolve().parent.parent / "bots"
BAYES = BOTS / "bayes.py"


def bayes_module() -> Any:
    """The bot's module as the host loads it (its FALLBACKS counter is what the tests read)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bayes_under_test", BAYES)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_it_ships_a_fitted_prior_and_the_solved_policies() -> None:
    m = bayes_module()
    # a prior that no longer fits the grids silently becomes flat: the version string says which
    assert m.PRIOR_SOURCE.startswith("params "), m.PRIOR_SOURCE
    from arena.sdk.policy import ROUND_KEYS

    solved = {
        preset: m.POLICIES.rounds(tuple(Rules.preset(preset).to_dict()[k] for k in ROUND_KEYS))
        for preset in ("neller", "classic")
    }
    # every round with at most 2 dice each: the 1-die files and the packed 2-dice ones
    assert all(set(r) == {(1, 1), (1, 2), (2, 2)} for r in solved.values()), solved
    assert all(r[(2, 2)].recall == 4 and r[(1, 1)].recall == 0 for r in solved.values())


def test_legal_in_every_preset_and_table_size_with_calza_and_palifico_played() -> None:
    """Strict in-process play (an illegal action or an exception raises) at 2 to 10 seats under
    every preset, with few dice so that palifico and calza come up; and no decision may have
    fallen back to the plain odds after an internal error."""
    m = bayes_module()
    seen: Counter[str] = Counter()

    def spied() -> Bot:
        bot = m.Bayes()
        act = bot.act

        def logged(turn: Turn) -> Any:
            reply = act(turn)
            seen["turns"] += 1
            seen["palifico"] += turn.palifico
            seen["calza"] += reply == CALZA
            return reply

        bot.act = logged  # type: ignore[method-assign]
        return bot

    others = ["calza", "probabilistic", "random", "bluffer", "equilibrium"]
    for i, preset in enumerate(PRESETS):
        for players in (2, 3, 5, 7, 10):
            for dice in (1, 2, Rules.preset(preset).dice):
                rules = Rules.preset(preset, {"dice": dice})
                seats: list[Any] = [factory(others[(i + s) % len(others)]) for s in range(players - 1)]
                seats.insert((players + dice) % players, spied)
                places = play_inprocess(rules, seats, seed=100 * players + dice + 7 * i)
                assert sorted(places) == list(range(1, players + 1))
    assert m.FALLBACKS == 0, f"{m.FALLBACKS} decisions hit an internal error"
    assert seen["turns"] > 500 and seen["palifico"] > 20 and seen["calza"] > 5, seen


def test_same_seed_same_actions() -> None:
    # two copies of the bot at one table, plus a stochastic player: every draw must come from the seed
    seats = ["bayes", "calza", "random", "bayes", "bluffer"]
    for preset in ("classic", "plain"):
        rules = Rules.preset(preset)
        a = transcript(seats, rules, 11)
        assert a == transcript(seats, rules, 11)
        assert a != transcript(seats, rules, 12)
        assert sum(x.startswith("bayes") for x in a) > 20


def test_what_a_process_kept_does_not_change_its_play() -> None:
    """The bot keeps tables from decision to decision and match to match (a league's bot process
    plays hundreds of matches): a match must go the same in a fresh process as in one that has
    played other matches, other presets and table sizes, before it."""

    def played(module: Any, rules: Rules, seed: int) -> list[str]:
        log: list[str] = []

        def make() -> Bot:
            bot = module.Bayes()
            act = bot.act

            def logged(turn: Turn) -> Any:
                reply = act(turn)
                log.append(f"{turn.round}:{len(turn.history)}:{reply}")
                return reply

            bot.act = logged  # type: ignore[method-assign]
            return bot

        play_inprocess(rules, [make, factory("calza"), factory("random"), make, factory("bluffer")], seed)
        return log

    classic = Rules.preset("classic")
    fresh = played(bayes_module(), classic, 21)
    used = bayes_module()
    for i, preset in enumerate(("plain", "lizumo", "classic", "wikipedia")):
        played(used, Rules.preset(preset, {"dice": 3 + i}), 300 + i)
    assert len(fresh) > 20 and played(used, classic, 21) == fresh


def test_kept_tables_stay_within_their_bounds() -> None:
    """A league's bot process plays a thousand matches or more inside a 512 MB allowance: every
    table the bot keeps across matches that can grow with what it meets is a bounded ``Kept``,
    and a full one starts over (which changes no decision: the test above)."""
    m = bayes_module()
    kept = {name: t for name, t in vars(m).items() if isinstance(t, m.Kept)}
    assert {
        "_FACE_SCORES",
        "_QTY_SCORES",
        "_DUDO_SCORES",
        "_CALZA_SCORES",
        "_FACE_TABLES",
        "_QTABLES",
        "_CANDIDATES",
        "_MINS",
        "_SEEN6",
        "_KV",
    } <= set(kept), sorted(kept)
    small = m.Kept(3)
    for i in range(10):
        assert small.put(i, str(i)) == str(i) and small.get(i) == str(i) and len(small) <= 3
    for t in kept.values():  # shrink the real bounds so that a few matches overflow them
        t.clear()
        t.limit = 5
    rules = Rules.preset("classic")
    for seed in range(3):
        play_inprocess(rules, [m.Bayes, factory("calza"), factory("random"), factory("bluffer")], seed)
    sizes = {name: len(t) for name, t in kept.items()}
    assert all(n <= 5 for n in sizes.values()), sizes
    assert all(
        sizes[name] > 0
        for name in (
            "_FACE_SCORES",
            "_QTY_SCORES",
            "_DUDO_SCORES",
            "_FACE_TABLES",
            "_QTABLES",
            "_CANDIDATES",
            "_MINS",
            "_SEEN6",
            "_KV",
        )
    ), sizes


def test_plays_the_solved_policy_where_it_covers_the_state() -> None:
    """Two players, one die each, neller rules: the bot's opening bids follow the solved mixed
    strategy (the frequencies over match seeds are the policy file's probabilities)."""
    rules = Rules.preset("neller", {"dice": 1})
    policy = json.loads(gzip.decompress((BOTS / "bayes" / "neller-1.json.gz").read_bytes()))
    probs = policy["rounds"]["1-1"]["infosets"]["4|"]
    assert max(probs.values()) < 0.9  # a mixed information set, or the test would prove little
    state = deal(new_match(rules, 2, 0), [(4,), (2,)])
    info = parse_match_start(match_start_message("m", 0, ["bayes", "x"], rules.to_dict(), 3))
    cls = bayes_module().Bayes
    draws = 800
    got: Counter[str] = Counter()
    for s in range(draws):
        rng = random.Random(s)
        turn = parse_turn(turn_message("m", state, 1000), info, rng)
        bot = cls()
        bot.rng = rng
        bot.match = info
        bot.start(info)
        got[str(bot.act(turn))] += 1
    total = sum(probs.values())
    for action, p in probs.items():
        assert abs(got[action] / draws - p / total) < 0.05, (action, got, probs)
    assert set(got) <= set(probs)


@pytest.mark.parametrize("preset", ["classic", "neller"])
def test_beats_calza_heads_up(preset: str) -> None:
    """40 seeded two-player matches, seats alternating: the bot must win at least 28 (70%).
    A bot as strong as calza wins 28 or more of 40 with probability under 1%; this one
    wins about 90% of its matches against calza in both presets."""
    rules = Rules.preset(preset)
    bayes, calza = factory("bayes"), factory("calza")
    wins = 0
    for i in range(40):
        if i % 2 == 0:
            wins += play_inprocess(rules, [bayes, calza], seed=5000 + i)[0] == 1
        else:
            wins += play_inprocess(rules, [calza, bayes], seed=5000 + i)[1] == 1
    assert wins >= 28, f"{preset}: bayes won {wins} of 40 against calza"


def test_passes_arena_check_through_the_protocol() -> None:
    """Sandboxed, through the real protocol: every preset, 2-10 players, random variant keys;
    legal replies, the same actions on the same seed, CPU far inside the budget."""
    from arena.apps.check import check_bot

    report = check_bot(str(BAYES), turns=600, seed=16)
    assert report.ok, report.render()
    assert report.deterministic is True
    assert set(report.presets) == set(PRESETS) and len(report.players) >= 8, report.render()
    assert report.ready is not None and report.ready["name"] == "bayes"
    assert "params" in report.ready.get("version", "")
    assert max(report.cpu_ms) < 500, report.render()  # a 1000 ms budget, never near it


@pytest.mark.slow
def test_long_arena_check_within_budget() -> None:
    from arena.apps.check import check_bot

    report = check_bot(str(BAYES), turns=4000, seed=161)
    assert report.ok and report.deterministic is True, report.render()
    assert max(report.cpu_ms) < 500, report.render()
