"""Running a config: seed, schedule, run folder, preflight, backend, summary.

:func:`run` is what ``arena run`` calls. It resumes an unfinished folder
(playing only the matches not yet recorded), refuses a folder made by another
config, checks every bot's handshake before any match starts, streams records
to the folder as matches finish and reports progress through a callback.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.botfile.spec import RAISABLE
from arena.engine.records import MatchSpec
from arena.errors import ArenaError, BotFault, RunError
from arena.match.process import BotProcess
from arena.running import backends
from arena.running.config import Entrant, RunConfig
from arena.running.league import PoolPlan
from arena.running.observe import Finished, Observer
from arena.running.planning import plan_run
from arena.running.schedule import seat_plan
from arena.running.sprt import SprtTest
from arena.running.store import RunStore, move_aside
from arena.running.worker import Drained, PlayResult
from arena.sandbox import SandboxLimits

Progress = Callable[[int, int, float], None]  # (done, total, elapsed seconds)


@dataclass
class RunResult:
    folder: Path
    status: str  # complete | interrupted | failed
    played: int
    skipped: int
    total: int
    seconds: float
    error: str | None = None
    already: bool = False  # the folder held this run, finished: nothing was played
    ended: str | None = None  # when that finished run ended (run.json)
    config: RunConfig | None = None  # the config as run (entrants in run order)
    plan: PoolPlan | None = None  # how the pool relates to the folder's history
    note: str | None = None
    stopped_by: int | None = None  # the signal that interrupted it: SIGINT (Ctrl-C) or SIGTERM
    replayed: int = 0  # matches played again after a host stall (docs/sandbox.md, "Host stalls")


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived while matches were being played: the run stops as on Ctrl-C."""


@contextmanager
def terminate_as_interrupt() -> Iterator[Callable[[], None]]:
    """While it is active, SIGTERM stops the run the way Ctrl-C does.

    Why: ``kill``, ``timeout``, systemd, ``docker stop`` and a CI runner's
    cancel all send SIGTERM, whose default ends the process on the spot: the
    run folder then says ``running``, and the tables and the resume command
    are missing (the records are safe either way). A handler someone else
    installed (a program embedding :func:`run`) is left alone, and so is any
    thread but the main one, where Python cannot take signals. It yields
    ``claim``, which takes SIGTERM back once the backend has started: Ray's
    driver installs a handler of its own that exits without a word."""
    own = threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL

    def stop(signum: int, frame: object) -> None:
        raise Terminated

    def claim() -> None:
        if own:
            signal.signal(signal.SIGTERM, stop)

    claim()
    try:
        yield claim
    finally:
        if own:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


GUESSABLE_BELOW = 2**32


def seed_warning(seed: int | None) -> str | None:
    """A word of warning for an explicit seed small enough to guess.

    The dice are a pure function of the seed (that is what makes a run
    reproducible), and every bot can read the project's code: a bot that tries
    small seeds until one reproduces its own hand knows every hand from then on.
    A secret 63-bit seed (the default) cannot be found that way.
    """
    if seed is None or seed >= GUESSABLE_BELOW:
        return None
    return (
        f"note: seed {seed} can be guessed: a bot that tries small seeds until one reproduces its own "
        f"dice would know every hand. Leave `seed` out (a secret one is drawn) when the bots are not "
        f"your own."
    )


def seatable_for(config: RunConfig) -> dict[int, tuple[int, ...]]:
    """Table size -> the entrants (indices) whose declarations let them sit at it."""
    labels = [e.label for e in config.entrants]
    hero = labels.index(config.gauntlet) if config.gauntlet is not None else None
    return seat_plan(
        labels, [e.spec.supports for e in config.entrants], config.players, config.variants, config.format, hero
    )


