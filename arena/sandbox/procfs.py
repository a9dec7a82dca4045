"""Process facts from ``/proc`` and the parent-death signal: what the sandbox
uses where no cgroup gives it the answer."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal

__all__ = ["PR_SET_PDEATHSIG", "TICK_NS", "children", "die_with_parent", "gone", "libc", "proc_tree", "user_tasks"]

# prctl(PR_SET_PDEATHSIG) for the spawned process: if the referee dies, even
# by SIGKILL, the kernel kills the sandbox's top process, and bwrap (its
# --die-with-parent) or unshare (--kill-child) takes the rest with it.
PR_SET_PDEATHSIG = 1
try:
    libc: ctypes.CDLL | None = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
except OSError:
    libc = None

TICK_NS = 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """Have the kernel send ``sig`` to this process when its parent dies.

    For run workers: a worker orphaned by a killed ``arena run`` must not go
    on playing (or spinning) alone; its handler for ``sig`` closes its bots.
    """
    if libc is None:
        return
    parent = os.getppid()
    libc.prctl(PR_SET_PDEATHSIG, sig)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os.kill(os.getpid(), sig)


def user_tasks(uid: int) -> int:
    """Tasks (processes and threads) running as ``uid`` now."""
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.stat(f"/proc/{d}").st_uid == uid:
                    n += len(os.listdir(f"/proc/{d}/task"))
            except OSError:
                continue
    return n


def gone(pid: int) -> bool:
    """Dead: no /proc entry, or a zombie waiting for its parent."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return True


def children(pid: int) -> list[int]:
    """The live children of ``pid`` (every thread's)."""
    out: list[int] = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/children", "rb") as f:
                out.extend(int(x) for x in f.read().split())
    except (OSError, ValueError):
        pass
    return out


def proc_tree(pid: int) -> list[int]:
    """``pid`` and its live descendants (the fallback without a cgroup)."""
    out: list[int] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        if p in out:
            continue
        out.append(p)
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children", "rb") as f:
                    todo.extend(int(x) for x in f.read().split())
        except (OSError, ValueError):
            continue
    return out


class TreeCpu:
    """CPU time of a process tree from ``/proc/<pid>/stat`` (clock-tick
    resolution): the fallback without a CPU-accounting cgroup.

    The tree is walked again only on ``refresh`` (the slow path, while
    waiting); otherwise the stat files kept open are re-read, so the
    per-decision cost stays a few microseconds.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._fds: list[int] | None = None

    def ns(self, refresh: bool = False) -> int:
        if refresh or self._fds is None:
            self._walk()
        total = 0
        for fd in self._fds or ():
            try:
                fields = os.pread(fd, 1024, 0).rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue  # gone: its time went to its parent's cstime/cutime
            # utime, stime, cutime, cstime (fields 14-17 of proc(5)).
            total += (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) * TICK_NS
        return total

    def _walk(self) -> None:
        self.close()
        fds = []
        for pid in proc_tree(self.pid):
            try:
                fds.append(os.open(f"/proc/{pid}/stat", os.O_RDONLY))
            except OSError:
                continue
        self._fds = fds

    def close(self) -> None:
        for fd in self._fds or ():
            os.close(fd)
        self._fds = None
