"""The local backend: a ``multiprocess`` pool of workers on this machine.

Each worker has a lane, a queue of its own: where deals are played more than
once (paired variants, rotations), the plays of each deal are split between
the lanes (:func:`spread_batches`), so that a worker needs bot processes for
only its share of them (no process plays a deal twice: arena.running.worker);
in an unpaired run a worker whose lane is empty takes from another's, so none
idles; in a paired one it waits (another lane's batch would need new bot
processes: every one of its deals has been played by this worker's).

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
import queue
import signal
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import multiprocess as mp
import multiprocess.pool

from arena.engine.records import MatchSpec
from arena.errors import RunError
from arena.match.process import TimeControl
from arena.running.worker import Drained, Entrants, PlayResult, Worker
from arena.sandbox import SandboxLimits, cgroups, die_with_parent

if TYPE_CHECKING:  # a type only: a worker never reads a config
    from arena.running.config import RunConfig

_worker: Worker | None = None
_init_error: str | None = None
_barrier: Any = None  # a multiprocess Barrier: each worker takes exactly one drain task (LocalBackend.drain)
_lanes: list[Any] = []  # every worker's queue of batches (multiprocess Queues), and this worker's index in it
_lane = 0
_left: Any = None  # a multiprocess Array: the batches not yet claimed in each lane


def _cores() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return []


def _init(
    entrants: Entrants,
    limits: SandboxLimits,
    time: TimeControl,
    fresh: bool,
    counter: Any,
    pin: bool,
    barrier: Any,
    lanes: list[Any],
    left: Any,
) -> None:
    global _barrier, _lanes, _left
    _barrier = barrier
    _lanes, _left = lanes, left
    try:
        _setup(entrants, limits, time, fresh, counter, pin)
    except Exception:  # noqa: BLE001 - reported by _play: a pool whose initializer
        # raises restarts its workers forever and the run would hang.
        global _init_error
        _init_error = traceback.format_exc()


def _setup(entrants: Entrants, limits: SandboxLimits, time: TimeControl, fresh: bool, counter: Any, pin: bool) -> None:
    global _worker, _lane
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with counter.get_lock():
        k = counter.value
        counter.value += 1
    _lane = k % max(1, len(_lanes))  # a replaced worker takes over its lane
    cores = _cores()
    if pin and cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cores[k % len(cores)]})
    # Each worker and its bots one scheduling group with a session's share, not
    # the whole run one (docs/sandbox.md, "Host stalls").
    group = cgroups.join_cpu_group() if limits.mode != "off" else None
    worker = _worker = Worker(entrants, limits, time, fresh)

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


def _next_batch() -> bytes | None:
    """The next batch of this worker's lane or, when none is left there, of the
    lane with the most left, if the run allows it (``_left[-1]``), else None.
    A batch is claimed in the counts first, then read (it may still be on its
    way through the pipe: an empty-looking queue is not taken for an empty lane)."""
    lanes = len(_lanes)
    with _left.get_lock():
        j = _lane if _left[_lane] > 0 or not _left[lanes] else max(range(lanes), key=lambda i: _left[i])
        if _left[j] <= 0:
            return None
        _left[j] -= 1
    blob: bytes = _lanes[j].get()
    return blob


_NOTHING = b""  # a task that found no batch for its worker


def _play(_: int) -> bytes:
    blob = _next_batch()
    if blob is None:
        # Paired deals, and this lane is done: another lane's batch would need new
        # bot processes here (every one of its deals has been played here), more
        # than waiting for that worker costs. The parent asks again while any is left.
        time.sleep(0.05)
        return _NOTHING
    specs: list[MatchSpec] = pickle.loads(blob)
    if _init_error is not None or _worker is None:
        failed: list[PlayResult] = [
            {"error": f"worker start-up failed:\n{_init_error}", "match": s.match} for s in specs
        ]
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


def spread_batches(specs: Sequence[MatchSpec], workers: int) -> list[tuple[int, list[MatchSpec]]]:
    """The batches handed to the workers, each with its lane (the worker meant
    to play it): :func:`batch_bounds`' batches in turn, except that where deals
    are played more than once (paired variants, rotations), each stretch of
    whole deals is cut into ``workers`` batches by repetition (the first
    repetitions of each of its deals, then the next ones, ...), one per lane,
    which lane takes the larger share turning from stretch to stretch.

    So a worker plays about ``1 / workers`` of each deal's repetitions, and
    needs that many processes per entrant (no process plays a deal twice:
    :mod:`arena.running.worker`) rather than one per repetition. Only the
    order of play changes, never a match.
    """
    repeats = 1 + max((s.repeat for s in specs), default=0)
    n = len(specs)
    if workers < 2 or repeats < 2:
        return [(b % max(1, workers), list(specs[i:j])) for b, (i, j) in enumerate(batch_bounds(n, workers))]
    out: list[tuple[int, list[MatchSpec]]] = []
    stretch = 0
    i = 0
    while i < n:
        k = max(MIN_BATCH, min(MAX_BATCH, (n - i) // (4 * workers))) * workers
        j = min(n, i + k)
        while (
            j < n and specs[j].dice_seed == specs[j - 1].dice_seed
        ):  # whole deals (schedule order keeps them together)
            j += 1
        parts: list[list[MatchSpec]] = [[] for _ in range(workers)]
        for s in specs[i:j]:
            parts[min(workers - 1, s.repeat * workers // repeats)].append(s)
        out += [((p + stretch) % workers, part) for p, part in enumerate(parts) if part]
        stretch += 1
        i = j
    return out


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

    def __init__(
        self,
        entrants: Entrants,
        limits: SandboxLimits,
        time: TimeControl,
        *,
        workers: int,
        fresh_process: bool = False,
        pin: bool = True,
    ) -> None:
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
        self.lanes = [ctx.Queue() for _ in range(workers)]
        self.left = ctx.Array("i", workers + 1)  # each lane's batches left; last: whether lanes may be shared
        for lane in self.lanes:
            lane.cancel_join_thread()  # batches left when a run stops early must not hold the parent's exit
        self.pool = _Pool(
            workers,
            initializer=_init,
            initargs=(list(entrants), limits, time, fresh_process, counter, pin, barrier, self.lanes, self.left),
            context=ctx,
        )

    def run(self, specs: Sequence[MatchSpec]) -> Iterator[PlayResult]:
        parts = spread_batches(specs, self.workers)
        for lane, part in parts:  # all in their lanes before the first task: a task's batch is always there
            self.lanes[lane].put(pickle.dumps(part, _PICKLE))
        paired = any(s.repeat for s in specs)
        with self.left.get_lock():
            for lane, _part in parts:
                self.left[lane] += 1
            self.left[self.workers] = 0 if paired else 1
        # One task per worker outstanding, and another for each one answered while
        # batches are left: a task that found nothing for its worker is answered
        # at once, so an idle worker never keeps another waiting.
        answers: queue.SimpleQueue[Any] = queue.SimpleQueue()

        def ask() -> None:
            self.pool.apply_async(_play, (0,), callback=answers.put, error_callback=answers.put)

        for _ in range(min(self.workers, len(parts))):
            ask()
        pids = self._pids()
        received = 0
        while received < len(parts):
            try:
                answer = answers.get(timeout=1.0)
            except queue.Empty:
                # A pool never reports a worker that died mid-match (killed by
                # the OOM killer, say): it replaces it and waits forever for
                # the lost result. A changed set of workers means exactly that.
                if self._pids() != pids:
                    raise RunError(
                        "a worker process died while playing; the matches it was "
                        "playing are not recorded and will be played on resume"
                    ) from None
                continue
            if isinstance(answer, BaseException):
                raise RunError(f"a worker failed: {answer!r}")
            with self.left.get_lock():
                more = any(self.left[k] > 0 for k in range(self.workers))
            if more:
                ask()
            if answer != _NOTHING:
                received += 1
                played: list[PlayResult] = pickle.loads(answer)
                yield from played

    def drain(self) -> list[Drained]:
        """Each worker's last stderr (``{"stderr", "worker"}``), once all matches are played."""
        try:
            drained: list[Drained] = self.pool.map_async(_drain, range(self.workers), chunksize=1).get(timeout=60)
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


def make(config: RunConfig) -> LocalBackend:
    """The backend registry's entry (arena.running.backends): this pool for ``config``."""
    entrants = [(e.label, e.spec) for e in config.entrants]
    return LocalBackend(
        entrants, config.sandbox, config.time, workers=config.workers, fresh_process=config.fresh_process
    )
