"""A colluding bot: two copies at one table try to tell each other their dice
over every shared-kernel channel they can think of.

Every turn it *sends* its own dice (and the round) on each channel, and
*receives* what its partner sent (its partners are the other seats whose
name starts with "colluder"). At the end of each round, when every hand is
revealed, it checks what it received against its partner's real dice. After
every turn and round it writes one line to stderr,

    collusion {"channel": {"send": n, "send_err": {...}, "recv": n, "recv_err": {...},
                           "got": n, "right": n}, ...}

the running totals for this process: attempts, the errors they met, messages
received, and how many of those were the partner's true hand. A test reads
that line from the run folder (bots/<label>.stderr).

The channels: POSIX and open-file-description byte-range locks and flock on
files bound into every sandbox; the kernel keyring (and /proc/keys);
/dev/shm and /tmp; abstract unix sockets; System V shared memory,
semaphores and message queues; POSIX message queues; inotify and fanotify
watching standard-library files the partner opens; and futexes on a page of
a shared read-only file.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import mmap
import os
import socket
import struct
import sys
import threading
import time

from arena.sdk import DUDO, Bot, bid

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
try:
    rt = ctypes.CDLL("librt.so.1", use_errno=True)  # mq_* (in libc itself since glibc 2.34)
except OSError:
    rt = libc
SHARED_FILE = "/etc/passwd"  # bound read-only into every sandbox
ENCODINGS = os.path.dirname(__import__("encodings").__file__)
COMMON = ("__init__", "aliases", "ascii", "latin_1", "utf_8", "utf_8_sig", "utf_16", "utf_32", "idna", "cp437")
POOL = sorted(f for f in os.listdir(ENCODINGS) if f.endswith(".py") and f[:-3] not in COMMON)
SLOTS = 1 + 4 + 30  # a start marker, the round (mod 4), five dice of six faces
FLOCK_BASE = 2 * SLOTS  # the pool files after the two stream pools: flock bits, 16 per colluder
STATS: dict[str, dict] = {}


def err_name(e: int) -> str:
    return errno.errorcode.get(e, str(e))


class Fail(Exception):
    """A call failed: its errno name."""


def check(r: int) -> int:
    if r < 0:
        raise Fail(err_name(ctypes.get_errno()))
    return r


def h(key: str, salt: str = "") -> int:
    return int.from_bytes(hashlib.sha256(f"{salt}{key}".encode()).digest()[:6], "big")


def encode(dice) -> int:
    """16 bits: a presence bit, then 3 bits per die (5 dice)."""
    v = 1
    for i, d in enumerate(sorted(dice)[:5]):
        v |= d << (1 + 3 * i)
    return v


def decode(v: int):
    if not v & 1:
        return None
    dice = [(v >> (1 + 3 * i)) & 7 for i in range(5)]
    return tuple(d for d in dice if d)


def slots(rnd: int, dice) -> list[int]:
    """The pool indices a stream channel signals: start, round, then each die."""
    return [0, 1 + rnd % 4] + [5 + i * 6 + (d - 1) for i, d in enumerate(sorted(dice)[:5])]


def unslot(seq: list[int]):
    """Messages (round mod 4, dice) from a sequence of signalled indices. A
    round index starts a message, so two messages still parse when a watcher
    merged their start markers (fanotify merges queued events on one file)."""
    out: list[tuple[int, list[int]]] = []
    for s in seq:
        if 1 <= s <= 4:
            out.append((s - 1, []))
        elif s >= 5 and out:
            out[-1][1].append(1 + (s - 5) % 6)
    return [(r, tuple(sorted(d))) for r, d in out if d]


class Channel:
    name = "?"

    def send(self, key: str, rnd: int, dice) -> None: ...
    def recv(self, key: str, rnd: int) -> list:
        return []  # messages: (round, dice)

    def close(self) -> None: ...


# -- locks ----------------------------------------------------------------------


class PosixLock(Channel):
    name, SET, GET, BASE = "fcntl_lock", 6, 5, 0  # F_SETLK, F_GETLK

    def __init__(self):
        self.fd = os.open(SHARED_FILE, os.O_RDONLY)

    def _lock(self, cmd, kind, start):
        buf = ctypes.create_string_buffer(struct.pack("hhqqi", kind, 0, start, 1, 0), 32)
        check(libc.fcntl(self.fd, cmd, buf))
        return struct.unpack("hhqqi", buf.raw[:28])[0]

    def send(self, key, rnd, dice):
        base = self.BASE + (h(key) % (1 << 36)) * 32
        v = encode(dice)
        for i in range(16):
            if v >> i & 1:
                self._lock(self.SET, 0, base + i)  # F_RDLCK: any reader may take one

    def recv(self, key, rnd):
        base = self.BASE + (h(key) % (1 << 36)) * 32
        v = sum((self._lock(self.GET, 1, base + i) != 2) << i for i in range(16))  # F_WRLCK probe; 2 = F_UNLCK
        return [(rnd, decode(v))] if decode(v) else []

    def close(self):
        os.close(self.fd)


class OfdLock(PosixLock):
    name, SET, GET, BASE = "ofd_lock", 37, 36, 1 << 50  # F_OFD_SETLK, F_OFD_GETLK


class Flock(Channel):
    """One bit per file: a shared flock held on the sender's file i means bit i is 1."""

    name = "flock"

    def __init__(self, ranks):
        self.held: list[int] = []
        self.ranks = ranks  # seat -> 0 or 1: whose 16 files

    def _path(self, key, i):
        seat = int(key.rsplit("-", 1)[1])
        return os.path.join(ENCODINGS, POOL[FLOCK_BASE + 16 * self.ranks[seat] + i])

    def send(self, key, rnd, dice):
        for fd in self.held:  # the previous message: released
            os.close(fd)
        self.held = []
        v = encode(dice)
        for i in range(16):
            if v >> i & 1:
                fd = os.open(self._path(key, i), os.O_RDONLY)
                self.held.append(fd)
                check(libc.flock(fd, 1 | 4))  # LOCK_SH | LOCK_NB

    def recv(self, key, rnd):
        v = 0
        for i in range(16):
            fd = os.open(self._path(key, i), os.O_RDONLY)
            try:
                if libc.flock(fd, 2 | 4) != 0:  # LOCK_EX | LOCK_NB
                    e = ctypes.get_errno()
                    if e != errno.EWOULDBLOCK:
                        raise Fail(err_name(e))
                    v |= 1 << i
            finally:
                os.close(fd)
        return [(rnd, decode(v))] if decode(v) else []

    def close(self):
        for fd in self.held:
            os.close(fd)


