"""Tries to manufacture a host stall to void a match it is losing (docs/sandbox.md, "Host stalls").

A wall-clock limit reached while the host held a bot up is the arena's fault
and the match is replayed, so a bot that could make itself look held up could
void every match it is losing. This one plays plainly (doubt when it may, else
the lowest bid) until it is behind (no longer ahead after the first round);
then, on that turn,
it does everything of its own that might pass for the host's load, and never
replies:

- it lowers its own priority: nice 19 for its process, its scheduler session
  group niced through ``/proc/self/autogroup``, ``SCHED_IDLE`` for its threads
  (each where the sandbox lets it);
- it starts spinning threads and forked processes that compete with each
  other for the CPU (run-queue waits of its own making);
- it writes and syncs a file over and over, and reads it back with the page
  cache dropped for it (``POSIX_FADV_DONTNEED``): I/O waits and page-cache
  misses of its own;
- its main thread sleeps.

It must get a ``timeout`` (its CPU budget or its wall-clock cap), never an
``arena`` fault, and its match must not be replayed.
"""

import os
import threading
import time

SPINNERS = 3


def _lower_priority() -> None:
    try:
        os.nice(19)
    except OSError:
        pass
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write("19")
    except OSError:
        pass


def _idle() -> None:
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (OSError, AttributeError):
        pass


def _spin() -> None:
    _idle()
    while True:
        pass


def _churn() -> None:
    _idle()
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "churn")
    block = os.urandom(1 << 16)
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            for _ in range(16):
                os.write(fd, block)
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.lseek(fd, 0, os.SEEK_SET)
            while os.read(fd, 1 << 16):
                pass
            os.close(fd)
            os.unlink(path)
        except OSError:
            time.sleep(0.001)


def _stall() -> None:
    _lower_priority()
    for _ in range(SPINNERS):
        threading.Thread(target=_spin, daemon=True).start()
    threading.Thread(target=_churn, daemon=True).start()
    for _ in range(SPINNERS):
        try:
            if os.fork() == 0:
                _spin()
        except OSError:
            break
    while True:
        time.sleep(1)


def act(turn):
    mine = turn.counts[turn.seat]
    best = max(n for seat, n in enumerate(turn.counts) if seat != turn.seat)
    if best > mine or (best == mine and turn.round > 1):  # behind, or no longer ahead
        _stall()
    return "dudo" if turn.legal.dudo else next(turn.legal.bids())
