"""One Python bot behind the player protocol, without any I/O: message in, reply out.

:class:`BotDriver` is the whole per-match life of a Python bot, and the only
one: the sandboxed host (:mod:`arena.protocol.host`) wraps it around its
pipes, in-process play (:class:`arena.match.inprocess.InProcessTransport`)
around direct calls, so a bot cannot tell them apart.

- ``hello`` -> the ``ready`` line (the bot's name and version);
- ``match_start`` -> a **fresh** bot instance from the factory, with
  ``self.match`` set and ``self.rng = random.Random(seed)`` (the match's
  ``seed``), then ``start(match)``; nothing of the previous match survives
  but what the bot keeps outside its instance;
- ``turn`` -> ``act(turn)`` (the turn carries the same generator as
  ``turn.rng``, which a module-level ``act`` draws on) -> the reply line,
  encoded by :func:`arena.protocol.messages.encode_reply`;
- ``round_end`` -> ``round_end(result)``; ``match_end`` -> ``match_end(placements)``,
  and the instance is dropped; a bot that keeps :class:`~arena.sdk.Bot`'s
  empty ``round_end`` is not handed the message, so it is not parsed (a
  seat hears about one ``round_end`` per decision it makes, and parsing one
  cost a Python bot more CPU than its own move: docs/performance.md);
- any other type -> ignored (docs/protocol.md: forward compatible).

Messages are parsed strictly (:mod:`arena.protocol.parse`): one that breaks
the protocol, or comes out of order (a turn before ``match_start``), raises
:class:`~arena.protocol.parse.MessageError`. An exception from the bot's own
code propagates unchanged, for the wrapper to report as a crash.
"""

from __future__ import annotations

import random
from typing import Any

from arena.protocol.loader import BotFactory
from arena.protocol.messages import encode_reply, ready_message
from arena.protocol.parse import (
    MessageError,
    RawMessage,
    parse_hello,
    parse_match_end,
    parse_match_start,
    parse_round_end,
    parse_turn,
)
from arena.protocol.wire import encode
from arena.sdk import Bot, MatchInfo

__all__ = ["BotDriver"]

_IGNORED = Bot.round_end  # the base class's hook, which does nothing
_GETATTRIBUTE: object = object.__getattribute__
_NO_DICT: dict[str, object] = {}


class BotDriver:
    """The protocol for one bot process (or in-process player): one match at a time."""

    __slots__ = ("factory", "name", "version", "bot", "match")

    def __init__(self, factory: BotFactory, name: str, version: str | None = None) -> None:
        self.factory = factory
        self.name = name
        self.version = version
        # The instance playing the current match. Any, not Bot: it is the bot's
        # own code, and compiled (arena/compiled.py) a Bot-typed call would check
        # what each hook returns against the SDK's annotations.
        self.bot: Any = None
        self.match: MatchInfo | None = None

    def ignores_round_end(self) -> bool:
        """A match is on and its bot's ``round_end`` is :class:`~arena.sdk.Bot`'s
        own, which does nothing: the message need not be decoded or parsed.
        Asked per message, so a hook set on the instance at any time counts."""
        # What getattr(bot, "round_end") would find, without making the bound method
        # (a seat hears a round_end for about every decision it makes): the
        # class's own attribute, nothing of that name on the instance, and no
        # attribute lookup of the class's own.
        bot = self.bot
        cls = type(bot)
        return (
            self.match is not None
            and getattr(cls, "round_end", None) is _IGNORED
            and cls.__getattribute__ is _GETATTRIBUTE
            and "round_end" not in getattr(bot, "__dict__", _NO_DICT)
        )

    def handle(self, msg: RawMessage) -> bytes | None:
        """The reply line to ``msg`` (``hello``, ``turn``), or ``None`` (a notification)."""
        try:
            kind = msg.get("type")
        except AttributeError:  # not a dict: caught here rather than checked on every message
            raise MessageError(f"expected a JSON object, got {type(msg).__name__}") from None
        if kind == "turn":  # first: the per-decision path
            bot, match = self.bot, self.match
            if bot is None or match is None:
                raise MessageError("a turn arrived before match_start")
            return encode_reply(bot.act(parse_turn(msg, match, bot.rng)))  # whatever act returned
        if kind == "round_end":
            if self.bot is None or self.match is None:
                raise MessageError("a round_end arrived outside a match")
            if not self.ignores_round_end():
                self.bot.round_end(parse_round_end(msg, self.match))
        elif kind == "match_start":
            match = parse_match_start(msg)
            self.bot = self.match = None  # a bot that raises in start() plays no part of this match
            bot = self.factory()
            bot.match = match
            bot.rng = random.Random(match.seed)
            bot.start(match)
            self.bot, self.match = bot, match
        elif kind == "match_end":
            if self.bot is None or self.match is None:
                raise MessageError("a match_end arrived outside a match")
            placements = parse_match_end(msg, self.match)
            bot, self.bot, self.match = self.bot, None, None
            bot.match_end(placements)
        elif kind == "hello":
            parse_hello(msg)
            return encode(ready_message(self.name, self.version))
        return None
