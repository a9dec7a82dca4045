"""The local backend: a ``multiprocess`` pool of workers on this machine.

Each worker pins itself to one core (round-robin over the cores this process
may use) and its bot processes inherit the pin: the referee and a bot take
turns, and a wake-up on the same core costs about a quarter of one across
cores on the machines measured (docs/performance.md). Workers ignore SIGINT so that Ctrl-C reaches only the
parent, which stops the pool cleanly; on SIGTERM a worker closes its bots.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Iterator, Sequence
from typing import Any

import multiprocess as mp
import multiprocess.pool

from arena.engine.records import MatchSpec
from arena.errors import RunError
from arena.match.process import TimeControl
from arena.running.worker import Drained, Entrants, PlayResult, Worker
from arena.sandbox import SandboxLimits, cgroups, die_with_parent

_worker: Worker | None = None
_init_error: str | None = None
_barrier: Any = None  # a multiprocess Barrier: each worker takes exactly one drain task (LocalBackend.drain)


def _cores() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return []


def _init(entrants: Entrants, limits: SandboxLimits, time: TimeControl, fresh: bool, counter: Any, pin: bool,
          slots: int, barrier: Any) -> None:
    global _barrier
    _barrier = barrier
    try:
        _setup(entrants, limits, time, fresh, counter, pin, slots)
    except Exception:  # noqa: BLE001 - reported by _play: a pool whose initializer
        # raises restarts its workers forever and the run would hang.
        global _init_error
        _init_error = traceback.format_exc()


def _setup(entrants: Entrants, limits: SandboxLimits, time: TimeControl, fresh: bool, counter: Any, pin: bool,
          slots: int) -> None:
    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with counter.get_lock():
        k = counter.value
        counter.value += 1
    cores = _cores()
    if pin and cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cores[k % len(cores)]})
    # Each worker and its bots one scheduling group with a session's share, not
    # the whole run one (docs/sandbox.md, "Host stalls").
    group = cgroups.join_cpu_group() if limits.mode != "off" else None
    worker = _worker = Worker(entrants, limits, time, fresh, slots)

    def _stop(signum: int, frame: object) -> None:
        worker.close()
        os._exit(0)

    signal.signal(signal.SIGTERM, _stop)
    die_with_parent(signal.SIGTERM)  # an orphaned worker stops and closes its bots
    # Close the bots when the pool retires this worker normally.
    mp.util.Finalize(None, worker.close, exitpriority=10)
    if group is not None:
        mp.util.Finalize(None, cgroups.leave_cpu_group, (group,), exitpriority=5)  # after the bots are closed


# A batch crosses the pool's pipes as bytes pickled here, by the C pickler.
# The pool pickles what it sends with multiprocess's ForkingPickler, which is
# dill's, on the pure-Python pickler: a batch of four results took it 818 us
# against 35 us in C, and four specs 220 us against 12 (docs/performance.md),
# on the cores the matches need. Bytes it passes through in one step.
_PICKLE = pickle.HIGHEST_PROTOCOL


def _play(blob: bytes) -> bytes:
    specs: list[MatchSpec] = pickle.loads(blob)
    if _init_error is not None or _worker is None:
        failed: list[PlayResult] = [{"error": f"worker start-up failed:\n{_init_error}", "match": s.match}
                                    for s in specs]
        return pickle.dumps(failed, _PICKLE)
    return pickle.dumps([_worker.play(spec) for spec in specs], _PICKLE)


def _drain(_: int) -> Drained:
    """The stderr a worker's bots wrote after their last match (Worker.drain)."""
    if _worker is None:
        return {"stderr": [], "worker": "?"}
    try:
        _barrier.wait(timeout=30)  # holds this worker until every worker has one of these tasks
    except Exception:  # noqa: BLE001 - a broken barrier: drain anyway; another worker may repeat
        pass
    return {"stderr": _worker.drain(), "worker": _worker.tag}


MIN_BATCH, MAX_BATCH = 4, 32


