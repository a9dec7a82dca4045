"""Dead man's calza and veteran palifico end to end: the real referee and the
built-in bots at 2 to 10 players (every record replays, the dice are
uniform, no rule violation, ``arena stats`` reports the variants), records of
random rule sets with the new keys on, the protocol 2 messages, bots that
attack the dead man's turn, and a bot written for protocol 1.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import variants_league  # noqa: E402

from arena.apps.cli import main  # noqa: E402
from arena.botfile.supports import Supports  # noqa: E402
from arena.engine.records import MatchRecord, MatchSpec, derive_seed  # noqa: E402
from arena.engine.replay import check, render  # noqa: E402
from arena.engine.rules import CALZA, PASS, Bid, Calza, Pass, Rules, apply, bid, deal, new_match  # noqa: E402
from arena.errors import ConfigError, FaultKind  # noqa: E402
from arena.match.inprocess import InProcessTransport  # noqa: E402
from arena.match.referee import play_match  # noqa: E402
from arena.protocol.loader import load_python_bot  # noqa: E402
from arena.protocol.messages import (  # noqa: E402
    encode_reply,
    match_start_message,
    turn_message,
    turn_view,
)
from arena.protocol.parse import parse_match_start, parse_reply, parse_turn  # noqa: E402
from arena.running.schedule import seat_plan  # noqa: E402

ROOT = HERE.parent
CHI2_5DF_P001 = 20.52  # a fair die's faces: reject at p < 0.001


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[MatchRecord]]:
    folder = tmp_path_factory.mktemp("variants") / "league"
    return folder, variants_league.league(folder, tables=1)


def test_every_record_of_the_league_replays_with_uniform_dice_and_no_violation(
    league: tuple[Path, list[MatchRecord]],
) -> None:
    folder, records = league
    assert {r.players for r in records} == set(range(2, 11))
    assert {r.variant for r in records} == {"classic", "both"}
    hands: dict[tuple[int, int, int], tuple[int, ...]] = {}
    kinds: Counter[str] = Counter()
    for rec in records:
        again = MatchRecord.from_json(rec.to_json())
        assert again.to_json() == rec.to_json()
        check(again)  # every rule, the dice from the seed included
        assert rec.faults == ()  # no rule violation (nor any other fault)
        for rnd in rec.rounds:
            for seat, hand in enumerate(rnd.dice):
                # one table's dice are shared by its matches under every variant: each die counted once
                key = (rec.seed, rnd.round, seat)
                if len(hand) > len(hands.get(key, ())):
                    hands[key] = hand
            for seat, action in rnd.actions:
                if type(action) is Pass:
                    kinds["pass"] += 1
                elif type(action) is Calza and not rnd.dice[seat]:
                    kinds["dead_call"] += 1
                    kinds["dead_right"] += rnd.change is not None and rnd.change.delta > 0
            face = None
            for _, action in rnd.actions:
                if rnd.palifico and type(action) is Bid:
                    kinds["override"] += face is not None and action.face != face
                    face = action.face
        if rec.variant == "classic":
            assert all(type(a) is not Pass for rnd in rec.rounds for _, a in rnd.actions)
            assert "dead_mans_calza" not in rec.to_dict()["rules"]
    faces = Counter(d for hand in hands.values() for d in hand)
    total = sum(faces.values())
    chi2 = sum((faces[f] - total / 6) ** 2 / (total / 6) for f in range(1, 7))
    assert total > 2000 and chi2 < CHI2_5DF_P001, (total, faces)
    # not vacuous: the variants' moves happened
    assert kinds["pass"] > 0 and kinds["dead_call"] > 0 and 0 < kinds["dead_right"] < kinds["dead_call"]
    assert kinds["override"] > 0


def test_arena_stats_reports_the_dead_mans_calls_and_the_change_in_match_length(
    league: tuple[Path, list[MatchRecord]],
) -> None:
    folder, records = league
    result = CliRunner().invoke(main, ["stats", str(folder), "--no-write", "--csv", "--resamples", "20"])
    assert result.exit_code == 0, result.output
    table = [line.split(",") for line in result.output.splitlines() if line.count(",") == 5]
    rows = {(row[0], row[1]): row for row in table[1:]}
    both = [r for r in records if r.variant == "both"]
    calls = sum(
        1
        for r in both
        for rnd in r.rounds
        if rnd.actions and type(rnd.actions[-1].action) is Calza and not rnd.dice[rnd.actions[-1].seat]
    )
    row = rows[("both", "dead_mans_calls_per_match")]
    assert float(row[2]) == pytest.approx(calls / len(both))
    assert ("both", "dead_mans_right_share") in rows and ("both", "veteran_overrides_per_match") in rows
    change = rows[("both", "rounds_change[classic]")]
    classic = {r.seed: r.rounds_played for r in records if r.variant == "classic"}
    expect = sum(r.rounds_played - classic[r.seed] for r in both) / len(both)
    value, low, high = (float(x) for x in change[2:5])
    assert value == pytest.approx(expect) and low <= value <= high and low < high
    assert ("classic", "dead_mans_calls_per_match") not in rows  # only where the variant is played


RULE_DRAWS: dict[str, tuple[Any, ...]] = {
    "dice": (1, 2, 3, 5),
    "dead_mans_dice": (1, 2, 3),
    "veteran_from": ("own", "any"),
    "palifico_change_face": (False, True),
    "calza_reward": ("regain", "bidder_loses"),
    "palifico_min_players": (2, 3),
    "calza_min_players": (2, 3),
    "penalty": ("one", "difference"),
}


def test_records_of_random_rule_sets_with_the_new_keys_on_all_replay() -> None:
    rng = random.Random(35)
    cheap = ("random", "probabilistic", "cautious", "bluffer", "calza")
    factories = {b: load_python_bot(ROOT / "bots" / f"{b}.py") for b in cheap}
    seen: Counter[str] = Counter()
    for i in range(60):
        over = {k: rng.choice(v) for k, v in RULE_DRAWS.items()}
        over["dead_mans_calza"] = rng.random() < 0.8
        over["veteran_palifico"] = rng.random() < 0.8
        rules = Rules.preset(rng.choice(("classic", "wikipedia")), over)
        n = rng.randint(2, 10)
        names = [rng.choice(cheap) for _ in range(n)]
        spec = MatchSpec(
            index=i,
            match=f"m-{i:06d}",
            variant="random",
            rules=rules.to_dict(),
            entrants=tuple(range(n)),
            seed=derive_seed("p", i),
            dice_seed=derive_seed("d", i),
            table=i,
            rotation=0,
        )
        rec = play_match(spec, [InProcessTransport(factories[b], b) for b in names], names, 1000).record
        state = check(MatchRecord.from_json(rec.to_json()))
        assert sorted(rec.placements) == list(range(1, n + 1))
        assert state.placements == rec.placements
        for rnd in rec.rounds:
            if rnd.change is not None and not rnd.dice[rnd.change.seat]:
                seen["return" if rnd.change.delta else "wrong"] += 1
        seen["max_rounds"] += rec.end.value == "max_rounds"
    assert seen["return"] > 0 and seen["wrong"] > 0


def test_the_dead_mans_turn_shows_nothing_of_the_others_dice_and_parses() -> None:
    rules = Rules.preset("classic", {"dice": 1, "palifico": False, "dead_mans_calza": True})
    s = new_match(rules, 3, 0)
    s = apply(apply(deal(s, [[2], [3], [4]]), bid(1, 2)), parse_reply({"action": "dudo"}))  # seat 1 out
    views = []
    for other in ([[5], [], [6]], [[1], [], [1]]):
        t = apply(deal(s, other), bid(1, 5))
        assert t.to_act == 1
        views.append(turn_view(t, 1))
    assert views[0] == views[1] and views[0]["dice"] == []
    msg = turn_message("m-1", t, 500)
    assert msg["legal"] == {"dudo": False, "calza": True, "min_quantity": {}, "max_quantity": 2, "pass": True}
    start = match_start_message("m-1", 1, ["a", "b", "c"], rules.to_dict(), 7)
    info = parse_match_start(start)  # type: ignore[arg-type]
    assert info.rules == rules
    turn = parse_turn(msg, info, random.Random(0))  # type: ignore[arg-type]
    assert turn.dead and turn.legal.actions() == [CALZA, PASS]
    assert parse_reply({"action": "pass"}) is PASS and encode_reply(PASS) == b'{"action":"pass"}\n'
    assert encode_reply("pass") == b'{"action":"pass"}\n'


def test_a_protocol_1_bot_sees_a_table_without_the_variants_as_before_and_is_kept_out_of_one_with_them() -> None:
    v1_keys = [
        "dice",
        "wild_ones",
        "ones",
        "open_on_ones",
        "calza",
        "calza_reward",
        "calza_min_players",
        "palifico",
        "palifico_change_face",
        "palifico_min_players",
        "penalty",
        "seating",
        "first",
        "max_rounds",
    ]
    for preset in ("classic", "lizumo", "wikipedia", "neller", "plain"):
        assert list(Rules.preset(preset).to_dict()) == v1_keys
    undeclared, declared = (
        Supports(),
        Supports.from_data({"rules": {"dead_mans_calza": [True, False]}}, "bots/x.py: SUPPORTS"),
    )
    variants = {
        "classic": Rules.preset("classic").to_dict(),
        "dead": Rules.preset("classic", {"dead_mans_calza": True}).to_dict(),
    }
    with pytest.raises(ConfigError) as exc:
        seat_plan(["old", "new1", "new2"], [undeclared, declared, declared], [2], variants)
    msg = str(exc.value)
    assert "'old'" in msg and "variant 'dead'" in msg and "dead_mans_calza" in msg and "supports" in msg
    assert seat_plan(["old", "new"], [undeclared, declared], [2], {"classic": variants["classic"]}) == {2: (0, 1)}
    vet = {"vet": Rules.preset("classic", {"veteran_palifico": True}).to_dict()}
    with pytest.raises(ConfigError, match="veteran_palifico"):
        seat_plan(["old", "new1", "new2"], [undeclared, declared, declared], [2], vet)


def play_one(bots: list[str], rules: Rules, seed: int) -> MatchRecord:
    names = [Path(b).stem for b in bots]
    spec = MatchSpec(
        index=0,
        match="m-000000",
        variant="v",
        rules=rules.replace(seating="fixed").to_dict(),
        entrants=tuple(range(len(bots))),
        seed=derive_seed("s", seed),
        dice_seed=derive_seed("d", seed),
        table=0,
        rotation=0,
    )
    return play_match(
        spec, [InProcessTransport(load_python_bot(ROOT / b), n) for b, n in zip(bots, names)], names, 1000
    ).record


def test_a_player_out_cannot_void_a_round_by_faulting() -> None:
    """tests/bots/dead_voider.py answers its dead man's turn with dudo: the fault
    spends its call, the round goes on to a call, and the record replays."""
    rules = Rules.preset("classic", {"dice": 1, "palifico": False, "dead_mans_calza": True})
    found = 0
    for seed in range(12):
        rec = play_one(
            ["tests/bots/dead_voider.py", "bots/probabilistic.py", "bots/cautious.py", "bots/random.py"], rules, seed
        )
        check(rec)
        for f in rec.faults:
            assert f.seat == 0 and f.kind is FaultKind.ILLEGAL and "dudo" in f.detail
            rnd = next(r for r in rec.rounds if r.round == f.round)
            assert rnd.dice[0] == () and rnd.fault is None and rnd.change is not None  # not void
            later = [r for r in rec.rounds if r.round > f.round]
            assert all(s != 0 for r in later for s, _ in r.actions)  # never asked again
            assert any("the round goes on" in line for line in render(rec))
            found += 1
    assert found > 0


def test_pass_from_a_player_who_is_in_is_illegal_with_the_reason() -> None:
    rules = Rules.preset("classic", {"dead_mans_calza": True})
    rec = play_one(["tests/bots/passer.py", "bots/probabilistic.py", "bots/cautious.py"], rules, 1)
    check(rec)
    assert rec.faults and rec.faults[0].seat == 0 and rec.faults[0].kind is FaultKind.ILLEGAL
    assert "only a player who is out passes" in rec.faults[0].detail


def test_arena_check_fuzzes_the_dead_mans_turn_for_a_bot_that_declares_the_variants() -> None:
    from arena.apps.check import fuzz_space, run_check
    from arena.botfile.spec import load_bot

    seen: list[dict[str, Any]] = []

    class Recorder(InProcessTransport):
        def notify(self, msg: Any) -> None:
            seen.append(msg)
            super().notify(msg)

        def request(self, msg: Any) -> Any:
            seen.append(msg)
            return super().request(msg)

    space = fuzz_space(load_bot(ROOT / "bots" / "random.py").supports)
    report = run_check(
        lambda: Recorder(load_python_bot(ROOT / "bots" / "random.py"), "random"),
        turns=1500,
        seed=4,
        space=space,
        repeat=False,
    )
    assert report.ok, report.render()
    assert report.actions["pass"] > 0 and report.actions["calza"] > 0
    starts = [m for m in seen if m["type"] == "match_start"]
    assert any(m["rules"].get("dead_mans_calza") for m in starts)
    assert any(m["rules"].get("veteran_palifico") for m in starts)
    assert any(not m["rules"].get("dead_mans_calza") for m in starts)
    dead = [m for m in seen if m["type"] == "turn" and m["legal"].get("pass")]
    assert dead and all(m["dice"] == [] and m["counts"][m["seat"]] == 0 for m in dead)
    # a bot that answers its dead man's turn with dudo is told why
    voider = load_python_bot(HERE / "bots" / "dead_voider.py")
    bad = run_check(
        lambda: InProcessTransport(voider, "dead_voider"),
        turns=4000,
        seed=4,
        repeat=False,
        space=fuzz_space(Supports.from_data({"rules": {"dead_mans_calza": [True, False]}}, "x")),
    )
    assert any("a player who is out may only call calza" in p.detail for p in bad.problems), bad.render()


def test_arena_play_asks_a_human_who_is_out_for_a_dead_mans_calza() -> None:
    import io

    from arena.apps.play import HumanPlayer, play_setup
    from arena.errors import RunError

    rules = Rules.preset("classic", {"dead_mans_calza": True, "veteran_palifico": True})
    start = match_start_message("t-1", 1, ["a", "you", "c"], rules.to_dict(), 1)
    dead_turn = {
        "type": "turn",
        "match": "t-1",
        "round": 4,
        "seat": 1,
        "dice": [],
        "counts": [3, 0, 2],
        "palifico": False,
        "history": [[0, 2, 5]],
        "legal": {"dudo": False, "calza": True, "min_quantity": {}, "max_quantity": 5, "pass": True},
        "time_ms": 1000,
    }
    out = io.StringIO()
    human = HumanPlayer(io.StringIO("dudo\n3x5\npass\n"), out, assist=True)
    human.notify(start)  # type: ignore[arg-type]
    reply, _ = human.request(dead_turn)  # type: ignore[arg-type]
    assert reply == {"action": "pass"}
    text = out.getvalue()
    assert "dead man's calza (back with 2 dice)" in text and "veteran palifico" in text
    assert "you are out; a dead man's calza" in text and "Your dice: none (out)" in text
    assert text.count("Not allowed: you are out: call calza (a dead man's calza, once a match) or pass") == 2
    assert "Legal: no bid; calza, pass" in text and "calza on 2x5: P(exactly)" in text
    end = {
        "type": "round_end",
        "match": "t-1",
        "round": 4,
        "palifico": False,
        "history": [[0, 2, 5]],
        "dice": [[5, 5, 2], [], [3, 4]],
        "bid": [0, 2, 5],
        "call": {"seat": 1, "kind": "calza"},
        "count": 2,
        "change": {"seat": 1, "delta": 2},
        "counts": [3, 2, 2],
    }
    human.notify(end)  # type: ignore[arg-type]
    assert "you called a dead man's calza on a's 2x5: there were 2" in out.getvalue()
    assert "you come back with 2 dice" in out.getvalue()
    assert play_setup(sets=["dead_mans_calza=true"]).rules.dead_mans_calza
    assert play_setup(bots=["tests/bots/passer.py"], sets=["dead_mans_calza=true"]).rules.dead_mans_calza
    with pytest.raises(RunError, match="veteran_palifico: passer does not declare"):
        play_setup(
            bots=["tests/bots/passer.py", "bots/probabilistic.py"],
            sets=["dead_mans_calza=true", "veteran_palifico=true"],
        )
    with pytest.raises(RunError, match="dead_mans_calza: steady does not declare"):
        play_setup(bots=["tests/bots/steady.py"], sets=["dead_mans_calza=true"])


@pytest.mark.slow
def test_a_sandboxed_run_plays_the_dead_mans_turn_through_real_processes(tmp_path: Path) -> None:
    """arena run, sandboxed: the Python host and the Node bot answer dead man's
    turns over the pipe, a dead man's fault voids nothing, every record replays;
    a bot that does not declare the variant stops the run before it starts."""
    import subprocess

    import yaml

    from arena.running.store import iter_records

    cfg = {
        "name": "dead",
        "seed": 3,
        "players": [4],
        "matches": 6,
        "format": "league",
        "bots": [
            "bots/random.py",
            "bots/probabilistic.py",
            "bots/node_probabilistic.yaml",
            str(HERE / "bots" / "dead_voider.py"),
        ],
        "variants": {"dead": {"preset": "classic", "dice": 2, "dead_mans_calza": True}},
        "time": {"hello_ms": 60000, "wall_factor": 20},
    }
    path = tmp_path / "dead.yaml"
    path.write_text(yaml.safe_dump(cfg))
    out = tmp_path / "run"
    r = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path), "--workers", "2", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr + r.stdout
    records = list(iter_records(out))
    assert len(records) == 6
    said: Counter[tuple[str, str]] = Counter()
    for rec in records:
        check(rec)
        for f in rec.faults:
            assert rec.bots[f.seat] == "dead_voider" and f.kind is FaultKind.ILLEGAL
            assert next(x for x in rec.rounds if x.round == f.round).fault is None  # not void
        for rnd in rec.rounds:
            for seat, action in rnd.actions:
                if not rnd.dice[seat]:
                    said[(rec.bots[seat], str(action))] += 1
    assert said[("node_probabilistic", "pass")] + said[("node_probabilistic", "calza")] > 0
    assert said[("random", "pass")] + said[("random", "calza")] + said[("probabilistic", "pass")] > 0
    cfg["bots"] = [*cfg["bots"], "tests/bots/steady.py"]  # type: ignore[list-item]
    path.write_text(yaml.safe_dump(cfg))
    r = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path), "--out", str(tmp_path / "refused")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode != 0 and "'steady'" in r.stderr and "dead_mans_calza" in r.stderr, r.stderr


def test_a_program_that_insists_on_protocol_1_is_greeted_with_it_and_plays_as_before(tmp_path: Path) -> None:
    """tests/bots/v1_strict.yaml exits at a hello of any version but 1: a bot
    that declares none of version 2's variants is greeted with version 1 (and
    then sent nothing version 1 lacks); one that declares one, and every Python
    bot (the arena's own host), with version 2."""
    from arena.botfile.spec import load_bot
    from arena.botfile.supports import hello_version
    from arena.match.process import BotProcess, TimeControl
    from arena.sandbox import SandboxLimits

    strict = load_bot(ROOT / "tests" / "bots" / "v1_strict.yaml")
    assert hello_version(strict.supports, python=False) == 1
    assert hello_version(Supports.from_data({"rules": {"dead_mans_calza": [True, False]}}, "t"), python=False) == 2
    assert hello_version(strict.supports, python=True) == 2
    with BotProcess(strict, SandboxLimits(), TimeControl(hello_ms=30000)) as bot:
        assert bot.start()["name"] == "v1_strict"
    out = tmp_path / "run"
    cfg = tmp_path / "v1.yaml"
    cfg.write_text(
        f"name: v1\nseed: 4\nbots: [{ROOT / 'tests' / 'bots' / 'v1_strict.yaml'}, random]\nplayers: 2\n"
        f"matches: 4\nworkers: 1\nout: {out}\n"
    )
    result = CliRunner().invoke(main, ["run", str(cfg), "--no-live"])
    assert result.exit_code == 0, result.output
    records = [line for line in (out / "games.jsonl").read_text().splitlines() if line]
    assert len(records) == 4 and all('"faults":[]' in r.replace(" ", "") for r in records), records[0][:400]
