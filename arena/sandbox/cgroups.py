"""The cgroups of one bot process: limits, exact CPU time, killing everything in it.

cgroup v1 controllers, when writable: ``pids`` (processes + threads; the
only limit that holds for uid 0, which ``RLIMIT_NPROC`` ignores), ``memory``
(resident memory, tmpfs included) and ``cpuacct`` (exact CPU time of the
bot and all its descendants, for the per-decision budget).

Every bot's cgroup is named ``arena-<referee pid>-<serial>-<bot>``, so a later
run can find and end what a referee killed outright left behind
(:func:`reap_stale`).
"""

from __future__ import annotations

import os
import signal
import threading
import time

from arena.errors import SandboxError
from arena.sandbox.limits import SandboxLimits

__all__ = ["CONTROLLERS", "BotCgroups", "parents", "reap_stale"]

CONTROLLERS = ("pids", "memory", "cpuacct")


def parents() -> list[tuple[str, str]]:
    """cgroup v1 controllers mounted here whose own cgroup we may create children in."""
    mounts: dict[str, str] = {}
    try:
        with open("/proc/self/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 4 and parts[2] == "cgroup":
                    for opt in parts[3].split(","):
                        if opt in CONTROLLERS:
                            mounts[opt] = parts[1]
        own: dict[str, str] = {}
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, ctrls, path = line.rstrip("\n").split(":", 2)
                for c in ctrls.split(","):
                    own[c] = path
    except OSError:
        return []
    out = []
    for c, mnt in mounts.items():
        parent = os.path.join(mnt, own.get(c, "/").lstrip("/"))
        probe = os.path.join(parent, f"arena-probe-{os.getpid()}-{threading.get_ident()}")
        try:
            os.mkdir(probe)
            os.rmdir(probe)
        except OSError:
            continue
        out.append((c, parent))
    return sorted(out)


def reap_stale(parent_dirs: tuple[tuple[str, str], ...]) -> None:
    """Clear the cgroups of referees that died without cleaning up
    (``arena-<pid>-...`` whose pid is gone): kill what is left in them, then
    remove them.

    A referee killed outright (``kill -9`` of a run) takes its sandboxes with
    it through the parent-death signal, but bwrap's outer process was seen to
    survive now and then (the kernel clears that signal when a process changes
    its credentials, which bwrap does as it drops capabilities). It stays in
    the bot's cgroup, so this sweep, run by every later run, finds and ends it.
    """
    stale: list[str] = []
    for _, parent in parent_dirs:
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            parts = name.split("-")
            if len(parts) > 2 and parts[0] == "arena" and parts[1].isdigit() and not os.path.exists(f"/proc/{parts[1]}"):
                stale.append(os.path.join(parent, name))
    for path in stale:
        try:
            with open(os.path.join(path, "cgroup.procs")) as f:
                pids = [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    for path in stale:
        for _ in range(20):  # a killed process leaves its cgroup a moment later
            try:
                os.rmdir(path)
                break
            except OSError:
                time.sleep(0.005)


def _write(folder: str, name: str, value: str) -> None:
    with open(os.path.join(folder, name), "w") as f:
        f.write(value)


class BotCgroups:
    """One bot process's cgroups (one per usable controller), named ``tag``."""

    def __init__(self, tag: str, limits: SandboxLimits, parent_dirs: tuple[tuple[str, str], ...]) -> None:
        self.tag = tag
        self.limits = limits
        self._parents = parent_dirs
        self.paths: dict[str, str] = {}  # controller -> cgroup folder
        self._cpu_fd: int | None = None

    def __bool__(self) -> bool:
        return bool(self.paths)

    def has(self, controller: str) -> bool:
        return controller in self.paths

    def create(self) -> None:
        """Make the cgroups and set their limits (before the bot is spawned)."""
        lim = self.limits
        for controller, parent in self._parents:
            path = os.path.join(parent, self.tag)
            try:
                os.mkdir(path)
            except OSError as exc:  # exists (never ours to share) or not allowed
                if lim.mode == "strict":
                    raise SandboxError(f"cannot create cgroup {path}: {exc}") from None
                continue
            self.paths[controller] = path
            try:
                if controller == "pids":
                    _write(path, "pids.max", str(lim.processes))
                elif controller == "memory":
                    _write(path, "memory.limit_in_bytes", str(lim.memory_mb << 20))
                    if os.path.exists(os.path.join(path, "memory.memsw.limit_in_bytes")):
                        _write(path, "memory.memsw.limit_in_bytes", str(lim.memory_mb << 20))
            except OSError as exc:
                raise SandboxError(f"cannot set the {controller} limit in {path}: {exc}") from None

    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` files the child writes itself into between fork and exec."""
        return [os.path.join(p, "cgroup.procs") for p in self.paths.values()]

    def started(self, pid: int) -> None:
        acct = self.paths.get("cpuacct")
        if acct:
            self._cpu_fd = os.open(os.path.join(acct, "cpuacct.usage"), os.O_RDONLY)

    def cpu_ns(self) -> int | None:
        """CPU time of everything in the cgroup, in ns; ``None`` without CPU accounting."""
        if self._cpu_fd is None:
            return None
        return int(os.pread(self._cpu_fd, 32, 0))

    def oom_killed(self) -> bool:
        """Whether the memory limit was hit (the kernel killed a process for it)."""
        mem = self.paths.get("memory")
        if not mem:
            return False
        try:
            with open(os.path.join(mem, "memory.oom_control")) as f:
                for line in f:
                    if line.startswith("oom_kill ") and int(line.split()[1]) > 0:
                        return True
            with open(os.path.join(mem, "memory.failcnt")) as f:
                return int(f.read()) > 0
        except (OSError, ValueError):
            return False

    def pids_capped(self) -> bool:
        """Whether the bot tried to start more processes/threads than allowed."""
        p = self.paths.get("pids")
        if not p:
            return False
        try:
            with open(os.path.join(p, "pids.events")) as f:
                return any(line.startswith("max ") and int(line.split()[1]) > 0 for line in f)
        except (OSError, ValueError):
            return False

    def kill_all(self) -> None:
        """SIGKILL every process in the cgroups (escaped sessions and process
        groups included), until none is left."""
        for _ in range(200):
            pids: set[int] = set()
            for path in self.paths.values():
                try:
                    with open(os.path.join(path, "cgroup.procs")) as f:
                        pids.update(int(x) for x in f.read().split())
                except OSError:
                    pass
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.005)

    def remove(self) -> None:
        """Close the CPU file and remove the (empty) cgroups. Idempotent."""
        if self._cpu_fd is not None:
            os.close(self._cpu_fd)
            self._cpu_fd = None
        for controller, path in list(self.paths.items()):
            for _ in range(100):  # a killed process leaves its cgroup a moment later
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
            del self.paths[controller]
