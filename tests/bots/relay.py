"""Attack on paired play: passes the hands one process saw revealed to the
process of the same bot that plays the same deal next (another variant of the
table, another rotation), through every channel two processes of one bot
might share.

At each ``round_end`` it stores the revealed table under (round, dice per
seat) in its own memory, and sends it out: a file in /tmp and in /dev/shm,
an abstract unix datagram socket to each of 32 names (the network namespace's),
a UDP datagram to each of 32 ports on 127.0.0.1, and a System V shared-memory
segment with a fixed key (the IPC namespace's). Each message carries a nonce
of its process, so a process never counts its own. At every turn it reads
every channel; the first foreign message on a channel prints ``RECEIVED
<channel> <match>`` to stderr. It also looks for another bot host in its pid
namespace, not its own ancestor (a process it could signal): ``SIBLING <pid>``.

Channels a fresh process made cheaply (forked from a warm parent, a kept
process) could open as well, each a ``RECEIVED`` line when it carries a table:

- ``survivor``: a relay process that outlives the bot's own. At import the bot
  asks for one on an abstract unix socket; when none answers it starts one
  (a double fork into a session of its own, which keeps every table sent to
  it and answers each request with all of them, and exits after
  :data:`SURVIVOR_IDLE` seconds without a message).
- ``posix-mq``: a POSIX message queue with a fixed name (the IPC namespace's
  ``mqueue``).
- ``shared-mapping``: an anonymous ``MAP_SHARED`` mapping made at import:
  only a process forked after the import (a warm parent forking copies of an
  imported bot) shares it with another.
- ``inherited-fd``: every descriptor the process holds at import beyond its
  protocol pipes, written to and read from. Each is listed too, as
  ``FD <n> <target>`` (once per process, at its first turn).
- ``signal``: ``SIGUSR2`` to every other process of this bot it can see; one
  received from another process is a bit that crossed.

When the current round's key holds a table with exactly its own hand in its
own seat, it plays perfectly from it and prints ``HIT <source> <match>
<round>`` (``memory``: its own process saw the deal; else the channel it came
through); at ``round_end`` ``CORRECT <source> <match> <round>`` when every hand
was right. At every ``match_end``: ``SUMMARY pid=... stored=... sent=...
received=... hits=... correct=...``, so a test can see the attack was live.
It plays like the ``probabilistic`` bot otherwise.
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import select
import signal
import socket
import sys

from arena.sdk import CALZA, DUDO, Bot, RoundEnd, Turn, bid

NONCE = os.urandom(8).hex()
NAMES = 32
PORT = 47310
SHM_KEY, SHM_SIZE = 0x0D7D0, 1 << 16
SURVIVOR = "\0dudo-relay-survivor"
SURVIVOR_IDLE = 60.0
MQ_NAME = b"/dudo-relay"
FILES = ("/tmp/dudo-relay", "/dev/shm/dudo-relay")
TABLES: dict[str, tuple[str, list[list[int]]]] = {}  # key -> (source, table)
STATS = {"stored": 0, "sent": 0, "received": 0, "hits": 0, "correct": 0}
_seen_channels: set[str] = set()
_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = ctypes.c_void_p
_libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]


def _key(round_: int, counts: list[int] | tuple[int, ...]) -> str:
    return f"{round_}:{','.join(map(str, counts))}"


def _abstract() -> socket.socket | None:
    """A datagram socket bound to the first free abstract name: every other
    process of this bot in the same network namespace sends to all of them."""
    for n in range(NAMES):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            s.bind(f"\0dudo-relay-{n}")
            s.setblocking(False)
            return s
        except OSError:
            s.close()
    return None


def _udp() -> socket.socket | None:
    for n in range(NAMES):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.bind(("127.0.0.1", PORT + n))
            s.setblocking(False)
            return s
        except OSError:
            s.close()
    return None


def _shm() -> int | None:
    seg = _libc.shmget(SHM_KEY, SHM_SIZE, 0o1000 | 0o600)  # IPC_CREAT
    if seg < 0:
        return None
    addr = _libc.shmat(seg, None, 0)
    return None if addr in (None, ctypes.c_void_p(-1).value) else addr


def _survivor_serve(sock: socket.socket) -> None:
    """The relay that outlives the bot: keeps every message, returns them all on request."""
    kept: list[bytes] = []
    sock.settimeout(SURVIVOR_IDLE)
    while True:
        try:
            data, addr = sock.recvfrom(1 << 16)
        except OSError:
            os._exit(0)  # idle (or gone): leave nothing behind
        if data == b"get" and addr:
            for msg in kept:
                try:
                    sock.sendto(msg, socket.MSG_DONTWAIT, addr)  # a process that stopped reading must not stall it
                except OSError:
                    break
        elif data == b"quit":
            os._exit(0)
        elif data != b"get":
            kept.append(data)


def _survivor() -> int:
    """Start the surviving relay unless one answers already (a double fork, a
    session of its own); its pid, if this process started it (0 otherwise)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        probe.bind(SURVIVOR)
    except OSError:
        return 0  # bound: a survivor is there
    r, w = os.pipe()
    if os.fork() == 0:
        try:
            os.setsid()
            pid = os.fork()
            if pid == 0:
                for fd in range(3):
                    os.dup2(os.open(os.devnull, os.O_RDWR), fd)
                _survivor_serve(probe)
            os.write(w, str(pid).encode())
        finally:
            os._exit(0)
    probe.close()
    os.close(w)
    pid = int(os.read(r, 32) or 0)
    os.close(r)
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        pass
    return pid


