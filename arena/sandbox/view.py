"""The bot's file view, served from memory (docs/sandbox.md, "The file view").

Every sandbox used to read the host's own files (``/usr``, the Python
installation, site-packages, the bot's files) through bind mounts, so the
kernel's page cache and dentry cache were the machine's: a bot left a mark by
reading a rarely read page, or by looking up a missing name (the kernel keeps
the "not found"), and another process of the same bot timed the same read or
lookup to learn what the first had seen (whole hands were decoded so).

Here the files a bot can read are copies on a tmpfs, made once and shared
read-only by every sandbox of the machine:

- on tmpfs every page *is* the file (with no swap, it is never cold), so a
  read costs the same whoever read it before;
- tmpfs keeps every positive dentry (they are the file system), and does not
  keep negative ones (``simple_lookup`` sets ``always_delete_dentry``): a
  lookup of a name, present or missing, costs the same whoever looked it up
  before. Measured on a shared tmpfs bound into two sandboxes, see
  ``benchmarks/view_timing.py``.

Two kinds of view, both content-keyed under :func:`base` and reused by every
run on the machine until their sources change:

- :func:`python_view`: what the Python bot host needs and nothing else: the
  interpreter and its shared libraries (the ELF closure found by ``ldd`` over
  every extension module copied), the standard library without what no bot
  needs (:data:`STDLIB_SKIP`), the third-party packages the host and the
  built-in bots import (:data:`HOST_PACKAGES`), a few ``/etc`` files (about
  150 MB, paid once per machine), and the ``arena`` package in a view of its
  own (1 MB, made again whenever the package changes).
- :func:`bot_view`: the bot's own files (:func:`arena.botfile.spec.bot_tree`,
  links kept as links), keyed by the bot's sha256: one copy per bot version.

A view is only used where its copies can be run (a tmpfs that is not
``noexec``); elsewhere :func:`unavailable` says why and the host files are
bound as before (docs/sandbox.md lists what is then left open).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator

from arena.botfile.spec import BotSpec, bot_tree
from arena.errors import SandboxError

__all__ = ["HOST_PACKAGES", "STDLIB_SKIP", "VIEW_ETC", "View", "base", "bot_view", "python_view", "unavailable"]

log = logging.getLogger("arena.sandbox")

TMPFS_MAGIC = 0x01021994
# Bump when what a view holds, or how it is laid out, changes: old views are then not reused.
FORMAT = "2"

# What the Python bot host and the built-in bots import from site-packages
# (found by tracing the host loading every bot in bots/, compiled and pure):
# numpy (and its bundled libraries, numpy.libs), orjson, and mypy_extensions
# (the compiled modules' decorators). A Python bot that imports anything
# else is told so by the host (arena/protocol/viewhint.py): such a bot needs a
# manifest with its own venv (docs/bots.md).
HOST_PACKAGES = ("numpy", "orjson", "mypy_extensions")

# Parts of the standard library no bot needs (tests, GUIs, installers, the
# static library) and the installation's own site-packages (not on the host's path).
STDLIB_SKIP = frozenset(
    {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "site-packages", "dist-packages", "__phello__"}
)

# Extension modules of the same parts (and the interpreter's own test
# modules): _tkinter alone would bring in X11 and Tcl/Tk.
_DYNLOAD_SKIP = ("_tkinter", "_test", "_xxtest", "_ctypes_test", "xxlimited")

# /etc files the dynamic linker, glibc and Python read (the system's
# certificates are left out: a bot has no network to use them on).
VIEW_ETC = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/ssl/openssl.cnf",
)

# System files read at start-up besides the ELF closure (glibc's C.UTF-8
# locale and its tables; libgcc_s, which glibc loads when a thread exits).
_SYSTEM_EXTRA = (
    "/usr/lib/locale/C.utf8",
    "/usr/lib/locale/C.UTF-8",
    "/usr/share/locale/locale.alias",
    "/usr/lib/ssl/openssl.cnf",
)
_LIB_EXTRA = ("libgcc_s.so.1", "gconv/gconv-modules.cache")

_lock = threading.Lock()  # bots started from threads build a view once


class View:
    """A view on the tmpfs: each of ``roots`` holds copied host paths at their
    own absolute paths below it (``root + "/usr/lib/..."``), the first that has
    a path serving it; a bot's view holds its files relative to its
    ``folder`` (the same bot is the same copy wherever it lies). The Python
    view's ``package`` (the arena package) is served by its last root, its
    own view: an installed package's folder is also in the first, as the
    mount point it is bound on."""

    def __init__(self, *roots: str, folder: str = "", package: str = "") -> None:
        self.roots = roots
        self.folder = folder
        self.package = package

    @property
    def root(self) -> str:
        return self.roots[0]

    def touch(self) -> bool:
        """Mark every folder of the view as used now (so that :func:`collect`
        leaves it); ``False`` when one is gone (collected while this process
        kept it: make it again)."""
        try:
            for root in self.roots:
                os.utime(os.path.join(root, ".complete"))
        except FileNotFoundError:
            return False
        return True

    def source(self, host_path: str) -> str | None:
        """Where the file ``host_path`` leads to is in the view, or ``None``
        when the view lacks it (links are followed: bwrap binds what a link
        leads to, and the view holds every hop and the file at its end)."""
        real = os.path.realpath(host_path)
        if self.folder:
            if os.path.dirname(host_path) != self.folder:
                return None
            real = "/" + os.path.basename(host_path)  # a bot's own entry: at the top of its folder
        roots = self.roots
        if self.package and (real == self.package or real.startswith(self.package + "/")):
            roots = roots[::-1]
        for root in roots:
            if os.path.lexists(root + real):
                return root + real
        return None


def _statfs_tmpfs(path: str) -> str | None:
    """Why ``path`` cannot hold a view (not a tmpfs, noexec), or ``None``."""
    import ctypes

    class _Statfs(ctypes.Structure):  # struct statfs on 64-bit Linux
        _fields_ = [
            ("f_type", ctypes.c_long),
            ("f_bsize", ctypes.c_long),
            ("f_blocks", ctypes.c_ulong),
            ("f_bfree", ctypes.c_ulong),
            ("f_bavail", ctypes.c_ulong),
            ("f_files", ctypes.c_ulong),
            ("f_ffree", ctypes.c_ulong),
            ("f_fsid", ctypes.c_int * 2),
            ("f_namelen", ctypes.c_long),
            ("f_frsize", ctypes.c_long),
            ("f_flags", ctypes.c_long),
            ("f_spare", ctypes.c_long * 4),
        ]

    libc = ctypes.CDLL(None, use_errno=True)
    buf = _Statfs()
    if libc.statfs(os.fsencode(path), ctypes.byref(buf)) != 0:
        return f"{path} cannot be examined ({os.strerror(ctypes.get_errno())})"
    if buf.f_type & 0xFFFFFFFF != TMPFS_MAGIC:
        return f"{path} is not a tmpfs"
    if os.statvfs(path).f_flag & os.ST_NOEXEC:
        return f"{path} is mounted noexec (the interpreter copied there could not run)"
    return None


def _parent() -> str:
    return os.environ.get("ARENA_VIEW_ROOT") or "/dev/shm"


@functools.cache
def unavailable() -> str | None:
    """Why no view can be made on this machine (then bots read the host's
    files, through its shared caches), or ``None``. ``ARENA_VIEW_ROOT`` names
    the tmpfs to use instead of ``/dev/shm``."""
    parent = _parent()
    if not os.path.isdir(parent):
        return f"{parent} does not exist"
    why = _statfs_tmpfs(parent)
    if why is None:
        try:
            with open("/proc/swaps", encoding="ascii") as f:
                if len(f.read().splitlines()) > 1:  # tmpfs pages can be swapped out, and then read cold
                    log.warning(
                        "swap is on: the bots' file view can be paged out, and a bot can time "
                        "its reads again (docs/sandbox.md, 'The file view')"
                    )
        except OSError:
            pass
    return why


def base() -> str:
    """The folder of this user's views on the tmpfs, made private to the user.
    One that exists but is not the user's own private folder (made by someone
    else to plant files in bots' views) is refused."""
    path = os.path.join(_parent(), f"arena-view-{os.geteuid()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise SandboxError(
            f"{path} must be a folder owned by uid {os.geteuid()} and writable by it alone "
            f"(it holds the files every bot sees); remove it and run again"
        )
    return path


