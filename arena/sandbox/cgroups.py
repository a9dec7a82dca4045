"""The cgroups of one bot process: limits, exact CPU time, freezing between
turns, killing everything in it.

A process belongs to one cgroup in each hierarchy, so a bot can be in cgroup
v1 groups (one per controller mounted as v1) and one cgroup v2 group at once.
Each job goes to the mechanism that does it best on this machine
(:func:`plan`):

============ =============================== =================================
job          cgroup v2 (unified)             cgroup v1
============ =============================== =================================
CPU time     ``cpu.stat`` ``usage_usec``     ``cpuacct.usage`` (ns)
             (no controller needed)
freezing     ``cgroup.freeze`` (no           ``freezer.state``: about 7x the
             controller needed; cheap)       cost per turn (NOTES: ~129 us a
                                             pair against ~18.5 us)
killing      ``cgroup.kill`` (one write,     SIGKILL to every pid in
             escaped processes included)     ``cgroup.procs`` until empty
memory       ``memory.max`` +                ``memory.limit_in_bytes`` (+
             ``memory.swap.max``, if the     ``memsw``)
             controller is enabled
processes    ``pids.max``, likewise          ``pids.max``
============ =============================== =================================

By default (``auto``): CPU time from v1 ``cpuacct`` when it is there (ns, one
short number), freezing and killing by v2 when the unified mount offers them,
memory and processes by v2 when those controllers are enabled for the
referee's cgroup, else by v1. On this project's hybrid machine that is v1
memory, pids and cpuacct with v2 freezing and killing.

The environment variable ``ARENA_CGROUP_PREFER`` overrides the choice (a test
switch, docs/sandbox.md): ``v2`` uses the unified mount for every job it can
do (here: CPU time, freezing, killing; memory and processes stay v1, whose
controllers the kernel binds to the v1 mounts), ``v1`` uses no cgroup v2 at
all (the v1 freezer included).

Every bot's cgroup is named ``arena-<referee pid>-t<its start time>-<serial>-<bot>``
(:func:`tag`), in each hierarchy, so a later run can find and end what a
referee killed outright left behind (:func:`reap_stale`): the start time
tells the referee from a process that has its pid since.
"""

from __future__ import annotations

import errno
import os
import signal
import threading
import time
from dataclasses import dataclass
from typing import NamedTuple

from arena.errors import SandboxError
from arena.sandbox.limits import SandboxLimits

__all__ = [
    "CONTROLLERS",
    "JOBS",
    "PREFER_ENV",
    "BotCgroups",
    "Plan",
    "StallSample",
    "Unified",
    "cpu_parent",
    "join_cpu_group",
    "leave_cpu_group",
    "parents",
    "plan",
    "reap_stale",
    "tag",
    "unified",
]

CONTROLLERS = ("pids", "memory", "cpuacct", "freezer")  # the v1 controllers used
JOBS = ("cpu", "freeze", "kill", "memory", "pids")
PREFER_ENV = "ARENA_CGROUP_PREFER"
_V2_LIMITS = ("memory", "pids")  # controllers worth enabling for the bots' cgroups


def _probe_dir(parent: str) -> bool:
    """Whether we may create (and remove) a child cgroup in ``parent``."""
    probe = os.path.join(parent, f"arena-probe-{os.getpid()}-{threading.get_ident()}")
    try:
        os.mkdir(probe)
        os.rmdir(probe)
    except OSError:
        return False
    return True


def _mounts() -> tuple[dict[str, str], str | None]:
    """(v1 controller -> mount point, the cgroup2 mount point or None)."""
    v1: dict[str, str] = {}
    v2: str | None = None
    with open("/proc/self/mounts") as f:
        for line in f:
            parts = line.split()
            if len(parts) < 4:
                continue
            if parts[2] == "cgroup":
                for opt in parts[3].split(","):
                    if opt in CONTROLLERS:
                        v1[opt] = parts[1]
            elif parts[2] == "cgroup2" and v2 is None:
                v2 = parts[1]
    return v1, v2