def _client() -> socket.socket | None:
    """A socket of this process's own (an autobound abstract name) to talk to the survivor."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        s.bind("")
        s.settimeout(0.2)  # a send waits while the survivor's queue is full; receives do not wait
        return s
    except OSError:
        s.close()
        return None


class _MqAttr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long), ("msgsize", ctypes.c_long), ("cur", ctypes.c_long)]


def _mq() -> int | None:
    """A POSIX message queue of small messages (the sandbox caps queue bytes per user namespace)."""
    try:
        _libc.mq_open.restype = ctypes.c_int
        _libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(_MqAttr)]
        attr = _MqAttr(0, 8, 1024, 0)
        q = _libc.mq_open(MQ_NAME, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o600, ctypes.byref(attr))
    except (AttributeError, OSError):
        return None
    return q if q >= 0 else None


def _inherited() -> list[tuple[int, str]]:
    """Descriptors beyond 0, 1, 2 held at import, with their targets; the
    protocol's private copy of the pipe to the referee is one of them."""
    out = []
    for name in sorted(os.listdir("/proc/self/fd"), key=int):
        fd = int(name)
        if fd > 2:
            try:
                out.append((fd, os.readlink(f"/proc/self/fd/{fd}")))
            except OSError:
                pass
    return out


INHERITED = _inherited()  # before this module opens anything of its own below
SOCK_ABSTRACT = _abstract()
SOCK_UDP = _udp()
SHM = _shm()
# Taken with sigtimedwait, sender and all (blocked in the survivor too, which another process's signal would end).
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})
OWN_SURVIVOR = _survivor()  # not a sibling: this process's own
SOCK_SURVIVOR = _client()
MQ = _mq()
SHARED = mmap.mmap(-1, 1 << 16, flags=mmap.MAP_SHARED)  # inherited only by a process forked from this one
_fds_listed = False


def _message(key: str, table: list[list[int]]) -> bytes:
    return json.dumps({"nonce": NONCE, "key": key, "table": table}).encode()


def _take(channel: str, data: bytes, match: str) -> None:
    """A message from some process: kept only if another process sent it."""
    try:
        msg = json.loads(data)
        if msg["nonce"] == NONCE:
            return
        key, table = str(msg["key"]), [[int(d) for d in h] for h in msg["table"]]
    except (ValueError, KeyError, TypeError):
        return
    STATS["received"] += 1
    if channel not in _seen_channels:
        _seen_channels.add(channel)
        print(f"RECEIVED {channel} {match}", file=sys.stderr, flush=True)
    TABLES.setdefault(key, (channel, table))


