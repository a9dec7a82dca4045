"""A bot cannot reach the user's terminal, nor the referee's process group.

Bots run in the referee's session (so that the scheduler's per-session
grouping does not make every turn a hand-over between groups on a busy
machine: docs/performance.md, "Sessions") but in a process group of their
own, with /dev/tty masked in the sandbox and TIOCSTI refused by the filter.
These tests run the referee under a pseudo-terminal, as `arena run` typed in
a terminal does, so that the session has a controlling terminal to steal."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import termios
from pathlib import Path
from typing import Any

import pytest
from test_process import LIMITS, TURN, match_start
from test_seccomp import SLOW, needs_filter

from arena.botfile.spec import load_bot
from arena.match.process import BotProcess

pytestmark = pytest.mark.sandbox

BOT = Path(__file__).parent / "bots" / "terminal.py"
MARK = b"TTY" + b"PWNED"


def _referee_on_a_terminal(bot: Path, aim: Path | None = None) -> tuple[dict[str, Any], bytes]:
    """Play one turn with ``bot`` from a child whose controlling terminal is a
    fresh pty; return what the child reported and everything the terminal showed.
    With ``aim``, the bot is first copied there with the child's process group
    written in as its target."""
    pid, master = pty.fork()
    if pid == 0:  # the child: a referee in a session with a terminal
        code = 1
        try:
            if aim is not None:
                aim.write_text(bot.read_text().replace("TARGET = 0 ", f"TARGET = {os.getpgid(0)} "))
                bot = aim
            with BotProcess(load_bot(bot), LIMITS, SLOW) as proc:
                proc.start()
                proc.notify(match_start())
                reply = proc.request({**TURN, "time_ms": 20000})[0]
                groups = {
                    "bot": os.getpgid(proc.pid),
                    "referee": os.getpgid(0),
                    "bot_session": os.getsid(proc.pid),
                    "referee_session": os.getsid(0),
                }
            pending = bytearray(4)
            fcntl.ioctl(0, termios.FIONREAD, pending)  # anything typed into the terminal's input
            report = {"probed": reply.get("probed"), "groups": groups, "typed": int.from_bytes(pending, "little")}
            os.write(1, b"\nREPORT " + json.dumps(report).encode() + b"\n")
            code = 0
        except BaseException as exc:  # noqa: BLE001 - the child must always exit
            os.write(1, f"\nFAILED {exc!r}\n".encode())
        os._exit(code)
    seen = bytearray()
    while True:
        ready, _, _ = select.select([master], [], [], 90)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    _, status = os.waitpid(pid, 0)
    text = bytes(seen)
    assert os.waitstatus_to_exitcode(status) == 0, text.decode(errors="replace")
    line = text.rsplit(b"REPORT ", 1)[1].split(b"\n", 1)[0]
    return json.loads(line), text


@needs_filter
def test_a_bot_cannot_write_to_or_type_into_the_referees_terminal() -> None:
    report, shown = _referee_on_a_terminal(BOT)
    probed = report["probed"]
    assert MARK not in shown  # nothing the bot wrote reached the terminal
    assert report["typed"] == 0  # nor was anything typed into it
    assert probed["isatty"] == [False, False, False]
    assert probed["dev_tty"] != "tty", probed  # /dev/tty is not the user's terminal
    assert probed.get("tiocsti") in (None, "ENOTTY", "EPERM", "EIO"), probed


@needs_filter
def test_a_bot_is_in_a_process_group_of_its_own_and_cannot_join_the_referees(tmp_path: Path) -> None:
    """kill(0, ...) signals the caller's whole process group, across PID
    namespaces: a bot sharing the referee's group could stop it. It cannot
    join the referee's group either, even knowing its number."""
    report, _ = _referee_on_a_terminal(BOT, aim=tmp_path / "terminal.py")
    groups, probed = report["groups"], report["probed"]
    assert probed["target_set"], probed
    assert groups["bot"] != groups["referee"], groups
    assert probed["setpgid"] != "joined" and probed["kill"] != "reached", probed