def _own() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under ``""`` in the unified hierarchy."""
    own: dict[str, str] = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            hid, ctrls, path = line.rstrip("\n").split(":", 2)
            if hid == "0" and ctrls == "":
                own[""] = path
            for c in ctrls.split(","):
                if c:
                    own[c] = path
    return own


def parents() -> list[tuple[str, str]]:
    """cgroup v1 controllers mounted here whose own cgroup we may create children in."""
    try:
        mounts, _ = _mounts()
        own = _own()
    except OSError:
        return []
    out = []
    for c, mnt in mounts.items():
        parent = os.path.join(mnt, own.get(c, "/").lstrip("/"))
        if _probe_dir(parent):
            out.append((c, parent))
    return sorted(out)


def _autogroups() -> bool:
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            return f.read().strip() == "1"
    except OSError:
        return False


def cpu_parent() -> str | None:
    """Where a worker's CPU group goes: this process's own cgroup in the v1 ``cpu``
    hierarchy, when it is the root one (where the scheduler groups tasks by
    session, autogroups, instead), autogroups are on, and we may create
    children there; otherwise None (nothing to fix, or no way to)."""
    mnt = None
    try:
        with open("/proc/self/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 4 and parts[2] == "cgroup" and "cpu" in parts[3].split(","):
                    mnt = parts[1]
        own = _own().get("cpu")
    except OSError:
        return None
    if mnt is None or own != "/" or not _autogroups():
        return None
    return mnt if _probe_dir(mnt) else None


def join_cpu_group() -> str | None:
    """Move this worker process (its bots follow: they inherit it) into a v1
    ``cpu`` cgroup of its own, ``arena-<pid>-t<start>-cpu``, of the default
    weight (``cpu.shares`` 1024, a session's); return its folder, or None
    where :func:`cpu_parent` finds nothing to do.

    Why (docs/sandbox.md, "Host stalls"): bots stay in their referee's
    session (docs/performance.md, "Sessions"), and the scheduler gives each
    session one share of the machine, so a whole run (every worker and every
    bot) had the share of one busy loop in a session of its own: at load 30
    on two cores a bot waited 4.06 s of 4.09 for a CPU and used 46 ms of its
    5 s cap. In a group of its own each worker, with its bots, has one
    session's share, and a turn still passes from referee to bot inside one
    group. Left to :func:`reap_stale` when the worker dies; removed by
    :func:`leave_cpu_group` when it ends normally."""
    parent = cpu_parent()
    if parent is None:
        return None
    path = os.path.join(parent, f"{_prefix()}-cpu")
    try:
        os.makedirs(path, exist_ok=True)
        _write(path, "cgroup.procs", str(os.getpid()))
    except OSError:
        _rmdir(path, tries=1)
        return None
    return path


def leave_cpu_group(path: str) -> None:
    """Back to the parent cgroup, and the group removed (once its bots have left it)."""
    try:
        _write(os.path.dirname(path), "cgroup.procs", str(os.getpid()))
    except OSError:
        return
    _rmdir(path, tries=20)


@dataclass(frozen=True)
class Unified:
    """The cgroup v2 (unified) hierarchy as this process may use it."""

    mount: str  # where cgroup2 is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid)
    parent: str | None  # this process's own v2 cgroup, if we may create children in it
    controllers: frozenset[str] = frozenset()  # enabled for children (parent's cgroup.subtree_control)
    freeze: bool = False  # cgroup.freeze exists (Linux 5.2)
    kill: bool = False  # cgroup.kill exists (Linux 5.14)
    why: str = ""  # why parent is None, or why a controller could not be enabled


def unified() -> Unified | None:
    """Find the unified hierarchy, our place in it, and enable the memory and
    pids controllers for our children when we may (they are then where the
    limits go). ``None`` when there is no cgroup2 mount."""
    try:
        _, mnt = _mounts()
        own = _own().get("")
    except OSError:
        return None
    if mnt is None or own is None:
        return None
    parent = os.path.join(mnt, own.lstrip("/"))
    if not _probe_dir(parent) or not os.access(os.path.join(parent, "cgroup.procs"), os.W_OK):
        # Moving a bot into a child needs write access to cgroup.procs of
        # this cgroup too (the common ancestor of where it starts and where it goes).
        return Unified(mnt, None, why=f"this process's cgroup {parent} is not delegated to uid {os.geteuid()}")
    why = ""
    try:
        with open(os.path.join(parent, "cgroup.controllers")) as f:
            offered = set(f.read().split())
        with open(os.path.join(parent, "cgroup.subtree_control")) as f:
            enabled = set(f.read().split())
    except OSError:
        offered, enabled = set(), set()
    for c in _V2_LIMITS:
        if c in offered and c not in enabled:
            try:
                with open(os.path.join(parent, "cgroup.subtree_control"), "w") as f:
                    f.write(f"+{c}")
                enabled.add(c)
            except OSError as exc:
                # EBUSY: our cgroup holds processes (ours) and is not the root;
                # the v2 "no internal processes" rule forbids it.
                why = f"cannot enable the {c} controller in {parent}: {os.strerror(exc.errno or 0)}" + (
                    " (start the arena in a cgroup of its own, e.g. systemd-run --scope)"
                    if exc.errno == errno.EBUSY
                    else ""
                )
    # The root cgroup has neither file; a child shows what the kernel offers.
    probe = os.path.join(parent, f"arena-probe-{os.getpid()}-{threading.get_ident()}")
    try:
        os.mkdir(probe)
        try:
            freeze = os.path.exists(os.path.join(probe, "cgroup.freeze"))
            kill = os.path.exists(os.path.join(probe, "cgroup.kill"))
        finally:
            os.rmdir(probe)
    except OSError:
        freeze = kill = False
    return Unified(mnt, parent, frozenset(enabled & set(_V2_LIMITS)), freeze, kill, why)


@dataclass(frozen=True)
class Plan:
    """Which hierarchy does each job for a bot: ``"v1"``, ``"v2"`` or ``None``
    (``kill`` is ``"v2"`` for ``cgroup.kill``, ``"signals"`` for the loop
    over ``cgroup.procs``)."""

    cpu: str | None = None
    freeze: str | None = None
    kill: str | None = None
    memory: str | None = None
    pids: str | None = None
    v1: tuple[tuple[str, str], ...] = ()  # (v1 controller, parent folder) to create a cgroup in
    v2: str | None = None  # parent folder of the bot's v2 cgroup, if it has one

    def has(self, job: str) -> bool:
        return getattr(self, job) is not None

    def describe(self) -> str:
        """``CPU time: cgroup v1 cpuacct, freezing: cgroup v2 cgroup.freeze, ...``"""
        names = {
            ("cpu", "v1"): "cgroup v1 cpuacct",
            ("cpu", "v2"): "cgroup v2 cpu.stat",
            ("freeze", "v1"): "cgroup v1 freezer",
            ("freeze", "v2"): "cgroup v2 cgroup.freeze",
            ("kill", "v2"): "cgroup v2 cgroup.kill",
            ("kill", "signals"): "SIGKILL to the cgroup's pids",
            ("memory", "v1"): "cgroup v1 memory",
            ("memory", "v2"): "cgroup v2 memory.max",
            ("pids", "v1"): "cgroup v1 pids",
            ("pids", "v2"): "cgroup v2 pids.max",
        }
        none = {
            "cpu": "none (from /proc, clock ticks)",
            "freeze": (
                "none (CPU between turns is charged to the next decision)"
                if self.cpu
                else "none (CPU between turns charged to the next decision, from /proc)"
            ),
            "kill": "none (the process tree from /proc)",
            "memory": "none (RLIMIT_AS)",
            "pids": "none (RLIMIT_NPROC, not for root)",
        }
        label = {"cpu": "CPU time", "freeze": "freezing", "kill": "killing", "memory": "memory", "pids": "processes"}
        return ", ".join(f"{label[j]}: {names.get((j, getattr(self, j)), none[j])}" for j in JOBS)


def plan(v1: tuple[tuple[str, str], ...], v2: Unified | None, prefer: str | None = None) -> Plan:
    """Assign each job to a hierarchy (see the module docstring).

    ``prefer``: ``None``/``""``/``"auto"``, ``"v2"`` or ``"v1"``; by default
    read from ``ARENA_CGROUP_PREFER``.
    """
    if prefer is None:
        prefer = os.environ.get(PREFER_ENV, "")
    prefer = prefer.strip().lower()
    if prefer not in ("", "auto", "v1", "v2"):
        raise SandboxError(f"{PREFER_ENV}={prefer!r} is not one of auto, v1, v2 (docs/sandbox.md)")
    have1 = dict(v1)
    if prefer == "v1" or v2 is None or v2.parent is None:
        v2 = None
    ctrl2 = v2.controllers if v2 else frozenset()
    jobs: dict[str, str | None] = {}
    # CPU time: v1 cpuacct is one short number in ns; v2 cpu.stat is exact to the us.
    if v2 and (prefer == "v2" or "cpuacct" not in have1):
        jobs["cpu"] = "v2"
    else:
        jobs["cpu"] = "v1" if "cpuacct" in have1 else None
    # Freezing: v2 first (7x cheaper; and SIGKILL works on frozen v2 tasks).
    if v2 and v2.freeze:
        jobs["freeze"] = "v2"
    else:
        jobs["freeze"] = "v1" if "freezer" in have1 else None
    for c in ("memory", "pids"):
        jobs[c] = "v2" if c in ctrl2 else ("v1" if c in have1 else None)
    used1 = {
        "cpuacct": jobs["cpu"] == "v1",
        "freezer": jobs["freeze"] == "v1",
        "memory": jobs["memory"] == "v1",
        "pids": jobs["pids"] == "v1",
    }
    chosen1 = tuple((c, p) for c, p in v1 if used1.get(c))
    if v2 and v2.kill:
        jobs["kill"] = "v2"
    else:
        jobs["kill"] = "signals" if chosen1 or v2 else None
    return Plan(v1=chosen1, v2=v2.parent if v2 else None, **jobs)


def _state_and_start(pid: int | str) -> tuple[bytes, str] | None:
    """A process's state and start time (/proc/<pid>/stat's 3rd and 22nd
    fields), or None when it is gone or its stat cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()  # after the command name, which may hold anything
    return (fields[0], fields[19].decode()) if len(fields) > 19 else None


