"""A CPU-time sampling profiler for the league benchmark's profile mode.

Every ``interval`` seconds of this process's CPU time (``ITIMER_PROF``: user
and system time, so the kernel's side of a pipe write or a freeze counts),
the interrupted Python stack is noted: its innermost frames as (file,
function, line). Time spent waiting (asleep in ``poll``) is not CPU and is
not sampled. Used by benchmarks/league_vs_bare.py in the referee's process,
and inside the sandbox for the bot's side (``_profiled_bot.py``).
"""

from __future__ import annotations

import resource
import signal
from collections import Counter
from types import FrameType

DEPTH = 8  # frames kept per sample, innermost first


class Sampler:
    def __init__(self, interval: float = 0.0005) -> None:
        self.interval = interval
        self.samples: Counter[tuple[tuple[str, str, int], ...]] = Counter()
        self.cpu0 = (0.0, 0.0)
        self.cpu = 0.0  # seconds of CPU while sampling
        self.system = 0.0  # ... of which in the kernel (system calls, wake-ups, freezing)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        stack: list[tuple[str, str, int]] = []
        while frame is not None and len(stack) < DEPTH:
            code = frame.f_code
            stack.append((code.co_filename, code.co_name, frame.f_lineno))
            frame = frame.f_back
        self.samples[tuple(stack)] += 1

    @staticmethod
    def _cpu() -> tuple[float, float]:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return ru.ru_utime, ru.ru_stime

    def start(self) -> None:
        signal.signal(signal.SIGPROF, self._on_signal)
        self.cpu0 = self._cpu()
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)

    def stop(self) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, signal.SIG_DFL)
        user, system = self._cpu()
        self.cpu = user + system - sum(self.cpu0)
        self.system = system - self.cpu0[1]

    def to_data(self) -> dict[str, object]:
        return {
            "cpu": self.cpu,
            "system": self.system,
            "samples": [[[list(f) for f in stack], n] for stack, n in self.samples.items()],
        }
