"""The system-call filter every bot process runs under (seccomp, classic BPF).

The namespaces already hide files, processes, the network and System V IPC.
What they do not separate is kernel state keyed by *inode* or by *user*:
byte-range and ``flock`` locks on the files every sandbox shares (``/usr``,
``/etc/passwd``), leases and dnotify/inotify/fanotify watches on them,
futexes on their pages, and the per-user kernel keyring. Two colluding
copies of a bot at one table read each other's dice through those
(tests/test_collusion.py tries them all). The filter denies the
calls that reach them, and the calls that are kernel attack surface a bot
never needs (namespaces, mounts, BPF, perf, io_uring, modules...). The
per-user quotas (queued signals, message queues) are split per sandbox
elsewhere (:mod:`~arena.sandbox.quotas`).

How it is loaded: :func:`program` builds the filter once per process with
libseccomp (``libseccomp.so.2``, a systemd dependency on every Debian and
Ubuntu), through the small ctypes binding below, and keeps the compiled
program. :func:`pipe_fd` hands it to ``bwrap --seccomp FD`` on a pipe for
each bot start; bwrap installs it (with ``no_new_privs``) as the very last
step before it runs the bot, so bwrap itself can still build the namespaces.

Every entry says why (:data:`DENY`; docs/sandbox.md has the same table):
denied calls fail with an error (``EPERM``, or ``ENOSYS`` where runtimes
fall back when the kernel lacks the call, as glibc does from ``clone3`` to
``clone``, or ``EAGAIN`` for shared futex waits, which every caller retries);
taking a file lock is the one call answered "done" without reaching the
kernel (failing it would stop the JVM). Nothing is killed, so a runtime that
probes a call degrades instead of dying. The rules apply to every system-call ABI the CPU offers
a process (x86_64 with i386 and x32; aarch64 with 32-bit arm): a 64-bit
process can enter the kernel through the i386 ABI (``int 0x80``), with its
own system-call numbers, and a filter that only knew x86_64 numbers would
let those through. Any other ABI is killed (libseccomp's default for an
architecture the filter does not name).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno as E
import functools
import os
import threading
from dataclasses import dataclass

from arena.errors import SandboxError

__all__ = ["DENY", "Deny", "program", "pipe_fd", "unavailable"]


@dataclass(frozen=True)
class Deny:
    """One denied system call, or one argument pattern of it.

    ``arg`` is the argument compared (0-5); the call is denied when
    ``(value_of_arg & mask) == value`` (``op="masked"``), when
    ``value_of_arg != value`` (``op="ne"``), or when ``value_of_arg >= value``
    (``op="ge"``). Several entries for one call are alternatives (any match
    denies)."""

    syscall: str
    errno: int
    reason: str
    arg: int | None = None
    op: str = "masked"
    mask: int = 0xFFFFFFFF
    value: int = 0


# fcntl commands that reach kernel state shared by every opener of an inode.
# The kernel reads the command as a 32-bit int: compare the low 32 bits only,
# or a bot would pass 0x1_00000006 and slip F_SETLK past a 64-bit equality.
_F_LOCKS = {
    "F_GETLK": 5,
    "F_SETLK": 6,
    "F_SETLKW": 7,
    "F_GETLK64": 12,
    "F_SETLK64": 13,
    "F_SETLKW64": 14,  # the 32-bit ABIs' fcntl64
    "F_OFD_GETLK": 36,
    "F_OFD_SETLK": 37,
    "F_OFD_SETLKW": 38,
}
_F_WATCH = {"F_SETLEASE": 1024, "F_GETLEASE": 1025, "F_NOTIFY": 1026}
_CLONE_NS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
# socket(2) families a bot may create: unix (its own socketpairs, runtimes'
# internal channels; abstract names are per network namespace), inet/inet6
# (runtimes probe them; the network namespace has no interface up) and
# netlink (glibc's getaddrinfo asks for interfaces; per network namespace).
# Everything else is denied: AF_VSOCK above all, which no namespace
# separates (it reaches the hypervisor host and, with a loopback transport,
# every other process on the machine), and raw families like packet, can,
# bluetooth, alg (kernel crypto attack surface), xdp, tipc, rds.
_SOCKET_DENIED = [3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15]  # ax25 ... key/pfkey; >= 17 below
_TIOCSTI, _TIOCLINUX = 0x5412, 0x541C
# futex operations that sleep on a futex word, without FUTEX_PRIVATE_FLAG
# (128): compared on the low 8 bits, the command and the private flag.
# FUTEX_CLOCK_REALTIME (256) and higher bits do not change the command.
_FUTEX_WAITS = {"FUTEX_WAIT": 0, "FUTEX_WAIT_BITSET": 9, "FUTEX_WAIT_REQUEUE_PI": 11}

# preadv2/pwritev2 flag: fail rather than wait for I/O (a page-cache probe).
_RWF_NOWAIT = 0x8
# madvise advice that moves a file mapping's pages in or out of the page
# cache: hints, answered "done" by the filter.
_MADV_CACHE = {"MADV_WILLNEED": 3, "MADV_COLD": 20, "MADV_PAGEOUT": 21}
# madvise advice that fills a mapping from the page cache (or merges pages
# with other processes'); refused as unknown advice. What runtimes use on
# their own anonymous memory stays: MADV_DONTNEED (4, on a file mapping it
# drops this process's mapping, not the cached pages), MADV_FREE (8),
# MADV_HUGEPAGE/NOHUGEPAGE (14/15), MADV_DONTFORK/DOFORK, MADV_DONTDUMP,
# MADV_REMOVE (9: only writable shared mappings, which in the sandbox are its
# private tmpfs), MADV_RANDOM/SEQUENTIAL/NORMAL (this mapping's read-ahead).
_MADV_FILL = {"MADV_POPULATE_READ": 22, "MADV_POPULATE_WRITE": 23, "MADV_COLLAPSE": 25, "MADV_MERGEABLE": 12}
_PR_SET_MEMORY_MERGE = 67
_GRANTED = 0  # errno 0: the call returns success without reaching the kernel
_LOCK = "a byte-range lock on a file every sandbox shares (/etc/passwd, the stdlib) is seen by all its openers"


def _deny_table() -> tuple[Deny, ...]:
    d: list[Deny] = []

    def add(names: str, errno: int, reason: str, **kw: int | str) -> None:
        for n in names.split():
            d.append(Deny(n, errno, reason, **kw))  # type: ignore[arg-type]

    # -- cross-sandbox channels ------------------------------------------------
    add(
        "add_key request_key keyctl",
        E.EPERM,
        "the kernel keyring is per user, not per sandbox: keys (and their descriptions in /proc/keys) "
        "cross sandboxes and outlive them; root's keyring is the whole machine's",
    )
    # Taking a lock *succeeds and locks nothing* (errno 0 from the filter: the
    # kernel never sees the call), so no lock exists for another sandbox to
    # see; asking whether a lock exists fails. Failing the taking too would
    # stop honest runtimes: the JVM (17.0.x and later) flock()s its
    # hsperfdata file at start and, when that fails, prints a warning on
    # stdout, which is the protocol channel; SQLite takes fcntl locks on its
    # database. Within one sandbox the cost is that a bot's own processes
    # cannot exclude each other with locks.
    add("flock", _GRANTED, "flock: " + _LOCK)
    for name, cmd in _F_LOCKS.items():
        add("fcntl fcntl64", E.EPERM if "GETLK" in name else _GRANTED, f"fcntl {name}: {_LOCK}", arg=1, value=cmd)
    for name, cmd in _F_WATCH.items():
        why = (
            "a directory-change notification (dnotify) on shared folders: another sandbox's file "
            "accesses become signals"
            if name == "F_NOTIFY"
            else "a lease on a shared file: another sandbox's open of it would signal the holder"
        )
        add("fcntl fcntl64", E.EPERM, f"fcntl {name}: {why}", arg=1, value=cmd)
    add(
        "fcntl fcntl64",
        E.EPERM,
        "fcntl F_SETPIPE_SZ: pipe buffers are counted per user, not per namespace; "
        "one sandbox growing its pipes past the user's soft limit (fs.pipe-user-pages-soft) shrinks every "
        "other sandbox's new pipes, a signal",
        arg=1,
        value=1031,
    )
    add(
        "inotify_init inotify_init1 inotify_add_watch",
        E.EPERM,
        "inotify on a shared file (the stdlib, /usr) reports when another sandbox opens or reads it",
    )
    add(
        "fanotify_init fanotify_mark",
        E.EPERM,
        "fanotify: the same as inotify, for whole mounts (unprivileged since Linux 5.13)",
    )
    # A futex that is not FUTEX_PRIVATE is keyed by the page it lives on; for a
    # page of a file that is (inode, offset), the same in every process that
    # maps the file. Every sandbox maps the same system files, so one bot
    # sleeping on a word of, say, the stdlib's os.py is woken by another
    # bot's FUTEX_WAKE on the same word, and the waker is told how many it
    # woke: a reliable two-way channel (measured: tests/test_collusion.py).
    # Nobody can sleep on a shared futex here: the waits return EAGAIN ("the
    # value changed, look again"), which glibc's callers all handle by
    # looking again. What still uses shared waits keeps working but spins
    # instead of sleeping: pthread_join while the thread is still running
    # (glibc waits on the thread's id word as a shared futex), and
    # process-shared semaphores and mutexes (Python's multiprocessing). Wakes
    # stay allowed: with no shared sleeper anywhere they reach no one.
    for name, cmd in _FUTEX_WAITS.items():
        add(
            "futex futex_time64",
            E.EAGAIN,
            f"{name} on a shared futex: futexes on a page of a file shared by every sandbox wake across sandboxes",
            arg=1,
            mask=0xFF,
            value=cmd,
        )
    add(
        "futex_waitv futex_wait",
        E.ENOSYS,
        "waits on several futexes (or futex2's) whose flags the filter "
        "cannot check (futex_waitv's are in memory), each possibly shared; callers fall back to futex",
    )
    # -- the page cache: residency of a shared file's pages ------------------------
    # Every sandbox reads the same files (/usr, the stdlib), so their pages in
    # the page cache are the machine's: a bot that marks pages in one process
    # (one page per die of the hands round_end revealed) and finds them in the
    # next (the second play of a paired deal, or a partner at its table) knows
    # the deal. These calls report residency exactly and silently, or move
    # pages in or out of the cache on purpose (tests/bots/cache_spy.py tries
    # each). The hints are answered "done" without reaching the kernel: the
    # kernel is free to ignore a hint, so honest callers cannot tell; the
    # reports fail as if the kernel lacked them. What stays open is timing a
    # plain read or a name lookup, which no filter can close (docs/sandbox.md).
    add(
        "preadv2 pwritev2",
        E.EOPNOTSUPP,
        "RWF_NOWAIT: the read returns data only when the pages are in the "
        "page cache, an exact and silent probe of what another sandbox read (the kernel's own answer for "
        "a file without non-blocking reads)",
        arg=5,
        mask=_RWF_NOWAIT,
        value=_RWF_NOWAIT,
    )
    # x32's preadv2 is compat_sys_preadv64v2, whose flags are the 5th argument
    # (the offset is one register); on the other ABIs the 5th is the offset's
    # high half (0 from glibc on 64-bit; on i386, bit 3 means an offset past
    # 32 GiB, which no bot file has).
    add(
        "preadv2 pwritev2",
        E.EOPNOTSUPP,
        "RWF_NOWAIT in the x32 ABI's flags position",
        arg=4,
        mask=_RWF_NOWAIT,
        value=_RWF_NOWAIT,
    )
    add(
        "mincore",
        E.ENOSYS,
        "the residency of each page of a mapping, for a mapped shared file the page "
        "cache's (as its owner, which root inside the sandbox is for /usr); ENOSYS: as if the kernel lacked it",
    )
    add("cachestat", E.ENOSYS, "page-cache statistics of any file range, as if the kernel lacked it (before 6.5)")
    add(
        "fadvise64 fadvise64_64 arm_fadvise64_64",
        _GRANTED,
        "posix_fadvise: WILLNEED reads pages in and "
        "DONTNEED evicts them from the machine's page cache, marks another sandbox can find; RANDOM makes "
        "each read bring exactly one page. A hint: answered done, nothing happens",
    )
    add(
        "readahead",
        _GRANTED,
        "readahead(2) brings chosen pages of a shared file into the page cache: a hint, answered done, nothing happens",
    )
    for name, advice in _MADV_CACHE.items():
        add(
            "madvise",
            _GRANTED,
            f"madvise {name} on a mapping of a shared file moves its pages in or out of "
            "the page cache: a hint, answered done, nothing happens",
            arg=2,
            value=advice,
        )
    for name, advice in _MADV_FILL.items():
        add(
            "madvise",
            E.EINVAL,
            f"madvise {name} reads a shared file's pages into the page cache (or "
            "merges pages across processes); EINVAL: as if the kernel lacked it",
            arg=2,
            value=advice,
        )
    add(
        "prctl",
        E.EINVAL,
        "PR_SET_MEMORY_MERGE: kernel same-page merging across processes (KSM) makes a "
        "write to a page merged with another sandbox's slow, a channel; EINVAL: as without KSM",
        arg=0,
        value=_PR_SET_MEMORY_MERGE,
    )
    add(
        "ptrace process_vm_readv process_vm_writev process_madvise kcmp pidfd_getfd",
        E.EPERM,
        "reading, writing or comparing another process's memory and files (within the pid namespace "
        "only, but a bot has no business doing it, and ptrace is a long list of kernel bugs)",
    )
    # -- escaping the sandbox's construction ----------------------------------
    add(
        "unshare setns",
        E.EPERM,
        "new or other namespaces: a nested user namespace gives a bot capabilities over fresh "
        "namespaces, the most common path to kernel exploits",
    )
    for name, flag in _CLONE_NS.items():
        add("clone", E.EPERM, f"clone with {name}: the same as unshare", arg=0, mask=flag, value=flag)
    add(
        "clone3",
        E.ENOSYS,
        "its flags are in memory, where the filter cannot read them; ENOSYS makes glibc and other "
        "runtimes fall back to clone, whose flags are checked",
    )
    add("mount umount umount2 pivot_root chroot", E.EPERM, "changing the file view bwrap built")
    add(
        "fsopen fsconfig fsmount fspick move_mount open_tree mount_setattr",
        E.ENOSYS,
        "the new mount API: the same as mount, as if the kernel lacked it",
    )
    add(
        "name_to_handle_at open_by_handle_at",
        E.EPERM,
        "opening files by handle bypasses the mount view (the 'shocker' container escape)",
    )
    # -- kernel attack surface a bot never needs --------------------------------
    add("bpf", E.EPERM, "BPF programs: kernel attack surface")
    add("perf_event_open", E.EPERM, "performance counters: kernel attack surface and a precise timing side channel")
    add("userfaultfd", E.EPERM, "user fault handling: a tool for winning kernel race conditions")
    add(
        "io_uring_setup io_uring_enter io_uring_register",
        E.ENOSYS,
        "io_uring runs operations the filter never sees, and is a long list of kernel bugs; "
        "libuv (Node) falls back to threads",
    )
    add(
        "init_module finit_module delete_module kexec_load kexec_file_load reboot",
        E.EPERM,
        "kernel modules, kexec and reboot",
    )
    add("acct swapon swapoff quotactl quotactl_fd", E.EPERM, "process accounting, swap and disk quotas of the host")
    add("syslog", E.EPERM, "the kernel log: other processes' crash and OOM messages are a channel")
    add(
        "personality",
        E.EPERM,
        "execution domains other than plain Linux (READ_IMPLIES_EXEC, MMAP_PAGE_ZERO, no ASLR) "
        "weaken exploit mitigations",
        arg=0,
        op="ne",
        value=0,
    )
    add(
        "iopl ioperm modify_ldt uselib ustat sysfs _sysctl vm86 vm86old nfsservctl lookup_dcookie vhangup",
        E.EPERM,
        "raw port I/O, the LDT and obsolete calls: kernel attack surface only",
    )
    add("migrate_pages move_pages", E.EPERM, "moving another process's memory between NUMA nodes")
    add("settimeofday clock_settime clock_adjtime adjtimex", E.EPERM, "setting the machine's clock")
    for fam in _SOCKET_DENIED:
        add("socket", E.EAFNOSUPPORT, "socket families beyond unix, inet, inet6 and netlink", arg=0, value=fam)
    add(
        "socket",
        E.EAFNOSUPPORT,
        "socket families beyond unix, inet, inet6 and netlink: AF_VSOCK (40) "
        "crosses every namespace; packet, alg, xdp and the rest are attack surface",
        arg=0,
        op="ge",
        value=17,
        mask=0,
    )
    add("ioctl", E.EPERM, "TIOCSTI: typing into a terminal", arg=1, value=_TIOCSTI)
    add("ioctl", E.EPERM, "TIOCLINUX: the console's copy and paste", arg=1, value=_TIOCLINUX)
    return tuple(d)


DENY: tuple[Deny, ...] = _deny_table()

# -- the ctypes binding (libseccomp's documented API) ----------------------------

_ACT_ALLOW = 0x7FFF0000
_ARCH_X86_64, _ARCH_X86, _ARCH_X32 = 0xC000003E, 0x40000003, 0x4000003E
_ARCH_AARCH64, _ARCH_ARM = 0xC00000B7, 0x40000028
_EXTRA_ARCHES = {_ARCH_X86_64: (_ARCH_X86, _ARCH_X32), _ARCH_AARCH64: (_ARCH_ARM,)}
_CMP = {"ne": 1, "ge": 5, "masked": 7}  # enum scmp_compare
_FLTATR_CTL_OPTIMIZE = 8  # enum scmp_filter_attr
_NR_SCMP_ERROR = -1


def _act_errno(e: int) -> int:
    return 0x00050000 | (e & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


def _lib() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as exc:
        raise SandboxError(
            f"no system-call filter: libseccomp is not installed ({exc}); apt-get install libseccomp2"
        ) from None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_arch_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    lib.seccomp_arch_native.restype = ctypes.c_uint32
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    return lib


def _compare(entry: Deny) -> _ArgCmp:
    assert entry.arg is not None
    if entry.op == "masked":
        return _ArgCmp(entry.arg, _CMP["masked"], entry.mask, entry.value)
    return _ArgCmp(entry.arg, _CMP[entry.op], entry.value, 0)


def _build() -> bytes:
    lib = _lib()
    ctx = lib.seccomp_init(_ACT_ALLOW)
    if not ctx:
        raise SandboxError("no system-call filter: seccomp_init failed")
    try:
        # A binary tree over the system-call numbers (libseccomp >= 2.5; older
        # ones refuse the attribute and keep a list): a call with argument
        # rules (futex, fcntl, clone...) runs a few comparisons, not dozens.
        # Calls with no rule at all run none: since Linux 5.11 the kernel
        # caches an always-allow verdict per call number.
        lib.seccomp_attr_set(ctx, _FLTATR_CTL_OPTIMIZE, 2)
        native = lib.seccomp_arch_native()
        for arch in _EXTRA_ARCHES.get(native, ()):
            rc = lib.seccomp_arch_add(ctx, arch)
            if rc < 0 and rc != -E.EEXIST:
                raise SandboxError(f"no system-call filter: seccomp_arch_add({arch:#x}) failed: {os.strerror(-rc)}")
        for entry in DENY:
            nr = lib.seccomp_syscall_resolve_name(entry.syscall.encode())
            if nr == _NR_SCMP_ERROR:
                continue  # a call this libseccomp does not know exists on no architecture it knows
            cmp = (_ArgCmp * 1)(_compare(entry)) if entry.arg is not None else None
            rc = lib.seccomp_rule_add_array(ctx, _act_errno(entry.errno), nr, 1 if cmp else 0, cmp)
            if rc < 0:
                raise SandboxError(
                    f"no system-call filter: the rule for {entry.syscall} was refused ({os.strerror(-rc)})"
                )
        r, w = os.pipe()
        try:
            # The program is a few KiB: it fits the pipe, so one thread can
            # write it and read it back without a reader on the other side.
            rc = lib.seccomp_export_bpf(ctx, w)
            os.close(w)
            w = -1
            if rc < 0:
                raise SandboxError(f"no system-call filter: seccomp_export_bpf failed: {os.strerror(-rc)}")
            chunks = []
            while chunk := os.read(r, 65536):
                chunks.append(chunk)
        finally:
            os.close(r)
            if w >= 0:
                os.close(w)
        return b"".join(chunks)
    finally:
        lib.seccomp_release(ctx)


_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def _cached() -> bytes | SandboxError:
    try:
        return _build()
    except SandboxError as exc:
        return exc


def program() -> bytes:
    """The compiled filter (classic BPF, 8 bytes an instruction), built once per process."""
    with _lock:
        got = _cached()
    if isinstance(got, SandboxError):
        raise got
    return got


def unavailable() -> str | None:
    """Why there is no filter on this machine, or ``None`` when there is one."""
    try:
        program()
    except SandboxError as exc:
        return str(exc)
    return None


def pipe_fd() -> int:
    """A pipe's read end holding the filter, for ``bwrap --seccomp FD``.

    The caller passes it to the child (``pass_fds``) and closes its own copy
    once the child is started. A pipe rather than one shared file: bwrap reads
    from the descriptor's current offset, which a shared file would share
    between every bot started from this process.
    """
    data = program()
    if len(data) > 65536:  # more than a pipe holds without a reader
        raise SandboxError(f"system-call filter of {len(data)} bytes is too large for a pipe")
    r, w = os.pipe()
    try:
        os.write(w, data)
    finally:
        os.close(w)
    return r
