"""One bot process's confinement: :class:`Sandbox` ties the file view
(:mod:`~arena.sandbox.mounts`), the cgroups (:mod:`~arena.sandbox.cgroups`)
and the rlimits together, and :func:`describe_sandbox` says in one line what
holds on this machine."""

from __future__ import annotations

import itertools
import logging
import os
import resource
import shutil
import signal
import tempfile
import time
from collections.abc import Callable

from arena.botfile.spec import BotSpec
from arena.errors import SandboxError
from arena.sandbox import cgroups, mounts, procfs, quotas, seccomp
from arena.sandbox import view as fileview
from arena.sandbox.limits import SandboxLimits
from arena.sandbox.probe import Mechanisms, available

__all__ = ["Sandbox", "describe_sandbox"]

log = logging.getLogger("arena.sandbox")

_warned: set[str] = set()

# What a zygote's sandbox runs (every view holds a POSIX shell): it waits on
# its stdin, a pipe the referee never writes to.
HOLDER = ("/bin/sh", "-c", "read x")


def describe_sandbox(limits: SandboxLimits = SandboxLimits()) -> str:
    """One line: which mechanisms are active on this machine for ``limits``."""
    if limits.mode == "off":
        return "sandbox off: bots run as plain processes with the arena's own rights (trusted bots only)"
    m = available()
    if m.bwrap:
        parts = ["bwrap (user, pid, net, mount, ipc namespaces; read-only system + own files; private /tmp)"]
        why = seccomp.unavailable()
        parts.append("no system-call filter" if why else f"seccomp filter ({len(seccomp.DENY)} rules)")
        no_view = fileview.unavailable()
        parts.append(
            f"files from the host's disk, caches shared ({no_view})"
            if no_view
            else "every file a bot reads served from memory (the Python host's view, program bots' runtimes)"
        )
    elif m.unshare:
        parts = ["unshare (pid + net namespaces; files NOT hidden)"]
    else:
        parts = ["no namespaces (network, processes and files NOT hidden)"]
    plan = m.plan()
    parts.append(f"cgroups ({plan.describe()})" if plan.v1 or plan.v2 else f"no cgroups ({plan.describe()})")
    parts.append(
        f"rlimits (files {limits.open_files}, cpu {limits.cpu_seconds}s"
        + ("" if plan.has("memory") else f", address space {limits.memory_mb} MB")
        + ")"
    )
    parts.append(
        f"memory {limits.memory_mb} MB, {limits.processes} processes+threads, output {limits.output_bytes} bytes"
    )
    return f"sandbox {limits.mode}: " + "; ".join(parts)


def _filter_missing(m: Mechanisms) -> list[str]:
    """Why bots would run without the system-call filter (docs/sandbox.md).

    Without bubblewrap there is none: it would have to be loaded after
    ``unshare`` has built the namespaces (the filter denies that), by a
    launcher costing an interpreter start per bot; and that fallback leaves
    the file system, hence the run seed, readable anyway.
    """
    if not m.bwrap:
        return ["a system-call filter (seccomp; it is loaded by bubblewrap)"]
    why = seccomp.unavailable()
    return [why] if why else []


def _check(limits: SandboxLimits) -> Mechanisms:
    m = available()
    missing = m.missing() + _filter_missing(m)
    if missing and limits.mode == "strict":
        raise SandboxError(
            "sandbox: strict, but this machine lacks: "
            + "; ".join(missing)
            + " (use sandbox: auto to run degraded, see docs/sandbox.md)"
        )
    if missing and limits.mode == "auto":
        key = "; ".join(missing)
        if key not in _warned:  # say it once per process, not once per bot
            _warned.add(key)
            log.warning("sandbox degraded, missing: %s (docs/sandbox.md)", key)
    return m