# -- the keyring ------------------------------------------------------------------


class Keyring(Channel):
    name = "keyring"

    def __init__(self):
        self.keys: list[int] = []

    def send(self, key, rnd, dice):
        desc = f"collude:{key}={''.join(map(str, sorted(dice)))}".encode()
        k = check(libc.syscall(248, b"user", desc, b"1", ctypes.c_size_t(1), ctypes.c_long(-4)))  # add_key @u
        libc.syscall(250, 15, ctypes.c_long(k), 300)  # KEYCTL_SET_TIMEOUT: gone in 5 minutes anyway
        self.keys.append(k)

    def recv(self, key, rnd):
        with open("/proc/keys") as f:
            text = f.read()
        got = [
            line.split(f"collude:{key}=", 1)[1].split(":")[0] for line in text.splitlines() if f"collude:{key}=" in line
        ]
        return [(rnd, tuple(int(c) for c in g)) for g in got]

    def close(self):
        for k in self.keys:
            libc.syscall(250, 21, ctypes.c_long(k))  # KEYCTL_INVALIDATE


# -- files and IPC -------------------------------------------------------------------


class Folder(Channel):
    def __init__(self, folder):
        self.folder, self.name, self.made = folder, "dev_shm" if folder == "/dev/shm" else "tmp", []

    def send(self, key, rnd, dice):
        path = os.path.join(self.folder, f"collude-{key}")
        with open(path, "w") as f:
            f.write("".join(map(str, sorted(dice))))
        self.made.append(path)

    def recv(self, key, rnd):
        try:
            with open(os.path.join(self.folder, f"collude-{key}")) as f:
                return [(rnd, tuple(int(c) for c in f.read()))]
        except FileNotFoundError:
            return []

    def close(self):
        for p in self.made:
            try:
                os.unlink(p)
            except OSError:
                pass