_TAGS: dict[int, str] = {}  # pid -> its tag prefix: each forked worker makes its own


def tag(serial: int, name: str) -> str:
    """The name of a bot's cgroups (and of its work folder): ``arena-<pid>-t<start>-<serial>-<name>``.

    The start time (clock ticks after boot, /proc's ``starttime``) makes the
    name the referee's alone: once it is dead, its pid can be another
    process's (it wraps at ``pid_max``, 32,768 here), which the sweep would
    have taken for the referee alive, leaving its cgroups for ever."""
    return f"{_prefix()}-{serial}-{name}"


def _prefix() -> str:
    """``arena-<pid>-t<start>``: this process's part of a cgroup's name (:func:`tag`)."""
    pid = os.getpid()
    prefix = _TAGS.get(pid)
    if prefix is None:
        own = _state_and_start(pid)
        # Unreadable (no /proc here): the pid alone, which the sweep then checks alone.
        prefix = _TAGS[pid] = f"arena-{pid}-t{own[1]}" if own is not None else f"arena-{pid}"
    return prefix


def _referee_alive(pid: str, start: str | None = None) -> bool:
    """Whether the process that named a cgroup ``arena-<pid>-...`` can still clean it up.

    A zombie cannot: a worker killed with its run is reparented to init, and
    init reaps when it gets round to it (seconds later on the machines
    measured; never, in a container whose first process does not reap), while
    /proc still lists it. Seen as a CI failure: the resumed run after a
    ``kill -9`` left the killed run's cgroups in place. Nor can a process
    that started at another time than the name says (``start``; names made
    before there was one have none): it only has the dead referee's pid.
    """
    found = _state_and_start(pid)
    return found is not None and found[0] not in (b"Z", b"X") and (start is None or found[1] == start)


