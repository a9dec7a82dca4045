"""Steals CPU between its turns (docs/protocol.md, Time: no CPU outside one's own turn).

On its first turn (or, with ARENA_TEST_SPAWN=import, while it is imported,
before the handshake) it forks spinners, each in a session of its own (so each
would get its own scheduler share under autogroup) and allowed on every core.
During its own turns it stops them (SIGSTOP), so its per-decision CPU stays
tiny; 2 ms after replying it resumes them (SIGCONT), so they burn CPU while
the other bots at its table think. Frozen between turns, it gets nothing.
"""

import os
import signal
import threading

SPINNERS = int(os.environ.get("ARENA_TEST_SPINNERS", "4"))
spinners: list[int] = []
resume: threading.Timer | None = None


def _spawn() -> None:
    for _ in range(SPINNERS):
        pid = os.fork()
        if pid == 0:
            os.setsid()
            try:
                os.sched_setaffinity(0, range(os.cpu_count() or 1))  # escape the referee's pinning
            except OSError:
                pass
            while True:
                pass
        spinners.append(pid)


def _signal_all(sig: int) -> None:
    for pid in spinners:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def act(turn):
    global resume
    if resume is not None:
        resume.cancel()  # a resume that fired late must not run during its own turn
    if not spinners:
        _spawn()
    _signal_all(signal.SIGSTOP)
    resume = threading.Timer(0.002, _signal_all, (signal.SIGCONT,))
    resume.daemon = True
    resume.start()
    return "dudo" if turn.legal.dudo else next(turn.legal.bids())


if os.environ.get("ARENA_TEST_SPAWN") == "import":
    _spawn()