def preflight(config: RunConfig, meanwhile: Callable[[], object] | None = None) -> None:
    """Start every distinct bot once: a bot that fails its handshake stops the run
    before any match is played, with the bot's name and what went wrong.

    The bots start in parallel threads (a start is mostly waiting for the
    interpreter), and each is closed by the thread that started it.
    ``meanwhile`` runs in the calling thread as they start, and is done when
    this returns (so no thread of it is left when the workers are forked).
    """
    from concurrent.futures import ThreadPoolExecutor

    distinct = {(e.spec.sha256, str(e.spec.path)): e for e in config.entrants}

    def handshake(e: Entrant) -> str | None:
        proc = BotProcess(e.spec, config.sandbox.for_bot(e.spec.limits, f"bot {e.label}"), config.time)
        try:
            proc.start()
        except BotFault as exc:
            return f"{config.path}: bots: {e.label} ({e.spec.path}) failed its handshake: {exc.kind}: {exc.detail}"
        finally:
            proc.close()
        return None

    with ThreadPoolExecutor(max_workers=min(8, len(distinct))) as pool:
        started = pool.map(handshake, distinct.values())
        if meanwhile is not None:
            meanwhile()
        problems = [p for p in started if p]
    if problems:
        raise RunError("; ".join(problems))


def run(
    config: RunConfig,
    *,
    force: bool = False,
    new: bool = False,
    progress: Progress | None = None,
    observer: Observer | None = None,
    extra_meta: Callable[[], dict[str, Any]] | None = None,
    schedule: Callable[[RunConfig, int], list[MatchSpec]] | None = None,
    on_plan: Callable[[PoolPlan], Any] | None = None,
    sprt_test: SprtTest | None = None,
    meanwhile: Callable[[], object] | None = None,
    seats_written: Callable[[], object] | None = None,
) -> RunResult:
    """Play every match of ``config`` not yet in its run folder.

    ``new``: move an existing folder aside and start a new run (a new secret
    seed unless the config names one). ``observer`` sees every record, the
    ones already recorded first; when it returns True the run stops there,
    complete (a sequential test that has decided). ``extra_meta`` is merged
    into run.json when the run stops. ``schedule`` replaces the config's
    schedule (``arena sprt``'s paired deals). ``on_plan`` is told how a
    league's pool changed (bots added, removed, changed) before anything is played.
    ``format: sprt`` plays paired deals and stops when the test decides
    (``sprt_test``: the caller's :class:`SprtTest`, to show it as it goes).
    ``meanwhile``: the caller's own work, done while the bots are checked
    before the first match (:func:`preflight`; ``arena run`` imports its
    end-of-run table's modules there), not at all if nothing is to be played.
    ``seats_written``: called as the run folder is closed, as soon as what
    rating reads holds the run (:meth:`RunStore.close`): ``arena run``'s
    helper rates it then, while the analysis tables are written."""
    p = plan_run(
        config,
        new=new,
        observer=observer,
        extra_meta=extra_meta,
        schedule=schedule,
        on_plan=on_plan,
        sprt_test=sprt_test,
    )
    config, specs, observer, extra_meta = p.config, p.specs, p.observer, p.extra_meta
    if p.already:
        return RunResult(
            config.out,
            "complete",
            0,
            p.recorded,
            len(specs),
            0.0,
            already=True,
            ended=p.ended,
            config=config,
            plan=p.pool,
        )
    seatable = seatable_for(config)
    store = RunStore(config.out)
    meta = {
        "name": config.name,
        "seed": p.seed,
        "config": {**config.raw, "seed": config.seed},
        "variants": {k: dict(v) for k, v in config.variants.items()},
        "bots": [
            {
                "name": e.label,
                "bot": e.spec.name,
                "path": str(e.spec.path),
                "kind": e.spec.kind,
                "sha256": e.spec.sha256,
                "version": e.spec.version,
                # What it declared it can play ({}: anything), and the table sizes of this run it may sit at.
                "supports": e.spec.supports.to_data(),
                "table_sizes": [size for size, ok in seatable.items() if i in ok],
                "limits": _own_limits(config.sandbox.for_bot(e.spec.limits, f"bot {e.label}")),
            }
            for i, e in enumerate(config.entrants)
        ],
        # Entrants of earlier generations no longer present: their records stay and are rated.
        "retired": p.retired,
        "pool": [g.to_data() for g in p.history],
        "schedule": {
            "format": config.format,
            "players": list(config.players),
            "seating": config.seating,
            "matches_per_variant": config.matches,
            "total": len(specs),
        },
        "time": _plain(config.time),
        "sandbox": _plain(config.sandbox),
        "workers": config.workers,
        "backend": config.backend,
    }
    preflight(config, meanwhile)  # before the folder is touched: a broken bot changes nothing
    result_note = None
    if new and config.out.exists() and any(config.out.iterdir()):
        result_note = f"the earlier run was moved to {move_aside(config.out)}"
    done = store.open(
        meta, p.fingerprint, force=force, pool_planned=config.format == "league", changed_bots=p.pool.changed_files
    )
    if store.recovered is not None:
        result_note = store.recovered if result_note is None else f"{result_note}\n{store.recovered}"
    todo = [s for s in specs if s.match not in done]
    result = RunResult(
        config.out, "complete", 0, len(specs) - len(todo), len(specs), 0.0, config=config, plan=p.pool, note=result_note
    )
    start = time.monotonic()
    stopped = False
    if observer is not None and store.read is not None:
        for old_rec in store.read.records:
            stopped = observer(Finished.of(old_rec)) or stopped
    if not todo or stopped:
        if extra_meta is not None:
            store.meta.update(extra_meta())
        store.close("complete", compress=config.compress, seats_written=seats_written)
        return result
    backend = None
    try:
        with terminate_as_interrupt() as claim:
            backend = backends.make(config)
            claim()
            if progress:
                progress(result.skipped, result.total, 0.0)
            for item in backend.run(todo):
                if "error" in item:
                    raise RunError(
                        f"internal error while playing {item['match']} (a bug in Dudo Arena, "
                        f"please report it); recorded matches are kept:\n{item['error']}"
                    )
                store.append_line(item["line"], item.get("rows"), item.get("tables"))
                _write_stderr(store, item)
                if item.get("replays"):
                    result.replayed += len(item["replays"])
                    _note_replays(store, item["match"], item["replays"])
                result.played += 1
                if progress:
                    progress(result.skipped + result.played, result.total, time.monotonic() - start)
                if observer is not None:
                    # Made by the worker from the record in its memory, not parsed from
                    # the line here (30 us a record, on the cores the workers need).
                    if observer(item["finished"]):
                        stopped = True
                        break
            if not stopped:
                for drained in backend.drain():  # what bots wrote after their last match (on match_end)
                    _write_stderr(store, drained)
                backend.close()
                backend = None
    except KeyboardInterrupt as stop:
        result.status = "interrupted"
        result.stopped_by = signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT
    except ArenaError as exc:
        result.status = "failed"
        result.error = str(exc)
    finally:
        if backend is not None:
            backend.terminate()
        result.seconds = time.monotonic() - start
        if extra_meta is not None:
            store.meta.update(extra_meta())
        store.close(
            result.status if result.status != "failed" else "interrupted",
            compress=config.compress,
            seats_written=seats_written,
        )
        if not store.status_written:
            result.error = f"{result.error}; {store.paths.run_json} still says running (the disk refused it too)"
    return result


