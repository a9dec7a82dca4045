"""Confinement of one bot process (Linux). Every bot is hostile.

What each bot process gets, best first (docs/sandbox.md has the threat model):

- ``bwrap`` (bubblewrap): new user, pid, network, mount, ipc, uts and cgroup
  namespaces; all capabilities dropped; a new session; a read-only view of
  the system libraries, the interpreter, the ``arena`` package and the bot's
  own files only (never the project tree, configs, results or other bots);
  a private ``/tmp`` (tmpfs, charged to the memory limit, gone with the
  sandbox) as working folder; ``--die-with-parent``.
- Without bwrap: ``unshare`` (util-linux) for the network and pid namespaces,
  and a private working folder on disk, removed on close; the file system is
  then *not* hidden (said once, by a warning).
- cgroup v1 controllers, when writable: ``pids`` (processes + threads; the
  only limit that holds for uid 0, which ``RLIMIT_NPROC`` ignores), ``memory``
  (resident memory, tmpfs included) and ``cpuacct`` (exact CPU time of the
  bot and all its descendants, for the per-decision budget).
- rlimits always: open files, lifetime CPU seconds (backstop), no core
  files; file size when the working folder is on disk; address space only
  when there is no memory cgroup (``RLIMIT_AS`` breaks runtimes that reserve
  address space, like Node.js); processes (``RLIMIT_NPROC``) only without a
  pids cgroup and not as root.
- A scrubbed environment: PATH, HOME, TMPDIR, LANG, and the manifest's env.

:class:`Sandbox` is one bot process's confinement; :mod:`arena.process`
spawns the command it builds and asks it for CPU time and cleanup.
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
import resource
import shutil
import signal
import threading
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal

import ctypes
import ctypes.util

import arena
from arena.botfile import BotSpec
from arena.errors import SandboxError

__all__ = ["SandboxLimits", "Mechanisms", "Sandbox", "available", "describe_sandbox"]

log = logging.getLogger("arena.sandbox")

_CONTROLLERS = ("pids", "memory", "cpuacct")


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


@dataclass(frozen=True)
class Mechanisms:
    """What this machine offers, probed once per process (:func:`available`)."""

    bwrap: str | None  # path of a working bubblewrap
    unshare: tuple[str, ...] | None  # a working unshare prefix (net + pid namespaces)
    cgroups: tuple[tuple[str, str], ...]  # (controller, writable parent folder)
    root: bool

    def cgroup(self, controller: str) -> str | None:
        return dict(self.cgroups).get(controller)

    def missing(self) -> list[str]:
        out = []
        if not self.bwrap:
            out.append("bubblewrap (file system hidden, private /tmp): apt-get install bubblewrap"
                       + ("" if self.unshare else "; no working `unshare` either, so no network or "
                          "pid namespace"))
        for c in _CONTROLLERS:
            if not self.cgroup(c):
                out.append(f"cgroup v1 `{c}` controller (writable)")
        return out


def _run_ok(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _cgroup_parents() -> list[tuple[str, str]]:
    """cgroup v1 controllers mounted here whose own cgroup we may create children in."""
    mounts: dict[str, str] = {}
    try:
        with open("/proc/self/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 4 and parts[2] == "cgroup":
                    for opt in parts[3].split(","):
                        if opt in _CONTROLLERS:
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


_probe_lock = threading.Lock()


def available() -> Mechanisms:
    """Probe bwrap, unshare and cgroups once (a few ms); safe from many threads at once
    (two concurrent probes would each see the other's probe folder and wrongly
    conclude that a controller is missing)."""
    with _probe_lock:
        return _probe()


@functools.lru_cache(maxsize=1)
def _probe() -> Mechanisms:
    root = os.geteuid() == 0
    bwrap = shutil.which("bwrap")
    if bwrap and not _run_ok([bwrap, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL",
                              "--ro-bind", "/", "/", "true"]):
        bwrap = None
    unshare: tuple[str, ...] | None = None
    u = shutil.which("unshare")
    if u:
        flags: tuple[str, ...] = ("--net", "--pid", "--fork", "--kill-child", "--mount-proc")
        if not root:
            flags = ("--user", "--map-root-user", *flags)
        prefix = (u, *flags)
        if _run_ok([*prefix, "true"]):
            unshare = prefix
    cgroups = tuple(_cgroup_parents())
    _reap_stale_cgroups(cgroups)
    return Mechanisms(bwrap=bwrap, unshare=unshare, cgroups=cgroups, root=root)


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """Have the kernel send ``sig`` to this process when its parent dies.

    For run workers: a worker orphaned by a killed ``arena run`` must not go
    on playing (or spinning) alone; its handler for ``sig`` closes its bots.
    """
    if _libc is None:
        return
    parent = os.getppid()
    _libc.prctl(_PR_SET_PDEATHSIG, sig)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os.kill(os.getpid(), sig)


def describe_sandbox(limits: SandboxLimits = SandboxLimits()) -> str:
    """One line: which mechanisms are active on this machine for ``limits``."""
    if limits.mode == "off":
        return "sandbox off: bots run as plain processes with the arena's own rights (trusted bots only)"
    m = available()
    if m.bwrap:
        parts = ["bwrap (user, pid, net, mount, ipc namespaces; read-only system + own files; private /tmp)"]
    elif m.unshare:
        parts = ["unshare (pid + net namespaces; files NOT hidden)"]
    else:
        parts = ["no namespaces (network, processes and files NOT hidden)"]
    cg = [c for c in _CONTROLLERS if m.cgroup(c)]
    parts.append(f"cgroups {'+'.join(cg)}" if cg else "no cgroups (CPU time from /proc, no process cap for root)")
    parts.append(f"rlimits (files {limits.open_files}, cpu {limits.cpu_seconds}s"
                 + ("" if m.cgroup("memory") else f", address space {limits.memory_mb} MB") + ")")
    parts.append(f"memory {limits.memory_mb} MB, {limits.processes} processes+threads, "
                 f"output {limits.output_bytes} bytes")
    return f"sandbox {limits.mode}: " + "; ".join(parts)


_warned: set[str] = set()

# prctl(PR_SET_PDEATHSIG) for the spawned process: if the referee dies, even
# by SIGKILL, the kernel kills the sandbox's top process, and bwrap (its
# --die-with-parent) or unshare (--kill-child) takes the rest with it.
_PR_SET_PDEATHSIG = 1
try:
    _libc: ctypes.CDLL | None = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
except OSError:
    _libc = None


def _reap_stale_cgroups(parents: tuple[tuple[str, str], ...]) -> None:
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
    for _, parent in parents:
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


def _check(limits: SandboxLimits) -> Mechanisms:
    m = available()
    missing = m.missing()
    if missing and limits.mode == "strict":
        raise SandboxError("sandbox: strict, but this machine lacks: " + "; ".join(missing)
                           + " (use sandbox: auto to run degraded, see docs/sandbox.md)")
    if missing and limits.mode == "auto":
        key = "; ".join(missing)
        if key not in _warned:  # say it once per process, not once per bot
            _warned.add(key)
            log.warning("sandbox degraded, missing: %s (docs/sandbox.md)", key)
    return m


def _python_paths() -> tuple[str, str, str]:
    """(interpreter, the folder holding the arena package, site-packages)."""
    exe = os.path.realpath(sys.executable)
    pkg_parent = str(Path(arena.__file__).resolve().parent.parent)
    return exe, pkg_parent, sysconfig.get_paths()["purelib"]


_SYSTEM_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
               "/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/ssl",
               "/etc/ca-certificates")
_WORK = "/tmp"  # the bot's private working folder inside bwrap


class Sandbox:
    """The confinement of one bot process: builds its command line and
    environment, owns its cgroups and working folder, reads its CPU time and
    kills everything in it on :meth:`cleanup`."""

    _serial = itertools.count(1)  # next() is atomic: bots started from threads get distinct names

    def __init__(self, spec: BotSpec, limits: SandboxLimits) -> None:
        self.spec = spec
        self.limits = limits
        self.mech = _check(limits) if limits.mode != "off" else Mechanisms(None, None, (), os.geteuid() == 0)
        self.tag = f"arena-{os.getpid()}-{next(Sandbox._serial)}-{spec.name}"
        self.cgroups: dict[str, str] = {}
        self.workdir: str | None = None  # on the host, when not inside bwrap
        self._cpu_fd: int | None = None
        self._stat_fds: list[int] | None = None  # /proc stat files, without cpuacct
        self._pid: int | None = None

    # -- set up --------------------------------------------------------------

    def argv(self) -> list[str]:
        """The bot's own command line (inside the sandbox)."""
        if self.spec.kind == "python":
            exe, _, _ = _python_paths()
            # -S: no site (fast start, no .pth files); -P: nothing unsafe on sys.path.
            return [exe, "-S", "-P", "-m", "arena.host", str(self.spec.path)]
        return list(self.spec.command)

    def env(self, work: str) -> dict[str, str]:
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": work, "TMPDIR": work,
               "LANG": "C.UTF-8", "ARENA_BOT": self.spec.name}
        if self.spec.kind == "python":
            _, pkg, site = _python_paths()
            env.update(PYTHONPATH=f"{pkg}:{site}", PYTHONDONTWRITEBYTECODE="1",
                       PYTHONHASHSEED="0", PYTHONIOENCODING="utf-8")
        env.update(self.spec.env)
        return env

    def _bwrap(self, inner: list[str]) -> list[str]:
        assert self.mech.bwrap is not None
        a = [self.mech.bwrap, "--unshare-all", "--die-with-parent", "--new-session",
             "--cap-drop", "ALL", "--ro-bind", "/usr", "/usr"]
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.islink(top):
                a += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                a += ["--ro-bind", top, top]
        for e in _SYSTEM_ETC:
            a += ["--ro-bind-try", e, e]
        a += ["--proc", "/proc", "--dev", "/dev",
              "--size", str(self.limits.memory_mb << 20), "--tmpfs", _WORK]
        binds: list[str] = []
        if self.spec.kind == "python":
            exe, pkg, site = _python_paths()
            binds += [sys.base_prefix, os.path.join(pkg, "arena"), site]
            if not exe.startswith(sys.base_prefix):
                binds.append(exe)
        else:
            prog = os.path.realpath(self.spec.command[0])
            if not prog.startswith(("/usr/", "/bin/", "/lib")):
                d = os.path.dirname(prog)
                binds.append(os.path.dirname(d) if os.path.basename(d) == "bin" else d)
        binds += [str(f) for f in self.spec.files()]
        for b in dict.fromkeys(binds):
            a += ["--ro-bind", b, b]
        a += ["--remount-ro", "/", "--chdir", _WORK, "--"]
        return a + inner

    def command(self) -> tuple[list[str], dict[str, str], str]:
        """(argv, environment, host working directory) to spawn."""
        inner = self.argv()
        self._make_cgroups()
        if self.mech.bwrap:
            return self._bwrap(inner), self.env(_WORK), "/"
        self.workdir = tempfile.mkdtemp(prefix=f"{self.tag}-")
        os.chmod(self.workdir, 0o700)
        if self.mech.unshare:
            inner = [*self.mech.unshare, *inner]
        return inner, self.env(self.workdir), self.workdir

    def _make_cgroups(self) -> None:
        if self.limits.mode == "off":
            return
        lim = self.limits
        for controller, parent in self.mech.cgroups:
            path = os.path.join(parent, self.tag)
            try:
                os.mkdir(path)
            except OSError as exc:  # exists (never ours to share) or not allowed
                if self.limits.mode == "strict":
                    raise SandboxError(f"cannot create cgroup {path}: {exc}") from None
                continue
            self.cgroups[controller] = path
            try:
                if controller == "pids":
                    _write(path, "pids.max", str(lim.processes))
                elif controller == "memory":
                    _write(path, "memory.limit_in_bytes", str(lim.memory_mb << 20))
                    if os.path.exists(os.path.join(path, "memory.memsw.limit_in_bytes")):
                        _write(path, "memory.memsw.limit_in_bytes", str(lim.memory_mb << 20))
            except OSError as exc:
                raise SandboxError(f"cannot set the {controller} limit in {path}: {exc}") from None

    def preexec(self) -> Callable[[], None]:
        """What the child runs between fork and exec: join the cgroups, set rlimits.

        Joining before exec means not a single instruction of the bot runs
        outside its limits (bwrap and everything it starts inherit them).
        """
        procs = [os.path.join(p, "cgroup.procs") for p in self.cgroups.values()]
        lim = self.limits
        off = lim.mode == "off"
        no_memcg = "memory" not in self.cgroups
        # RLIMIT_NPROC counts every task of the uid, not the bot's: root is
        # exempt (useless), and for another user a bare limit of 16 would stop
        # the bot from starting at all. Only without a pids cgroup and not as
        # root: the user's current tasks plus the bot's allowance.
        nproc = (_user_tasks(os.geteuid()) + lim.processes
                 if "pids" not in self.cgroups and os.geteuid() != 0 and not off else None)
        no_ns = self.mech.bwrap is None
        parent = os.getpid()
        libc = _libc

        def run() -> None:
            if libc is not None:
                libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
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
            if nproc is not None:
                resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
            if no_memcg:
                mem = lim.memory_mb << 20
                resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
            if no_ns:  # a working folder on disk: cap any one file's size
                size = lim.memory_mb << 20
                resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

        return run

    def started(self, pid: int) -> None:
        self._pid = pid
        acct = self.cgroups.get("cpuacct")
        if acct:
            self._cpu_fd = os.open(os.path.join(acct, "cpuacct.usage"), os.O_RDONLY)

    # -- while running ------------------------------------------------------

    def cpu_ns(self, refresh: bool = False) -> int:
        """CPU time used so far by the bot and every process it started, in ns.

        With a cpuacct cgroup this is exact and one read. Without, it sums
        /proc/<pid>/stat over the process tree (clock-tick resolution); the
        tree is walked again only when ``refresh`` is set (the slow path,
        while waiting), and otherwise read through stat files kept open, so
        the per-decision cost stays a few microseconds.
        """
        if self._cpu_fd is not None:
            return int(os.pread(self._cpu_fd, 32, 0))
        if self._pid is None:
            return 0
        if refresh or self._stat_fds is None:
            self._walk_tree()
        total = 0
        for fd in self._stat_fds or ():
            try:
                fields = os.pread(fd, 1024, 0).rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue  # gone: its time went to its parent's cstime/cutime
            # utime, stime, cutime, cstime (fields 14-17 of proc(5)).
            total += (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) * _TICK_NS
        return total

    def _walk_tree(self) -> None:
        self._close_stats()
        fds = []
        for pid in _proc_tree(self._pid) if self._pid else ():
            try:
                fds.append(os.open(f"/proc/{pid}/stat", os.O_RDONLY))
            except OSError:
                continue
        self._stat_fds = fds

    def _close_stats(self) -> None:
        for fd in self._stat_fds or ():
            os.close(fd)
        self._stat_fds = None

    def oom_killed(self) -> bool:
        """Whether the memory limit was hit (the kernel killed a process for it)."""
        mem = self.cgroups.get("memory")
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
        p = self.cgroups.get("pids")
        if not p:
            return False
        try:
            with open(os.path.join(p, "pids.events")) as f:
                return any(line.startswith("max ") and int(line.split()[1]) > 0 for line in f)
        except (OSError, ValueError):
            return False

    # -- tear down -------------------------------------------------------------

    def kill_all(self) -> None:
        """SIGKILL every process in the bot's cgroups (escaped sessions and
        process groups included), until none is left. Without cgroups: the
        process tree as /proc shows it now (a process that escaped it, by a
        double fork, is missed: docs/sandbox.md)."""
        if not self.cgroups:
            tree = _proc_tree(self._pid) if self._pid else []
            for pid in tree:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for _ in range(200):  # they die asynchronously; wait until they have
                if all(_gone(pid) for pid in tree):
                    return
                time.sleep(0.005)
            return
        for _ in range(200):
            pids: set[int] = set()
            for path in self.cgroups.values():
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

    def cleanup(self) -> None:
        """Kill what is left, remove the cgroups and the working folder. Idempotent."""
        self.kill_all()
        if self._cpu_fd is not None:
            os.close(self._cpu_fd)
            self._cpu_fd = None
        self._close_stats()
        for controller, path in list(self.cgroups.items()):
            for _ in range(100):  # a killed process leaves its cgroup a moment later
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
            del self.cgroups[controller]
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None


def _write(folder: str, name: str, value: str) -> None:
    with open(os.path.join(folder, name), "w") as f:
        f.write(value)


_TICK_NS = 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def _user_tasks(uid: int) -> int:
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


def _gone(pid: int) -> bool:
    """Dead: no /proc entry, or a zombie waiting for its parent."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return True


def _proc_tree(pid: int) -> list[int]:
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
