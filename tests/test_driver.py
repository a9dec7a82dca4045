"""The one bot driver (message in, reply out), the one loader of Python bot
files, and the host that wraps both around its pipes: a fresh seeded bot per
match, the same replies from the host process as in-process, and errors that
name the file."""

from __future__ import annotations

import os
import pickle
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from arena.engine.dice import roll_table
from arena.engine.rules import DUDO, Rules, apply, deal, legal_actions, new_match
from arena.protocol.driver import BotDriver
from arena.protocol.loader import BotFileError, BotImportError, PythonBot, load_python_bot
from arena.protocol.messages import (
    hello_message,
    match_end_message,
    match_start_message,
    round_end_message,
    turn_message,
)
from arena.protocol.parse import MessageError
from arena.protocol.wire import decode, encode
from arena.sdk import Bot, MatchInfo, RoundEnd, Turn

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "bots"


def session(seat: int = 0, seed: int = 5, dice_seed: int = 3, match: str = "m-1") -> list[dict[str, Any]]:
    """Every message one seat gets in a match of random legal moves, as JSON off the wire."""
    rules = Rules.preset("classic", {"dice": 2})
    rng = random.Random(dice_seed)
    state = new_match(rules, 3, 0)
    out: list[Any] = [match_start_message(match, seat, ["a", "b", "c"], rules.to_dict(), seed)]
    while state.placements is None:
        state = deal(state, roll_table(dice_seed, state.round, state.counts))
        while state.dice is not None:
            if state.to_act == seat:
                out.append(turn_message(match, state, 1000))
            state = apply(state, rng.choice(legal_actions(state)))
        out.append(round_end_message(match, state))
    out.append(match_end_message(match, state.placements))
    return [orjson.loads(encode(m)) for m in out]


def replies(driver: BotDriver, messages: list[dict[str, Any]]) -> list[bytes]:
    return [r for r in (driver.handle(m) for m in messages) if r is not None]


class Spy(Bot):
    """Records what the driver did to each instance, in a class-level log."""

    log: list[tuple[str, Any]] = []

    def start(self, match: MatchInfo) -> None:
        Spy.log.append(("start", (self, self.match is match, self.rng.random(), vars(self).copy())))
        self.turns = 0

    def act(self, turn: Turn) -> Any:
        self.turns += 1
        Spy.log.append(("act", (self, self.turns, turn.rng is self.rng)))
        return DUDO if turn.legal.dudo else next(turn.legal.bids())

    def round_end(self, result: RoundEnd) -> None:
        Spy.log.append(("round_end", result.round))

    def match_end(self, placements: Any) -> None:
        Spy.log.append(("match_end", tuple(placements)))


def test_a_fresh_seeded_instance_plays_each_match() -> None:
    Spy.log = []
    driver = BotDriver(Spy, "spy")
    first, second = session(seed=5), session(seed=5, dice_seed=4)
    replies(driver, first + second)
    starts = [v for k, v in Spy.log if k == "start"]
    assert len(starts) == 2 and starts[0][0] is not starts[1][0]  # a new instance (both kept alive by the log)
    assert all(s[1] for s in starts)  # self.match set before start()
    assert starts[0][2] == starts[1][2] == random.Random(5).random()  # self.rng = Random(seed)
    assert starts[1][3] == {"match": starts[1][3]["match"], "rng": starts[1][3]["rng"]}  # nothing carried over
    acts = [v for k, v in Spy.log if k == "act"]
    assert all(a[2] for a in acts)  # turn.rng is self.rng
    # each instance plays one match, counting its turns from 1: per-match state on self starts afresh
    by = [[a[1] for a in acts if a[0] is s[0]] for s in starts]
    assert by[0] and by[1] and all(turns == list(range(1, len(turns) + 1)) for turns in by)
    assert len(by[0]) + len(by[1]) == len(acts)
    ends = [v for k, v in Spy.log if k == "match_end"]
    assert ends == [tuple(first[-1]["placements"]), tuple(second[-1]["placements"])]
    assert [v for k, v in Spy.log if k == "round_end"] == [
        m["round"] for m in first + second if m["type"] == "round_end"
    ]