def _stale(parent: str) -> list[str]:
    try:
        names = os.listdir(parent)
    except OSError:
        return []
    out = []
    for name in names:
        parts = name.split("-")
        if len(parts) > 2 and parts[0] == "arena" and parts[1].isdigit():
            start = parts[2][1:] if len(parts) > 3 and parts[2][:1] == "t" and parts[2][1:].isdigit() else None
            if not _referee_alive(parts[1], start):
                out.append(os.path.join(parent, name))
    return out


def reap_stale(parent_dirs: tuple[tuple[str, str], ...], v2_parent: str | None = None) -> None:
    """Clear the cgroups of referees that died without cleaning up
    (``arena-<pid>-...`` whose referee is gone), in the v1 hierarchies and the
    unified one: kill what is left in them, then remove them.

    A referee killed outright (``kill -9`` of a run) takes its sandboxes with
    it through the parent-death signal, but bwrap's outer process was seen to
    survive now and then (the kernel clears that signal when a process changes
    its credentials, which bwrap does as it drops capabilities). It stays in
    the bot's cgroups, so this sweep, run by every later run, finds and ends
    it. A dead referee may have left its bot frozen: v2 kills frozen tasks
    (``cgroup.kill``), v1 only once they are thawed, so v1 groups are thawed
    after the signals.
    """
    stale = [p for _, parent in parent_dirs for p in _stale(parent)]
    stale2 = _stale(v2_parent) if v2_parent else []
    for path in stale2:
        if not _try_write(os.path.join(path, "cgroup.kill"), "1"):
            stale.append(path)  # no cgroup.kill (Linux < 5.14): signals, then thaw
            _try_write(os.path.join(path, "cgroup.freeze"), "0")
    for path in stale:
        for folder in _subtree(path):  # a bot's cgroup holds a child cgroup for the bot itself
            for pid in _pids(folder):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            _try_write(os.path.join(folder, "freezer.state"), "THAWED")
    for path in dict.fromkeys(stale + stale2):
        for folder in _subtree(path):
            _rmdir(folder, tries=100, pause=0.005)


def _subtree(path: str) -> list[str]:
    """``path`` and the cgroups below it, deepest first (the order to remove them in)."""
    out = []
    for top, dirs, _ in os.walk(path, topdown=False):
        out += [os.path.join(top, d) for d in dirs]
    return out + [path]


