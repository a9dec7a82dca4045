"""``arena check``: its fuzzing covers what it claims, and it catches and explains each failure."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.apps.check import ADVICE, CheckReport, fuzz_rules, own_traceback, percentiles, run_check
from arena.apps.cli import main
from arena.botfile.supports import Supports
from arena.engine.rules import CALZA, DUDO, PRESETS, Bid, bid
from arena.errors import BotTimeout
from arena.match.inprocess import InProcessTransport
from arena.protocol.loader import load_python_bot
from arena.sdk import Bot, Turn

BOTS = Path(__file__).resolve().parent.parent / "bots"


def inproc(bot_cls: type[Bot] | Any, name: str = "t") -> Any:
    return lambda: InProcessTransport(bot_cls, name)


class Recorder(InProcessTransport):
    """Keeps every message it was sent."""

    seen: list[dict[str, Any]] = []

    def notify(self, msg: Any) -> None:
        Recorder.seen.append(dict(msg))
        super().notify(msg)

    def request(self, msg: Any) -> tuple[dict[str, Any], float]:
        Recorder.seen.append(dict(msg))
        return super().request(msg)


class Lowest(Bot):
    """Always legal: dudo when possible, else the lowest legal bid."""

    def act(self, turn: Turn) -> Any:
        return DUDO if turn.legal.dudo else next(iter(turn.legal.bids()))


def test_a_legal_bot_passes_and_the_fuzzing_covers_the_space() -> None:
    Recorder.seen = []
    report = run_check(lambda: Recorder(load_python_bot(BOTS / "random.py"), "random"), turns=2500, seed=3)
    assert report.ok, report.render()
    assert report.deterministic is True
    assert report.turns == 2500
    turns = [m for m in Recorder.seen if m["type"] == "turn"]
    starts = [m for m in Recorder.seen if m["type"] == "match_start"]
    assert len(turns) == 2 * 2500  # the run and its repeat
    assert {m["players"] for m in starts} == set(range(2, 11))
    assert {m["rules"]["dice"] for m in starts} >= {1, 2, 5, 10}
    assert set(report.presets) == set(PRESETS)
    assert any(m["palifico"] for m in turns)  # palifico rounds reached
    assert any(m["legal"]["calza"] for m in turns) and any(not m["legal"]["calza"] for m in turns)
    assert any(not m["history"] for m in turns) and any(len(m["history"]) > 5 for m in turns)
    assert max(m["legal"]["max_quantity"] for m in turns) > 60
    assert any(m["type"] == "round_end" and "bid" in m for m in Recorder.seen)
    assert any(m["type"] == "match_end" for m in Recorder.seen)
    assert set(report.actions) == {"bid", "dudo", "calza"}
    assert set(percentiles(report.wall_ms)) == {"p50", "p90", "p99", "max"}


def test_fuzz_plan_is_seeded() -> None:
    a = [fuzz_rules(random.Random(9), i) for i in range(20)]
    b = [fuzz_rules(random.Random(9), i) for i in range(20)]
    c = [fuzz_rules(random.Random(10), i) for i in range(20)]
    assert a == b and a != c


def test_same_seed_same_transcript_across_runs() -> None:
    r1 = run_check(inproc(Lowest), turns=300, seed=5)
    r2 = run_check(inproc(Lowest), turns=300, seed=5)
    assert r1.ok and r2.ok
    assert (r1.matches, r1.actions, r1.players) == (r2.matches, r2.actions, r2.players)


class AceOpener(Bot):
    """Opens on aces: illegal unless open_on_ones (or in palifico)."""

    def act(self, turn: Turn) -> Any:
        return bid(1, 1) if turn.standing is None else DUDO


def test_illegal_replies_are_reported_with_the_message_and_the_reason() -> None:
    report = run_check(inproc(AceOpener), turns=400, seed=1)
    assert not report.ok
    illegal = [p for p in report.problems if p.kind == "illegal"]
    assert illegal and all(p.kind == "illegal" for p in report.problems)
    p = illegal[0]
    assert p.message is not None and p.message["type"] == "turn" and p.message["history"] == []
    assert "opening bid may not be on aces" in p.detail
    assert p.reply is not None and '"quantity": 1' in p.reply
    text = report.render()
    assert "FAILED" in text and "turn.legal" in text and "opening bid may not be on aces" in text
    assert report.restarts == len(illegal)  # a faulting bot is restarted, as in a tournament
    # the presets that allow opening on aces never produced the complaint
    assert all("open_on_ones is false" in q.detail for q in illegal)


class Overbid(Bot):
    def act(self, turn: Turn) -> Any:
        return Bid(turn.legal.max_quantity + 1, 6)


def test_quantity_beyond_the_dice_in_play() -> None:
    report = run_check(inproc(Overbid), turns=50, seed=2, max_problems=5)
    assert report.problems and report.problems[0].kind == "illegal"
    assert "the quantity must be from 1 to" in report.problems[0].detail
    assert report.stopped_early
    assert "stopped after 5 problems" in report.render()


class RawTransport:
    """A transport that answers every turn with a fixed raw reply object."""

    def __init__(self, reply: dict[str, Any]) -> None:
        self.reply = reply

    def start(self) -> dict[str, Any]:
        return {"type": "ready", "name": "raw"}

    def notify(self, msg: dict[str, Any]) -> None:
        pass

    def request(self, msg: dict[str, Any]) -> tuple[dict[str, Any], float]:
        return dict(self.reply), 0.0

    def close(self) -> None:
        pass


@pytest.mark.parametrize(
    "reply",
    [
        {"action": "bid", "quantity": "3", "face": 2},
        {"action": "bid", "quantity": True, "face": 2},
        {"action": "bid", "quantity": 3.0, "face": 2},
        {"action": "raise"},
        {},
    ],
)
def test_malformed_replies(reply: dict[str, Any]) -> None:
    report = run_check(lambda: RawTransport(reply), turns=20, seed=0, max_problems=3)
    assert not report.ok and {p.kind for p in report.problems} == {"malformed"}
    assert "JSON integers" in report.render()


def test_a_huge_integer_is_illegal_not_malformed() -> None:
    report = run_check(
        lambda: RawTransport({"action": "bid", "quantity": 10**100, "face": 2}), turns=20, seed=0, max_problems=2
    )
    assert report.problems[0].kind == "illegal"


class Unseeded(Bot):
    _shared = random.Random()  # not the match seed: differs between runs

    def act(self, turn: Turn) -> Any:
        return self._shared.choice(turn.legal.actions())


def test_nondeterminism_is_caught_with_the_first_divergent_message() -> None:
    report = run_check(inproc(Unseeded), turns=300, seed=1)
    assert report.deterministic is False
    p = report.problems[-1]
    assert p.kind == "nondeterministic" and p.message is not None and p.message["type"] == "turn"
    assert "self.rng" in report.render()


class Crashy(Bot):
    def act(self, turn: Turn) -> Any:
        if turn.round >= 3:
            raise RuntimeError("boom")
        return DUDO if turn.legal.dudo else next(iter(turn.legal.bids()))


def test_crashes_are_reported_and_the_check_goes_on() -> None:
    report = run_check(inproc(Crashy), turns=200, seed=1, max_problems=5)
    assert [p.kind for p in report.problems] == ["crash"] * 5
    assert "boom" in report.problems[0].detail
    assert report.matches >= 5 and report.restarts == 5


class NoHello(RawTransport):
    def start(self) -> dict[str, Any]:
        raise BotTimeout("no ready within 10000 ms")


def test_handshake_failure_stops_at_once() -> None:
    report = run_check(lambda: NoHello({}), turns=100)
    assert not report.ok and report.ready is None and report.turns == 0
    assert report.problems[0].kind == "handshake"
    assert "handshake: FAILED" in report.render()


def test_a_bad_ready_is_a_handshake_problem() -> None:
    class Wrong(RawTransport):
        def start(self) -> dict[str, Any]:
            return {"type": "hi"}

    report = run_check(lambda: Wrong({}), turns=10)
    assert report.problems[0].kind == "handshake" and '"hi"' in report.problems[0].detail


def test_calza_only_when_allowed_is_checked() -> None:
    class AlwaysCalza(Bot):
        def act(self, turn: Turn) -> Any:
            return CALZA if turn.standing is not None else next(iter(turn.legal.bids()))

    report = run_check(inproc(AlwaysCalza), turns=500, seed=3)
    reasons = {p.reason for p in report.problems}
    assert any("calza is not played" in r or "calza needs at least" in r for r in reasons)


def test_percentiles() -> None:
    assert percentiles([]) == {}
    v = [float(i) for i in range(1, 101)]
    assert percentiles(v) == {"p50": 50.0, "p90": 90.0, "p99": 99.0, "max": 100.0}
    assert percentiles([3.0]) == {"p50": 3.0, "p90": 3.0, "p99": 3.0, "max": 3.0}


def test_report_ok_needs_turns() -> None:
    assert not CheckReport(bot="x", seed=0, turns_asked=1, ready={"type": "ready", "name": "x"}).ok


# --- the command, with real sandboxed processes -----------------------------------


def test_cli_passes_a_builtin_bot() -> None:
    result = CliRunner().invoke(main, ["check", str(BOTS / "calza.py"), "--turns", "300", "--seed", "2"])
    assert result.exit_code == 0, result.output
    assert "OK:" in result.output and "p99" in result.output and "same seed, same actions: yes" in result.output


def test_cli_fails_an_illegal_bot(tmp_path: Path) -> None:
    bad = tmp_path / "aceopener.py"
    bad.write_text(
        "from arena.sdk import Bot, bid, DUDO\n\n"
        "class AceOpener(Bot):\n"
        "    def act(self, turn):\n"
        "        return bid(1, 1) if turn.standing is None else DUDO\n"
    )
    result = CliRunner().invoke(main, ["check", str(bad), "--turns", "20", "--seed", "1", "--show", "1"])
    assert result.exit_code == 1
    assert "[illegal]" in result.output and "open_on_ones is false" in result.output
    assert '"type": "turn"' in result.output


def test_cli_names_a_missing_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["check", str(tmp_path / "nope.py")])
    assert result.exit_code != 0 and "does not exist" in result.output


class Hanging(RawTransport):
    def request(self, msg: dict[str, Any]) -> tuple[dict[str, Any], float]:
        raise BotTimeout("no reply within 1000 ms of CPU time")


def test_timeouts_stop_the_check_early() -> None:
    report = run_check(lambda: Hanging({}), turns=1000, max_timeouts=3)
    assert [p.kind for p in report.problems] == ["timeout"] * 3
    assert report.stopped_early == "3 timeouts" and report.deterministic is None
    text = report.render()
    assert "stopped after 3 timeouts" in text and "not compared (the first run stopped early)" in text
    assert "time_ms" in text  # the advice


def _leaky_class() -> type[Bot]:
    class Leaky(Bot):
        """Seeds once per process, so match 2 depends on what match 1 drew."""

        stream = random.Random(0)

        def act(self, turn: Turn) -> Any:
            return self.stream.choice(turn.legal.actions())

    return Leaky


def test_state_carried_across_matches_is_caught() -> None:
    # each transport is a "process" with its own class, hence its own once-per-process stream
    report = run_check(lambda: InProcessTransport(_leaky_class(), "leaky"), turns=400, seed=2)
    assert report.deterministic is False
    p = report.problems[-1]
    assert p.kind == "nondeterministic" and "freshly started process" in p.detail
    assert p.match in {f"check-{i:05d}" for i in range(1, 6)}


# --- fuzzing only what the bot supports --------------------------------------------

TWO_SEATER = Path(__file__).resolve().parent / "bots" / "two_seater.py"


def test_check_on_a_two_player_bot_fuzzes_only_two_player_tables() -> None:
    from arena.apps.check import check_bot

    # two_seater crashes at any larger table, so a stray table would also fail the check.
    report = check_bot(str(TWO_SEATER), turns=300, seed=4)
    assert report.ok, report.render()
    assert set(report.players) == {2} and report.players[2] == report.matches > 0
    assert set(report.presets) == set(PRESETS)  # still every (supported) preset
    assert "fuzzed:    presets classic, lizumo, wikipedia, neller, plain; players 2; dice 1-10" in report.render()


def test_check_refuses_a_narrowing_the_bot_does_not_support() -> None:
    result = CliRunner().invoke(main, ["check", str(TWO_SEATER), "--players", "3"])
    assert result.exit_code != 0
    assert "--players 3: nothing to fuzz: it plays only 2 players (supports.players)" in result.output
    result = CliRunner().invoke(
        main,
        [
            "check",
            str(TWO_SEATER),
            "--players",
            "2,3",
            "--turns",
            "50",
            "--preset",
            "neller",
            "--preset",
            "plain",
            "--dice",
            "1-2",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "presets neller, plain; players 2; dice 1, 2" in result.output
    assert "narrowed by the bot's supports" in result.output and "--preset neller,plain" in result.output
    assert "players 2:" in result.output and "players 3:" not in result.output


def test_narrowing_flags_are_checked() -> None:
    from arena.apps.check import fuzz_space, parse_narrowing
    from arena.errors import ConfigError

    assert parse_narrowing(("2,3", "5-6"), "--players", True) == [2, 3, 5, 6]
    assert parse_narrowing((), "--dice", True) is None
    for kw, words in [
        ({"presets": ["chess"]}, "--preset chess: not allowed"),
        ({"players": [11]}, "--players 11: not allowed"),
        ({"dice": [0]}, "--dice 0: not allowed"),
    ]:
        with pytest.raises(ConfigError) as err:
            fuzz_space(**kw)  # type: ignore[arg-type]
        assert words in str(err.value)
    neller_only = Supports.from_data({"presets": ["neller"], "dice": [1]}, "x")
    with pytest.raises(ConfigError) as err:
        fuzz_space(neller_only, presets=["classic"])
    assert "--preset classic: nothing to fuzz" in str(err.value) and "supports.presets" in str(err.value)
    with pytest.raises(ConfigError) as err:
        fuzz_space(neller_only, dice=[2, 3])
    assert "--dice 2,3: nothing to fuzz: the bot plays only 1 starting dice" in str(err.value)


@pytest.mark.parametrize(
    "declared",
    [
        {"players": [2]},
        {"presets": ["neller"], "dice": [1]},
        {"presets": ["classic", "plain"], "players": "3-5"},
        {"rules": {"calza": [False]}},
        {"rules": {"penalty": ["difference"], "first": ["seat0"]}, "dice": "2-3"},
        {"presets": ["lizumo"], "rules": {"first": ["seat0"]}},
    ],
)
def test_every_fuzzed_table_is_one_the_bot_supports(declared: dict[str, Any]) -> None:
    from arena.apps.check import fuzz_space

    sup = Supports.from_data(declared, "x")
    space = fuzz_space(sup)
    rng = random.Random(1)
    seen = set()
    for i in range(300):
        preset, rules, n = fuzz_rules(rng, i, space)
        assert sup.why_not(rules.to_dict(), n) is None, (preset, rules, n)
        seen.add(preset)
    assert seen == set(space.presets) and space.presets
    if "presets" in declared:
        assert set(space.presets) == set(declared["presets"])


def test_a_rule_restriction_keeps_presets_playable_under_allowed_values() -> None:
    from arena.apps.check import fuzz_space

    space = fuzz_space(Supports.from_data({"rules": {"calza": [False]}}, "x"))
    assert space.presets == tuple(PRESETS)  # classic and wikipedia are played with calza off
    rules = [fuzz_rules(random.Random(2), i, space)[1] for i in range(10)]
    assert not any(r.calza for r in rules)


# --- problem reports, line by line, through a mock transport ---------------------------

from mock_transport import MockTransport, Responses  # noqa: E402

from arena.errors import BotCrashed, BotFault  # noqa: E402
from arena.protocol.messages import hello_message  # noqa: E402

READY = '{"type": "ready", "name": "mock", "version": "0.1"}'


def scripted(
    hello: tuple[str, ...] = (READY,),
    turn: Responses = ('{"action": "calza"}',),
    *,
    hello_fault: BotFault | None = None,
    turn_fault: BotFault | None = None,
) -> Any:
    """A factory of mocks that answer hello with ``hello`` and every turn with ``turn``."""

    def make() -> MockTransport:
        mock = MockTransport().expect(hello_message(), hello, fault=hello_fault)
        for kind in ("match_start", "round_end", "match_end"):
            mock.otherwise({"type": kind})
        return mock.otherwise({"type": "turn"}, turn, fault=turn_fault)

    return make


@pytest.mark.parametrize(
    "line, words, advice",
    [
        ("I raise to five threes", "not JSON", "JSON integers"),
        ('{"action": "bid", "quantity": "3", "face": 2}', "'quantity' must be a JSON integer", "JSON integers"),
        ('{"action": "bid", "quantity": 2, "face": 3, "x": Infinity}', "not JSON", "JSON integers"),
        ('{"action": "bid", "quantity": 2, "face": 3}' + " " * 70000, "over the 65536-byte limit", "JSON integers"),
    ],
)
def test_a_malformed_line_is_reported_with_the_turn_it_answered(line: str, words: str, advice: str) -> None:
    report = run_check(scripted(turn=(line,)), turns=30, seed=1, max_problems=2)
    problem = report.problems[0]
    assert problem.kind == "malformed" and words in problem.detail, problem.detail
    assert problem.message is not None and problem.message["type"] == "turn"
    assert report.restarts == 2 and advice in report.render()


def test_output_after_ready_is_an_unasked_problem() -> None:
    report = run_check(scripted(hello=(READY, '{"note": "loaded"}')), turns=10, seed=1, max_problems=1)
    assert [p.kind for p in report.problems] == ["unasked"] and "loaded" in report.problems[0].detail
    assert "write to stdout only in answer to hello and turn" in report.render()


def legal_line(turn: dict[str, Any]) -> str:
    """A legal reply to ``turn``, from its legal summary alone."""
    if turn["legal"]["dudo"]:
        return '{"action": "dudo"}'
    face, low = next(iter(turn["legal"]["min_quantity"].items()))
    return f'{{"action": "bid", "quantity": {low}, "face": {face}}}'


def test_legal_lines_pass_and_a_second_line_after_a_reply_is_an_unasked_problem() -> None:
    good = run_check(scripted(turn=lambda m: [legal_line(m)]), turns=300, seed=2)
    assert good.ok and good.deterministic, good.render()
    report = run_check(scripted(turn=lambda m: [legal_line(m), '{"action": "dudo"}']), turns=40, seed=2, max_problems=2)
    assert [p.kind for p in report.problems] == ["unasked", "unasked"]
    assert '\'{"action": "dudo"}\'' in report.problems[0].detail
    assert report.problems[0].message is not None and report.problems[0].message["type"] == "turn"


@pytest.mark.parametrize(
    "hello, fault, words, fix",
    [
        (
            (),
            BotCrashed("bot mock exited before answering hello with status 1; stderr: ImportError"),
            "exited before answering hello",
            "ended before it could answer hello",
        ),
        ((), BotTimeout("bot mock sent no ready within hello_ms 10000 ms"), "hello_ms", "load tables"),
        (('{"type": "ready"}',), None, "'name' must be a JSON string", '"type": "ready"'),
        (
            ('{"type": "ready", "name": "m", "version": 1.5}',),
            None,
            "'version' must be a JSON string",
            '"type": "ready"',
        ),
        (("hello to you too",), None, "not JSON", '"type": "ready"'),
    ],
)
def test_handshake_problems_say_what_to_fix(
    hello: tuple[str, ...], fault: BotFault | None, words: str, fix: str
) -> None:
    report = run_check(scripted(hello=hello, hello_fault=fault), turns=10, seed=1)
    assert report.ready is None and report.turns == 0
    [problem] = report.problems
    assert problem.kind == "handshake" and words in problem.detail, problem.detail
    assert problem.message == hello_message() and fix in problem.advice and fix in report.render()


# --- the report reads like a good compiler's --------------------------------------


class TwoBugs(Bot):
    """Overbids by one over the dice in play (one bug, whatever the numbers),
    and calls calza whenever dudo is allowed (another, where calza is not)."""

    def act(self, turn: Turn) -> Any:
        if turn.legal.dudo:
            return CALZA
        return Bid(turn.total + 1, 6)


def test_identical_problems_are_one_group_with_a_count_and_one_example() -> None:
    report = run_check(inproc(TwoBugs), turns=400, seed=4, max_problems=40)
    text = report.render()
    overbids = [p for p in report.problems if "the dice in play" in p.detail]
    assert len({p.detail for p in overbids}) > 3  # many numbers, ...
    assert len({p.key for p in overbids}) == 1  # ... one bug
    groups = {p.key for p in report.problems}
    assert f"{len(groups)} distinct: one example of each below" in text
    assert f"[illegal] {len(overbids)} times, in {len({p.match for p in overbids})} matches" in text
    assert sum(1 for line in text.splitlines() if "the dice in play" in line) == 1  # one example, not one per match
    # The advice is printed once, however many groups share it.
    assert len(groups) >= 2 and text.count(ADVICE["illegal"]) == 1
    assert text.index("How to fix:") > text.index("message:")


def test_no_none_and_no_empty_fields() -> None:
    no_version = run_check(inproc(Lowest), turns=30, seed=1)
    text = no_version.render()
    assert "None" not in text and "(no version)" in text
    failed = run_check(lambda: NoHello({}), turns=10).render()
    assert "None" not in failed and "turns:     0 in 0 matches\n" in failed
    assert "presets" not in failed.split("turns:")[1].split("\n")[0] and "  actions:" not in failed
    for line in failed.splitlines():  # a field line ("  name: value") always has its value
        assert not line.startswith("  ") or not re.search(r":\s*$|;\s*;|; players\s*$|presets\s*;", line), line
    assert "-: " not in failed  # a problem of no match says none


BOT_FILE = "/home/me/arena/bots/mybot.py"
TRACE = """Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "/usr/lib/python3/site-packages/framework/run.py", line 40, in main
    bot.act(turn)
  File "/home/me/arena/bots/mybot.py", line 12, in act
    return helper(turn)
           ^^^^^^^^^^^^
  File "/home/me/arena/bots/mybot/lib.py", line 3, in helper
    return turn.history[-1]
