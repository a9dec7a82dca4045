"""Attack bot: carries bits between two of its own processes through the
kernel's shared caches, by timing alone (no probe the filter could deny).

``ARENA_CACHE_TIMER`` is ``mark:TAG:N`` or ``probe:TAG:N``: N candidates in
pairs. The marking process reads one byte of one page of each pair, in a
large, rarely read file it can see (``blob.bin`` in its own data folder when
it has one, else numpy's bundled BLAS library; read-ahead off where the
filter lets the hint through), and looks up one of each pair of missing
names ``<libdir>/.arena-TAG-i`` (the kernel may remember the "not found").
The probing process, started afterwards in a sandbox of its own, times
one-byte reads of every candidate page and lookups of every name, and writes
the nanoseconds of each to stderr as one JSON line:
``{"read": [[marked...], [unmarked...]], "lookup": [[...], [...]]}`` (the
``k``-th of each list: the two of pair ``k``). Where a bit survives between
sandboxes, marked reads or lookups are faster. Then it
plays (always the first legal bid, or dudo).
"""

import glob
import json
import os
import random
import sys
import time

from arena.sdk import DUDO

PAGE = os.sysconf("SC_PAGE_SIZE")


def _target():
    own = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cache_timer", "blob.bin")
    if os.path.exists(own):
        return own
    for folder in sys.path:
        found = sorted(glob.glob(os.path.join(folder, "numpy.libs", "libscipy_openblas*.so")))
        if found:
            return found[0]
    raise SystemExit("cache_timer: numpy's BLAS library is not visible")


def _libdir():
    return os.path.dirname(os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6"))


def _run(mode, tag, n):
    path = _target()
    fd = os.open(path, os.O_RDONLY)
    try:  # read-ahead off, so that one read brings in one page (a filter may refuse the hint)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
    except OSError:
        pass
    pages = os.fstat(fd).st_size // PAGE
    # Candidates come in pairs, 64 pages apart, 128 pages from one pair to the
    # next: where the read-ahead hint is refused (or ignored), a read brings in
    # up to 32 pages after it, never another candidate. Which of a pair is
    # marked is drawn from the tag, so that whatever the layout favours falls
    # on marked and unmarked alike, and so is which of a pair is probed first
    # (the first read of a pair warms what its neighbour's read then finds:
    # the page cache's index, the CPU's caches).
    n = 2 * min(n // 2, (pages - 64) // 128)
    rng = random.Random(tag)
    flips = rng.choices((0, 64), k=n // 2)
    first_of_pair = rng.choices((0, 1), k=n // 2)
    offsets = [(64 + 128 * (i // 2) + (flips[i // 2] if i % 2 == 0 else 64 - flips[i // 2])) * PAGE for i in range(n)]
    names = [os.path.join(_libdir(), f".arena-{tag}-{i}") for i in range(n)]
    clock = time.perf_counter_ns
    if mode == "mark":
        for i in range(0, n, 2):
            os.pread(fd, 1, offsets[i])
            try:
                os.stat(names[i])
            except OSError:
                pass
        return
    reads = [[], []]
    lookups = [[], []]
    order = [2 * j + (k ^ first_of_pair[j]) for j in range(n // 2) for k in (0, 1)]
    for i in order:
        t = clock()
        os.pread(fd, 1, offsets[i])
        reads[i % 2].append(clock() - t)
        t = clock()
        try:
            os.stat(names[i])
        except OSError:
            pass
        lookups[i % 2].append(clock() - t)
    print(json.dumps({"read": reads, "lookup": lookups, "file": path}), file=sys.stderr, flush=True)


_spec = os.environ.get("ARENA_CACHE_TIMER", "")
if _spec:
    _mode, _tag, _n = _spec.split(":")
    _run(_mode, _tag, int(_n))


def act(turn):
    return DUDO if turn.legal.dudo else next(turn.legal.bids())
