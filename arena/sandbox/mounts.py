"""What a bot sees of the file system inside bubblewrap: the bwrap arguments.

The system part (:func:`system_args`) is the same for every bot; the bot's
part (:func:`view_args`) is exactly its runtime (:mod:`arena.botfile.runtime`, resolved
when the bot was loaded) and its own files (:func:`arena.botfile.spec.bot_tree`'s
top level), each bound read-only at its real path. Nothing is bound because a
command mentions it.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import sysconfig
import tempfile
from pathlib import Path

import arena
from arena.botfile.runtime import host_python
from arena.botfile.spec import BotSpec
from arena.errors import SandboxError
from arena.sandbox import programview, quotas
from arena.sandbox import view as fileview
from arena.sandbox.limits import SandboxLimits

__all__ = [
    "PROC_FROZEN",
    "PROC_MASKED",
    "WORK",
    "bwrap_args",
    "python_paths",
    "python_view",
    "python_view_args",
    "system_args",
    "tmpfs_sizes",
    "view_args",
    "views",
]

SYSTEM_ETC = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/ssl",
    "/etc/ca-certificates",
)
WORK = "/tmp"  # the bot's private working folder inside bwrap


@functools.cache  # the same for the process's life; asked three times per bot launched
def python_paths() -> tuple[str, str, str]:
    """(interpreter, the folder holding the arena package, site-packages)."""
    exe, _ = host_python()
    pkg_parent = str(Path(arena.__file__).resolve().parent.parent)
    return exe, pkg_parent, sysconfig.get_paths()["purelib"]


def bwrap_args(
    bwrap: str, spec: BotSpec, limits: SandboxLimits, inner: list[str], *, new_session: bool = True
) -> list[str]:
    """The whole bwrap command line that runs ``inner`` for ``spec``: the
    system part, then the bot's own view, then the finishing touches. Where a
    tmpfs can hold them (:func:`arena.sandbox.view.unavailable`), what a
    Python bot reads comes from the memory view and every bot's own files
    from their copy there (docs/sandbox.md, "The file view")."""
    system, own = views(spec)
    return [
        bwrap,
        *system_args(limits, new_session=new_session, view=system),
        *view_args(spec, system, own),
        "--remount-ro",
        "/",
        "--chdir",
        WORK,
        "--",
        *inner,
    ]


def python_view_args() -> tuple[tuple[str, ...], str, tuple[str, ...], tuple[str, ...]]:
    """What :func:`arena.sandbox.view.python_view` is given for this referee:
    the interpreter's parts, the arena package, site-packages, the launcher."""
    exe, runtime = host_python()
    _, pkg, _ = python_paths()
    paths = sysconfig.get_paths()
    sites = tuple(dict.fromkeys(os.path.realpath(paths[k]) for k in ("purelib", "platlib")))
    # host_python() leaves out what lies in the system folders (bound whole
    # without a view): an interpreter of the system (Debian's /usr/bin/python3)
    # needs its standard library copied too; libpython comes with ldd's closure.
    # (Only "stdlib": in a venv, "platstdlib" is the venv's own lib/pythonX.Y,
    # which holds all of its site-packages.)
    stdlib = os.path.realpath(paths["stdlib"])
    parts = (*runtime, exe, *([stdlib] if os.path.isfile(os.path.join(stdlib, "os.py")) else []))
    return tuple(dict.fromkeys(parts)), os.path.realpath(os.path.join(pkg, "arena")), sites, sandbox_programs()


def python_view() -> fileview.View:
    """The Python bot host's view (built once per machine, then reused)."""
    return fileview.python_view(*python_view_args())


def sandbox_programs() -> tuple[str, ...]:
    """What the sandbox itself runs before the bot: the quota launcher, and a
    POSIX shell (subprocess.run(..., shell=True), os.system and /bin/sh -c
    are the standard library's own way to run a command, an honest bot's)."""
    return tuple(p for p in (quotas.PRLIMIT, "/bin/sh") if p and os.path.lexists(p))


def system_view(spec: BotSpec) -> fileview.View:
    """The view of the system and runtime for ``spec``: the Python bot host's,
    or a program bot's runtime closure (:mod:`arena.sandbox.programview`)."""
    if spec.kind == "python":
        return python_view()
    return programview.program_view(spec, sandbox_programs())