def batch_bounds(n: int, workers: int) -> list[tuple[int, int]]:
    """The ``[start, end)`` of each batch of ``n`` specs handed to a worker at once.

    Guided, as OpenMP's schedule of that name: each batch is a share of what is
    left (a quarter of a worker's part of it), from :data:`MIN_BATCH` to
    :data:`MAX_BATCH` matches. Every hand-off costs the parent (its threads
    wake, a pipe each way), on the cores the workers need, so most matches go
    out many at a time; the last ones go out a few at a time, so that no
    worker is left with a long batch while the others have nothing to play.
    """
    bounds = []
    i = 0
    while i < n:
        k = max(MIN_BATCH, min(MAX_BATCH, (n - i) // (4 * max(1, workers))))
        bounds.append((i, min(n, i + k)))
        i += k
    return bounds


class _Pool(multiprocess.pool.Pool):  # type: ignore[misc]  # multiprocess ships no types
    """A pool whose worker handler wakes only when a worker exits or the pool changes.

    The stock handler also waits on the result queue's reader, so each result
    wakes it, and until the result thread has read the result it finds the
    queue readable again and loops: measured at 4% of a core in the parent
    during a league's matches (docs/performance.md), on the core the workers
    need. Replacing dead workers, its job here, needs only their sentinels,
    which it still waits on (``ThreadPool`` waits on the same two).
    """

    def _get_sentinels(self) -> list[Any]:
        return [self._change_notifier._reader]


class LocalBackend:
    """Plays specs on ``workers`` processes; results arrive as matches finish."""

    def __init__(self, entrants: Entrants, limits: SandboxLimits, time: TimeControl, *, workers: int,
                 fresh_process: bool = False, pin: bool = True, slots: int = 1) -> None:
        self.workers = workers
        ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        # Everything alive now (the modules, the config, the schedule) lives as
        # long as the run: out of every later garbage collection, in this process
        # and in the forked workers (whose collections then do not write to, and
        # copy, the pages they share with it). The parent's full collections
        # walked all of it, pandas and pyarrow included, 35 ms each
        # (docs/performance.md).
        gc.freeze()
        counter = ctx.Value("i", 0)
        barrier = ctx.Barrier(workers)
        self.pool = _Pool(workers, initializer=_init,
                          initargs=(list(entrants), limits, time, fresh_process, counter, pin, slots, barrier),
                          context=ctx)

    def run(self, specs: Sequence[MatchSpec]) -> Iterator[PlayResult]:
        bounds = batch_bounds(len(specs), self.workers)
        # Pickled as the pool's task thread takes them, not all before the first.
        batches = (pickle.dumps(list(specs[i:j]), _PICKLE) for i, j in bounds)
        results = self.pool.imap_unordered(_play, batches, chunksize=1)
        pids = self._pids()
        for _ in bounds:
            while True:
                try:
                    played: list[PlayResult] = pickle.loads(results.next(timeout=1.0))
                    yield from played
                    break
                except mp.TimeoutError:
                    # A pool never reports a worker that died mid-match (killed by
                    # the OOM killer, say): it replaces it and waits forever for
                    # the lost result. A changed set of workers means exactly that.
                    if self._pids() != pids:
                        raise RunError("a worker process died while playing; the matches it was "
                                       "playing are not recorded and will be played on resume") from None

    def drain(self) -> list[Drained]:
        """Each worker's last stderr (``{"stderr", "worker"}``), once all matches are played."""
        try:
            drained: list[Drained] = self.pool.map_async(_drain, range(self.workers),
                                                                 chunksize=1).get(timeout=60)
            return drained
        except mp.TimeoutError:
            return []

    def _pids(self) -> set[int]:
        return {p.pid for p in self.pool._pool}  # noqa: SLF001 - no public way to see the workers

    def close(self) -> None:
        self.pool.close()
        self.pool.join()

    def terminate(self) -> None:
        """Stop now: every worker closes its bots and exits, whatever state the pool is in.

        ``Pool.terminate`` alone can hang for ever when a worker was killed while
        holding the result queue's lock, so the workers are stopped directly
        first, and the pool's own clean-up runs in a daemon thread that may not
        keep the run from ending.
        """
        import threading

        workers = list(self.pool._pool)  # noqa: SLF001 - no public way to reach them
        for p in workers:
            if p.exitcode is None:
                p.terminate()  # SIGTERM: the worker closes its bots, then exits
        for p in workers:
            p.join(timeout=3.0)
            if p.exitcode is None:
                p.kill()
                p.join(timeout=1.0)
        stopper = threading.Thread(target=self.pool.terminate, daemon=True)
        stopper.start()
        stopper.join(timeout=5.0)
