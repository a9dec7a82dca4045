"""Whose fault is a wall-clock limit reached: the bot's, or the host's.

A bot that reaches its wall-clock cap (``time_ms x wall_factor``) or its
start-up limit (``hello_ms``) is charged a ``timeout``, unless the host held
it up for most of that time: runnable while every CPU it could use was held
by others (its cgroup's ``cpu.pressure`` *full*), or frozen (its freeze
group's ``frozen_usec``). Then the limit measured the machine's load, not
the bot, and the fault is the arena's (``arena``, docs/sandbox.md, "Host
stalls"); the worker replays the match.

What a bot does to itself stays its own time, so that a stall is never a
bot's lever to void a match it is losing: sleeping or blocking (nothing of it
is runnable), its own processes and threads competing with each other (one
of them runs, so the group is not *fully* stalled), its own I/O and page-cache
misses (``io``/``memory`` pressure: reported in the message, never excused),
and a priority it lowered itself (a nice value, ``SCHED_IDLE``/``SCHED_BATCH``
or its scheduler group's nice above the referee's). The samples are read only
once a reply is slow, never per turn.
"""

from __future__ import annotations

from arena.sandbox.cgroups import StallSample

__all__ = ["HOST_SHARE", "Stall", "judge"]

HOST_SHARE = 0.5
"""Share of the limit the host must have held the bot for the limit to be the
arena's: a bot that would still have used half its cap on a quiet machine was
near its limit of its own accord."""


class Stall:
    """Two samples around a wait, read as what held the bot up (seconds)."""

    __slots__ = ("cpu", "frozen", "io", "memory", "window")

    def __init__(self, before: StallSample, after: StallSample) -> None:
        self.window = max(0.0, after.at - before.at)
        self.cpu = max(0, after.cpu_us - before.cpu_us) / 1e6
        unknown = after.frozen_us < 0 or before.frozen_us < 0
        self.frozen = 0.0 if unknown else max(0, after.frozen_us - before.frozen_us) / 1e6
        self.io = max(0, after.io_us - before.io_us) / 1e6 if min(after.io_us, before.io_us) >= 0 else 0.0
        self.memory = (
            max(0, after.memory_us - before.memory_us) / 1e6 if min(after.memory_us, before.memory_us) >= 0 else 0.0
        )

    @property
    def held(self) -> float:
        """Seconds the host held the bot: waiting for a CPU others held, or frozen.
        A frozen task is not runnable, so the two never count the same moment;
        bounded by the window the samples span."""
        return min(self.window, self.cpu + self.frozen)

    def describe(self) -> str:
        """``waited 4.52 s for a CPU others held, frozen 0.00 s (own I/O 0.01 s, reclaim 0.00 s) of 4.60 s measured``

        Short: a fault's detail is kept to 300 characters in the record."""
        return (
            f"waited {self.cpu:.2f} s for a CPU others held, frozen {self.frozen:.2f} s "
            f"(own I/O {self.io:.2f} s, reclaim {self.memory:.2f} s) of {self.window:.2f} s measured"
        )


def judge(
    before: StallSample | None, after: StallSample | None, limit_s: float, lowered: str | None = None
) -> tuple[bool, str]:
    """Whether a limit of ``limit_s`` seconds reached between the samples is the
    host's fault, and a clause saying what held the bot up ("" when nothing
    was measured). ``lowered``: how the bot lowered its own priority, if it did
    (:meth:`arena.sandbox.cgroups.BotCgroups.lowered_priority`): then nothing is excused."""
    if before is None or after is None:
        return False, ""
    stall = Stall(before, after)
    host = stall.held >= HOST_SHARE * limit_s
    if host and lowered:
        return False, f"; {stall.describe()}, but {lowered}: a wait it chose"
    return host, f"; {stall.describe()}" if host or stall.held + stall.io + stall.memory >= 0.1 * limit_s else ""
