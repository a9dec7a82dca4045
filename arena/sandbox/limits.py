"""What a bot process may use: :class:`SandboxLimits`, the ``sandbox:`` block of a config.

A bot may ask for more of some limits than the run gives every bot (a JVM's
own threads exceed 16 processes+threads): a manifest's ``limits:`` key or a
Python bot's ``LIMITS`` literal. :meth:`SandboxLimits.for_bot` grants a raise
up to the run's ceiling for that key (``max_<key>``) and refuses one above it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from arena.botfile.spec import RAISABLE
from arena.errors import ConfigError, SandboxError

__all__ = ["RAISABLE", "SandboxLimits"]


@dataclass(frozen=True)
class SandboxLimits:
    """What a bot process may use. ``mode``: ``auto`` uses the best available
    and warns once about what is missing; ``strict`` raises
    :class:`SandboxError` instead; ``off`` runs a plain process (trusted bots,
    debugging)."""

    mode: Literal["auto", "strict", "off"] = "auto"
    memory_mb: int = 512
    processes: int = 16  # processes + threads
    open_files: int = 64
    output_bytes: int = 8 << 20  # stdout+stderr a bot process may write (per match: reset at match_start)
    stderr_tail: int = 16384  # bytes of stderr tail kept
    cpu_seconds: int = 3600  # lifetime CPU cap (RLIMIT_CPU), a backstop
    max_processes: int = 256  # ceilings of what a bot may ask for itself (its manifest's limits)
    max_memory_mb: int = 2048
    max_open_files: int = 1024

    def __post_init__(self) -> None:
        if self.mode not in ("auto", "strict", "off"):
            raise SandboxError(f"sandbox mode {self.mode!r} is not one of auto, strict, off")
        for key in (
            "memory_mb",
            "processes",
            "open_files",
            "output_bytes",
            "stderr_tail",
            "cpu_seconds",
            *RAISABLE.values(),
        ):
            value = getattr(self, key)
            if type(value) is not int or value < 1:
                raise SandboxError(f"sandbox limit {key}={value!r} must be a positive integer")
        if self.open_files < 16:
            raise SandboxError(
                f"sandbox limit open_files={self.open_files} is too low: an interpreter "
                f"needs about 16 (64 is the default)"
            )
        if self.processes < 4:
            raise SandboxError(
                f"sandbox limit processes={self.processes} is too low: the sandbox itself needs 3 (16 is the default)"
            )

    def for_bot(self, asked: Mapping[str, int], who: str = "bot") -> SandboxLimits:
        """These limits with the raises a bot asked for (``asked``: key -> value),
        each up to its ceiling; ``ConfigError`` naming ``who``, the key and the
        ceiling when one is above it. Asking for less than the run gives is
        not a raise: the run's value stands."""
        changes: dict[str, Any] = {}
        for key, value in asked.items():
            ceiling_key = RAISABLE[key]
            current, ceiling = getattr(self, key), getattr(self, ceiling_key)
            if value <= current:
                continue
            if value > ceiling:
                raise ConfigError(
                    f"{who}: limits.{key} = {value} is above the run's ceiling "
                    f"sandbox.{ceiling_key} = {ceiling} (ask for at most {ceiling}, or raise "
                    f"sandbox.{ceiling_key} in the run config)"
                )
            changes[key] = value
        return dataclasses.replace(self, **changes) if changes else self
