"""Tries every kind of system call the filter denies (and a few it must allow)
with arguments that are harmless either way, and answers with what each
returned: "ok" or the errno's name.

Where it can, a probe uses arguments the kernel itself would answer with
something other than the filter's error (a bad descriptor, a bad pointer, a
query that succeeds), so a test can tell the filter's answer from the
kernel's. The "i386:" probes enter the kernel through the 32-bit ABI
(``int 0x80``) from this 64-bit process, with i386 system-call numbers;
"x32:" probes use the x32 numbers.
"""

import ctypes
import errno
import mmap
import os
import platform
import socket
import struct

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
X86_64 = platform.machine() == "x86_64"

# x86_64 numbers (this bot only runs its raw probes there)
NR = dict(
    add_key=248,
    request_key=249,
    keyctl=250,
    flock=73,
    fcntl=72,
    inotify_init=253,
    inotify_init1=294,
    inotify_add_watch=254,
    fanotify_init=300,
    fanotify_mark=301,
    ptrace=101,
    process_vm_readv=310,
    process_vm_writev=311,
    process_madvise=440,
    kcmp=312,
    pidfd_getfd=438,
    unshare=272,
    setns=308,
    clone=56,
    clone3=435,
    mount=165,
    umount2=166,
    pivot_root=155,
    chroot=161,
    fsopen=430,
    fsconfig=431,
    fsmount=432,
    fspick=433,
    move_mount=429,
    open_tree=428,
    mount_setattr=442,
    name_to_handle_at=303,
    open_by_handle_at=304,
    bpf=321,
    perf_event_open=298,
    userfaultfd=323,
    io_uring_setup=425,
    io_uring_enter=426,
    io_uring_register=427,
    init_module=175,
    finit_module=313,
    delete_module=176,
    kexec_load=246,
    kexec_file_load=320,
    reboot=169,
    acct=163,
    swapon=167,
    swapoff=168,
    quotactl=179,
    quotactl_fd=443,
    syslog=103,
    personality=135,
    iopl=172,
    ioperm=173,
    modify_ldt=154,
    uselib=134,
    ustat=136,
    sysfs=139,
    vhangup=153,
    migrate_pages=256,
    move_pages=279,
    settimeofday=164,
    clock_settime=227,
    clock_adjtime=305,
    adjtimex=159,
    socket=41,
    ioctl=16,
    getpid=39,
    futex=202,
    futex_waitv=449,
    preadv2=327,
    pwritev2=328,
    mincore=27,
    cachestat=451,
    fadvise64=221,
    readahead=187,
    madvise=28,
    prctl=157,
)
BAD = 0xDEAD0000  # an unmapped address: EFAULT from the kernel itself


def raw(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    if r < 0:
        return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
    return "ok"


def raw_closing(nr, *args):
    """A call that returns a descriptor on success: close it."""
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    if r < 0:
        return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
    os.close(r)
    return "ok"


def int80():
    """call(nr, a, b, c) through the i386 entry point (``int 0x80``): a few bytes of
    machine code moving the C arguments (edi, esi, edx, ecx) into the i386
    system-call registers (eax, ebx, ecx, edx)."""
    code = bytes(
        [
            0x53,  # push rbx
            0x89,
            0xF8,  # mov eax, edi   (nr)
            0x89,
            0xF3,  # mov ebx, esi   (a)
            0x87,
            0xD1,  # xchg ecx, edx  (ecx=b, edx=c)
            0xCD,
            0x80,  # int 0x80
            0x5B,  # pop rbx
            0xC3,
        ]
    )  # ret
    buf = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    buf.write(code)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int)(addr)
    fn._keep = buf

    def call(nr, a=0, b=0, c=0):
        r = fn(nr, a, b, c)
        return errno.errorcode.get(-r, str(-r)) if -4096 < r < 0 else "ok"

    return call