def test_same_seed_same_actions_other_seed_other_actions() -> None:
    bot = load_python_bot(BOTS / "random.py")
    a = replies(BotDriver(bot, "random"), session(seed=11))
    assert a == replies(BotDriver(bot, "random"), session(seed=11))
    assert len(a) > 5 and a != replies(BotDriver(bot, "random"), session(seed=12))


def test_a_module_level_act_draws_on_turn_rng(tmp_path: Path) -> None:
    path = tmp_path / "drawer.py"
    path.write_text("def act(turn):\n    return {'action': 'dudo', 'draw': turn.rng.random()}\n")
    bot = load_python_bot(path)
    messages = session(seed=21)
    draws = [decode(r)["draw"] for r in replies(BotDriver(bot, bot.name), messages)]
    expected = random.Random(21)
    assert draws and draws == [expected.random() for _ in draws]


def test_hello_unknown_types_and_messages_out_of_order() -> None:
    driver = BotDriver(Spy, "spy", "2.0")
    assert decode(driver.handle(dict(hello_message())) or b"") == {"type": "ready", "name": "spy", "version": "2.0"}
    assert driver.handle({"type": "chat", "text": "hi"}) is None and driver.handle({"no": "type"}) is None
    messages = session()
    turn = next(m for m in messages if m["type"] == "turn")
    for early in (turn, messages[-2], messages[-1]):  # a turn, a round_end, a match_end before match_start
        with pytest.raises(MessageError, match="before match_start|outside a match"):
            driver.handle(early)
    with pytest.raises(MessageError, match="protocol 3 is not spoken here"):  # the referee speaks 1 and 2
        driver.handle({"type": "hello", "protocol": 3})
    with pytest.raises(MessageError, match="expected a JSON object"):
        driver.handle([1, 2])  # type: ignore[arg-type]
    replies(driver, messages)
    with pytest.raises(MessageError, match="before match_start"):  # the match is over
        driver.handle(turn)


def test_a_bot_that_raises_in_start_plays_no_part_of_the_match() -> None:
    class Broken(Bot):
        def start(self, match: MatchInfo) -> None:
            raise ValueError("no tables")

    driver = BotDriver(Broken, "broken")
    messages = session()
    with pytest.raises(ValueError, match="no tables"):
        driver.handle(messages[0])
    with pytest.raises(MessageError, match="before match_start"):
        driver.handle(next(m for m in messages if m["type"] == "turn"))


# --- the loader ---------------------------------------------------------------------------


