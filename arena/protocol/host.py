"""The Python bot host: ``python -m arena.protocol.host BOTFILE``, run inside the sandbox.

It loads a ``bots/<name>.py`` file written against :mod:`arena.sdk`
(:func:`arena.protocol.loader.load_python_bot`) and speaks the player
protocol (docs/protocol.md) for it: each line read from stdin goes to the
bot's :class:`~arena.protocol.driver.BotDriver`, and each reply it gives
is written back (a ``round_end`` line for a bot without a ``round_end``
hook, which the driver would drop, is dropped before it is decoded). What the bot sees (a fresh seeded instance per match, the
typed views, how its return value is sent) is the driver's.

An exception in the bot's code prints its traceback to stderr, from the
bot's own frames on (the match record keeps the tail), and exits with status
1, so the referee records a ``crash`` whose detail ends with the traceback:
replying nothing would only look like a timeout, later and with less to go
on. A file that cannot be hosted (no bot in it), or a message from the
referee that breaks the protocol, prints one line and exits with status 2.

The bot's own ``print()`` output (and anything else written to file
descriptor 1, at import time too) goes to stderr: the protocol channel is a
private duplicate.
"""

from __future__ import annotations

import os
import sys
import traceback

from arena.protocol.hostloop import serve
from arena.protocol.loader import BotFileError, BotImportError
from arena.protocol.parse import MessageError


def print_bot_traceback(exc: BaseException, path: str) -> None:
    """The traceback from the bot's own code on: the host's and importlib's
    frames above it say nothing to the bot's author (a SyntaxError has no
    frame of the bot's at all: only its own file, line and caret are left)."""
    tb = exc.__traceback__
    bot = os.path.realpath(path)
    while tb is not None and os.path.realpath(tb.tb_frame.f_code.co_filename) != bot:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb, file=sys.stderr)


def view_hint(exc: BaseException) -> None:
    """A module the bot imports that the sandbox's file view lacks: say so last
    (the referee shows the last lines), with what the view holds and what to
    do. ``ARENA_FILE_VIEW`` (set by the sandbox, arena/sandbox/box.py) lists
    the third-party packages of the view."""
    packages = os.environ.get("ARENA_FILE_VIEW")
    if packages is None or not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return
    top = exc.name.split(".", 1)[0]
    print(
        f"arena.protocol.host: module {top!r} is not in the sandbox's file view: give the bot a manifest "
        f"that runs a venv of its own (the view holds the standard library, arena and "
        f"{packages.replace(',', ', ')}; docs/sandbox.md, 'The file view')",
        file=sys.stderr,
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m arena.protocol.host BOTFILE.py", file=sys.stderr)
        return 2
    try:
        return serve(args[0])
    except BotImportError as exc:  # the bot's own error on import: its traceback, as for any other
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        print_bot_traceback(cause, args[0])
        view_hint(cause)
        return 1
    except (BotFileError, MessageError) as exc:
        print(f"arena.protocol.host: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        print_bot_traceback(exc, args[0])  # the referee shows its first and last lines
        return 1


if __name__ == "__main__":
    sys.exit(main())
