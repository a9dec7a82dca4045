"""What the referee's side needs of a player: :class:`Player`, the one interface.

A player is one side of a protocol session: :meth:`~Player.start` is the
handshake (``hello`` -> ``ready``), :meth:`~Player.notify` sends what expects
no reply, :meth:`~Player.request` sends a ``turn`` and returns the reply,
:meth:`~Player.close` ends the session (docs/protocol.md, Shutdown).

It lives in the protocol layer because it is made of the protocol's messages
and nothing else: the referee (:func:`arena.match.referee.play_match`),
``arena check`` and the run's workers drive any player through it, and a
player may be a sandboxed process (:class:`arena.match.process.BotProcess`),
a Python bot called directly (:class:`arena.match.inprocess.InProcessTransport`),
a person at a keyboard (:class:`arena.apps.play.HumanPlayer`) or a scripted
double in the tests.

The contract every player keeps, so the referee can treat them alike:

- a misbehaviour is a :class:`~arena.errors.BotFault` raised by
  :meth:`~Player.start` or :meth:`~Player.request`, never by
  :meth:`~Player.notify` (which must not block either): a fault noticed
  while notifying is raised by the next request;
- :meth:`~Player.request` returns the reply as decoded, unchecked (the
  referee parses it with :func:`arena.protocol.parse.parse_reply`, so a
  malformed reply is judged in one place), with the CPU seconds it took;
- :meth:`~Player.close` is idempotent and never raises.
"""

from __future__ import annotations

from typing import Protocol

from arena.protocol.messages import Notification, ReadyMessage, TurnMessage
from arena.protocol.parse import RawMessage

__all__ = ["Player"]


class Player(Protocol):
    def start(self) -> ReadyMessage:
        """The handshake: ``hello`` sent, ``ready`` received and parsed
        (:func:`arena.protocol.parse.parse_ready`)."""
        ...

    def notify(self, msg: Notification) -> None:
        """``match_start``, ``round_end`` or ``match_end``."""
        ...

    def request(self, msg: TurnMessage) -> tuple[RawMessage, float]:
        """The reply to a ``turn`` as decoded, and the CPU seconds spent on it."""
        ...

    def close(self) -> None: ...
