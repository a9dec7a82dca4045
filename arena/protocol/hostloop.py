"""The bot host's loop (:mod:`arena.protocol.host`): the bot's driver on its pipes.

Apart from :mod:`arena.protocol.host` so that it can be compiled
(arena/compiled.py): ``python -m`` runs only a module with code objects, and
this loop runs once per message a Python bot gets.
"""

from __future__ import annotations

import gc
import os
import sys

import orjson

from arena.protocol.driver import BotDriver
from arena.protocol.loader import load_python_bot
from arena.protocol.parse import MessageError
from arena.protocol.wire import clip

__all__ = ["serve"]

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
    # What is alive now (the interpreter's modules, the SDK, the bot's module)
    # lives as long as the process: out of the garbage collections its turns
    # set off, which otherwise walk all of it at each full one.
    gc.freeze()
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