def _address(m):
    """The address of a read-only mmap (ctypes takes only writable buffers)."""

    class Py_buffer(ctypes.Structure):
        _fields_ = [
            ("buf", ctypes.c_void_p),
            ("obj", ctypes.py_object),
            ("len", ctypes.c_ssize_t),
            ("itemsize", ctypes.c_ssize_t),
            ("readonly", ctypes.c_int),
            ("ndim", ctypes.c_int),
            ("format", ctypes.c_char_p),
            ("shape", ctypes.c_void_p),
            ("strides", ctypes.c_void_p),
            ("suboffsets", ctypes.c_void_p),
            ("internal", ctypes.c_void_p),
        ]

    view = Py_buffer()
    ctypes.pythonapi.PyObject_GetBuffer(ctypes.py_object(m), ctypes.byref(view), 0)
    addr = view.buf
    ctypes.pythonapi.PyBuffer_Release(ctypes.byref(view))
    return addr


def probes():
    out = {}
    fd = os.open("/etc/passwd", os.O_RDONLY)  # bound into every sandbox
    dfd = os.open("/usr", os.O_RDONLY | os.O_DIRECTORY)
    keep = []

    def flk():  # a fresh struct flock each time (F_GETLK rewrites it): F_RDLCK, the whole file
        keep.append(ctypes.create_string_buffer(struct.pack("hhqqi", 0, 0, 0, 0, 0), 32))
        return ctypes.addressof(keep[-1])

    out["add_key"] = raw(
        NR["add_key"],
        ctypes.addressof(ctypes.create_string_buffer(b"user")),
        ctypes.addressof(ctypes.create_string_buffer(b"arena-probe")),
        ctypes.addressof(ctypes.create_string_buffer(b"x")),
        1,
        -2 & (2**64 - 1),
    )
    out["request_key"] = raw(
        NR["request_key"],
        ctypes.addressof(ctypes.create_string_buffer(b"user")),
        ctypes.addressof(ctypes.create_string_buffer(b"arena-none")),
        0,
        0,
    )
    out["keyctl"] = raw(NR["keyctl"], 0, -4 & (2**64 - 1), 0)  # KEYCTL_GET_KEYRING_ID of @u
    out["flock"] = raw(NR["flock"], fd, 1 | 4)  # LOCK_SH | LOCK_NB
    for name, cmd in [
        ("F_GETLK", 5),
        ("F_SETLK", 6),
        ("F_SETLKW", 7),
        ("F_OFD_GETLK", 36),
        ("F_OFD_SETLK", 37),
        ("F_OFD_SETLKW", 38),
    ]:
        out[f"fcntl {name}"] = raw(NR["fcntl"], fd, cmd, flk())
    out["fcntl F_SETLK high bits"] = raw(NR["fcntl"], fd, (1 << 32) | 6, flk())  # the kernel reads an int
    # Taking a lock "succeeds" under the filter; whether the kernel holds one
    # shows in the descriptor's fdinfo ("lock:" lines, the file's locks).
    with open(f"/proc/self/fdinfo/{fd}") as f:
        held = [w[2] for w in map(str.split, f) if w and w[0] == "lock:"]
    out["locks held on /etc/passwd"] = " ".join(sorted(held)) or "none"
    out["fcntl F_GETLEASE"] = raw(NR["fcntl"], fd, 1025, 0)
    out["fcntl F_SETLEASE"] = raw(NR["fcntl"], fd, 1024, 2)  # F_UNLCK: removing no lease
    out["fcntl F_NOTIFY"] = raw(NR["fcntl"], dfd, 1026, 1)  # DN_ACCESS
    out["inotify_init"] = raw_closing(NR["inotify_init"])
    out["inotify_init1"] = raw_closing(NR["inotify_init1"], 0)
    out["inotify_add_watch"] = raw(NR["inotify_add_watch"], -1, BAD, 1)  # EBADF from the kernel
    out["fanotify_init"] = raw_closing(NR["fanotify_init"], 0x200, 0)  # FAN_REPORT_FID, unprivileged
    out["fanotify_mark"] = raw(NR["fanotify_mark"], -1, 0, 0, 0, 0)
    out["ptrace"] = raw(NR["ptrace"], 3, 99999, 0, 0)  # PEEKUSER of a pid that does not exist: ESRCH
    out["process_vm_readv"] = raw(NR["process_vm_readv"], 99999, 0, 0, 0, 0, 0)
    out["process_vm_writev"] = raw(NR["process_vm_writev"], 99999, 0, 0, 0, 0, 0)
    out["process_madvise"] = raw(NR["process_madvise"], -1, 0, 0, 0, 0)
    out["kcmp"] = raw(NR["kcmp"], 99999, 99999, 0, 0, 0)
    out["pidfd_getfd"] = raw(NR["pidfd_getfd"], -1, 0, 0)
    out["unshare"] = raw(NR["unshare"], 0)  # nothing to unshare: succeeds unless filtered
    out["setns"] = raw(NR["setns"], -1, 0)
    clone_thread = 0x00010000  # without CLONE_SIGHAND: EINVAL from the kernel, so nothing is ever cloned
    for name, flag in [
        ("CLONE_NEWNS", 0x20000),
        ("CLONE_NEWCGROUP", 0x02000000),
        ("CLONE_NEWUTS", 0x04000000),
        ("CLONE_NEWIPC", 0x08000000),
        ("CLONE_NEWUSER", 0x10000000),
        ("CLONE_NEWPID", 0x20000000),
        ("CLONE_NEWNET", 0x40000000),
    ]:
        out[f"clone {name}"] = raw(NR["clone"], flag | clone_thread, 0, 0, 0, 0)
    out["clone plain"] = raw(NR["clone"], clone_thread, 0, 0, 0, 0)  # allowed: the kernel's EINVAL
    out["clone3"] = raw(NR["clone3"], 0, 0)
    out["mount"] = raw(NR["mount"], 0, ctypes.addressof(ctypes.create_string_buffer(b"/tmp")), BAD, 0, 0)
    out["umount2"] = raw(NR["umount2"], BAD, 0xFFFF)
    out["pivot_root"] = raw(NR["pivot_root"], BAD, BAD)
    out["chroot"] = raw(NR["chroot"], BAD)
    for name in ("fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr"):
        out[name] = raw(NR[name], BAD, BAD, 0, 0, 0)
    out["name_to_handle_at"] = raw(NR["name_to_handle_at"], -100, BAD, 0, 0, 0)
    out["open_by_handle_at"] = raw(NR["open_by_handle_at"], -1, BAD, 0)
    out["bpf"] = raw(NR["bpf"], 0xFFFF, 0, 0)
    attr = ctypes.create_string_buffer(struct.pack("IIQ", 1, 128, 1) + bytes(128 - 16))  # SW_TASK_CLOCK
    struct.pack_into("Q", attr, 40, 1 << 5)  # exclude_kernel: allowed at perf_event_paranoid 2
    out["perf_event_open"] = raw_closing(NR["perf_event_open"], ctypes.addressof(attr), 0, -1, -1, 0)
    out["userfaultfd"] = raw_closing(NR["userfaultfd"], 1)  # UFFD_USER_MODE_ONLY: unprivileged
    params = ctypes.create_string_buffer(120)
    out["io_uring_setup"] = raw_closing(NR["io_uring_setup"], 1, ctypes.addressof(params))
    out["io_uring_enter"] = raw(NR["io_uring_enter"], -1, 0, 0, 0, 0, 0)
    out["io_uring_register"] = raw(NR["io_uring_register"], -1, 0, 0, 0)
    for name in (
        "init_module",
        "finit_module",
        "delete_module",
        "kexec_load",
        "kexec_file_load",
        "acct",
        "swapon",
        "swapoff",
        "quotactl",
        "quotactl_fd",
        "iopl",
        "ioperm",
        "uselib",
        "ustat",
        "sysfs",
        "settimeofday",
        "clock_settime",
        "clock_adjtime",
    ):
        out[name] = raw(NR[name], -1, BAD, 0, 0, 0)
    out["reboot"] = raw(NR["reboot"], 0, 0, 0, 0)  # bad magic
    out["syslog"] = raw(NR["syslog"], 10, 0, 0)  # SYSLOG_ACTION_SIZE_BUFFER
    out["adjtimex"] = raw(NR["adjtimex"], BAD)
    out["personality query"] = raw(NR["personality"], 0xFFFFFFFF)
    out["personality ADDR_NO_RANDOMIZE"] = raw(NR["personality"], 0x0040000)
    out["personality PER_LINUX"] = raw(NR["personality"], 0)  # allowed
    out["modify_ldt"] = raw(NR["modify_ldt"], 0, ctypes.addressof(ctypes.create_string_buffer(16)), 16)
    out["migrate_pages"] = raw(NR["migrate_pages"], 99999, 0, 0, 0)
    out["move_pages"] = raw(NR["move_pages"], 99999, 0, 0, 0, 0, 0)
    for name, fam in [
        ("AF_VSOCK", 40),
        ("AF_PACKET", 17),
        ("AF_ALG", 38),
        ("AF_APPLETALK", 5),
        ("AF_KEY", 15),
        ("AF_UNIX", 1),
        ("AF_INET", 2),
        ("AF_INET6", 10),
        ("AF_NETLINK", 16),
    ]:
        out[f"socket {name}"] = raw_closing(NR["socket"], fam, socket.SOCK_DGRAM if fam != 40 else 1, 0)
    out["socket AF_UNIX high bits"] = raw_closing(NR["socket"], (1 << 32) | 1, socket.SOCK_DGRAM, 0)
    out["ioctl TIOCSTI"] = raw(NR["ioctl"], 0, 0x5412, BAD)
    out["ioctl TIOCLINUX"] = raw(NR["ioctl"], 0, 0x541C, BAD)
    out["fcntl F_GETFD"] = raw(NR["fcntl"], fd, 1, 0)  # allowed: not a lock
    # Sleeping on a futex word of a shared file's page (10 ms): the kernel would time out.
    page = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
    word = ctypes.c_uint32.from_buffer_copy(page[:4]).value
    view = (ctypes.c_char * 1).from_address(_address(page))
    ts = ctypes.create_string_buffer(struct.pack("qq", 0, 10_000_000))
    for name, op in [("FUTEX_WAIT", 0), ("FUTEX_WAIT_BITSET", 9)]:
        out[f"futex {name} shared"] = raw(
            NR["futex"], ctypes.addressof(view), op, word, ctypes.addressof(ts), 0, 0xFFFFFFFF
        )
    own = ctypes.c_uint32(0)
    out["futex FUTEX_WAIT private"] = raw(NR["futex"], ctypes.addressof(own), 128, 0, ctypes.addressof(ts), 0, 0)
    out["futex_waitv"] = raw(NR["futex_waitv"], 0, 0, 0, 0, 0)
    del view
    page.close()
    # The page cache of shared files: exact probes fail, hints are answered
    # "done" by the filter (a bad descriptor or address shows the kernel never
    # saw them: it would answer EBADF or ENOMEM).
    one = ctypes.create_string_buffer(1)
    iov = ctypes.create_string_buffer(struct.pack("QQ", ctypes.addressof(one), 1))
    out["preadv2 RWF_NOWAIT"] = raw(NR["preadv2"], fd, ctypes.addressof(iov), 1, 0, 0, 8)
    out["preadv2 RWF_NOWAIT in the 5th argument"] = raw(NR["preadv2"], fd, ctypes.addressof(iov), 1, 0, 8, 0)
    out["preadv2 plain"] = raw(NR["preadv2"], fd, ctypes.addressof(iov), 1, 0, 0, 0)  # allowed
    out["pwritev2 RWF_NOWAIT"] = raw(NR["pwritev2"], fd, ctypes.addressof(iov), 1, 0, 0, 8)  # read-only: EBADF
    anon = mmap.mmap(-1, mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)  # malloc's kind
    anon[0:1] = b"x"
    a = ctypes.addressof(ctypes.c_char.from_buffer(anon))
    vec = ctypes.create_string_buffer(1)
    out["mincore"] = raw(NR["mincore"], a, mmap.PAGESIZE, ctypes.addressof(vec))
    rng = ctypes.create_string_buffer(struct.pack("QQ", 0, 4096))
    cstat = ctypes.create_string_buffer(64)
    out["cachestat"] = raw(NR["cachestat"], fd, ctypes.addressof(rng), ctypes.addressof(cstat), 0)
    for name, advice in [("POSIX_FADV_WILLNEED", 3), ("POSIX_FADV_DONTNEED", 4), ("POSIX_FADV_RANDOM", 1)]:
        out[f"fadvise64 {name}"] = raw(NR["fadvise64"], -1, 0, 4096, advice)
    out["readahead"] = raw(NR["readahead"], -1, 0, 4096)
    for name, advice in [
        ("MADV_WILLNEED", 3),
        ("MADV_COLD", 20),
        ("MADV_PAGEOUT", 21),
        ("MADV_POPULATE_READ", 22),
        ("MADV_POPULATE_WRITE", 23),
        ("MADV_COLLAPSE", 25),
        ("MADV_MERGEABLE", 12),
    ]:
        out[f"madvise {name}"] = raw(NR["madvise"], BAD, 4096, advice)
    for name, advice in [("MADV_DONTNEED", 4), ("MADV_FREE", 8), ("MADV_NOHUGEPAGE", 15)]:  # allowed
        out[f"madvise {name}"] = raw(NR["madvise"], a, mmap.PAGESIZE, advice)
    out["prctl PR_SET_MEMORY_MERGE"] = raw(NR["prctl"], 67, 0, 0, 0, 0)
    anon.close()
    # The i386 ABI, same rules: keyctl, flock, fcntl64's F_NOTIFY, inotify_init, unshare.
    i386 = int80()
    out["i386: keyctl"] = i386(288, 0, -4, 0)
    out["i386: flock"] = i386(143, fd, 1 | 4)
    out["i386: fcntl64 F_NOTIFY"] = i386(221, dfd, 1026, 1)
    out["i386: inotify_init"] = i386(291)
    out["i386: unshare"] = i386(310, 0)
    out["i386: fadvise64_64"] = i386(272, -1, 0, 0)
    out["i386: fadvise64"] = i386(250, -1, 0, 0)
    out["i386: readahead"] = i386(225, -1, 0, 0)
    out["i386: mincore"] = i386(218, BAD, 4096, 0)
    out["i386: madvise MADV_PAGEOUT"] = i386(219, BAD, 4096, 21)
    out["i386: cachestat"] = i386(451, -1, 0, 0)
    out["i386: getpid"] = i386(20)  # allowed
    # x32: the x86_64 entry point with bit 30 set (ENOSYS from kernels built without x32).
    out["x32: keyctl"] = raw((1 << 30) | 250, 0, -4 & (2**64 - 1), 0)
    out["x32: preadv2 RWF_NOWAIT"] = raw((1 << 30) | 546, fd, ctypes.addressof(iov), 1, 0, 8)  # compat: flags 5th

    os.close(fd)
    os.close(dfd)
    return out


def act(turn):
    status = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            status[k] = v.strip()
    return {
        "action": "dudo",
        "seccomp": status.get("Seccomp"),
        "no_new_privs": status.get("NoNewPrivs"),
        "probes": probes() if X86_64 else {},
    }
