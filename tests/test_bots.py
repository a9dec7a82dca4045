"""The built-in bots: legal everywhere, deterministic, and of clearly different strength."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from arena.engine.dice import roll_table
from arena.engine.rules import CALZA, DUDO, PRESETS, Bid, Rules, State, _ladder, apply, deal, new_match
from arena.match.inprocess import LeagueRow, mini_league, play_inprocess
from arena.protocol.loader import load_python_bot
from arena.protocol.messages import match_start_message, turn_message
from arena.protocol.parse import parse_match_start, parse_turn
from arena.sdk import Bot, Turn

BOTS = Path(__file__).resolve().parent.parent / "bots"
PY_BOTS = sorted(p.stem for p in BOTS.glob("*.py"))


def factory(name: str) -> Any:
    return load_python_bot(BOTS / f"{name}.py")


def test_the_five_strategies_are_there() -> None:
    assert {"random", "probabilistic", "cautious", "bluffer", "calza"} <= set(PY_BOTS)
    for name in PY_BOTS:
        doc = (BOTS / f"{name}.py").read_text().split('"""')[1]
        assert len(doc.split()) > 40, f"bots/{name}.py must explain its strategy in its docstring"


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_bot_is_legal_under_every_preset(preset: str) -> None:
    """Strict in-process play raises on any illegal action or exception."""
    names = PY_BOTS
    for i, players in enumerate((2, 3, 5, 7, 10)):
        seats = [names[(i + s) % len(names)] for s in range(players)]
        for dice in (1, 3, Rules.preset(preset).dice):
            rules = Rules.preset(preset, {"dice": dice})
            places = play_inprocess(rules, [factory(n) for n in seats], seed=1000 * i + dice, names=seats)
            assert sorted(places) == list(range(1, players + 1))


def transcript(seats: list[str], rules: Rules, seed: int) -> list[str]:
    """Every decision of an in-process match, as name:seat:round:reply (the bots of bots/ named in ``seats``)."""
    log: list[str] = []

    def spy(name: str) -> Any:
        inner = factory(name)

        def make() -> Bot:
            bot = inner()
            act = bot.act

            def logged(turn: Turn) -> Any:
                reply = act(turn)
                log.append(f"{name}:{turn.seat}:{turn.round}:{reply}")
                return reply

            bot.act = logged  # type: ignore[method-assign]
            return bot

        return make

    play_inprocess(rules, [spy(n) for n in seats], seed, names=seats)
    return log


def test_same_seed_same_match_different_seed_different_match() -> None:
    seats = ["random", "bluffer", "calza", "probabilistic", "cautious", "random"]
    rules = Rules.preset("classic")
    a = transcript(seats, rules, 7)
    assert a == transcript(seats, rules, 7)
    assert a != transcript(seats, rules, 8)
    assert len(a) > 30


def _turn(rules: Rules, dice: list[tuple[int, ...]], history: list[Bid], seat: int = 0) -> Turn:
    """A real engine state: ``history`` bid in order from seat ``seat + 1`` around to ``seat``."""
    n = len(dice)
    counts = tuple(len(d) for d in dice)
    state: State = new_match(rules, n, (seat - len(history)) % n)
    # a table mid-match: fewer dice than at the start (the ladder is the engine's, for that total)
    state = state._replace(counts=counts, ladder=_ladder(rules.ones, sum(counts)))
    state = deal(state, dice)
    for b in history:
        state = apply(state, b)
    assert state.to_act == seat
    info = parse_match_start(match_start_message("m", seat, ["x"] * n, rules.to_dict(), 3))
    return parse_turn(turn_message("m", state, 1000), info, random.Random(3))


@pytest.mark.parametrize("name", ["probabilistic", "cautious", "bluffer", "calza"])
def test_an_impossible_bid_is_doubted(name: str) -> None:
    # 6 dice in play, we see 3 with no 5 and no ace: 5x5 needs 5 of the 3 unseen.
    turn = _turn(Rules.preset("classic"), [(2, 3, 4), (6, 6, 6)], [Bid(5, 5)])
    assert turn.probability(Bid(5, 5)) == 0.0
    bot = factory(name)()
    bot.rng = random.Random(1)
    assert bot.act(turn) == DUDO


@pytest.mark.parametrize("name", ["probabilistic", "cautious", "calza"])
def test_a_certain_bid_is_raised_not_doubted(name: str) -> None:
    turn = _turn(Rules.preset("classic"), [(5, 5, 5, 1, 1), (2, 3, 4, 6, 6)], [Bid(3, 5)])
    bot = factory(name)()
    bot.rng = random.Random(1)
    action = bot.act(turn)
    assert isinstance(action, Bid) and turn.legal.is_legal(action)
    assert turn.probability(action) > 0.9  # it raises on what it holds


def test_bluffer_bids_what_it_does_not_hold() -> None:
    rules = Rules.preset("lizumo")
    for seed in range(20):
        dice = roll_table(seed, 1, [3, 3, 3])
        turn = _turn(rules, list(dice), [])
        bot = factory("bluffer")()
        bot.rng = random.Random(seed)
        action = bot.act(turn)
        assert isinstance(action, Bid)
        assert turn.mine(action.face) == min(turn.mine(f) for f in turn.legal.min_quantity)