def views(spec: BotSpec) -> tuple[fileview.View | None, fileview.View | None]:
    """(the system view, the bot's own files' view) for ``spec``: ``None``
    where the host's files are bound instead (no tmpfs can hold a view)."""
    if fileview.unavailable() is not None:
        return None, None
    for _ in range(2):
        system = system_view(spec) if spec.command or spec.kind == "python" else None
        own = fileview.bot_view(spec)
        # Touched at every start, so that no other referee collects a view in
        # use; one collected while this process kept it is made again.
        if all(v is None or v.touch() for v in (system, own)):
            break
        fileview.python_view.cache_clear()
        fileview.forget_bot_views()
        programview.forget()
    return system, own


# /proc files that show the whole machine's kernel state and that no runtime
# needs: each is covered by /dev/null, unreadable there (bwrap binds it without
# device access, as /proc is mounted nodev). keys/key-users: the keyring of
# every user (the filter denies making keys; this hides the host's own);
# timer_list: every pending timer with its expiry (as root, a bot sleeping
# for a chosen time signals another bot reading it); kallsyms, vmallocinfo:
# kernel addresses (kptr_restrict permitting); slabinfo: kernel object
# counts, which a bot moves by creating objects; locks: every lock on the
# machine; sched_debug: every task. Files this kernel lacks are skipped.
PROC_MASKED = ("keys", "key-users", "timer_list", "kallsyms", "vmallocinfo", "slabinfo", "locks", "sched_debug")

# /proc files that runtimes do read but whose live counters are a channel
# between sandboxes: a bot that forks N times during its turn moves the
# machine-wide fork count in stat ("processes") by N, and its partner reads
# it at its own turn; the same goes for the running and total task counts in
# loadavg, free memory in meminfo, vmstat, zoneinfo and buddyinfo, and the
# pressure files. Each is shown as a snapshot taken once per referee process:
# glibc still counts the CPUs from stat's cpu lines, the JVM and Node still
# read the memory size from meminfo, and nothing a bot does moves them.
PROC_FROZEN = (
    "stat",
    "loadavg",
    "meminfo",
    "vmstat",
    "zoneinfo",
    "buddyinfo",
    "pagetypeinfo",
    "interrupts",
    "softirqs",
    "schedstat",
    "diskstats",
    "pressure/cpu",
    "pressure/memory",
    "pressure/io",
)


_SNAPSHOT_PREFIX = "arena-proc-"


def _sweep_snapshots() -> None:
    """Remove the snapshot folders of processes that are gone. The exit hook
    does not run in a process that ends by ``os._exit`` (a pool's worker
    does) or by a signal, and each would leave its folder in /tmp."""
    top = tempfile.gettempdir()
    try:
        names = os.listdir(top)
    except OSError:
        return
    for name in names:
        pid = name[len(_SNAPSHOT_PREFIX) :].split("-", 1)[0]
        if not name.startswith(_SNAPSHOT_PREFIX) or not pid.isdigit():
            continue
        path = os.path.join(top, name)
        try:
            if os.lstat(path).st_uid != os.getuid() or os.path.exists(f"/proc/{pid}"):
                continue  # another user's, or its maker (or a process with its number) lives
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)


@functools.lru_cache(maxsize=1)
def _proc_snapshots() -> tuple[tuple[str, str], ...]:
    """(snapshot file, /proc path) for each of :data:`PROC_FROZEN` this kernel has,
    written once into a private folder that is removed when this process exits."""
    owner = os.getpid()
    _sweep_snapshots()
    folder = tempfile.mkdtemp(prefix=f"{_SNAPSHOT_PREFIX}{owner}-")

    def remove() -> None:  # forked workers inherit the hook: only the maker removes the folder
        if os.getpid() == owner:
            shutil.rmtree(folder, ignore_errors=True)

    atexit.register(remove)
    out = []
    for name in PROC_FROZEN:
        try:
            with open(f"/proc/{name}", "rb") as f:
                data = f.read()
        except OSError:
            continue  # this kernel has no such file, or it is not readable here
        path = os.path.join(folder, name.replace("/", "-"))
        with open(path, "wb") as out_file:
            out_file.write(data)
        os.chmod(path, 0o444)
        out.append((path, f"/proc/{name}"))
    return tuple(out)