# -- building -------------------------------------------------------------------


def _hops(path: str) -> Iterator[str]:
    """``path`` (its folder resolved) and every link met following it to its file."""
    p = path
    for _ in range(40):
        p = os.path.join(os.path.realpath(os.path.dirname(p)), os.path.basename(p))
        yield p
        if not os.path.islink(p):
            return
        p = os.path.join(os.path.dirname(p), os.readlink(p))


def _walk(top: str, skip: Iterable[str] = ()) -> Iterator[str]:
    """Every entry under ``top`` (links not followed); ``skip`` names (and, with
    them, the static library's ``config-*``) left out at the top."""
    skipped = set(skip)
    for dirpath, dirnames, filenames in os.walk(top):
        if dirpath == top:
            dirnames[:] = [d for d in dirnames if d not in skipped and not (skipped and d.startswith("config-"))]
        for name in (*dirnames, *filenames):
            if name.endswith((".opt-1.pyc", ".opt-2.pyc")):  # the host never runs with -O
                continue
            if skipped and os.path.basename(dirpath) == "lib-dynload" and name.startswith(_DYNLOAD_SKIP):
                continue
            yield os.path.join(dirpath, name)


def _is_stdlib(path: str) -> bool:
    return os.path.basename(path).startswith("python") and os.path.isfile(os.path.join(path, "os.py"))


