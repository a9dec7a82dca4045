"""Every error Dudo Arena raises on purpose descends from :class:`ArenaError`.

The CLI turns an ``ArenaError`` into one clear line and a non-zero exit; any
other exception is a bug in the project.
"""

from __future__ import annotations

from enum import StrEnum


class ArenaError(Exception):
    """Root of every error the project raises deliberately."""


class RulesError(ArenaError):
    """A rule set is invalid: an unknown key or a value that is not allowed."""


class InvalidAction(ArenaError):
    """Text or data that is not an action at all (syntax), e.g. ``"5y3"``."""


class IllegalAction(ArenaError):
    """A well-formed action that the rules do not allow now; ``reason`` says why."""

    def __init__(self, action: object, reason: str) -> None:
        super().__init__(f"illegal action {action}: {reason}")
        self.action = action
        self.reason = reason


class StateError(ArenaError):
    """An engine call that does not fit the state (e.g. a bid after the match ended)."""


class ConfigError(ArenaError):
    """A config file, key or value is wrong; the message names it and what is allowed."""


class FaultKind(StrEnum):
    """How a player failed: the closed set a match record carries.

    The first five are the protocol's (docs/protocol.md, Faults) and are charged to the bot; ``arena``
    is administrative, a failure of the arena rather than of the bot (a
    host stall: the bot held up by the machine's load past a wall-clock
    limit, :class:`HostStall`; a lost worker), which the analysis can
    leave out (``--drop-admin-faults``). A ``StrEnum``: each member *is* its
    string, so records, messages and CSV files hold the same text as before.
    Defined here, beside :class:`BotFault` which carries one, because this
    layer is below the engine; :mod:`arena.engine.records` re-exports it.
    """

    TIMEOUT = "timeout"  # no reply within the time budget (or the start-up limit)
    CRASH = "crash"  # the process exited or could not be started (or a human left the table)
    MALFORMED = "malformed"  # a reply that is not one of the protocol's forms
    ILLEGAL = "illegal"  # a well-formed action the rules do not allow now
    UNASKED = "unasked"  # output when no reply was asked for
    ARENA = "arena"  # the arena's own failure, not the bot's

    @property
    def charged_to_bot(self) -> bool:
        """True for the kinds the protocol puts on the bot (every kind but ``arena``)."""
        return self is not FaultKind.ARENA


class BotFault(ArenaError):
    """A bot misbehaved; ``kind`` says how (:class:`FaultKind`, one of the protocol's
    kinds) and ``detail`` what happened, with any offending text cut short."""

    kind: FaultKind = FaultKind.CRASH

    def __init__(self, detail: str, kind: FaultKind | str | None = None) -> None:
        super().__init__(detail)
        if kind is not None:
            self.kind = FaultKind(kind)  # a member, even from a caller that passed its text
        self.detail = detail


class ProtocolError(BotFault):
    """A bot broke the player protocol: ``malformed`` (default) or ``unasked`` output."""

    kind = FaultKind.MALFORMED


class BotTimeout(BotFault):
    """A bot did not answer within its time budget (or start-up limit)."""

    kind = FaultKind.TIMEOUT


class HostStall(BotFault):
    """A bot reached a wall-clock limit while the host held it up (waiting for a
    CPU others held, or frozen): the arena's fault, not the bot's; the match
    is replayed (docs/sandbox.md, "Host stalls")."""

    kind = FaultKind.ARENA


class BotCrashed(BotFault):
    """A bot process exited, or could not be started."""

    kind = FaultKind.CRASH


class SandboxError(ArenaError):
    """The sandbox asked for cannot be set up on this machine."""


class RunError(ArenaError):
    """A run folder cannot be used as asked (wrong config, corrupt records)."""


class RatingError(ArenaError):
    """Ratings cannot be computed: unusable ranking data, or a fit that did not converge."""