@pytest.mark.pure
def test_round_end_reaches_every_hook_and_costs_a_bot_without_one_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot hears every round_end through its hook, whether its class defines
    one or it sets one on the instance; a bot with neither does not pay for the
    parse (a seat hears about one round_end per decision it makes)."""
    import arena.protocol.driver as driver_mod

    parsed: list[int] = []
    real = driver_mod.parse_round_end
    monkeypatch.setattr(
        driver_mod, "parse_round_end", lambda msg, match: parsed.append(msg["round"]) or real(msg, match)
    )
    messages = session(seed=7)
    rounds = [m["round"] for m in messages if m["type"] == "round_end"]

    class Quiet(Bot):
        def act(self, turn: Turn) -> Any:
            return DUDO if turn.legal.dudo else next(turn.legal.bids())

    heard: list[int] = []

    class SetsItsHook(Quiet):
        def start(self, match: MatchInfo) -> None:
            self.round_end = lambda result: heard.append(result.round)  # type: ignore[method-assign]

    quiet = replies(BotDriver(Quiet, "quiet"), messages)
    assert parsed == [] and len(quiet) > 3
    Spy.log = []
    assert replies(BotDriver(Spy, "spy"), messages) == quiet  # the same moves, hook or not
    assert parsed == rounds == [v for k, v in Spy.log if k == "round_end"]
    parsed.clear()
    replies(BotDriver(SetsItsHook, "sets"), messages)
    assert parsed == rounds == heard


def test_loader_errors_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "two.py").write_text("from arena.sdk import Bot\nclass A(Bot): pass\nclass B(Bot): pass\n")
    (tmp_path / "none.py").write_text("from arena.sdk import Bot\nx = 1\n")
    (tmp_path / "broken.py").write_text("import not_a_module_anywhere\n")
    (tmp_path / "notes.txt").write_text("")
    for name, kind, words in [
        ("two.py", BotFileError, "defines several Bot subclasses (A, B); keep one"),
        ("none.py", BotFileError, "defines neither a Bot subclass nor a function act(turn)"),
        ("broken.py", BotImportError, "failed to import: ModuleNotFoundError"),
        ("missing.py", BotFileError, "not a readable .py file"),
        ("notes.txt", BotFileError, "not a readable .py file"),
    ]:
        with pytest.raises(kind) as err:
            load_python_bot(tmp_path / name)
        assert str(tmp_path / name) in str(err.value) and words in str(err.value), str(err.value)
    with pytest.raises(BotImportError) as err:
        load_python_bot(tmp_path / "broken.py")
    assert isinstance(err.value.__cause__, ModuleNotFoundError)  # the bot's own error, for the host's traceback
    assert not [m for m in sys.modules if m.startswith("_arena_bot_") and m[11:] in ("two", "none", "broken")]


def test_module_names_keep_the_stdlib_and_other_files_apart(tmp_path: Path) -> None:
    one, two = tmp_path / "a", tmp_path / "b"
    one.mkdir()
    two.mkdir()
    for folder, word in ((one, "first"), (two, "second")):
        (folder / "random.py").write_text(
            "import random\nfrom arena.sdk import Bot\n"
            f"WORD = {word!r}\nSTDLIB = random.Random\n"
            "class Keep:\n    pass\n"
            "class R(Bot):\n    def act(self, turn):\n        return 'dudo'\n"
        )
    a = load_python_bot(one / "random.py")
    b = load_python_bot(two / "random.py")
    ma, mb = sys.modules[a().__class__.__module__], sys.modules[b().__class__.__module__]
    # bots/random.py may hold _arena_bot_random already: each file gets a name of its own
    assert ma.__name__ != mb.__name__ and {ma.__name__, mb.__name__} <= {
        f"_arena_bot_random{s}" for s in ("", "_2", "_3", "_4")
    }
    assert ma.WORD == "first" and mb.WORD == "second"
    assert ma.STDLIB is random.Random and sys.modules["random"] is random  # the stdlib is untouched
    again = load_python_bot(one / "random.py")
    assert again().__class__.__module__ == ma.__name__  # the same file replaces its own module
    keep = sys.modules[ma.__name__].Keep()
    assert type(pickle.loads(pickle.dumps(keep))) is type(keep)  # registered, as a normal import would be


def test_version_and_factory(tmp_path: Path) -> None:
    (tmp_path / "v.py").write_text("__version__ = 3\ndef act(turn):\n    return 'dudo'\n")
    (tmp_path / "w.py").write_text("VERSION = '1.0b'\nfrom arena.sdk import Bot\nclass W(Bot):\n    pass\n")
    v, w = load_python_bot(tmp_path / "v.py"), load_python_bot(tmp_path / "w.py")
    assert isinstance(v, PythonBot) and (v.name, v.version, w.name, w.version) == ("v", "3", "w", "1.0b")
    assert v() is not v() and type(w()).__name__ == "W"  # a fresh instance per call
    assert load_python_bot(BOTS / "random.py").version is None


# --- the host: the driver around pipes ----------------------------------------------------


def host(path: Path, lines: list[bytes], *, timeout: float = 30) -> subprocess.CompletedProcess[bytes]:
    """Run ``python -m arena.protocol.host path`` without a sandbox, feeding ``lines``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "arena.protocol.host", str(path)],
        input=b"".join(lines),
        capture_output=True,
        env=env,
        timeout=timeout,
    )