IndexError: tuple index out of range
"""


def test_tracebacks_start_at_the_bots_own_frame() -> None:
    own = (BOT_FILE, "/home/me/arena/bots/mybot/")
    trimmed = own_traceback("some log line\n" + TRACE, own)
    assert trimmed.splitlines()[:4] == [
        "some log line",
        "Traceback (most recent call last):",
        "  (2 frames above the bot's own code left out)",
        '  File "/home/me/arena/bots/mybot.py", line 12, in act',
    ]
    assert "runpy" not in trimmed and "framework" not in trimmed
    assert trimmed.endswith("IndexError: tuple index out of range\n") and 'lib.py", line 3' in trimmed
    # A folder of the bot's own counts as its files.
    assert (
        own_traceback(TRACE, ("/home/me/arena/bots/mybot/",)).splitlines()[1]
        == "  (3 frames above the bot's own code left out)"
    )
    # No frame of the bot's: the traceback stays whole (it is all there is to go on).
    assert own_traceback(TRACE, ("/elsewhere/other.py",)) == TRACE
    # Chained tracebacks are each trimmed.
    chained = TRACE + "\nDuring handling of the above exception, another exception occurred:\n\n" + TRACE
    assert own_traceback(chained, own).count("(2 frames above the bot's own code left out)") == 2


def test_cli_shows_a_crash_from_the_bots_own_frame(tmp_path: Path) -> None:
    bad = tmp_path / "crashy.py"
    bad.write_text(
        "def helper(turn):\n    return turn.history[-1]\n\n"
        "def act(turn):\n    return helper(turn) if not turn.history else 'dudo'\n"
    )
    result = CliRunner().invoke(main, ["check", str(bad), "--turns", "20", "--seed", "1"])
    assert result.exit_code == 1
    out = result.output
    stderr = out.split("stderr:  ", 1)[1]
    first_frame = re.search(r'File "([^"]+)"', stderr).group(1)  # type: ignore[union-attr]
    assert Path(first_frame).resolve() == bad.resolve()
    assert "arena/protocol" not in stderr.split("IndexError")[0]  # no host frame before the bot's
    assert out.count("the bot process exited or raised") == 1 and "None" not in out
    assert "stderr ends:" not in out  # the detail does not repeat the stderr shown below it


def test_what_the_bot_wrote_reaches_the_terminal_escaped() -> None:
    """A reply or a name that carries terminal control sequences (clear the
    screen, retitle the window) is shown escaped, never sent to the terminal."""
    evil = "\x1b[2J\x1b]0;owned\x07"
    ready = '{"type": "ready", "name": "n\\u001b[2Jx", "version": "1\\u001b]0;t\\u0007"}'
    report = run_check(scripted(hello=(ready,), turn=(evil + "dudo",)), turns=10, seed=1, max_problems=2)
    text = report.render()
    assert report.problems and report.problems[0].kind == "malformed"
    assert "\x1b" not in text and "\x07" not in text, text