def tmpfs_sizes(limits: SandboxLimits) -> dict[str, int]:
    """Bytes for each writable tmpfs: ``/tmp`` (the working folder) and
    ``/dev/shm`` share ``memory_mb`` (3/4 and 1/4), so that where no memory
    cgroup counts tmpfs pages (non-root), files still cannot hold more than
    the memory limit. Everything else a bot can see is read-only."""
    total = limits.memory_mb << 20
    shm = total // 4
    return {WORK: total - shm, "/dev/shm": shm}


def system_args(limits: SandboxLimits, *, new_session: bool = True, view: fileview.View | None = None) -> list[str]:
    """Namespaces, capabilities, the read-only system, /proc, /dev and the
    private /tmp; ``new_session=False`` (only with the system-call filter, see
    :meth:`arena.sandbox.box.Sandbox.command`) leaves out ``--new-session``.
    With ``view``, the system folders and ``/etc`` files are its copies (only
    what the Python host needs), not the host's."""
    a = ["--unshare-all", "--die-with-parent", *(["--new-session"] if new_session else []), "--cap-drop", "ALL"]
    for top in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            a += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            src = top if view is None else view.source(top)
            if src is not None:
                a += ["--ro-bind", src, top]
    if view is None:
        for e in SYSTEM_ETC:
            a += ["--ro-bind-try", e, e]
    else:
        # Every /etc entry the view holds: VIEW_ETC, and the links a program
        # is reached through (/usr/bin/java -> /etc/alternatives/java).
        etc = sorted({n for root in view.roots if os.path.isdir(root + "/etc") for n in os.listdir(root + "/etc")})
        for name in etc:
            src = view.source("/etc/" + name)
            if src is not None:
                a += ["--ro-bind", src, "/etc/" + name]
    a += ["--proc", "/proc"]
    for name in PROC_MASKED:
        if os.path.exists(f"/proc/{name}"):
            a += ["--ro-bind", "/dev/null", f"/proc/{name}"]
    for snapshot, target in _proc_snapshots():
        a += ["--ro-bind", snapshot, target]
    sizes = tmpfs_sizes(limits)
    # /dev: bwrap's own (null, zero, full, random, urandom, tty, the std*
    # links, pts), but its tmpfs has no size: it is made read-only, and
    # /dev/shm gets a sized tmpfs of its own (the remount is not recursive,
    # so /dev/shm and the device nodes stay writable).
    # /dev/tty opens the caller's controlling terminal: the user's, when the
    # bot shares the referee's session. It is /dev/null here, always.
    a += [
        "--dev",
        "/dev",
        "--ro-bind",
        "/dev/null",
        "/dev/tty",
        "--size",
        str(sizes["/dev/shm"]),
        "--tmpfs",
        "/dev/shm",
        "--remount-ro",
        "/dev",
    ]
    a += ["--size", str(sizes[WORK]), "--tmpfs", WORK]
    return a


def view_args(spec: BotSpec, system: fileview.View | None = None, own: fileview.View | None = None) -> list[str]:
    """The bot's runtime and its own files, read-only, each at its real path;
    parents before children, so no bind hides another. Comes after
    :func:`system_args`: a runtime under the host's /tmp lands on top of the
    private tmpfs there. ``system`` (Python bots) and ``own`` are the memory
    views the runtime and the bot's files are bound from, when given."""
    binds: list[str] = []
    if spec.kind == "python":
        _, runtime = host_python()
        _, pkg, _ = python_paths()
        paths = sysconfig.get_paths()
        binds += [*runtime, os.path.join(pkg, "arena"), paths["purelib"], paths["platlib"]]
    else:
        binds += spec.runtime
    for f in spec.files():
        # Checked again now: what was loaded as a real folder must not have become a link.
        if f.name == spec.name and os.path.islink(f):
            raise SandboxError(f"bot {spec.name}: {f} became a symlink after the bot was loaded")
        binds.append(str(f))
    mine = {str(f) for f in spec.files()}
    a: list[str] = []
    for b in sorted(dict.fromkeys(binds)):
        if b in SYSTEM_ETC or not os.path.lexists(b):
            continue
        view = own if b in mine else system
        src = b if view is None else view.source(b)
        if src is None:
            raise SandboxError(
                f"bot {spec.name}: {b} is missing from its file view {view.root if view else ''}; "
                f"remove that folder and run again"
            )
        a += ["--ro-bind", src, b]
    return a
