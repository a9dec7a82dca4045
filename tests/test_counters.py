"""The machine's counters in /proc are not a channel between sandboxes
(tests/bots/counters.py): inside, /proc/stat, /proc/loadavg and
/proc/meminfo are snapshots that nothing a bot does moves, while runtimes
still find the CPU count and the memory size in them; without the sandbox,
the same bot's forks and allocation move them (so the test can fail)."""

from __future__ import annotations

import dataclasses
import os

import pytest
from test_process import FAST, OPENING, match_start, spec

from arena.match.process import BotProcess
from arena.sandbox import SandboxLimits, available

pytestmark = pytest.mark.sandbox  # run as root and as an unprivileged user in CI

CLOCK = dataclasses.replace(FAST, budget_ms=5000, wall_factor=4.0)


def seen(mode: str) -> dict:
    with BotProcess(spec("counters.py"), SandboxLimits(mode=mode, memory_mb=256), CLOCK) as bot:
        bot.start()
        bot.notify(match_start())
        reply, _ = bot.request({**OPENING, "time_ms": CLOCK.budget_ms})
    return reply


@pytest.mark.skipif(available().bwrap is None, reason="bubblewrap is not installed")
def test_forks_and_allocation_do_not_move_the_counters_inside() -> None:
    reply = seen("auto")
    assert reply["before"] == reply["after"], reply
    assert reply["cpus"] == os.cpu_count()  # glibc still counts the CPUs (from /proc/stat's cpu lines)


def test_control_without_the_sandbox_the_same_bot_moves_them() -> None:
    reply = seen("off")
    assert int(reply["after"]["forks"]) - int(reply["before"]["forks"]) >= 300, reply
