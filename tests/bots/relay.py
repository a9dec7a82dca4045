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
import os
import socket
import sys

from arena.sdk import CALZA, DUDO, Bot, RoundEnd, Turn, bid

NONCE = os.urandom(8).hex()
NAMES = 32
PORT = 47310
SHM_KEY, SHM_SIZE = 0x0D7D0, 1 << 16
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


SOCK_ABSTRACT = _abstract()
SOCK_UDP = _udp()
SHM = _shm()


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
    own = _lineage()
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


def _lineage() -> set[int]:
    """This process and its ancestors (the sandbox's init among them)."""
    out, pid = set(), os.getpid()
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