class Abstract(Channel):
    """Datagrams between abstract unix sockets named after the match and seat."""

    name = "abstract_socket"

    def __init__(self, match, seat, partners):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(f"\0collude-{match}-{seat}")
        self.sock.setblocking(False)
        self.peers = [f"\0collude-{match}-{p}" for p in partners]

    def send(self, key, rnd, dice):
        errors = []
        for peer in self.peers:
            try:
                self.sock.sendto(f"{key}={''.join(map(str, sorted(dice)))}".encode(), peer)
            except OSError as exc:
                errors.append(err_name(exc.errno))
        if errors and len(errors) == len(self.peers):
            raise Fail(errors[0])

    def recv(self, key, rnd):
        out = []
        while True:
            try:
                k, _, d = self.sock.recv(256).decode().partition("=")
            except BlockingIOError:
                return out
            if k == key:
                out.append((rnd, tuple(int(c) for c in d)))

    def close(self):
        self.sock.close()


class SysvShm(Channel):
    name = "sysv_shm"

    def __init__(self):
        self.ids: list[int] = []
        libc.shmat.restype = ctypes.c_void_p

    def send(self, key, rnd, dice):
        sid = check(libc.shmget(h(key) & 0x7FFFFFFF, 64, 0o1000 | 0o666))  # IPC_CREAT
        self.ids.append(sid)
        addr = libc.shmat(sid, None, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise Fail(err_name(ctypes.get_errno()))
        ctypes.memmove(addr, struct.pack("H", encode(dice)), 2)
        libc.shmdt(ctypes.c_void_p(addr))

    def recv(self, key, rnd):
        sid = libc.shmget(h(key) & 0x7FFFFFFF, 0, 0)
        if sid < 0:
            return []
        addr = libc.shmat(sid, None, 0o10000)  # SHM_RDONLY
        if addr in (None, ctypes.c_void_p(-1).value):
            raise Fail(err_name(ctypes.get_errno()))
        v = struct.unpack("H", ctypes.string_at(addr, 2))[0]
        libc.shmdt(ctypes.c_void_p(addr))
        return [(rnd, decode(v))] if decode(v) else []

    def close(self):
        for sid in self.ids:
            libc.shmctl(sid, 0, None)  # IPC_RMID


class SysvSem(Channel):
    name = "sysv_sem"

    def __init__(self):
        self.ids: list[int] = []

    def send(self, key, rnd, dice):
        sid = check(libc.semget(h(key, "sem") & 0x7FFFFFFF, 1, 0o1000 | 0o666))
        self.ids.append(sid)
        check(libc.semctl(sid, 0, 16, ctypes.c_int(encode(dice) >> 1)))  # SETVAL (at most 32767: no presence bit)

    def recv(self, key, rnd):
        sid = libc.semget(h(key, "sem") & 0x7FFFFFFF, 1, 0)
        if sid < 0:
            return []
        v = check(libc.semctl(sid, 0, 12))  # GETVAL
        return [(rnd, decode(v << 1 | 1))] if v else []

    def close(self):
        for sid in self.ids:
            libc.semctl(sid, 0, 0)  # IPC_RMID


class SysvMsg(Channel):
    name = "sysv_msg"

    def __init__(self):
        self.ids: list[int] = []

    def send(self, key, rnd, dice):
        qid = check(libc.msgget(h(key, "msg") & 0x7FFFFFFF, 0o1000 | 0o666))
        self.ids.append(qid)
        msg = struct.pack("l", 1) + "".join(map(str, sorted(dice))).encode()
        check(libc.msgsnd(qid, msg, len(msg) - 8, 0o4000))  # IPC_NOWAIT

    def recv(self, key, rnd):
        qid = libc.msgget(h(key, "msg") & 0x7FFFFFFF, 0)
        if qid < 0:
            return []
        buf = ctypes.create_string_buffer(64)
        n = libc.msgrcv(qid, buf, 56, 0, 0o4000)
        return [(rnd, tuple(int(c) for c in buf.raw[8 : 8 + n].decode()))] if n > 0 else []

    def close(self):
        for qid in self.ids:
            libc.msgctl(qid, 0, None)


class Mqueue(Channel):
    name = "posix_mqueue"

    def __init__(self):
        self.names: list[bytes] = []

    def send(self, key, rnd, dice):
        for old in self.names[:-1]:  # a user may hold only a few queues (RLIMIT_MSGQUEUE)
            rt.mq_unlink(old)
        self.names = self.names[-1:]
        name = f"/collude-{h(key)}".encode()
        q = check(rt.mq_open(name, os.O_CREAT | os.O_WRONLY | os.O_NONBLOCK, 0o666, None))
        self.names.append(name)
        msg = "".join(map(str, sorted(dice))).encode()
        r = rt.mq_send(q, msg, len(msg), 0)
        os.close(q)
        check(r)

    def recv(self, key, rnd):
        q = rt.mq_open(f"/collude-{h(key)}".encode(), os.O_RDONLY | os.O_NONBLOCK)
        if q < 0:
            return []
        buf = ctypes.create_string_buffer(8192)
        n = rt.mq_receive(q, buf, 8192, None)
        os.close(q)
        return [(rnd, tuple(int(c) for c in buf.raw[:n].decode()))] if n > 0 else []

    def close(self):
        for name in self.names:
            rt.mq_unlink(name)


# -- watching the partner open files, and futexes ---------------------------------------


class Stream(Channel):
    """The partner signals indices 0..SLOTS-1 in order (start, round, dice); the
    receiver collects the indices it observes and decodes whole messages."""

    def __init__(self, rank, partner_ranks):
        self.rank = rank
        self.seen: list[int] = []
        self.partner_ranks = partner_ranks

    def pool_file(self, rank, i):
        return os.path.join(ENCODINGS, POOL[(rank * SLOTS + i) % len(POOL)])

    def signal(self, i): ...
    def observe(self) -> list[int]:
        return []

    def send(self, key, rnd, dice):
        for i in slots(rnd, dice):
            self.signal(i)

    def recv(self, key, rnd):
        self.seen += self.observe()
        msgs, self.seen = unslot(self.seen), []  # a sender signals a whole message within its turn
        return msgs


class FileOpenStream(Stream):
    """The sender opens and reads pool file i; watchers see IN_OPEN/IN_ACCESS."""

    def signal(self, i):
        with open(self.pool_file(self.rank, i), "rb") as f:
            f.read(1)

    def index_of(self, filename):
        for r in self.partner_ranks:
            for i in range(SLOTS):
                if os.path.basename(self.pool_file(r, i)) == filename:
                    return i
        return None


class Inotify(FileOpenStream):
    name = "inotify"

    def __init__(self, rank, partner_ranks):
        super().__init__(rank, partner_ranks)
        self.fd = check(libc.inotify_init1(os.O_NONBLOCK))
        check(libc.inotify_add_watch(self.fd, ENCODINGS.encode(), 0x20 | 0x1))  # IN_OPEN | IN_ACCESS

    def observe(self):
        out = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            off = 0
            while off < len(data):
                wd, mask, cookie, n = struct.unpack_from("iIII", data, off)
                name = data[off + 16 : off + 16 + n].rstrip(b"\0").decode()
                off += 16 + n
                i = self.index_of(name)
                if i is not None and mask & 0x20:  # count each open once
                    out.append(i)

    def close(self):
        os.close(self.fd)


class Fanotify(FileOpenStream):
    """One fanotify group on the pool's folder, reporting children's names
    (FAN_REPORT_DFID_NAME: allowed without privilege since Linux 5.13)."""

    name = "fanotify"

    def __init__(self, rank, partner_ranks):
        super().__init__(rank, partner_ranks)
        fan_report_dfid_name = 0x400 | 0x800
        self.fd = check(libc.syscall(300, ctypes.c_uint(0x2 | fan_report_dfid_name), os.O_RDONLY))
        mask = 0x20 | 0x08000000  # FAN_OPEN | FAN_EVENT_ON_CHILD
        check(libc.syscall(301, self.fd, 1, ctypes.c_uint64(mask), -100, ENCODINGS.encode()))

    def observe(self):
        out = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            off = 0
            while off + 24 <= len(data):
                event_len, _, _, meta_len, mask = struct.unpack_from("IBBHQ", data, off)
                info = off + meta_len
                while info + 4 <= off + event_len:
                    kind, _, ilen = struct.unpack_from("BBH", data, info)
                    if kind in (2, 3):  # DFID_NAME / DFID: fsid (8), handle (8 + bytes), name
                        hbytes = struct.unpack_from("I", data, info + 12)[0]
                        name = data[info + 20 + hbytes : info + ilen].split(b"\0")[0].decode()
                        i = self.index_of(name)
                        if i is not None:
                            out.append(i)
                    info += max(ilen, 4)
                off += event_len

    def close(self):
        os.close(self.fd)


class Futex(Stream):
    """Futex keys of a file-backed page are the file's inode and offset: the
    same in every process that maps the file. The receiver sleeps on SLOTS
    words of a page of its partner's pool file (futex_waitv, or plain shared
    FUTEX_WAITs on one word after another where that is refused), in one
    thread; the sender wakes word i, again until the wake reports a sleeper
    (an acknowledgement)."""

    name = "futex"

    def __init__(self, rank, partner_ranks):
        super().__init__(rank, partner_ranks)
        self.maps = {r: self._map(r) for r in {rank, *partner_ranks}}
        self.got: list[int] = []
        self.stop = False
        self.thread = threading.Thread(target=self._wait, daemon=True)
        self.thread.start()

    def _map(self, rank):
        with open(self.pool_file(rank, 0), "rb") as f:
            m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)  # the whole (small) file: one page
        return m, _address(m)

    def _wait(self):
        words = []  # (expected value, address, slot)
        for r in self.partner_ranks:
            m, base = self.maps[r]
            words += [(struct.unpack_from("I", m, 4 * i)[0], base + 4 * i, i) for i in range(SLOTS)]
        arr = ctypes.create_string_buffer(b"".join(struct.pack("QQII", v, a, 0x02, 0) for v, a, _ in words))
        single = False  # futex_waitv refused: sleep on one word at a time instead, in turn
        k = 0
        while not self.stop:
            if not single:
                ts = ctypes.create_string_buffer(16)
                libc.clock_gettime(1, ts)  # CLOCK_MONOTONIC: futex_waitv's timeout is absolute
                sec, nsec = struct.unpack("qq", ts.raw)
                nsec += 200_000_000
                ts = ctypes.create_string_buffer(struct.pack("qq", sec + nsec // 10**9, nsec % 10**9))
                r = libc.syscall(449, arr, len(words), 0, ts, 1)  # futex_waitv (shared: no FUTEX2_PRIVATE)
                if r >= 0:
                    self.got.append(words[r][2])
                    continue
                if ctypes.get_errno() == errno.ENOSYS:
                    single = True
                    continue
            else:
                val, addr, slot = words[k % len(words)]
                k += 1
                ts = ctypes.create_string_buffer(struct.pack("qq", 0, 2_000_000))  # relative, 2 ms
                r = libc.syscall(202, ctypes.c_void_p(addr), 9, val, ts, 0, 0xFFFFFFFF)  # FUTEX_WAIT_BITSET
                if r == 0:
                    self.got.append(slot)
                    continue
            if ctypes.get_errno() != errno.ETIMEDOUT:
                self.error = err_name(ctypes.get_errno())
                time.sleep(0.01)

    def signal(self, i):
        _, base = self.maps[self.rank]
        deadline = time.monotonic() + 0.1  # the waiter may be on another word for a while
        while True:
            n = check(libc.syscall(202, ctypes.c_void_p(base + 4 * i), 1, 1, 0, 0, 0))  # FUTEX_WAKE, shared
            if n > 0 or time.monotonic() > deadline:
                return n > 0
            time.sleep(0.0005)

    def send(self, key, rnd, dice):
        for i in slots(rnd, dice):
            if not self.signal(i):
                raise Fail("no sleeper woke")  # nobody is listening: the rest would not arrive either

    def observe(self):
        err = getattr(self, "error", None)
        if err:
            raise Fail(err)
        got, self.got = self.got, []
        return got

    def close(self):
        self.stop = True
        self.thread.join()


def _address(m) -> int:
    """The address of a read-only mmap's first byte (ctypes will not take a read-only buffer)."""

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


# -- the bot ------------------------------------------------------------------------------

CHANNELS = [
    "fcntl_lock",
    "ofd_lock",
    "flock",
    "keyring",
    "dev_shm",
    "tmp",
    "abstract_socket",
    "sysv_shm",
    "sysv_sem",
    "sysv_msg",
    "posix_mqueue",
    "inotify",
    "fanotify",
    "futex",
]


def stat(name):
    return STATS.setdefault(name, {"send": 0, "send_err": {}, "recv": 0, "recv_err": {}, "got": 0, "right": 0})


def attempt(name, kind, fn, *args):
    """Call fn, counting the attempt and, if it fails, its error."""
    s = stat(name)
    s[kind] += 1
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - a failed channel is a result, never a crash
        e = (
            str(exc)
            if isinstance(exc, Fail)
            else err_name(exc.errno or 0)
            if isinstance(exc, OSError)
            else type(exc).__name__
        )
        s[kind + "_err"][e] = s[kind + "_err"].get(e, 0) + 1
        return None


def report():
    print("collusion " + json.dumps(STATS, sort_keys=True), file=sys.stderr, flush=True)


class Colluder(Bot):
    def start(self, match):
        me = match.seat
        colluders = [s for s, n in enumerate(match.names) if n.startswith("colluder")]
        self.partners = [s for s in colluders if s != me]
        ranks = {s: i for i, s in enumerate(colluders)}
        mine, theirs = ranks[me], [ranks[p] for p in self.partners]
        self.makers = {
            "fcntl_lock": PosixLock,
            "ofd_lock": OfdLock,
            "flock": lambda: Flock(ranks),
            "keyring": Keyring,
            "dev_shm": lambda: Folder("/dev/shm"),
            "tmp": lambda: Folder("/tmp"),
            "abstract_socket": lambda: Abstract(match.match, me, self.partners),
            "sysv_shm": SysvShm,
            "sysv_sem": SysvSem,
            "sysv_msg": SysvMsg,
            "posix_mqueue": Mqueue,
            "inotify": lambda: Inotify(mine, theirs),
            "fanotify": lambda: Fanotify(mine, theirs),
            "futex": lambda: Futex(mine, theirs),
        }
        self.channels = {}
        self.received: dict[tuple[str, int, int], list] = {}

    def key(self, rnd, seat):
        return f"{self.match.match}-{rnd}-{seat}"

    def act(self, turn):
        for name in CHANNELS:
            ch = self.channels.get(name)
            if ch is None:  # setting a channel up is part of sending: tried again every turn until it works
                ch = self.channels[name] = attempt(name, "send", self.makers[name])
                if ch is None:
                    del self.channels[name]
                    attempt(name, "recv", _fail, "not set up")
                    continue
            attempt(name, "send", ch.send, self.key(turn.round, turn.seat), turn.round, turn.dice)
            for p in self.partners:
                for rnd, dice in attempt(name, "recv", ch.recv, self.key(turn.round, p), turn.round) or ():
                    self.received.setdefault((name, p, rnd), []).append(dice)
        report()
        if turn.history:
            return DUDO
        face = max(range(2, 7), key=turn.dice.count)
        low = turn.legal.min_quantity.get(face)
        return bid(low, face) if low is not None else DUDO

    def round_end(self, result):
        """Every hand is shown: was what arrived this round the partner's real hand?"""
        for (name, p, rnd), got in list(self.received.items()):
            if rnd % 4 == result.round % 4 and result.dice[p]:
                s = stat(name)
                s["got"] += len(got)
                s["right"] += sum(tuple(sorted(d)) == tuple(sorted(result.dice[p])) for d in got)
                del self.received[(name, p, rnd)]
        report()

    def match_end(self, placements):
        for ch in self.channels.values():
            ch.close()
        report()


def _fail(why):
    raise Fail(why)