class Sandbox:
    """The confinement of one bot process: builds its command line and
    environment, owns its cgroups and working folder, reads its CPU time and
    kills everything in it on :meth:`cleanup`."""

    _serial = itertools.count(1)  # next() is atomic: bots started from threads get distinct names

    def __init__(self, spec: BotSpec, limits: SandboxLimits) -> None:
        self.spec = spec
        self.limits = limits
        self.mech = _check(limits) if limits.mode != "off" else Mechanisms(None, None, (), os.geteuid() == 0)
        self.tag = cgroups.tag(next(Sandbox._serial), spec.name)
        self.cgroups = cgroups.BotCgroups(self.tag, limits, self.mech.plan())
        self.workdir: str | None = None  # on the host, when not inside bwrap
        self._tree: procfs.TreeCpu | None = None  # CPU time from /proc, without cpuacct
        self._pid: int | None = None
        self.pass_fds: tuple[int, ...] = ()  # descriptors the child must inherit (the filter's pipe)
        # Whether the bot needs a session of its own (set by command()): see shares_session.
        self.new_session = True
        self.file_view = False  # its runtime comes from the memory view (set by command())
        # The sandbox only holds its namespaces (a sleeping process) for a bot
        # forked into it from the worker's zygote (arena.sandbox.zygote).
        self.holder = False

    # -- set up --------------------------------------------------------------

    def argv(self) -> list[str]:
        """The bot's own command line (inside the sandbox)."""
        if self.holder:
            return list(HOLDER)
        if self.spec.kind == "python":
            exe, _, _ = mounts.python_paths()
            # -S: no site (fast start, no .pth files); -P: nothing unsafe on sys.path.
            return [exe, "-S", "-P", "-m", "arena.protocol.host", str(self.spec.path)]
        return list(self.spec.command)

    def env(self, work: str) -> dict[str, str]:
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": work,
            "TMPDIR": work,
            "LANG": "C.UTF-8",
            "ARENA_BOT": self.spec.name,
        }
        if self.spec.kind == "python":
            _, pkg, site = mounts.python_paths()
            env.update(
                PYTHONPATH=f"{pkg}:{site}", PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", PYTHONIOENCODING="utf-8"
            )
            if os.environ.get("ARENA_PURE_PYTHON"):  # the host as its referee: compiled or not (arena/compiled.py)
                env["ARENA_PURE_PYTHON"] = os.environ["ARENA_PURE_PYTHON"]
            if self.file_view:  # the host names what the view holds when a bot's import is missing
                env["ARENA_FILE_VIEW"] = ",".join(fileview.HOST_PACKAGES)
        env.update(self.spec.env)
        return env

    def _userns(self) -> bool:
        """Whether the bot gets a user namespace of its own (where per-user
        quotas are counted for the sandbox alone: :mod:`~arena.sandbox.quotas`)."""
        if self.limits.mode == "off":
            return False
        return bool(self.mech.bwrap) or (self.mech.unshare is not None and os.geteuid() != 0)

    def command(self) -> tuple[list[str], dict[str, str], str]:
        """(argv, environment, host working directory) to spawn.

        With bwrap, the system-call filter travels on a pipe (``--seccomp FD``):
        the caller passes :attr:`pass_fds` to the child; :meth:`started` or
        :meth:`cleanup` closes the referee's copy.
        """
        inner = self.argv()
        if self.limits.mode != "off":
            self.cgroups.create()
        if self._userns():
            inner = [
                *quotas.launcher(self.limits, root=os.geteuid() == 0, pids_cgroup=self.cgroups.has("pids")),
                *inner,
            ]
        if self.mech.bwrap:
            filtered = self.limits.mode != "off" and seccomp.unavailable() is None
            # A session of its own cuts a bot off the user's terminal, but on a
            # busy machine it also costs every turn a hand-over between the
            # scheduler's session groups (sched_autogroup; docs/performance.md,
            # "Sessions"). With the filter (TIOCSTI and TIOCLINUX refused) and
            # /dev/tty masked (mounts.system_args) the terminal is out of reach
            # anyway, so the bot stays in the referee's session, in a process
            # group of its own (kill(0) cannot reach the referee; the PID
            # namespace hides every other group).
            self.new_session = not filtered
            args = mounts.bwrap_args(self.mech.bwrap, self.spec, self.limits, inner, new_session=self.new_session)
            self.file_view = self.spec.kind == "python" and fileview.unavailable() is None
            if filtered:
                fd = seccomp.pipe_fd()
                self.pass_fds = (fd,)
                args[1:1] = ["--seccomp", str(fd)]
            return args, self.env(mounts.WORK), "/"
        self.workdir = tempfile.mkdtemp(prefix=f"{self.tag}-")
        os.chmod(self.workdir, 0o700)
        if self.mech.unshare:
            inner = [*self.mech.unshare, *inner]
        return inner, self.env(self.workdir), self.workdir

    def holder_pid(self, outer: int, timeout: float) -> int | None:
        """The holder's pid (on the host) once bubblewrap has made the whole
        sandbox and run it, or None after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            todo = [outer]
            while todo:
                pid = todo.pop()
                try:
                    with open(f"/proc/{pid}/comm", "rb") as f:
                        if f.read().strip() == b"sh" and pid != outer:
                            return pid
                except OSError:
                    pass
                todo += procfs.children(pid)
            time.sleep(0.002)
        return None

    def rlimits(self) -> list[tuple[int, int, int]]:
        """(resource, soft, hard) that :meth:`preexec` sets, for a process that joins the sandbox instead."""
        lim = self.limits
        out = [
            (resource.RLIMIT_NOFILE, lim.open_files, lim.open_files),
            (resource.RLIMIT_CPU, lim.cpu_seconds, lim.cpu_seconds + 5),
            (resource.RLIMIT_CORE, 0, 0),
        ]
        if not self.cgroups.has("memory"):
            out.append((resource.RLIMIT_AS, lim.memory_mb << 20, lim.memory_mb << 20))
        return out

    def quotas_inside(self) -> list[str]:
        """The per-user-namespace quotas (``prlimit`` options) of :func:`quotas.inside`."""
        return quotas.inside(self.limits, root=os.geteuid() == 0, pids_cgroup=self.cgroups.has("pids"))

    def _close_fds(self) -> None:
        for fd in self.pass_fds:
            os.close(fd)
        self.pass_fds = ()

    def preexec(self) -> Callable[[], None]:
        """What the child runs between fork and exec: join the cgroups, set rlimits.

        Joining before exec means not a single instruction of the bot runs
        outside its limits (bwrap and everything it starts inherit them).
        """
        procs = self.cgroups.procs_files()
        lim = self.limits
        off = lim.mode == "off"
        no_memcg = not self.cgroups.has("memory")
        root = os.geteuid() == 0
        # Per-user quotas (tasks, queued signals, message queues, locked
        # memory) are capped inside the bot's user namespace by the launcher
        # (arena.sandbox.quotas); here, before bwrap makes that namespace, the
        # shared ceilings go up to the user's hard limits. Without a
        # user namespace (or prlimit) and without a pids cgroup, the old
        # compromise for RLIMIT_NPROC, which counts every task of the user:
        # the user's current tasks plus the allowance (root ignores it).
        userns = self._userns() and bool(quotas.PRLIMIT)
        needs_nproc = not self.cgroups.has("pids") and not root and not off
        ceilings = quotas.outside(nproc=needs_nproc) if userns else []
        nproc: tuple[int, int] | None = None
        if needs_nproc and not userns:
            n = procfs.user_tasks(os.geteuid()) + lim.processes
            nproc = (n, n)
        no_ns = self.mech.bwrap is None
        parent = os.getpid()
        libc = procfs.libc

        def run() -> None:
            if libc is not None:
                libc.prctl(procfs.PR_SET_PDEATHSIG, signal.SIGKILL)
                if os.getppid() != parent:  # the parent died before prctl took effect
                    os._exit(1)
            for p in procs:
                fd = os.open(p, os.O_WRONLY)
                try:
                    os.write(fd, b"0")  # v1: "0" is the writing process
                finally:
                    os.close(fd)
            if off:
                return
            resource.setrlimit(resource.RLIMIT_NOFILE, (lim.open_files, lim.open_files))
            resource.setrlimit(resource.RLIMIT_CPU, (lim.cpu_seconds, lim.cpu_seconds + 5))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            for res, value in ceilings:
                resource.setrlimit(res, value)
            if nproc is not None:
                resource.setrlimit(resource.RLIMIT_NPROC, nproc)
            if no_memcg:
                mem = lim.memory_mb << 20
                resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
            if no_ns:  # a working folder on disk: cap any one file's size
                size = lim.memory_mb << 20
                resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

        return run

    def started(self, pid: int) -> None:
        self._close_fds()
        self._pid = pid
        self.cgroups.started(pid)

    # -- while running ------------------------------------------------------

    def cpu_ns(self, refresh: bool = False) -> int:
        """CPU time used so far by the bot and every process it started, in ns.

        With a CPU-accounting cgroup this is exact and one read; without, it
        sums /proc over the process tree (:class:`~arena.sandbox.procfs.TreeCpu`).
        """
        ns = self.cgroups.cpu_ns()
        if ns is not None:
            return ns
        if self._pid is None:
            return 0
        if self._tree is None:
            self._tree = procfs.TreeCpu(self._pid)
        return self._tree.ns(refresh)

    @property
    def can_freeze(self) -> bool:
        """Whether the bot can be frozen between its turns (a cgroup freezer)."""
        return self.cgroups.can_freeze

    def freeze(self) -> None:
        """Stop every process of the bot, without waiting for it to complete.

        Why not wait: the write returns once every task in the cgroup has the
        freeze pending (v2 sets a job-control trap and wakes each task; v1
        marks it freezing and does the same), so none runs another user
        instruction past its next entry to the kernel, which a task running
        on another core gets within microseconds through the wake-up's
        interrupt. Waiting for ``frozen 1`` would cost a read or a poll per
        decision and only shave that tail, whose CPU is anyway charged to the
        bot's next decision (the budget counts from its previous reply).
        """
        self.cgroups.freeze()

    def thaw(self) -> None:
        self.cgroups.thaw()

    def turn_files(self) -> cgroups.TurnFiles:
        """The freeze file and CPU counter of :meth:`freeze`, :meth:`thaw` and
        :meth:`cpu_ns` (:meth:`cgroups.BotCgroups.turn_files`): valid from
        :meth:`settle` until :meth:`cleanup`."""
        return self.cgroups.turn_files()

    def settle(self) -> None:
        """Start-up is over: freeze the bot, and from now on freeze and thaw
        only its own processes, not the sandbox's wrappers (bwrap's outer
        process and its pid-namespace init; unshare's), which only wait:
        each task of a frozen cgroup is woken twice per turn."""
        wrappers: set[int] = set()
        if self._pid is not None and self.limits.mode != "off":
            if self.mech.bwrap:
                wrappers = {self._pid, *procfs.children(self._pid)}
                if self.holder:  # and the holder under the init (the bot forked in is no child of theirs)
                    wrappers |= {c for w in list(wrappers) for c in procfs.children(w)}
            elif self.mech.unshare:
                wrappers = {self._pid}
        self.cgroups.settle(wrappers)

    def frozen(self) -> bool:
        """Whether a freeze has completed (every task stopped)."""
        return self.cgroups.frozen()

    def oom_killed(self) -> bool:
        return self.cgroups.oom_killed()

    def at_memory_limit(self) -> bool:
        """Whether the bot is at its memory limit now (the kernel reclaiming for it)."""
        return self.cgroups.at_memory_limit()

    def pids_capped(self) -> bool:
        return self.cgroups.pids_capped()

    # -- tear down -------------------------------------------------------------

    def kill_all(self) -> None:
        """SIGKILL every process in the bot's cgroups (escaped sessions and
        process groups included), until none is left. Without cgroups: the
        process tree as /proc shows it now (a process that escaped it, by a
        double fork, is missed: docs/sandbox.md)."""
        if self.cgroups:
            self.cgroups.kill_all()
            return
        tree = procfs.proc_tree(self._pid) if self._pid else []
        for pid in tree:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for _ in range(200):  # they die asynchronously; wait until they have
            if all(procfs.gone(pid) for pid in tree):
                return
            time.sleep(0.005)

    def cleanup(self) -> None:
        """Kill what is left, remove the cgroups and the working folder. Idempotent."""
        self._close_fds()
        self.kill_all()
        self.cgroups.remove()
        if self._tree is not None:
            self._tree.close()
            self._tree = None
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None
