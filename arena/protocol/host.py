"""The Python bot host: ``python -m arena.protocol.host BOTFILE``, run inside the sandbox.

It imports a ``bots/<name>.py`` file written against :mod:`arena.sdk` and
speaks the player protocol (docs/protocol.md) for it:

- ``hello`` -> ``ready`` (name: the file's stem; version: the module's
  ``__version__`` or ``VERSION``, if any);
- ``match_start`` -> a fresh instance of the file's one :class:`~arena.sdk.Bot`
  subclass, with ``self.rng = random.Random(seed)``, then ``start(match)``;
  a file with a module-level ``act(turn)`` instead gets the same ``turn.rng``;
- ``turn`` -> ``act(turn)`` -> the reply. An action, its text form
  (``"5x3"``, ``"dudo"``), or a dict (sent as-is) are accepted; anything else
  is sent as ``{"action": <its text>}`` so the referee records it as
  ``malformed`` with the text the bot's author needs to see;
- ``round_end`` / ``match_end`` -> the matching methods.

An exception in the bot's code prints its traceback to stderr (the match
record keeps the tail) and exits with status 1, so the referee records a
``crash`` whose detail ends with the traceback: replying nothing would only
look like a timeout, later and with less to go on.

The bot's own ``print()`` output (and anything else written to file
descriptor 1) goes to stderr: the protocol channel is a private duplicate.
"""

from __future__ import annotations

import importlib.util
import os
import random
import sys
import traceback
from types import ModuleType
from typing import Any, Callable

import orjson

from arena.errors import InvalidAction
from arena.engine.rules import Bid, Calza, Dudo, parse_action
from arena.sdk import Bot, MatchInfo, RoundEnd, Turn

_OPT = orjson.OPT_APPEND_NEWLINE
_DUDO = b'{"action":"dudo"}\n'
_CALZA = b'{"action":"calza"}\n'


class HostError(Exception):
    """The bot file cannot be hosted (printed to stderr; the host exits 2)."""


def load(path: str) -> tuple[ModuleType, type[Bot] | None, Callable[[Turn], Any] | None]:
    """Import the bot file; return it with its Bot subclass or its act function."""
    # A module name of its own: a bot file called random.py must not replace
    # the stdlib's random for itself or for the SDK.
    name = "_arena_bot_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise HostError(f"{path}: not importable as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    classes = [v for v in vars(module).values()
               if isinstance(v, type) and issubclass(v, Bot) and v is not Bot and v.__module__ == name]
    fn = vars(module).get("act")
    if len(classes) > 1:
        raise HostError(f"{path}: defines {len(classes)} Bot subclasses "
                        f"({', '.join(c.__name__ for c in classes)}); a bot file must define exactly one")
    if classes:
        return module, classes[0], None
    if callable(fn):
        return module, None, fn
    raise HostError(f"{path}: defines neither a Bot subclass nor a function act(turn)")


def reply_bytes(action: Any) -> bytes:
    """What the bot returned, as the reply line."""
    if type(action) is Bid:
        return b'{"action":"bid","quantity":%d,"face":%d}\n' % action
    if isinstance(action, Dudo):
        return _DUDO
    if isinstance(action, Calza):
        return _CALZA
    if isinstance(action, str):
        try:
            return reply_bytes(parse_action(action))
        except InvalidAction:
            return orjson.dumps({"action": action[:1000]}, option=_OPT)
    if isinstance(action, dict):
        try:
            return orjson.dumps(action, option=_OPT)
        except TypeError:  # e.g. an integer beyond 64 bits: the stdlib writes it
            import json

            return (json.dumps(action, default=repr, separators=(",", ":")) + "\n").encode()
    return orjson.dumps({"action": repr(action)[:1000]}, option=_OPT)


def serve(path: str) -> int:
    module, cls, fn = load(path)
    name = os.path.splitext(os.path.basename(path))[0]
    version = getattr(module, "__version__", None) or getattr(module, "VERSION", None)

    # The protocol gets a private copy of fd 1; fd 1 itself (print(), C
    # libraries, child processes) becomes stderr, which is the bot's log.
    proto = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def write(data: bytes) -> None:
        n = os.write(proto, data)  # a reply fits a pipe: one write, almost always
        while n < len(data):
            data = data[n:]
            n = os.write(proto, data)

    readline = sys.stdin.buffer.readline
    loads = orjson.loads
    bot: Bot | None = None
    match: MatchInfo | None = None
    rng = random.Random(0)
    while True:
        line = readline()
        if not line:
            return 0  # stdin closed: shut down
        msg = loads(line)
        kind = msg.get("type")
        if kind == "turn":
            if match is None:
                raise HostError("turn before match_start")
            turn = Turn.from_message(msg, match, rng)
            write(reply_bytes(bot.act(turn) if bot is not None else fn(turn)))  # type: ignore[misc]
        elif kind == "match_start":
            match = MatchInfo.from_message(msg)
            rng = random.Random(match.seed)
            if cls is not None:
                bot = cls()
                bot.match = match
                bot.rng = rng
                bot.start(match)
        elif kind == "round_end":
            if bot is not None:
                bot.round_end(RoundEnd.from_message(msg))
        elif kind == "match_end":
            if bot is not None:
                bot.match_end(tuple(int(p) for p in msg["placements"]))
            bot = None
        elif kind == "hello":
            ready: dict[str, Any] = {"type": "ready", "name": name}
            if version is not None:
                ready["version"] = str(version)
            write(orjson.dumps(ready, option=_OPT))
        # Unknown message types are ignored (PROTOCOL.md: forward compatible).


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
    except HostError as exc:
        print(f"arena.protocol.host: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        print_bot_traceback(exc, args[0])  # the referee shows its first and last lines
        return 1


if __name__ == "__main__":
    sys.exit(main())