def _package_files(site: str) -> Iterator[str]:
    """:data:`HOST_PACKAGES` in the site-packages folder ``site``."""
    for name in sorted(os.listdir(site)):
        stem = name.split(".", 1)[0] if name.endswith((".py", ".libs")) else name
        if stem in HOST_PACKAGES and (name == stem or name in (stem + ".py", stem + ".libs")):
            yield os.path.join(site, name)
            if os.path.isdir(os.path.join(site, name)):
                yield from _walk(os.path.join(site, name))


def _python_sources(runtime: Iterable[str], sites: Iterable[str], programs: Iterable[str]) -> list[str]:
    """The host paths of the Python view before the ELF closure: the
    installation's parts, the host's packages and the sandbox's own
    ``programs`` (the quota launcher, run before the bot, and the shell)."""
    out: list[str] = []
    for p in programs:
        out.extend(_hops(p))
    for p in runtime:
        if os.path.isdir(p):
            p = os.path.realpath(p)
            out.append(p)
            out.extend(_walk(p, STDLIB_SKIP if _is_stdlib(p) else ()))
        elif os.path.lexists(p):
            out.extend(_hops(p))
    for site in dict.fromkeys(sites):
        if os.path.isdir(site):
            out.append(site)
            out.extend(_package_files(site))
    for e in VIEW_ETC:
        if os.path.lexists(e):
            out.extend(_hops(e))
            if os.path.isdir(e):
                out.extend(_walk(e))
    return out


def _key(paths: Iterable[str], extra: str = "") -> str:
    """A digest of every path's kind, size, mode and change time (byte-code
    caches aside): a view is rebuilt when anything it copies has changed, and
    reused otherwise."""
    h = hashlib.sha256(f"{FORMAT}\0{extra}\0".encode())
    for p in paths:
        # Not the byte-code caches: any Python process of the user writes a new
        # .pyc there when it first imports a module, and the view would be made
        # again each time; a .pyc is checked against its source, which counts.
        if "/__pycache__/" in p:
            continue
        try:
            st = os.lstat(p)
        except OSError:
            continue
        h.update(f"{p}\0{st.st_mode}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\n".encode())
    return h.hexdigest()