def _rmdir(path: str, tries: int = 100, pause: float = 0.01) -> None:
    for _ in range(tries):  # a killed process leaves its cgroup a moment later
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(pause)


def _try_write(path: str, value: str) -> bool:
    try:
        with open(path, "w") as f:
            f.write(value)
        return True
    except OSError:
        return False


def _pids(path: str) -> list[int]:
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            return [int(p) for p in f.read().split()]
    except (OSError, ValueError):
        return []


def _write(folder: str, name: str, value: str) -> None:
    with open(os.path.join(folder, name), "w") as f:
        f.write(value)


def _read(folder: str, name: str) -> str:
    with open(os.path.join(folder, name)) as f:
        return f.read()


def _keyed(folder: str, name: str, key: str) -> int:
    """The value of ``key`` in a flat-keyed file (``key value`` lines); 0 if absent or unreadable."""
    try:
        for line in _read(folder, name).splitlines():
            k, _, v = line.partition(" ")
            if k == key:
                return int(v)
    except (OSError, ValueError):
        pass
    return 0


V2 = "unified"  # the key of the bot's v2 cgroup in BotCgroups.paths


class TurnFiles(NamedTuple):
    """The two files touched at every turn of a bot, open from its start to
    :meth:`BotCgroups.remove` (which closes them: a holder must stop using the
    numbers before then). The referee's compiled loop writes and reads them
    itself, without two Python calls per file and turn (docs/performance.md)."""

    freeze_fd: int  # the freeze file of the cgroup frozen between turns; -1: no freezer
    freeze: bytes  # what freezes it
    thaw: bytes  # what thaws it
    cpu_fd: int  # the CPU counter (v1 cpuacct.usage in ns, v2 cpu.stat from b"usage_usec "); -1: none
    cpu_v2: bool


class StallSample(NamedTuple):
    """What held a bot up, as cumulative counters of its cgroup v2 group
    (pressure stall information, microseconds), read only when a bot is slow
    (never per turn): two samples bound a wait (arena.match.stalls).

    ``cpu_us`` is ``cpu.pressure`` *full*: time in which every runnable task
    of the bot waited for a CPU that others held. A bot's own threads
    competing with each other do not count (one of them runs), nor does its
    sleeping or blocking (nothing runnable). ``io_us`` and ``memory_us`` are
    the *full* lines of ``io.pressure`` and ``memory.pressure``: the bot's own
    I/O and page-cache misses, reported but never excused. ``frozen_us`` is
    ``frozen_usec`` of ``cgroup.stat.local`` (Linux 6.17) of the group frozen
    per turn: time frozen, by the referee or anyone else; -1 where unknown."""

    cpu_us: int
    io_us: int
    memory_us: int
    frozen_us: int
    at: float  # time.monotonic() when read


def _autogroup(pid: str) -> tuple[str, int] | None:
    """A process's scheduler session group and its nice value (``/proc/PID/autogroup``:
    ``/autogroup-12 nice 0``); None without one (autogroups off, or the process gone)."""
    try:
        with open(f"/proc/{pid}/autogroup") as f:
            name, word, nice = f.read().split()
        return (name, int(nice)) if word == "nice" else None
    except (OSError, ValueError):
        return None


def _full_total(folder: str, name: str) -> int:
    """``total=`` of the ``full`` line of a pressure file; -1 when it cannot be read."""
    try:
        for line in _read(folder, name).splitlines():
            if line.startswith("full "):
                return int(line.rpartition("total=")[2])
    except (OSError, ValueError):
        pass
    return -1


