"""Attack: remembers deals, and reads a partner's hand, through the kernel's
shared caches.

Paired play deals the same dice twice (``seating: rotate``, ``arena sprt``)
to different processes, and ``round_end`` shows every hand. This bot leaves
marks in caches every sandbox shares, and looks for them in its next
process: the page cache of a large, rarely read file under ``/usr`` (one
page per die: a mark is a page brought in, or pushed out) and the dentry
cache (a lookup of a missing name leaves a "not found" entry that makes the
next lookup of that name faster).

At each ``round_end`` it marks, for every seat ``q`` (the *viewer*) and every
other seat ``s``, the dice of ``s`` under a key of (``q``, ``q``'s round-1 hand,
round, ``s``, die position, face), in the order the dice were rolled: in a
later play of the deal, sitting at ``q``, it knows its own round-1 hand and
finds the key, and since a seat's dice in a round are a prefix of one keyed
stream (docs/rules.md), its first ``n`` dice are the same whatever ``n``.
Its own hand's mark tells it the marks are this deal's.
Two copies at one table (a partner) also mark their own hand at every turn
under the match's id, and each probes the other's.

Each mechanism is a *channel*; each channel decodes on its own, from its
own marks, and keeps score:

    cachespy {"nowait": {"checks": n, "checked": n, "probed": n, "errors": {...}, "decoded": n,
                         "right": n, "live": n}, ..., "calibration": {...}, "pid": "..."}

on stderr after every turn and round: the rounds it looked for this deal's
marks of its own hand and found them, the other hands it then tried to
read, the errors its calls met, hands read (one face found for every die),
and how many of those were the hand ``round_end`` then showed (``live``: of
them, read from a partner at this table); ``pid`` tells its processes apart.
The channels:

- ``mincore``, ``cachestat``, ``fault_around``, ``nowait``: exact probes of
  pages marked by a plain read (``mincore`` of a mapping, ``cachestat``, a
  read fault on a neighbour then ``/proc/self/pagemap``: the kernel maps the
  cached pages around a fault; ``preadv2`` with ``RWF_NOWAIT``, which reads
  the page in as it answers, so it has marks of its own);
- ``read_timing``: pages of its own, found by timing a read of one byte of
  each candidate page through a mapping (``MADV_RANDOM``: a fault reads just
  its page, where a plain read without ``POSIX_FADV_RANDOM`` reads ahead);
  calibrated at start, cached against cold pages;
- ``dentry``: a lookup (``access``) of a missing name per die, found by
  timing the lookup of each candidate name (calibrated the same way);
- ``fadvise_willneed``, ``readahead``, ``madvise_willneed``: pages brought in
  by a hint instead of a read, found by timing;
- ``fadvise_dontneed``, ``madvise_pageout``: all six faces' pages read, the
  true face's evicted by a hint; found by timing (the one cold page).

It plays like the ``probabilistic`` bot, and, when it has read every other
hand of the round, perfectly: dudo on a false bid, else the smallest true
raise. A test reads its score from ``bots/<label>.stderr``.

A test can give each run a fresh key space by writing a ``salt`` file into
the bot's data folder (``cache_spy/salt``): marks from an earlier run (with
other dice) then never match.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import hashlib
import json
import mmap
import os
import statistics
import struct
import sys
import time
from pathlib import Path

from arena.sdk import DUDO, Bot, RoundEnd, Turn, bid, matching

PAGE = mmap.PAGESIZE
COPIES = 3  # pages (or names) per mark
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
NR_CACHESTAT, NR_READAHEAD = 451, 187  # x86_64
MADV_WILLNEED, MADV_DONTNEED, MADV_PAGEOUT = 3, 4, 21
FADV_RANDOM, FADV_WILLNEED, FADV_DONTNEED = 1, 3, 4

_salt_file = Path(__file__).with_suffix("") / "salt"
SALT = _salt_file.read_text().strip() if _salt_file.is_file() else ""

EXACT = ["mincore", "cachestat", "fault_around", "nowait"]
TIMED = [
    "read_timing",
    "dentry",
    "fadvise_willneed",
    "readahead",
    "madvise_willneed",
    "fadvise_dontneed",
    "madvise_pageout",
]
CHANNELS = EXACT + TIMED
# A test may keep the bot to some channels (``cache_spy/channels`` in its data
# folder: their names): it reads and plays only on those.
_only = Path(__file__).with_suffix("") / "channels"
if _only.is_file():
    CHANNELS = [c for c in CHANNELS if c in _only.read_text().split()]
# Which marks each channel reads: mincore and cachestat share the pages a
# plain read marked (they disturb nothing); every other channel has marks of
# its own, since its probe brings the pages it probes in (a timed read does;
# so does RWF_NOWAIT: it answers EAGAIN and starts the read anyway).
TAG = {"mincore": "read", "cachestat": "read", "fault_around": "read"}
MARKS = {TAG.get(c, c) for c in CHANNELS}  # the marks the channels in use read
REGIONS = [
    "read",
    "nowait",
    "read_timing",
    "fadvise_willneed",
    "readahead",
    "madvise_willneed",
    "fadvise_dontneed",
    "madvise_pageout",
    "calib",
]
STATS: dict[str, dict] = {
    c: {"checks": 0, "checked": 0, "probed": 0, "errors": {}, "decoded": 0, "right": 0, "live": 0} for c in CHANNELS
}
CALIBRATION: dict[str, object] = {}


class Fail(Exception):
    pass


def _err(name: str, what: str) -> None:
    e = STATS[name]["errors"]
    e[what] = e.get(what, 0) + 1


def _check(r: int) -> int:
    if r < 0:
        raise Fail(errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno())))
    return r


# -- the shared files -------------------------------------------------------------------


def _big_files() -> list[tuple[str, int]]:
    """Large files every sandbox sees, the same list in every process: the
    largest regular files of the system library folders and their direct
    subfolders (not the browser's or the JVM's, which other tests read)."""
    folders = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", os.path.dirname(os.__file__)]
    for top in ("/usr/lib",):
        try:
            subs = sorted(e.path for e in os.scandir(top) if e.is_dir(follow_symlinks=False))
        except OSError:
            subs = []
        folders += [top] + subs + [os.path.join(d, x) for d in subs for x in ("lib", "bin")]
    found: dict[str, int] = {}
    for folder in folders:
        if any(skip in folder for skip in ("chromium", "jvm", "python")):
            continue
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            try:
                if e.is_file(follow_symlinks=False) and e.stat().st_size >= 256 << 10:
                    found.setdefault(os.path.realpath(e.path), e.stat().st_size)
            except OSError:
                pass
    # The large ones when there are enough (rarely read, so cold); in a small
    # view (a copy of just what a runtime needs), whatever there is.
    big = {p: n for p, n in found.items() if n >= 8 << 20}
    if sum(big.values()) >= 64 << 20:
        found = big
    chosen, pages = [], 0
    for path, size in sorted(found.items(), key=lambda kv: (-kv[1], kv[0])):
        chosen.append((path, size // PAGE))
        pages += size // PAGE
        if pages >= 1 << 18:
            break
    return chosen


class Pages:
    """A page space over the big files: key -> (fd, page number)."""

    def __init__(self) -> None:
        self.files = []
        for path, n in _big_files():
            fd = os.open(path, os.O_RDONLY)
            try:  # one read brings in exactly one page (denied: then read-ahead may bring more)
                os.posix_fadvise(fd, 0, 0, FADV_RANDOM)
            except OSError:
                pass
            self.files.append((fd, n, path))
        self.total = sum(n for _, n, _ in self.files)
        self.usable = self.total >= 1024  # else there is nothing to mark pages of
        self.maps: dict[tuple[int, str], int] = {}
        self.pagemap: int | None = None
        self.dentry_dir = os.path.dirname(self.files[0][2]) if self.files else os.path.dirname(os.__file__)

    def locate(self, key: str) -> tuple[int, int]:
        """Each tag (the second field of a key) has a region of its own, so one
        channel's marks and probes do not land on another's keys."""
        if not self.usable:
            raise Fail("no files to mark")
        tag = key.split("|")[1] if key.count("|") >= 1 else ""
        regions = len(REGIONS)
        size = self.total // regions
        h = int.from_bytes(hashlib.blake2b(f"{SALT}|{key}".encode(), digest_size=8).digest(), "big")
        i = REGIONS.index(tag) * size + h % size if tag in REGIONS else h % self.total
        for fd, n, _ in self.files:
            if i < n:
                return fd, i
            i -= n
        raise AssertionError

    def touch(self, fd: int, page: int, unmap: bool = True) -> None:
        """Bring one page in (and nothing around it: the mapping is MADV_RANDOM,
        where a read would bring in the file's whole read-ahead window
        whenever POSIX_FADV_RANDOM is refused)."""
        addr = self.mapping(fd) + page * PAGE
        ctypes.c_char.from_address(addr).value  # noqa: B018
        # Unmapped at once (the page stays cached): a page some process maps
        # cannot be evicted, and the spy evicts its marks once read (forget).
        if unmap:  # (MADV_PAGEOUT's marks stay mapped: it pushes out mapped pages only)
            libc.madvise(addr, PAGE, MADV_DONTNEED)

    def fault_around(self, fd: int, page: int) -> bool:
        """Is ``page`` cached? Exact, with no call the filter can refuse: a read
        fault maps, besides the page it reads, every page of its aligned 16-page
        window that is already cached (the kernel's fault-around), and
        /proc/self/pagemap says which pages of this process are mapped. A
        mapping of its own, where no page is touched but these neighbours."""
        base = self.mapping(fd, "fault_around")
        n = next(n for f, n, _ in self.files if f == fd)
        # Another page of the same window of 16, inside the file (past its
        # end a touch is a SIGBUS or SIGSEGV).
        neighbour = next((q for q in (page ^ 8, page ^ 1, page ^ 2, page ^ 4) if q < n), None)
        if neighbour is None:
            raise Fail("no neighbour")
        ctypes.c_char.from_address(base + neighbour * PAGE).value  # noqa: B018
        if self.pagemap is None:
            self.pagemap = os.open("/proc/self/pagemap", os.O_RDONLY)
        entry = struct.unpack("Q", os.pread(self.pagemap, 8, (base // PAGE + page) * 8))[0]
        return bool(entry >> 63)

    def mapping(self, fd: int, use: str = "marks") -> int:
        """A mapping of the whole file, one per use: marks (and the hints'
        pages), timed touches, fault-around probes. A page touched in one is
        mapped there only, so a timed touch in another costs a fault: a
        minor one when the page is cached, a major one (a disk read) when not."""
        if (fd, use) not in self.maps:
            n = next(n for f, n, _ in self.files if f == fd)
            addr = libc.mmap(None, n * PAGE, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
            if addr in (None, ctypes.c_void_p(-1).value):
                raise Fail("mmap")
            libc.madvise(addr, n * PAGE, 1)  # MADV_RANDOM: a touch faults in one page, no read-around
            self.maps[(fd, use)] = addr
        return self.maps[(fd, use)]


def _timed_touch(addr: int) -> int:
    """A read of one byte of a mapped page: a page fault, that reads the page in if it is not cached."""
    t = time.perf_counter_ns()
    ctypes.c_char.from_address(addr).value  # noqa: B018
    return time.perf_counter_ns() - t


def _timed_stat(path: str) -> int:
    """A lookup of a name (access(2): no exception to build when it is missing)."""
    t = time.perf_counter_ns()
    os.access(path, os.F_OK)
    return time.perf_counter_ns() - t


def _name(pages: Pages, key: str) -> str:
    return os.path.join(pages.dentry_dir, ".cs-" + hashlib.sha1(f"{SALT}|{key}".encode()).hexdigest())


def calibrate(pages: Pages) -> None:
    """Cached against cold: the threshold between them, or no signal."""
    tag = f"x|calib|{os.getpid()}-{time.time_ns()}"
    hot, cold, nhot, ncold = [], [], [], []
    for _ in range(3):  # warm the code path up, as a probe does
        _timed_stat(pages.dentry_dir + "/.cs-warm")
        if pages.usable:
            _timed_touch(pages.mapping(pages.files[0][0], "timing"))
    keys = [f"{tag}-{i}" for i in range(24)]
    for key in keys[::2]:
        _timed_stat(_name(pages, key))
    for i in range(0, 24, 2):  # cached and cold names in turn, as a probe meets them
        nhot.append(_timed_stat(_name(pages, keys[i])))
        ncold.append(_timed_stat(_name(pages, keys[i + 1])))
    for key in keys if pages.usable else ():  # cold: a disk read; cached: a fault on a page another mapping read
        fd, p = pages.locate(key)
        cold.append(_timed_touch(pages.mapping(fd) + p * PAGE))
        hot.append(_timed_touch(pages.mapping(fd, "timing") + p * PAGE))
    for kind, h, c, ratio in (("page", hot, cold, 3.0), ("name", nhot, ncold, 1.8)):
        if not h:
            CALIBRATION[kind] = {"threshold_ns": None}
            continue
        mh, mc = statistics.median(h), statistics.median(c)
        # Between the two. For a page, near the cached side: under load the
        # cold median grows with the disk's queue, the cached one does not.
        # For a name, halfway: the first lookups of a burst run slower.
        thr = (mh + mc) / 2 if kind == "name" else min((mh * mc) ** 0.5, 8 * mh)
        CALIBRATION[kind] = {"hot_ns": mh, "cold_ns": mc, "threshold_ns": thr if mc > ratio * mh else None}


# -- marking ------------------------------------------------------------------------------


def _key(space: str, tag: str, rnd: int, seat: int, pos: int, face: int) -> str:
    return f"{space}|{tag}|{rnd}|{seat}|{pos}|{face}"


def _copy_key(
    space: str, rnd: int, seat: int, pos: int, true_face: int, copy: int, tag: str, face: int | None = None
) -> str:
    """Copy ``copy`` of the key of die ``pos`` showing ``face`` (by default the true one)."""
    return _key(space, tag, rnd, seat, pos, true_face if face is None else face) + f"#{copy}"


class Spy:
    def __init__(self) -> None:
        self.pages = Pages()
        calibrate(self.pages)

    # Each mark: the true face of die ``pos`` of a hand, under ``space``, on
    # COPIES pages (or names) at once: a face counts as marked only when all
    # of them are, so pages that happen to be cached for other reasons
    # (other programs, earlier runs) rarely pass for a mark.
    def mark(self, space: str, rnd: int, seat: int, hand: tuple[int, ...]) -> None:
        for pos, face in enumerate(hand):
            for j in range(COPIES):
                self._mark_one(functools.partial(_copy_key, space, rnd, seat, pos, face, j))

    def _mark_one(self, k) -> None:
        # Only the marks some channel in use reads: every mark is a page
        # brought in, and the fewer a run leaves, the longer before the files
        # are so full of them that every face looks marked.
        if "dentry" in MARKS:
            _timed_stat(_name(self.pages, k("dentry")))
        if not self.pages.usable:
            return
        for tag in ("read", "nowait", "read_timing"):
            if tag in MARKS:
                self.pages.touch(*self.pages.locate(k(tag)))
        fd, p = self.pages.locate(k("fadvise_willneed"))
        if "fadvise_willneed" in MARKS:
            self._hint("fadvise_willneed", lambda: os.posix_fadvise(fd, p * PAGE, PAGE, FADV_WILLNEED))
        fd2, p2 = self.pages.locate(k("readahead"))
        if "readahead" in MARKS:
            self._hint("readahead", lambda: _check(libc.syscall(NR_READAHEAD, fd2, ctypes.c_long(p2 * PAGE), PAGE)))
        fd3, p3 = self.pages.locate(k("madvise_willneed"))
        if "madvise_willneed" in MARKS:
            self._hint(
                "madvise_willneed",
                lambda: _check(libc.madvise(self.pages.mapping(fd3) + p3 * PAGE, PAGE, MADV_WILLNEED)),
            )
        for tag, evict in (("fadvise_dontneed", self._fadvise_out), ("madvise_pageout", self._pageout)):
            if tag not in MARKS:
                continue
            for f in range(1, 7):  # every face's page in, the true one's out
                self.pages.touch(*self.pages.locate(k(tag, f)), unmap=tag != "madvise_pageout")
            fd4, p4 = self.pages.locate(k(tag))
            self._hint(tag, lambda e=evict, a=fd4, b=p4: e(a, b))

    def forget(self, space: str, rnd: int, seats: int, dice: int) -> None:
        """Evict every page that marks of round ``rnd`` under ``space`` could
        have brought in (every face, copy and channel), once they are read:
        else the marks of a long run fill the files' pages, until every face
        looks marked and no hand decodes. Where the filter refuses the hint
        this does nothing, which is no loss: nothing decodes there."""
        if not self.pages.usable:
            return
        for tag in MARKS - {"dentry"}:
            for seat in range(seats):
                for pos in range(dice):
                    for face in range(1, 7):
                        for j in range(COPIES):
                            fd, p = self.pages.locate(_key(space, tag, rnd, seat, pos, face) + f"#{j}")
                            try:
                                os.posix_fadvise(fd, p * PAGE, PAGE, FADV_DONTNEED)
                            except OSError:
                                return

    def _fadvise_out(self, fd: int, p: int) -> None:
        # A page some process maps is not evicted: unmap it here first.
        libc.madvise(self.pages.mapping(fd) + p * PAGE, PAGE, MADV_DONTNEED)
        os.posix_fadvise(fd, p * PAGE, PAGE, FADV_DONTNEED)

    def _pageout(self, fd: int, p: int) -> None:
        _check(libc.madvise(self.pages.mapping(fd) + p * PAGE, PAGE, MADV_PAGEOUT))

    def _hint(self, name: str, fn) -> None:
        try:
            fn()
        except (OSError, Fail) as exc:
            _err(name, exc.args[0] if isinstance(exc, Fail) else errno.errorcode.get(exc.errno or 0, "?"))

    # -- probing: which of the six faces of each die is marked --------------------------------

    def _resident(self, name: str, fd: int, p: int) -> bool:
        if name == "nowait":
            buf = bytearray(1)
            try:
                return os.preadv(fd, [buf], p * PAGE, os.RWF_NOWAIT) == 1
            except BlockingIOError:
                return False
        if name == "mincore":
            vec = ctypes.create_string_buffer(1)
            _check(libc.mincore(self.pages.mapping(fd) + p * PAGE, PAGE, vec))
            return bool(vec.raw[0] & 1)
        if name == "fault_around":
            return self.pages.fault_around(fd, p)
        if name == "cachestat":
            rng = ctypes.create_string_buffer(struct.pack("QQ", p * PAGE, PAGE))
            cs = ctypes.create_string_buffer(64)
            _check(libc.syscall(NR_CACHESTAT, fd, rng, cs, 0))
            return struct.unpack_from("Q", cs.raw)[0] > 0  # nr_cache
        raise AssertionError(name)

    def _times(self, name: str, keys: list[str]) -> tuple[list[int], float]:
        """Timing: how long each mark's page read (or name lookup) took, and
        the calibrated threshold below which it was cached. The targets are
        worked out first and timed in one tight loop, after a few warm-up
        calls: anything else between two timed calls slows the next one."""
        cal = CALIBRATION["name" if name == "dentry" else "page"]
        if cal["threshold_ns"] is None:
            raise Fail("no signal")
        if name == "dentry":
            names = [_name(self.pages, k) for k in keys]
            for _ in range(3):
                _timed_stat(self.pages.dentry_dir + "/.cs-warm")
            return [_timed_stat(n) for n in names], cal["threshold_ns"]
        addrs = [self.pages.mapping(fd, "timing") + p * PAGE for fd, p in map(self.pages.locate, keys)]
        for _ in range(3):
            _timed_touch(self.pages.mapping(self.pages.files[0][0], "timing"))
        times = [_timed_touch(a) for a in addrs]
        for a in addrs:  # unmapped again, so that forget can evict them
            libc.madvise(a, PAGE, MADV_DONTNEED)
        return times, cal["threshold_ns"]

    def _marked(self, name: str, keys: list[list[str]]) -> list[bool]:
        """Which of the six faces (each on COPIES keys) carry the mark."""
        evicted = name.endswith(("dontneed", "pageout"))
        if name in EXACT:
            hits = [[self._resident(name, *self.pages.locate(k)) for k in ks] for ks in keys]
            return [any(h) if evicted else all(h) for h in hits]
        flat, thr = self._times(name, [k for ks in keys for k in ks])
        times = [flat[i : i + COPIES] for i in range(0, len(flat), COPIES)]
        sums = [sum(ts) for ts in times]
        median = statistics.median(sums)
        # Each copy on the right side of the calibrated threshold, and the
        # face well apart from the others: a lookup's time drifts with what
        # ran just before it, so the threshold alone is not enough.
        if evicted:
            return [s > COPIES * thr and s > 1.5 * median for s in sums]
        return [s < COPIES * thr and s < 0.75 * median for s in sums]

    def read(self, name: str, space: str, rnd: int, seat: int, n: int) -> tuple[int, ...] | None:
        """The hand of ``seat`` (up to ``n`` dice) marked under ``space``: the
        dice up to the first one with no mark (the seat may have held fewer in
        the play that marked it), or None when a die has several marks, or
        the first has none."""
        tag = TAG.get(name, name)
        hand = []
        try:
            for pos in range(n):
                marked = self._marked(
                    name,
                    [[_key(space, tag, rnd, seat, pos, face) + f"#{j}" for j in range(COPIES)] for face in range(1, 7)],
                )
                faces = [f for f, hit in zip(range(1, 7), marked) if hit]
                if not faces and hand:
                    break
                if len(faces) != 1:
                    return None
                hand.append(faces[0])
        except (OSError, Fail) as exc:
            _err(name, exc.args[0] if isinstance(exc, Fail) else errno.errorcode.get(exc.errno or 0, "?"))
            return None
        return tuple(hand)


SPY: Spy | None = None
PROCESS = os.urandom(6).hex()  # which process wrote a report (every sandbox is pid 2)


def _checks(hand: tuple[int, ...]) -> tuple[int, int]:
    """Two check dice a partner marks after its hand."""
    return 1 + sum(hand) % 6, 1 + sum((i + 1) * d for i, d in enumerate(hand)) % 6


def _within(part: tuple[int, ...], whole: tuple[int, ...]) -> bool:
    """Is ``part`` a sub-multiset of ``whole``?"""
    rest = list(whole)
    for d in part:
        if d not in rest:
            return False
        rest.remove(d)
    return True


def report() -> None:
    print(
        "cachespy " + json.dumps({**STATS, "calibration": CALIBRATION, "pid": PROCESS}, sort_keys=True),
        file=sys.stderr,
        flush=True,
    )


class CacheSpy(Bot):
    def start(self, match):
        global SPY
        if SPY is None:
            SPY = Spy()
        self.spy = SPY
        self.opening: dict[int, tuple[int, ...]] = {}  # round-1 hand of each seat, once known
        self.read_hands: dict[tuple[str, int, int], tuple[tuple[int, ...], bool]] = {}  # (channel, round, seat)
        self.checked: set[int] = set()
        self.tried_live: set[tuple[int, int]] = set()
        self.live_marked: set[int] = set()
        self.partners = [s for s, n in enumerate(match.names) if n.startswith("cache_spy") and s != match.seat]

    def _space(self, viewer: int) -> str | None:
        h = self.opening.get(viewer)
        return None if h is None else f"deal|{viewer}|{''.join(map(str, h))}"

    def act(self, turn: Turn):
        own = tuple(sorted(turn.dice))
        if turn.round == 1:
            self.opening.setdefault(turn.seat, own)
        live = f"live|{self.match.match}"
        if self.partners and turn.round not in self.live_marked:  # for a partner: the hand and two check dice
            self.live_marked.add(turn.round)
            self.spy.mark(live, turn.round, turn.seat, own + _checks(own))
        others = [(s, n) for s, n in enumerate(turn.counts) if s != turn.seat and n]
        space = self._space(turn.seat)
        if space is not None and turn.round not in self.checked:
            self.checked.add(turn.round)
            for name in CHANNELS:  # exact probes first: they disturb nothing
                # Does this deal's mark of my own hand hold? Then the marks are
                # this deal's (not another's that shares a key), and the rest
                # are worth reading; a first play stops at its first die.
                STATS[name]["checks"] += 1
                mine = self.spy.read(name, space, turn.round, turn.seat, len(own))
                if mine is None or len(mine) < min(3, len(own)) or not _within(mine, own):
                    continue
                STATS[name]["checked"] += 1
                for s, n in others:
                    STATS[name]["probed"] += 1
                    got = self.spy.read(name, space, turn.round, s, n)
                    if got is not None and len(got) == n:
                        STATS[name]["decoded"] += 1
                        self.read_hands[(name, turn.round, s)] = (got, False)
            # This seat reads this deal's marks once (its one later play), so they can go.
            self.spy.forget(space, turn.round, len(turn.counts), max(turn.counts))
        acted = {s for s, _ in turn.history}
        for s, n in others:  # a partner's hand, once it has marked it this round
            if s in self.partners and s in acted and (turn.round, s) not in self.tried_live:
                self.tried_live.add((turn.round, s))
                for name in CHANNELS:
                    if (name, turn.round, s) in self.read_hands:
                        continue
                    STATS[name]["probed"] += 1
                    got = self.spy.read(name, live, turn.round, s, n + 2)
                    # There is no own hand to check a partner's marks against:
                    # its two check dice stand in (pages cached by chance pass for them rarely).
                    if got is not None and len(got) == n + 2 and got[n:] == _checks(got[:n]):
                        got = got[:n]
                        STATS[name]["decoded"] += 1
                        self.read_hands[(name, turn.round, s)] = (got, True)
        known = {}
        for s, _ in others:
            for name in CHANNELS:
                if (name, turn.round, s) in self.read_hands:
                    known[s] = self.read_hands[(name, turn.round, s)][0]
                    break
        report()
        if len(known) == len(others):
            return self.perfect(turn, [d for h in known.values() for d in h])
        return self.probabilistic(turn)

    def perfect(self, turn: Turn, others: list[int]):
        dice = list(turn.dice) + others
        standing = turn.standing
        if standing is not None and turn.legal.dudo and matching(standing.face, dice, turn.wild) < standing.quantity:
            return DUDO
        for face, low in sorted(turn.legal.min_quantity.items(), key=lambda kv: kv[1]):
            if matching(face, dice, turn.wild) >= low:
                return bid(low, face)
        return DUDO if turn.legal.dudo else self.probabilistic(turn)

    def probabilistic(self, turn: Turn):
        """bots/probabilistic.py's play."""
        standing = turn.standing
        if standing is None:
            legal = turn.legal
            face = max(legal.min_quantity, key=lambda f: (turn.expected(f), f))
            q = legal.min_quantity[face]
            while q < legal.max_quantity and turn.probability(bid(q + 1, face)) >= 0.6:
                q += 1
            return bid(q, face)
        if not turn.legal.min_quantity:
            return DUDO
        raise_to, p_raise = turn.best_raise()
        if raise_to is None:
            return DUDO
        p_standing = turn.probability(standing)
        if p_standing < 0.5 and p_standing < p_raise:
            return DUDO
        return raise_to

    def round_end(self, result: RoundEnd) -> None:
        if result.round == 1:
            for s, h in enumerate(result.dice):
                self.opening.setdefault(s, tuple(sorted(h)))
        for (name, rnd, s), (got, is_live) in list(self.read_hands.items()):
            if rnd == result.round:
                if tuple(sorted(result.dice[s])) == tuple(sorted(got)):
                    STATS[name]["right"] += 1
                    STATS[name]["live"] += is_live
                del self.read_hands[(name, rnd, s)]
        # Mark every hand for every viewer of this deal, for its later plays.
        for viewer in range(len(result.dice)):
            space = self._space(viewer)
            if viewer == self.match.seat:
                continue  # this process sits here: a later play of the deal is another seat's (another process)
            if space is None:
                continue
            for s, h in enumerate(result.dice):  # the viewer's own hand too: its check
                if h:
                    self.spy.mark(space, result.round, s, tuple(h))
        report()

    def match_end(self, placements) -> None:
        report()
