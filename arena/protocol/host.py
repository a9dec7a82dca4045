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

import orjson

from arena.protocol.driver import BotDriver
from arena.protocol.loader import BotFileError, BotImportError, load_python_bot
from arena.protocol.parse import MessageError
from arena.protocol.wire import clip

# How the referee's encoder (arena.protocol.wire, keys in the order the message
# was built) starts every round_end line; a line written otherwise is decoded
# and handled as usual.
_ROUND_END = b'{"type":"round_end"'


def serve(path: str) -> int:
    # The protocol gets a private copy of fd 1; fd 1 itself (print(), C
    # libraries, child processes) becomes stderr, which is the bot's log.
    proto = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    bot = load_python_bot(path)
    driver = BotDriver(bot, bot.name, bot.version)
    handle = driver.handle

    def write(data: bytes) -> None:
        n = os.write(proto, data)  # a reply fits a pipe: one write, almost always
        while n < len(data):
            data = data[n:]
            n = os.write(proto, data)

    readline = sys.stdin.buffer.readline
    loads = orjson.loads
    ignores_round_end = driver.ignores_round_end
    while True:
        line = readline()
        if not line:
            return 0  # stdin closed: shut down
        if line.startswith(_ROUND_END) and ignores_round_end():
            continue  # a bot without a round_end hook: not even decoded (the driver would drop it)
        try:
            msg = loads(line)
        except orjson.JSONDecodeError:
            raise MessageError(f"the referee sent a line that is not JSON: {clip(line)}") from None
        reply = handle(msg)
        if reply is not None:
            write(reply)


def print_bot_traceback(exc: BaseException, path: str) -> None:
    """The traceback from the bot's own code on: the host's and importlib's
    frames above it say nothing to the bot's author (a SyntaxError has no
    frame of the bot's at all: only its own file, line and caret are left)."""
    tb = exc.__traceback__
    bot = os.path.realpath(path)
    while tb is not None and os.path.realpath(tb.tb_frame.f_code.co_filename) != bot:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb, file=sys.stderr)


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
        return 1
    except (BotFileError, MessageError) as exc:
        print(f"arena.protocol.host: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        print_bot_traceback(exc, args[0])  # the referee shows its first and last lines
        return 1


if __name__ == "__main__":
    sys.exit(main())
