"""Running a config: seed, schedule, run folder, preflight, backend, summary.

:func:`run` is what ``arena run`` calls. It resumes an unfinished folder
(playing only the matches not yet recorded), refuses a folder made by another
config, checks every bot's handshake before any match starts, streams records
to the folder as matches finish and reports progress through a callback.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.botfile.spec import RAISABLE
from arena.engine.records import MatchRecord, MatchSpec
from arena.errors import ArenaError, BotFault, RunError
from arena.match.process import BotProcess
from arena.running.backends import Backend
from arena.running.config import Entrant, RunConfig
from arena.running.schedule import build_schedule, repeats, seat_plan
from arena.running.store import RunStore, read_run_json
from arena.running.worker import Drained, PlayResult, deal_slots
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
    records: list[MatchRecord] = field(default_factory=list)
    error: str | None = None


GUESSABLE_BELOW = 2 ** 32


def seed_warning(seed: int | None) -> str | None:
    """A word of warning for an explicit seed small enough to guess.

    The dice are a pure function of the seed (that is what makes a run
    reproducible), and every bot can read the project's code: a bot that tries
    small seeds until one reproduces its own hand knows every hand from then on.
    A secret 63-bit seed (the default) cannot be found that way.
    """
    if seed is None or seed >= GUESSABLE_BELOW:
        return None
    return (f"note: seed {seed} can be guessed: a bot that tries small seeds until one reproduces its own "
            f"dice would know every hand. Leave `seed` out (a secret one is drawn) when the bots are not "
            f"your own.")


def effective_seed(config: RunConfig) -> int:
    """The config's seed, or the one an earlier run of this folder drew, or a new
    secret one (recorded in run.json so the run can be resumed and reproduced)."""
    if config.seed is not None:
        return config.seed
    old = read_run_json(config.out) if config.out.exists() else None
    if old and isinstance(old.get("seed"), int) and (old.get("config") or {}).get("seed") is None:
        return int(old["seed"])
    return secrets.randbits(63)


def seatable_for(config: RunConfig) -> dict[int, tuple[int, ...]]:
    """Table size -> the entrants (indices) whose declarations let them sit at it."""
    labels = [e.label for e in config.entrants]
    hero = labels.index(config.gauntlet) if config.gauntlet is not None else None
    return seat_plan(labels, [e.spec.supports for e in config.entrants], config.players, config.variants,
                     config.format, hero)


def schedule_for(config: RunConfig, seed: int) -> list[MatchSpec]:
    labels = [e.label for e in config.entrants]
    hero = labels.index(config.gauntlet) if config.gauntlet is not None else None
    return build_schedule(seed=seed, n_entrants=len(labels), sizes=config.players, matches=config.matches,
                          fmt=config.format, seating=config.seating,
                          variants={k: dict(v) for k, v in config.variants.items()},
                          gauntlet=hero, seatable=seatable_for(config))


def preflight(config: RunConfig) -> None:
    """Start every distinct bot once: a bot that fails its handshake stops the run
    before any match is played, with the bot's name and what went wrong.

    The bots start in parallel threads (a start is mostly waiting for the
    interpreter), and each is closed by the thread that started it.
    """
    from concurrent.futures import ThreadPoolExecutor

    distinct = {(e.spec.sha256, str(e.spec.path)): e for e in config.entrants}

    def handshake(e: Entrant) -> str | None:
        proc = BotProcess(e.spec, config.sandbox.for_bot(e.spec.limits, f"bot {e.label}"), config.time)
        try:
            proc.start()
        except BotFault as exc:
            return (f"{config.path}: bots: {e.label} ({e.spec.path}) failed its handshake: "
                    f"{exc.kind}: {exc.detail}")
        finally:
            proc.close()
        return None

    with ThreadPoolExecutor(max_workers=min(8, len(distinct))) as pool:
        problems = [p for p in pool.map(handshake, distinct.values()) if p]
    if problems:
        raise RunError("; ".join(problems))


def make_backend(config: RunConfig, slots: int = 1) -> Backend:
    """The config's backend; ``slots``: bot processes per entrant in each worker
    (one per repetition of a deal, :func:`arena.running.worker.deal_slots`)."""
    entrants = [(e.label, e.spec) for e in config.entrants]
    if config.backend == "ray":
        try:
            from arena.running.backends.ray import RayBackend
        except ImportError as exc:
            raise RunError("backend ray needs Ray: pip install -e '.[ray]' "
                           f"(import failed: {exc})") from None
        return RayBackend(entrants, config.sandbox, config.time, workers=config.workers,
                          address=config.address, fresh_process=config.fresh_process, slots=slots)
    from arena.running.backends.local import LocalBackend

    return LocalBackend(entrants, config.sandbox, config.time, workers=config.workers,
                        fresh_process=config.fresh_process, slots=slots)


def run(config: RunConfig, *, force: bool = False, progress: Progress | None = None,
        keep_records: bool = False) -> RunResult:
    """Play every match of ``config`` not yet in its run folder."""
    seed = effective_seed(config)
    specs = schedule_for(config, seed)
    seatable = seatable_for(config)
    store = RunStore(config.out)
    meta = {
        "name": config.name,
        "seed": seed,
        "config": {**config.raw, "seed": config.seed},
        "variants": {k: dict(v) for k, v in config.variants.items()},
        "bots": [{"name": e.label, "bot": e.spec.name, "path": str(e.spec.path), "kind": e.spec.kind,
                  "sha256": e.spec.sha256, "version": e.spec.version,
                  # What it declared it can play ({}: anything), and the table sizes of this run it may sit at.
                  "supports": e.spec.supports.to_data(),
                  "table_sizes": [size for size, ok in seatable.items() if i in ok],
                  "limits": _own_limits(config.sandbox.for_bot(e.spec.limits, f"bot {e.label}"))}
                 for i, e in enumerate(config.entrants)],
        "schedule": {"format": config.format, "players": list(config.players), "seating": config.seating,
                     "matches_per_variant": config.matches, "total": len(specs)},
        "time": _plain(config.time),
        "sandbox": _plain(config.sandbox),
        "workers": config.workers,
        "backend": config.backend,
    }
    fingerprint = {**config.fingerprint(), "seed": seed}
    preflight(config)  # before the folder is touched: a broken bot changes nothing
    done = store.open(meta, fingerprint, force=force)
    todo = [s for s in specs if s.match not in done]
    result = RunResult(config.out, "complete", 0, len(specs) - len(todo), len(specs), 0.0)
    start = time.monotonic()
    if not todo:
        store.close("complete", compress=config.compress)
        return result
    backend = None
    try:
        backend = make_backend(config, deal_slots(repeats(specs), len(config.entrants)))
        if progress:
            progress(result.skipped, result.total, 0.0)
        for item in backend.run(todo):
            if "error" in item:
                raise RunError(f"internal error while playing {item['match']} (a bug in Dudo Arena, "
                               f"please report it); recorded matches are kept:\n{item['error']}")
            store.append_line(item["line"])
            _write_stderr(store, item)
            if keep_records:
                result.records.append(MatchRecord.from_json(item["line"]))
            result.played += 1
            if progress:
                progress(result.skipped + result.played, result.total, time.monotonic() - start)
        for drained in backend.drain():  # what bots wrote after their last match (on match_end)
            _write_stderr(store, drained)
        backend.close()
        backend = None
    except KeyboardInterrupt:
        result.status = "interrupted"
    except ArenaError as exc:
        result.status = "failed"
        result.error = str(exc)
    finally:
        if backend is not None:
            backend.terminate()
        result.seconds = time.monotonic() - start
        store.close(result.status if result.status != "failed" else "interrupted",
                    compress=config.compress)
    return result


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