def _send(key: str, table: list[list[int]]) -> None:
    data = _message(key, table)
    STATS["sent"] += 1
    for folder in FILES:
        try:
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, f"{NONCE}-{STATS['sent']}"), "wb") as f:
                f.write(data)
        except OSError:
            pass
    for sock, addrs in (
        (SOCK_ABSTRACT, [f"\0dudo-relay-{n}" for n in range(NAMES)]),
        (SOCK_UDP, [("127.0.0.1", PORT + n) for n in range(NAMES)]),
    ):
        if sock is None:
            continue
        own = sock.getsockname()
        for addr in addrs:
            if addr != own and (not isinstance(own, bytes) or addr.encode() != own):
                try:
                    sock.sendto(data, addr)
                except OSError:
                    pass
    if SHM is not None:  # the segment holds one line per table, appended
        buf = (ctypes.c_char * SHM_SIZE).from_address(SHM)
        used = bytes(buf).find(b"\0")
        if 0 <= used and used + len(data) + 1 < SHM_SIZE:
            ctypes.memmove(SHM + used, data + b"\n", len(data) + 1)
    if SOCK_SURVIVOR is not None:
        try:
            SOCK_SURVIVOR.sendto(data, SURVIVOR)
        except OSError:
            pass
    if MQ is not None and len(data) <= 1024:
        _libc.mq_send(MQ, data, len(data), 0)
    used = SHARED[:].find(b"\0")
    if 0 <= used and used + len(data) + 1 < len(SHARED):
        SHARED[used : used + len(data) + 1] = data + b"\n"
    for fd, _ in INHERITED:
        try:
            if os.get_blocking(fd):
                continue  # the protocol's pipe and anything that could block a turn
            os.write(fd, data + b"\n")
        except OSError:
            pass
    for pid in _others():
        try:
            os.kill(pid, signal.SIGUSR2)
        except OSError:
            pass


def _receive(match: str) -> None:
    for folder in FILES:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if not name.startswith(NONCE):
                try:
                    with open(os.path.join(folder, name), "rb") as f:
                        _take("file", f.read(), match)
                except OSError:
                    pass
    for channel, sock in (("abstract-socket", SOCK_ABSTRACT), ("udp", SOCK_UDP)):
        while sock is not None:
            try:
                _take(channel, sock.recv(1 << 16), match)
            except OSError:
                break
    if SHM is not None:
        for line in bytes((ctypes.c_char * SHM_SIZE).from_address(SHM)).split(b"\0")[0].splitlines():
            _take("sysv-shm", line, match)
    global _fds_listed
    if not _fds_listed:
        _fds_listed = True
        for fd, target in INHERITED:
            print(f"FD {fd} {target}", file=sys.stderr, flush=True)
    if SOCK_SURVIVOR is not None:
        try:
            SOCK_SURVIVOR.sendto(b"get", SURVIVOR)
            select.select([SOCK_SURVIVOR], [], [], 0.2)  # a survivor answers at once, when it runs
        except OSError:
            pass
        while True:
            try:
                _take("survivor", SOCK_SURVIVOR.recv(1 << 16, socket.MSG_DONTWAIT), match)
            except OSError:
                break
    if MQ is not None:
        buf = ctypes.create_string_buffer(1024)
        while _libc.mq_receive(MQ, buf, 1024, None) > 0:
            _take("posix-mq", buf.value, match)
    for line in SHARED[:].split(b"\0")[0].splitlines():
        _take("shared-mapping", line, match)
    for fd, _ in INHERITED:
        try:
            if not os.get_blocking(fd):
                for line in os.read(fd, 1 << 16).splitlines():
                    _take("inherited-fd", line, match)
        except OSError:
            pass
    own = _lineage()
    while (info := signal.sigtimedwait({signal.SIGUSR2}, 0)) is not None:
        if info.si_pid not in own:  # a bit from another process (a table takes a few thousand of them)
            STATS["received"] += 1
            if "signal" not in _seen_channels:
                _seen_channels.add("signal")
                print(f"RECEIVED signal {match}", file=sys.stderr, flush=True)
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) not in own:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read()
            except OSError:
                continue
            if b"arena.protocol.host" in cmd and "procfs" not in _seen_channels:
                _seen_channels.add("procfs")
                print(f"SIBLING {pid} {match}", file=sys.stderr, flush=True)


