"""What a bot process may use: :class:`SandboxLimits`, the ``sandbox:`` block of a config."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from arena.errors import SandboxError

__all__ = ["SandboxLimits"]


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

    def __post_init__(self) -> None:
        if self.mode not in ("auto", "strict", "off"):
            raise SandboxError(f"sandbox mode {self.mode!r} is not one of auto, strict, off")
        for key in ("memory_mb", "processes", "open_files", "output_bytes", "stderr_tail", "cpu_seconds"):
            value = getattr(self, key)
            if type(value) is not int or value < 1:
                raise SandboxError(f"sandbox limit {key}={value!r} must be a positive integer")
        if self.open_files < 16:
            raise SandboxError(f"sandbox limit open_files={self.open_files} is too low: an interpreter "
                               f"needs about 16 (64 is the default)")
        if self.processes < 4:
            raise SandboxError(f"sandbox limit processes={self.processes} is too low: the sandbox itself "
                               f"needs 3 (16 is the default)")