def _is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def _elf_closure(files: Iterable[str]) -> list[str]:
    """The shared libraries (and the dynamic linker) that ``files`` load, as
    ``ldd`` resolves them on the host. Only the operator's own files are
    given to ``ldd`` (the interpreter, its extension modules, the host's
    packages): never a bot's."""
    elves = [
        p
        for p in files
        if os.path.isfile(p)
        and not os.path.islink(p)
        and (p.endswith(".so") or ".so." in os.path.basename(p) or os.access(p, os.X_OK))
        and _is_elf(p)
    ]
    found: list[str] = []
    for i in range(0, len(elves), 100):
        res = subprocess.run(
            ["ldd", *elves[i : i + 100]],
            capture_output=True,
            text=True,
            check=False,
            env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
        )
        for line in res.stdout.splitlines():
            line = line.strip()
            target = line.split("=>", 1)[1].strip() if "=>" in line else line
            target = target.split(" (", 1)[0].strip()
            if target.startswith("/") and os.path.exists(target):
                found.append(target)
    dirs = {os.path.dirname(p) for p in found if os.path.basename(p).startswith("libc.so")}
    for d in sorted(dirs):
        for extra in _LIB_EXTRA:
            if os.path.lexists(os.path.join(d, extra)):
                found.append(os.path.join(d, extra))
    for extra in _SYSTEM_EXTRA:
        if os.path.lexists(extra):
            found.append(extra)
    out: list[str] = []
    for p in dict.fromkeys(found):
        for hop in _hops(p):
            out.append(hop)
            if os.path.isdir(hop) and not os.path.islink(hop):
                out.extend(_walk(hop))
    return out


def _copy(paths: Iterable[str], dest: str) -> int:
    """Copy each host path (already resolved up to its last name) to
    ``dest + path``: folders as folders, links as links, files with their
    mode (made read-only). Returns the bytes copied."""
    total = 0
    for p in dict.fromkeys(paths):
        st = os.lstat(p)
        target = dest + p
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        if os.path.lexists(target):
            continue
        if stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(p), target)
        elif stat.S_ISDIR(st.st_mode):
            os.mkdir(target, 0o755)
        elif stat.S_ISREG(st.st_mode):
            try:
                shutil.copyfile(p, target, follow_symlinks=False)
            except PermissionError:
                # Unreadable to the referee, so to its bots too (the same user, or root): left out,
                # as a bind would have shown it unreadable.
                continue
            os.chmod(target, (st.st_mode & 0o555) | 0o444)
            # Python checks a cached .pyc against its source's mtime: a new
            # mtime would make every start compile the whole import again.
            os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
            total += st.st_size
    return total