def _others() -> list[int]:
    """The other processes of this bot that this one can see (its ancestors aside)."""
    own = _lineage()
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) not in own:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read()
            except OSError:
                continue
            if b"arena.protocol.host" in cmd and os.path.basename(__file__).encode() in cmd:
                out.append(int(pid))
    return out


def _lineage() -> set[int]:
    """This process, its ancestors (the sandbox's init among them) and the survivor it started."""
    out, pid = {OWN_SURVIVOR}, os.getpid()
    while pid > 0 and pid not in out:
        out.add(pid)
        try:
            with open(f"/proc/{pid}/status") as f:
                pid = next(int(line.split()[1]) for line in f if line.startswith("PPid:"))
        except (OSError, StopIteration, ValueError):
            break
    return out


class Relay(Bot):
    def start(self, match) -> None:  # type: ignore[no-untyped-def]
        self.prediction: tuple[str, list[list[int]]] | None = None

    def act(self, turn: Turn):  # type: ignore[no-untyped-def]
        _receive(self.match.match)
        found = TABLES.get(_key(turn.round, turn.counts))
        self.prediction = found if found is not None and sorted(found[1][turn.seat]) == sorted(turn.dice) else None
        if self.prediction is not None:
            STATS["hits"] += 1
            print(f"HIT {self.prediction[0]} {self.match.match} {turn.round}", file=sys.stderr, flush=True)
            return self._perfect(turn, self.prediction[1])
        return self._odds(turn)

    def round_end(self, end: RoundEnd) -> None:
        table = [sorted(h) for h in end.dice]
        if self.prediction is not None and [sorted(h) for h in self.prediction[1]] == table:
            STATS["correct"] += 1
            print(f"CORRECT {self.prediction[0]} {self.match.match} {end.round}", file=sys.stderr, flush=True)
        self.prediction = None
        key = _key(end.round, [len(h) for h in end.dice])
        if key not in TABLES:
            TABLES[key] = ("memory", table)
            STATS["stored"] += 1
        _send(key, table)

    def match_end(self, placements) -> None:  # type: ignore[no-untyped-def]
        print(
            f"SUMMARY pid={os.getpid()} " + " ".join(f"{k}={v}" for k, v in STATS.items()), file=sys.stderr, flush=True
        )

    # -- play --------------------------------------------------------------

    def _odds(self, turn: Turn):  # type: ignore[no-untyped-def]
        standing = turn.standing
        if standing is None:
            face = max(turn.legal.min_quantity, key=lambda f: (turn.expected(f), f))
            return bid(turn.legal.min_quantity[face], face)
        raise_to, p_raise = turn.best_raise()
        if raise_to is None or turn.probability(standing) < min(0.5, p_raise):
            return DUDO
        return raise_to

    def _perfect(self, turn: Turn, table: list[list[int]]):  # type: ignore[no-untyped-def]
        wild = turn.rules.wild_ones and not turn.palifico

        def count(face: int) -> int:
            return sum(1 for h in table for d in h if d == face or (wild and d == 1 and face != 1))

        standing = turn.standing
        if standing is not None:
            real = count(standing.face)
            if turn.legal.calza and real == standing.quantity:
                return CALZA
            if turn.legal.dudo and real < standing.quantity:
                return DUDO
        for face, low in sorted(turn.legal.min_quantity.items()):
            if low <= count(face) <= turn.legal.max_quantity:
                return bid(low, face)
        return DUDO if turn.legal.dudo else self._odds(turn)