def test_the_host_sends_exactly_what_the_driver_gives_in_process() -> None:
    messages = [dict(hello_message()), *session(seed=9), *session(seed=9, dice_seed=8, match="m-2")]
    done = host(BOTS / "probabilistic.py", [encode(m) for m in messages])
    assert done.returncode == 0, done.stderr.decode()
    bot = load_python_bot(BOTS / "probabilistic.py")
    assert done.stdout == b"".join(replies(BotDriver(bot, bot.name, bot.version), messages))
    assert done.stdout.count(b"\n") > 10


def test_the_host_skips_round_end_lines_only_for_a_bot_without_the_hook(tmp_path: Path) -> None:
    """A bot without a round_end hook gets its round_end lines dropped unread
    (a line the driver would drop anyway); with the hook, the same line is
    decoded and checked, and a broken one stops the host with one line."""
    messages = [dict(hello_message()), *session(seed=9)]
    at = next(i for i, m in enumerate(messages) if m["type"] == "round_end")
    lines = [encode(m) for m in messages]
    lines[at] = b'{"type":"round_end", not json\n'
    (tmp_path / "plain.py").write_text("def act(turn):\n    return 'dudo' if turn.legal.dudo else '1x2'\n")
    done = host(tmp_path / "plain.py", lines)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.count(b"\n") == sum(m["type"] in ("hello", "turn") for m in messages)
    (tmp_path / "hooked.py").write_text(
        "from arena.sdk import Bot\n"
        "class Hooked(Bot):\n"
        "    def act(self, turn):\n        return 'dudo' if turn.legal.dudo else '1x2'\n"
        "    def round_end(self, result):\n        pass\n"
    )
    done = host(tmp_path / "hooked.py", lines)
    assert done.returncode == 2 and done.stderr.decode().startswith(
        "arena.protocol.host: the referee sent a line that is not JSON"
    )


def test_the_bots_prints_go_to_stderr_at_import_too(tmp_path: Path) -> None:
    path = tmp_path / "talker.py"
    path.write_text("print('loading tables')\ndef act(turn):\n    print('thinking')\n    return 'dudo'\n")
    messages = [dict(hello_message()), *session(seed=2)]
    done = host(path, [encode(m) for m in messages])
    assert done.returncode == 0, done.stderr.decode()
    lines = done.stdout.splitlines()
    assert decode(lines[0])["type"] == "ready" and all("action" in decode(x) for x in lines[1:])
    assert b"loading tables" in done.stderr and b"thinking" in done.stderr


def test_the_host_shows_the_traceback_from_the_bots_own_frames(tmp_path: Path) -> None:
    path = tmp_path / "faulty.py"
    path.write_text(
        "def helper(turn):\n    raise KeyError('no such table')\n\ndef act(turn):\n    return helper(turn)\n"
    )
    done = host(path, [encode(m) for m in [dict(hello_message()), *session(seed=2)]])
    err = done.stderr.decode()
    assert done.returncode == 1
    assert err.startswith("Traceback (most recent call last):") and "KeyError: 'no such table'" in err
    assert f'File "{path}", line 5, in act' in err and f'File "{path}", line 2, in helper' in err
    assert "driver.py" not in err and "host.py" not in err  # the host's frames say nothing to the author


def test_the_host_says_what_it_cannot_host_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_text("x = 1\n")
    done = host(tmp_path / "empty.py", [encode(hello_message())])
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().strip().splitlines() == [
        f"arena.protocol.host: bot file {str(tmp_path / 'empty.py')!r} defines neither a Bot subclass "
        "nor a function act(turn)"
    ]
    (tmp_path / "ok.py").write_text("def act(turn):\n    return 'dudo'\n")
    done = host(tmp_path / "ok.py", [encode(hello_message()), b"not json\n"])
    assert done.returncode == 2 and done.stderr.decode().startswith(
        "arena.protocol.host: the referee sent a line that is not JSON"
    )
    done = host(tmp_path / "ok.py", [encode({"type": "turn", "round": 1})])
    assert done.returncode == 2 and "a turn arrived before match_start" in done.stderr.decode()