class BotCgroups:
    """One bot process's cgroups: one per v1 controller used, and one v2
    cgroup, named ``tag``, doing the jobs :func:`plan` gave them."""

    def __init__(self, tag: str, limits: SandboxLimits, plan: Plan) -> None:
        self.tag = tag
        self.limits = limits
        self.plan = plan
        self.paths: dict[str, str] = {}  # v1 controller, or V2 -> cgroup folder
        self._cpu_fd: int | None = None
        self._cpu_v2 = False
        self._freeze_fd: int | None = None  # the freeze file of the cgroup frozen between turns
        self._freeze_v2 = False
        self._on = self._off = b""  # what freeze() and thaw() write
        self._inner: str | None = None  # the child cgroup holding the bot but not the sandbox's wrappers
        self._target: str | None = None  # the folder whose freeze file _freeze_fd is

    def __bool__(self) -> bool:
        return bool(self.paths)

    def has(self, job: str) -> bool:
        """Whether ``job`` (cpu, freeze, kill, memory, pids) is done by a cgroup of this bot."""
        where = getattr(self.plan, job)
        if where == "v2":
            return V2 in self.paths
        if where == "v1":
            return {"cpu": "cpuacct", "freeze": "freezer"}.get(job, job) in self.paths
        return where == "signals" and bool(self.paths)

    def create(self) -> None:
        """Make the cgroups and set their limits (before the bot is spawned)."""
        lim = self.limits
        wanted = list(self.plan.v1) + ([(V2, self.plan.v2)] if self.plan.v2 else [])
        for key, parent in wanted:
            path = os.path.join(parent, self.tag)
            try:
                os.mkdir(path)
            except OSError as exc:  # exists (never ours to share) or not allowed
                if lim.mode == "strict":
                    raise SandboxError(f"cannot create cgroup {path}: {exc}") from None
                continue
            self.paths[key] = path
            try:
                if key == "pids" or (key == V2 and self.plan.pids == "v2"):
                    _write(path, "pids.max", str(lim.processes))
                if key == "memory":
                    _write(path, "memory.limit_in_bytes", str(lim.memory_mb << 20))
                    if os.path.exists(os.path.join(path, "memory.memsw.limit_in_bytes")):
                        _write(path, "memory.memsw.limit_in_bytes", str(lim.memory_mb << 20))
                if key == V2 and self.plan.memory == "v2":
                    _write(path, "memory.max", str(lim.memory_mb << 20))
                    if os.path.exists(os.path.join(path, "memory.swap.max")):
                        _write(path, "memory.swap.max", "0")  # the limit is the bot's RAM, not RAM+swap
            except OSError as exc:
                raise SandboxError(f"cannot set the {key} limit in {path}: {exc}") from None
        # The per-decision files stay open: a read or write each, no open/close on the hot path.
        try:
            if self.has("cpu"):
                self._cpu_v2 = self.plan.cpu == "v2"
                folder = self.paths[V2 if self._cpu_v2 else "cpuacct"]
                self._cpu_fd = os.open(
                    os.path.join(folder, "cpu.stat" if self._cpu_v2 else "cpuacct.usage"), os.O_RDONLY
                )
            if self.has("freeze"):
                self._freeze_v2 = self.plan.freeze == "v2"
                self._on, self._off = self._freeze_word(True), self._freeze_word(False)
                folder = self.paths[V2 if self._freeze_v2 else "freezer"]
                self._freeze_fd = os.open(os.path.join(folder, self._freeze_name), os.O_WRONLY)
                self._target = folder
                inner = os.path.join(folder, "bot")
                os.mkdir(inner)
                self._inner = inner
        except OSError as exc:
            raise SandboxError(f"cannot open the cgroup files of {self.tag}: {exc}") from None

    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` files the child writes itself into between fork and exec."""
        return [os.path.join(p, "cgroup.procs") for p in self.paths.values()]

    @property
    def _freeze_name(self) -> str:
        return "cgroup.freeze" if self._freeze_v2 else "freezer.state"

    def _freeze_word(self, on: bool) -> bytes:
        if self._freeze_v2:
            return b"1" if on else b"0"
        return b"FROZEN" if on else b"THAWED"

    def started(self, pid: int) -> None:
        pass  # the files were opened by create()

    def settle(self, wrappers: set[int]) -> None:
        """Freeze the bot for the first time, and from now on freeze only its
        own processes: every process but the sandbox's ``wrappers`` (bwrap's
        two, which only wait) moves into a child cgroup, and only that child is
        frozen and thawed per turn.

        Why: every task of a cgroup is woken to be frozen and again to be
        thawed; bwrap's two would triple the per-decision cost of freezing a
        one-process bot (docs/performance.md). The whole cgroup is frozen
        first, until the freeze has completed, so nothing forks while the
        processes are moved; the child is frozen before they arrive, so they
        stay frozen. Where the move fails, the whole cgroup stays the one frozen.
        """
        if self._freeze_fd is None:
            return
        if self._inner is None or not wrappers:
            self.freeze()
            return
        outer = os.path.dirname(self._inner)
        name = self._freeze_name
        moved = False
        try:
            _write(self._inner, name, self._freeze_word(True).decode())
            os.pwrite(self._freeze_fd, self._freeze_word(True), 0)
            for _ in range(500):
                if self._frozen(outer):
                    break
                time.sleep(0.001)
            for _ in range(10):
                left = set(_pids(outer)) - wrappers
                if not left:
                    moved = True
                    break
                for pid in left:
                    try:
                        _write(self._inner, "cgroup.procs", str(pid))
                    except ProcessLookupError:
                        pass
        except OSError:
            moved = False
        if not moved:
            try:
                _write(self._inner, name, self._freeze_word(False).decode())
            except OSError:
                pass
            self.freeze()
            return  # the outer cgroup stays frozen, and is the one frozen per turn
        inner_fd = os.open(os.path.join(self._inner, name), os.O_WRONLY)
        os.pwrite(self._freeze_fd, self._freeze_word(False), 0)  # the wrappers run again; the bot does not
        os.close(self._freeze_fd)
        self._freeze_fd = inner_fd
        self._target = self._inner

    # -- per decision ---------------------------------------------------------------

    def turn_files(self) -> TurnFiles:
        """The files :meth:`freeze`, :meth:`thaw` and :meth:`cpu_ns` use, as they
        are now: after :meth:`settle`, which may change the freeze file."""
        return TurnFiles(
            -1 if self._freeze_fd is None else self._freeze_fd,
            self._on,
            self._off,
            -1 if self._cpu_fd is None else self._cpu_fd,
            self._cpu_v2,
        )

    def cpu_ns(self) -> int | None:
        """CPU time of everything in the cgroup, in ns; ``None`` without CPU accounting.

        v1 ``cpuacct.usage`` is in ns; v2 ``cpu.stat`` starts with
        ``usage_usec N``, exact to the microsecond.
        """
        fd = self._cpu_fd
        if fd is None:
            return None
        data = os.pread(fd, 64, 0)
        if self._cpu_v2:
            return int(data[11 : data.index(b"\n")]) * 1000  # b"usage_usec " is 11 bytes
        return int(data)

    @property
    def can_freeze(self) -> bool:
        return self._freeze_fd is not None

    def freeze(self) -> None:
        """Stop every process in the cgroup (asynchronous: see :meth:`frozen`)."""
        if self._freeze_fd is not None:
            try:
                os.pwrite(self._freeze_fd, self._on, 0)
            except OSError:
                pass  # removed under us: nothing left to freeze

    def thaw(self) -> None:
        if self._freeze_fd is not None:
            try:
                os.pwrite(self._freeze_fd, self._off, 0)
            except OSError:
                pass

    def frozen(self) -> bool:
        """Whether the freeze has completed: every task of the bot is stopped
        (v2 ``cgroup.events`` ``frozen 1``, v1 ``freezer.state`` ``FROZEN``)."""
        if self._freeze_fd is None:
            return False
        return self._target is not None and self._frozen(self._target)

    def _frozen(self, folder: str) -> bool:
        try:
            if self._freeze_v2:
                return _keyed(folder, "cgroup.events", "frozen") == 1
            return _read(folder, "freezer.state").strip() == "FROZEN"
        except OSError:
            return False

    def stall_sample(self) -> StallSample | None:
        """The bot's stall counters now (:class:`StallSample`); ``None`` without a
        cgroup v2 group or pressure accounting (no PSI: ``psi=0``, or Linux < 4.20)."""
        v2 = self.paths.get(V2)
        if v2 is None:
            return None
        cpu = _full_total(v2, "cpu.pressure")
        if cpu < 0:
            return None
        frozen = -1
        if self._freeze_v2 and self._target is not None:
            frozen = (
                _keyed(self._target, "cgroup.stat.local", "frozen_usec")
                if os.path.exists(os.path.join(self._target, "cgroup.stat.local"))
                else -1
            )
        return StallSample(
            cpu, _full_total(v2, "io.pressure"), _full_total(v2, "memory.pressure"), frozen, time.monotonic()
        )

    def lowered_priority(self) -> str | None:
        """How the bot lowered its own claim on the CPU, if it did: a task of it
        at a nice value above 0, under ``SCHED_BATCH`` or ``SCHED_IDLE``, or its
        scheduler session group (``/proc/PID/autogroup``) niced. Then a wait for
        the CPU is of its own making (read when a stall is judged, never per turn)."""
        # Relative to the referee, whose own nice value, policy and group the bot
        # inherits: a run started under `nice` is the user's choice, not the bot's.
        own_nice = os.getpriority(os.PRIO_PROCESS, 0)
        own_policy = os.sched_getscheduler(0)
        own_group = _autogroup("self")
        folders = [f for f in (self._inner, self.paths.get(V2), self.paths.get("cpuacct"), self.paths.get("pids")) if f]
        pids: set[int] = set()
        for folder in folders:
            pids.update(_pids(folder))
        for pid in sorted(pids):
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                try:
                    with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                        stat = f.read()
                except OSError:
                    continue
                fields = stat[stat.rfind(b")") + 2 :].split()  # field 3 (state) is fields[0]
                if len(fields) > 38:
                    nice, policy = int(fields[16]), int(fields[38])  # fields 19 and 41 of proc(5)
                    if nice > own_nice:
                        return f"task {tid} runs at nice {nice} (the referee at {own_nice})"
                    if policy in (3, 5) and policy != own_policy:  # SCHED_BATCH, SCHED_IDLE
                        return f"task {tid} runs under {'SCHED_BATCH' if policy == 3 else 'SCHED_IDLE'}"
            group = _autogroup(str(pid))
            if group is not None and own_group is not None and group[1] > own_group[1]:
                return f"its scheduler session group runs at nice {group[1]} (the referee's at {own_group[1]})"
        return None

    # -- after the fact ---------------------------------------------------------------

    def oom_killed(self) -> bool:
        """Whether the memory limit was hit (the kernel killed a process for it)."""
        if self.plan.memory == "v2" and V2 in self.paths:
            d = self.paths[V2]
            return _keyed(d, "memory.events", "oom_kill") > 0 or _keyed(d, "memory.events", "max") > 0
        mem = self.paths.get("memory")
        if not mem:
            return False
        if _keyed(mem, "memory.oom_control", "oom_kill") > 0:
            return True
        try:
            return int(_read(mem, "memory.failcnt")) > 0
        except (OSError, ValueError):
            return False

    def at_memory_limit(self) -> bool:
        """Whether the bot is at its memory limit now, or the kernel has
        OOM-killed in its cgroup: the kernel is reclaiming to keep it under
        the limit, which burns CPU charged to the bot (a bot that allocates
        without bound spends its budget there before, or while, the OOM
        killer ends it).

        Usage now, not the limit's fail counter: on recent kernels the v1
        ``memory.failcnt`` stays 0 at the limit (seen on 6.18 here)."""
        limit = self.limits.memory_mb << 20
        slack = max(4 << 20, limit // 32)
        try:
            if self.plan.memory == "v2" and V2 in self.paths:
                d = self.paths[V2]
                return int(_read(d, "memory.current")) >= limit - slack or _keyed(d, "memory.events", "oom_kill") > 0
            mem = self.paths.get("memory")
            if mem:
                return (
                    int(_read(mem, "memory.usage_in_bytes")) >= limit - slack
                    or _keyed(mem, "memory.oom_control", "oom_kill") > 0
                )
        except (OSError, ValueError):
            pass
        return False

    def pids_capped(self) -> bool:
        """Whether the bot tried to start more processes/threads than allowed."""
        where = self.plan.pids
        folder = self.paths.get(V2 if where == "v2" else "pids") if where else None
        return bool(folder) and _keyed(folder, "pids.events", "max") > 0  # type: ignore[arg-type]

    # -- tear down -------------------------------------------------------------------

    def kill_all(self) -> None:
        """SIGKILL every process in the cgroups (escaped sessions and process
        groups included), until none is left.

        v2: one write to ``cgroup.kill`` (the kernel kills every task, and
        any forked meanwhile; frozen tasks die too). Otherwise a signal to each
        pid listed, repeated until the lists are empty; a v1-frozen task
        takes a SIGKILL only once thawed, so the v1 freezer is thawed after
        the signals are sent (nothing runs a user instruction in between: a
        pending SIGKILL is acted on first).
        """
        v2 = self.paths.get(V2)
        if v2 and self.plan.kill == "v2" and _try_write(os.path.join(v2, "cgroup.kill"), "1"):
            for _ in range(1000):  # the tasks die asynchronously; the cgroup says when all have (ms, even loaded)
                if _keyed(v2, "cgroup.events", "populated") == 0:
                    break
                time.sleep(0.002)
        freezer = self.paths.get("freezer")
        folders = list(self.paths.values()) + ([self._inner] if self._inner else [])
        for _ in range(200):
            pids: set[int] = set()
            for path in folders:
                pids.update(_pids(path))
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if freezer:
                for folder in (self._inner, freezer):
                    if folder and folder.startswith(freezer):
                        _try_write(os.path.join(folder, "freezer.state"), "THAWED")
            time.sleep(0.005)

    def remove(self) -> None:
        """Close the files kept open and remove the (empty) cgroups. Idempotent."""
        for fd in (self._cpu_fd, self._freeze_fd):
            if fd is not None:
                os.close(fd)
        self._cpu_fd = self._freeze_fd = None
        self._target = None
        if self._inner is not None:
            _rmdir(self._inner)
            self._inner = None
        for key, path in list(self.paths.items()):
            for _ in range(100):  # a killed process leaves its cgroup a moment later
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
            del self.paths[key]
