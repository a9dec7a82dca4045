"""Start-up failures name their cause: the exit status, the first and last
lines of stderr, and what went wrong where it can be told, with a hint that
fits (the hello hint only for a process that was alive and answered wrongly)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from arena.apps.check import check_bot, handshake_fix
from arena.botfile.spec import load_bot
from arena.errors import BotFault
from arena.match import diagnose
from arena.match.process import BotProcess, TimeControl
from arena.sandbox import SandboxLimits, available

needs_bwrap = pytest.mark.skipif(available().bwrap is None, reason="bubblewrap is not installed")
QUICK = TimeControl(hello_ms=10000, grace_ms=100)


def start_fault(path: Path, **replace: object) -> BotFault:
    spec = load_bot(path)
    if replace:
        spec = dataclasses.replace(spec, **replace)
    with pytest.raises(BotFault) as err, BotProcess(spec, SandboxLimits(), QUICK) as bot:
        bot.start()
    return err.value


def test_a_syntax_error_names_the_bots_file_and_line(tmp_path: Path) -> None:
    bot = tmp_path / "broken.py"
    bot.write_text("from arena.sdk import Bot\n\n\ndef act(turn:\n    return 'dudo'\n")
    fault = start_fault(bot)
    assert fault.kind == "crash" and "exited before answering hello with status 1" in fault.detail
    assert f"Python raised SyntaxError: '(' was never closed at {bot} line 4" in fault.detail
    assert "host.py" not in fault.detail  # the host's own frames say nothing to the author
    fix = handshake_fix(fault)
    assert f"{bot} line 4" in fix and '"type": "ready"' not in fix


def test_a_missing_module_is_named_with_where_it_was_looked_for(tmp_path: Path) -> None:
    bot = tmp_path / "needy.py"
    bot.write_text("import json\nimport arena_no_such_module\n\ndef act(turn):\n    return 'dudo'\n")
    fault = start_fault(bot)
    assert f"ModuleNotFoundError: No module named 'arena_no_such_module' at {bot} line 2" in fault.detail
    assert "not installed where the bot's interpreter looks" in fault.detail
    # The first lines of the traceback are shown, not only its end.
    assert "stderr: Traceback (most recent call last):" in fault.detail


@needs_bwrap
def test_an_interpreter_not_visible_inside_is_named(tmp_path: Path) -> None:
    """What used to happen to every venv interpreter: bwrap cannot find the
    program inside. Here the runtime the resolver found is dropped on purpose."""
    (tmp_path / "lost").mkdir()
    (tmp_path / "lost" / "lost.sh").write_text("#!/bin/sh\n")
    (tmp_path / "lost.yaml").write_text("command: [sh, ./lost/lost.sh]\n")
    fault = start_fault(tmp_path / "lost.yaml", command=("/opt/arena-nowhere/bin/python3", "./lost/lost.sh"))
    assert fault.kind == "crash"
    assert "the program /opt/arena-nowhere/bin/python3 is not visible inside the sandbox" in fault.detail
    # The launcher's own words are shown too (bwrap's execvp, or prlimit's when the quota launcher runs it).
    assert re.search(
        r"(bwrap: execvp|prlimit: failed to execute) /opt/arena-nowhere/bin/python3: "
        r"No such file or directory",
        fault.detail,
    )


@needs_bwrap
def test_a_script_whose_env_interpreter_is_not_inside_is_named(tmp_path: Path) -> None:
    (tmp_path / "envy").mkdir()
    (tmp_path / "envy" / "envy.sh").write_text("#!/usr/bin/env arena-no-such-python\nprint(1)\n")
    (tmp_path / "envy" / "envy.sh").chmod(0o755)
    (tmp_path / "envy.yaml").write_text("command: [./envy/envy.sh]\n")
    fault = start_fault(tmp_path / "envy.yaml")
    assert "status 127" in fault.detail
    assert (
        "the interpreter arena-no-such-python that its #!/usr/bin/env line names is not on the sandbox's PATH"
        in fault.detail
    )


def test_text_on_stdout_before_ready_is_shown_and_the_hello_hint_fits(tmp_path: Path) -> None:
    (tmp_path / "talky").mkdir()
    (tmp_path / "talky" / "talky.sh").write_text('#!/bin/sh\necho "Loading tables..."\nsleep 5\n')
    (tmp_path / "talky" / "talky.sh").chmod(0o755)
    (tmp_path / "talky.yaml").write_text("command: [./talky/talky.sh]\n")
    fault = start_fault(tmp_path / "talky.yaml")
    assert fault.kind == "malformed" and "'Loading tables...'" in fault.detail
    assert '"type": "ready"' in handshake_fix(fault)


def test_bot_text_in_a_diagnosis_cannot_drive_the_terminal(tmp_path: Path) -> None:
    bot = tmp_path / "painter.py"
    bot.write_text("import sys\nsys.stderr.write('\\x1b[2J\\x1b[1;1HOK: all good\\n')\nraise SystemExit(3)\n")
    fault = start_fault(bot)
    assert "status 3" in fault.detail and "\x1b" not in fault.detail and "\\x1b[2J" in fault.detail
    report = check_bot(str(bot), turns=5)
    assert not report.ok and "\x1b" not in report.render()


def test_causes_from_java_and_python_text() -> None:
    own = lambda p: p == "/b/bots/me.py"  # noqa: E731
    kw = dict(own=own, program="java", processes=16, max_processes=256, memory_mb=512, pids_capped=False)
    java = (
        'Exception in thread "main" java.lang.ExceptionInInitializerError\n'
        "Caused by: java.lang.NullPointerException: table\n\tat Bot.load(Bot.java:12)\n\tat Bot.<clinit>(Bot.java:3)\n"
    )
    assert diagnose.causes(java, **kw) == [
        "Java raised java.lang.NullPointerException: table at Bot.java line 12 (Bot.load)"
    ]
    assert (
        "not visible inside the sandbox"
        in diagnose.causes(
            'Exception in thread "main" java.lang.InternalError: Error loading java.security file\n', **kw
        )[0]
    )
    assert "process limit: 16" in diagnose.causes("[0.1s][warning][os,thread] pthread_create failed (EAGAIN)", **kw)[0]
    py = (
        'Traceback (most recent call last):\n  File "/lib/x.py", line 9, in f\n    g()\n'
        '  File "/b/bots/me.py", line 4, in act\n    h()\n  File "/lib/y.py", line 2, in h\n    1/0\n'
        "ZeroDivisionError: division by zero\n"
    )
    assert diagnose.causes(py, **kw) == ["Python raised ZeroDivisionError: division by zero at /b/bots/me.py line 4"]
    assert diagnose.stdout_hints(b"[0.084s][warning][os,thread] Failed", "/usr/bin/node")[0].startswith(
        "the JVM writes"
    )
    assert diagnose.excerpt("a\nb\nc\n", "h\ni\nj\n", complete=False, keep=2) == "a | b | ... | i | j"
    lines = "".join(f"l{i}\n" for i in range(10))
    assert diagnose.excerpt(lines, lines, complete=True, keep=2) == "l0 | l1 | ... (6 more lines) ... | l8 | l9"


# What a bot writes is the bot's to shape: saying why it failed must cost the
# referee time linear in that (and it is bounded: 4 KiB of head, the stderr
# tail, one line of stdout). Each text below fills that bound with a pattern
# that made one of the old expressions scan the rest of the text from every
# line (quadratic: 0.9 s for 20 KiB of bare newlines, 12.7 s with a 64 KiB
# line beside it). The bound is generous; the quadratic cases took seconds.
ADVERSARIAL = [
    "\n",
    " \n",
    "\r",
    'File "',
    ' File "x", line 1\n',
    "bwrap: execvp ",
    "prlimit: failed to execute x",
    "Caused by: x\n",
    "\tat a.b(C.java:1)\n",
    'Exception in thread "',
    "Traceback (most recent call last):\n",
    "error while loading shared libraries: ",
    "/usr/bin/env: 'x",
]


@pytest.mark.parametrize("piece", ADVERSARIAL, ids=repr)
def test_diagnosing_hostile_stderr_is_linear(piece: str) -> None:
    import time

    size = 4096 + 16384 + 65536
    text = (piece * (size // len(piece) + 1))[:size]
    start = time.process_time()
    diagnose.causes(text, own=lambda p: False, program="", processes=1, max_processes=1, memory_mb=1, pids_capped=False)
    diagnose.excerpt(text[:4096], text[-16384:], False)
    assert time.process_time() - start < 0.25


def test_a_traceback_after_a_flood_still_names_the_bots_line(tmp_path: Path) -> None:
    """Bounding the work keeps the diagnosis: the bot's own frame is found
    among the last frames even after thousands of lines of noise."""
    noise = ' File "/elsewhere/x.py", line 1\n' * 3000
    text = (
        noise + 'Traceback (most recent call last):\n  File "/b/mine.py", line 7, in act\n    boom()\nValueError: no\n'
    )
    out = diagnose.causes(
        text, own=lambda p: p == "/b/mine.py", program="", processes=1, max_processes=1, memory_mb=1, pids_capped=False
    )
    assert out[0] == "Python raised ValueError: no at /b/mine.py line 7"


@pytest.mark.parametrize("name", ["newline_crash.py", "newline_hello.yaml"])
def test_a_crash_after_a_flood_of_newlines_costs_the_referee_little(name: str) -> None:
    """The attack bots through a real bot process: the fault is the right one,
    and the referee's own CPU for the whole start, turn and diagnosis stays
    small (the quadratic diagnosis alone took 0.9 and 12.7 s here)."""
    import time

    from arena.engine.rules import Rules

    spec = load_bot(Path(__file__).parent / "bots" / name)
    turn = {
        "type": "turn",
        "match": "m-1",
        "round": 1,
        "seat": 0,
        "dice": [1, 3, 3, 5],
        "counts": [4, 4],
        "palifico": False,
        "history": [],
        "legal": {"dudo": False, "calza": False, "min_quantity": {str(f): 1 for f in range(1, 7)}, "max_quantity": 8},
        "time_ms": 1000,
    }
    start = time.process_time()
    with pytest.raises(BotFault) as err, BotProcess(spec, SandboxLimits(), QUICK) as bot:
        bot.start()
        bot.notify(
            {
                "type": "match_start",
                "match": "m-1",
                "seat": 0,
                "players": 2,
                "names": ["a", "b"],
                "rules": Rules().to_dict(),
                "seed": 1,
            }
        )
        bot.request(turn)  # type: ignore[arg-type]
    used = time.process_time() - start
    if name.endswith(".py"):  # it died on its turn, having played nothing wrong before
        assert err.value.kind == "crash" and "status 1" in err.value.detail, err.value.detail
    else:  # its hello reply was 64 KiB of spaces: not a line of the protocol
        assert err.value.kind in ("malformed", "protocol"), err.value.detail
    assert used < 0.3, f"the referee used {used:.3f} s of CPU"
