"""Every error Dudo Arena raises on purpose descends from :class:`ArenaError`.

The CLI turns an ``ArenaError`` into one clear line and a non-zero exit; any
other exception is a bug in the project.
"""

from __future__ import annotations


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


class BotFault(ArenaError):
    """A bot misbehaved; ``kind`` is one of PROTOCOL.md's fault kinds
    (``timeout``, ``crash``, ``malformed``, ``illegal``, ``unasked``) and
    ``detail`` says what happened, with any offending text cut short."""

    kind: str = "crash"

    def __init__(self, detail: str, kind: str | None = None) -> None:
        super().__init__(detail)
        if kind is not None:
            self.kind = kind
        self.detail = detail


class ProtocolError(BotFault):
    """A bot broke the player protocol: ``malformed`` (default) or ``unasked`` output."""

    kind = "malformed"


class BotTimeout(BotFault):
    """A bot did not answer within its time budget (or start-up limit)."""

    kind = "timeout"


class BotCrashed(BotFault):
    """A bot process exited, or could not be started."""

    kind = "crash"


class SandboxError(ArenaError):
    """The sandbox asked for cannot be set up on this machine."""


class RunError(ArenaError):
    """A run folder cannot be used as asked (wrong config, corrupt records)."""


class RatingError(ArenaError):
    """Ratings cannot be computed: unusable ranking data, or a fit that did not converge."""