def test_calza_player_calls_calza_when_exact_is_the_best_bet() -> None:
    # 3 players; we hold 4 dice (below the maximum, so a right calza regains one),
    # three 4s. Seat 2 bid 4x4 holding its one die: the bid is almost surely
    # true (dudo loses) and, with one more 4 at most, exactly right most of the time.
    rules = Rules.preset("classic")
    turn = _turn(rules, [(4, 4, 4, 6), (2,), (3,)], [Bid(2, 6), Bid(4, 4)], seat=0)
    assert turn.legal.calza and turn.p_exact(Bid(4, 4)) > 0.4
    bot = factory("calza")()
    bot.rng = random.Random(1)
    assert bot.act(turn) == CALZA
    # the same table where calza is not allowed (2 players in): it does not call it
    two = _turn(rules, [(4, 4, 4, 6), (3,)], [Bid(4, 4)], seat=0)
    assert not two.legal.calza and bot.act(two) != CALZA


def test_calza_player_opens_palifico_on_its_own_die() -> None:
    rules = Rules.preset("classic")
    for face in range(1, 7):
        state = new_match(rules, 3, 0)._replace(counts=(1, 4, 4), palifico=True, ladder=_ladder(rules.ones, 9))
        state = deal(state, [(face,), (2, 3, 4, 5), (6, 6, 2, 3)])
        info = parse_match_start(match_start_message("m", 0, ["x"] * 3, rules.to_dict(), 3))
        turn = parse_turn(turn_message("m", state, 1000), info, random.Random(3))
        bot = factory("calza")()
        bot.rng = random.Random(1)
        action = bot.act(turn)
        assert isinstance(action, Bid) and action.face == face


def _league(preset: str, matches: int) -> dict[str, LeagueRow]:
    rows = mini_league(Rules.preset(preset), {n: factory(n) for n in PY_BOTS}, matches, seed=2026)
    return {r.name: r for r in rows}


def test_league_spread_classic() -> None:
    """200 classic matches of 4-6 players: the strengths are ordered, random clearly last."""
    t = _league("classic", 200)
    order = ["calza", "probabilistic", "cautious", "bluffer", "random"]
    places = [t[n].mean_place for n in order]
    assert places == sorted(places), {n: round(t[n].mean_place, 3) for n in order}
    # a real spread, not noise: neighbours apart, random far behind everyone
    assert all(b - a > 0.04 for a, b in zip(places, places[1:])), places
    assert t["random"].mean_place > 0.75 and t["random"].win_rate < 0.02
    assert t["calza"].win_rate > 2 * t["cautious"].win_rate


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["lizumo", "plain", "neller", "wikipedia"])
def test_league_spread_other_presets(preset: str) -> None:
    t = _league(preset, 150)
    others = [r for n, r in t.items() if n != "random"]
    # random last by a clear margin (about 4 standard errors at 150 matches); the margin over
    # the weakest other bot shrinks as stronger bots join the pool, since every place they take
    # pushes the weak bots' normalised places towards random's (plain with bayes: 0.146, without: 0.198)
    assert all(t["random"].mean_place > r.mean_place + 0.12 for r in others), {
        n: round(r.mean_place, 3) for n, r in t.items()
    }
    assert t["calza"].mean_place < t["bluffer"].mean_place
    assert t["probabilistic"].mean_place < t["bluffer"].mean_place


# --- the program bot in another language ---------------------------------------


NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not installed (the program bot needs Node.js)")
def test_node_bot_passes_arena_check() -> None:
    from arena.apps.check import check_bot

    report = check_bot(str(BOTS / "node_probabilistic.yaml"), turns=400, seed=4)
    assert report.ok, report.render()
    assert report.ready is not None and report.ready["name"] == "node_probabilistic"
    assert report.deterministic is True
    assert report.actions["bid"] > 0 and report.actions["dudo"] > 0


# --- the in-process harness ------------------------------------------------------


def test_load_python_bot_errors(tmp_path: Path) -> None:
    from arena.errors import ConfigError

    two = tmp_path / "two.py"
    two.write_text("from arena.sdk import Bot\nclass A(Bot): pass\nclass B(Bot): pass\n")
    none = tmp_path / "none.py"
    none.write_text("x = 1\n")
    broken = tmp_path / "broken.py"
    broken.write_text("import not_a_module_anywhere\n")
    fn = tmp_path / "fn.py"
    fn.write_text(
        "from arena.sdk import DUDO\n"
        "def act(turn):\n    return DUDO if turn.legal.dudo else next(iter(turn.legal.bids()))\n"
    )
    for path, words in [
        (two, "several Bot subclasses"),
        (none, "neither a Bot subclass"),
        (broken, "failed to import"),
        (tmp_path / "missing.py", "not a readable"),
    ]:
        with pytest.raises(ConfigError, match=words):
            load_python_bot(path)
    places = play_inprocess(Rules.preset("classic"), [load_python_bot(fn), factory("random")], seed=1)
    assert sorted(places) == [1, 2]


class _Illegal(Bot):
    def act(self, turn: Turn) -> Any:
        return "1x1" if turn.standing is None else DUDO


def test_play_inprocess_strict_raises_and_lenient_faults() -> None:
    from arena.errors import RunError

    rules = Rules.preset("classic", {"first": "seat0"})
    with pytest.raises(RunError, match="opening bid may not be on aces"):
        play_inprocess(rules, [_Illegal, factory("random"), factory("random")], seed=1, names=["bad", "r1", "r2"])
    places = play_inprocess(rules, [_Illegal, factory("random"), factory("random")], seed=1, strict=False)
    assert places[0] == 3  # out at once, placed below everyone still in