def _sweep(folder: str, key: str) -> None:
    """Remove what a referee killed while it made the view ``key`` left behind
    (``key.tmp-<pid>-<thread>`` of a process that is gone)."""
    for name in os.listdir(folder):
        if not name.startswith(key + ".tmp-"):
            continue
        pid = name[len(key) + 5 :].split("-", 1)[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            shutil.rmtree(os.path.join(folder, name), ignore_errors=True)


def _publish(key: str, build: Callable[[str], None]) -> str:
    """The view folder ``key`` under :func:`base`, built by ``build(tmp)`` if
    it is not there yet. Workers that race build in folders of their own and
    the first rename wins: a view is never seen half made."""
    final = os.path.join(base(), key)
    if os.path.isfile(os.path.join(final, ".complete")):
        return final
    _sweep(os.path.dirname(final), key)
    tmp = f"{final}.tmp-{os.getpid()}-{threading.get_ident()}"
    shutil.rmtree(tmp, ignore_errors=True)
    os.mkdir(tmp, 0o755)
    try:
        build(tmp)
        with open(os.path.join(tmp, ".complete"), "w", encoding="ascii") as f:
            f.write(key + "\n")
        os.rename(tmp, final)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if os.path.isfile(os.path.join(final, ".complete")):
            return final  # another worker made it first
        raise SandboxError(f"could not make the bots' file view in {final}: {exc}") from None
    collect(os.path.dirname(final))
    return final


# A view unused this long, and bound in no sandbox, is removed when another is
# made (a referee touches its views at every bot it starts: View.touch).
IDLE_S = 600


def _mounted() -> str:
    """Every mount of every process this user may read (mountinfo names the
    folder of a tmpfs a bind comes from)."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/mountinfo", encoding="utf-8", errors="replace") as f:
                    out.append(f.read())
            except OSError:
                continue
    return "".join(out)


def collect(folder: str) -> list[str]:
    """Remove the views in ``folder`` that no sandbox binds and no referee used
    for :data:`IDLE_S` seconds (older versions of the system view, bots'
    files of past versions and past test runs): their memory is the
    machine's. Returns the names removed."""
    now = time.time()
    idle = []
    for name in os.listdir(folder):
        done = os.path.join(folder, name, ".complete")
        try:
            if now - os.stat(done).st_mtime > IDLE_S:
                idle.append(name)
        except OSError:
            continue  # being made (a .tmp- folder), or not a view
    if not idle:
        return []
    mounted = _mounted()
    top = os.path.basename(folder)
    gone = [name for name in idle if f"/{top}/{name}/" not in mounted and f"/{top}/{name} " not in mounted]
    for name in gone:
        shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
    return gone


@functools.lru_cache(maxsize=4)
def python_view(runtime: tuple[str, ...], package: str, sites: tuple[str, ...], programs: tuple[str, ...] = ()) -> View:
    """The view of the Python bot host: ``runtime`` (the interpreter's parts,
    :func:`arena.botfile.runtime.host_python`), :data:`HOST_PACKAGES` from
    ``sites`` and the sandbox's ``programs``, with the shared libraries all of
    them (and the package's compiled modules) load; and, in a view of its own,
    the ``package`` folder (the ``arena`` package: 1 MB that changes with every
    edit or pull, while the 150 MB of the rest do not)."""
    with _lock:
        sources = _python_sources(runtime, sites, programs)
        arena = [package, *_walk(package)]
        ldcache = "/etc/ld.so.cache"  # changes whenever a system library is installed
        # An installed package (pip install .) lies in a site-packages folder,
        # which is bound read-only from this view before the package's own
        # view is bound into it: its folder must be there as a mount point.
        mount = [package] if any(os.path.commonpath([package, site]) == site for site in sites) else []
        key = "py-" + _key(sources, extra=_key([ldcache]) + "".join(mount))[:24]

        def build(tmp: str) -> None:
            for m in mount:
                os.makedirs(tmp + m, mode=0o755, exist_ok=True)
            size = _copy(sources, tmp) + _copy(_elf_closure(sources + arena), tmp)
            log.info("made the Python bots' file view: %d MB in %s", size >> 20, tmp)

        def build_package(tmp: str) -> None:
            _copy(arena, tmp)

        system = _publish(key, build)
        return View(system, _publish("arena-" + _key(arena)[:24], build_package), package=package)


def bot_view(spec: BotSpec) -> View | None:
    """The bot's own files in memory, keyed by its content (``spec.sha256``);
    ``None`` for a spec without a hash (made by hand, not loaded)."""
    if not spec.sha256:
        return None
    key = f"bot{FORMAT}-{spec.sha256[:32]}-{spec.name}"
    cached = _bot_views.get((key, str(spec.folder)))
    if cached is not None:
        return cached
    with _lock:
        folder = str(spec.folder)

        def build(tmp: str) -> None:
            for e in bot_tree(spec):
                src = os.path.join(folder, e.rel)
                target = os.path.join(tmp, e.rel)
                os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
                if e.kind == "link":
                    os.symlink(e.link, target)
                elif e.kind == "dir":
                    os.makedirs(target, mode=0o755, exist_ok=True)
                else:
                    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW)
                    with os.fdopen(fd, "rb") as fi, open(target, "wb") as fo:
                        shutil.copyfileobj(fi, fo, 1 << 20)
                        st = os.fstat(fi.fileno())
                    os.chmod(target, 0o555 if e.executable else 0o444)
                    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # as in _copy: .pyc checks

        view = _bot_views[key, folder] = View(_publish(key, build), folder=folder)
        return view


_bot_views: dict[tuple[str, str], View] = {}


def forget_bot_views() -> None:
    """Forget the bots' views this process found (one was collected meanwhile)."""
    _bot_views.clear()


def size(view: View) -> int:
    """Bytes of file content in ``view`` (what it costs in memory)."""
    total = 0
    for root in view.roots:
        for dirpath, _, filenames in os.walk(root):
            for name in filenames:
                st = os.lstat(os.path.join(dirpath, name))
                if stat.S_ISREG(st.st_mode):
                    total += st.st_size
    return total