MAX_REPLAY_NOTES = 100  # replays described one by one in run.json; past it, only counted


def _note_replays(store: RunStore, match: str, replays: list[tuple[str, str]]) -> None:
    """Count host-stall replays in run.json (``replays``: totals, per bot, and
    the first :data:`MAX_REPLAY_NOTES` with what held the bot up); a resumed
    run adds to what its folder holds."""
    notes = store.meta.setdefault("replays", {"matches": 0, "by_bot": {}, "first": []})
    notes["matches"] += len(replays)
    for label, detail in replays:
        notes["by_bot"][label] = notes["by_bot"].get(label, 0) + 1
        if len(notes["first"]) < MAX_REPLAY_NOTES:
            notes["first"].append({"match": match, "bot": label, "detail": detail})


def _write_stderr(store: RunStore, item: PlayResult | Drained) -> None:
    for label, match, note, data, lost in item.get("stderr", ()):
        store.write_stderr(label, data, match=match, worker=item.get("worker", "?"), note=note, lost=lost)


def _own_limits(limits: SandboxLimits) -> dict[str, int]:
    """The limits a bot may raise, as it runs with them (run.json)."""
    return {key: getattr(limits, key) for key in RAISABLE}


def _plain(obj: Any) -> Any:
    import dataclasses

    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    return obj
