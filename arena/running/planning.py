"""What a run of a config in its folder will be, before anything is played.

:func:`plan_run` reads the folder's ``run.json`` and decides: the seed (the
config's, the one the folder's run drew, or a new secret one), the pool of
entrants against the folder's history (:mod:`arena.running.league`), the
schedule (a league's, or ``format: sprt``'s paired deals with the test as an
observer, :mod:`arena.running.sprt`), the fingerprint a resume is checked
against, and whether the folder already holds this run finished (then
nothing is played and the run says so).
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arena.engine.records import MatchSpec
from arena.running.config import RunConfig
from arena.running.league import Generation, PoolPlan, history_of, league_schedule, plan_pool
from arena.running.observe import Finished, Observer
from arena.running.sprt import SprtTest, sprt_schedule
from arena.running.store import read_records, read_run_json

Schedule = Callable[[RunConfig, int], list[MatchSpec]]
Meta = Callable[[], dict[str, Any]]


def effective_seed(config: RunConfig, old: dict[str, Any] | None = None) -> int:
    """The config's seed, or the one an earlier run of this folder drew (``old``:
    its run.json), or a new secret one (recorded in run.json so the run can be
    resumed and reproduced)."""
    if config.seed is not None:
        return config.seed
    if old is None and config.out.exists():
        old = read_run_json(config.out)
    if old and isinstance(old.get("seed"), int) and (old.get("config") or {}).get("seed") is None:
        return int(old["seed"])
    return secrets.randbits(63)


def settings_fingerprint(config: RunConfig, seed: int) -> dict[str, Any]:
    """What must match for a folder to be resumed, but for its bots (the pool)."""
    fp = {**config.fingerprint(), "seed": seed}
    fp.pop("bots", None)
    return fp


def _settings_of(meta: dict[str, Any] | None) -> dict[str, Any] | None:
    fp = dict((meta or {}).get("fingerprint") or {})
    fp.pop("bots", None)
    return fp or None


@dataclass
class RunPlan:
    config: RunConfig  # entrants in run order (a changed bot renamed)
    seed: int
    specs: list[MatchSpec]
    history: tuple[Generation, ...]
    pool: PoolPlan
    fingerprint: dict[str, Any]
    observer: Observer | None
    extra_meta: Meta | None
    retired: list[dict[str, Any]] = field(default_factory=list)  # run.json entries of retired entrants
    already: bool = False  # the folder holds this run, finished
    ended: str | None = None
    recorded: int = 0


def plan_run(
    config: RunConfig,
    *,
    new: bool = False,
    observer: Observer | None = None,
    extra_meta: Meta | None = None,
    schedule: Schedule | None = None,
    on_plan: Callable[[PoolPlan], Any] | None = None,
    sprt_test: SprtTest | None = None,
) -> RunPlan:
    """Plan the run (see the module docstring); ``new``: ignore the folder's run."""
    old = read_run_json(config.out) if config.out.exists() and not new else None
    seed = (
        effective_seed(config, old) if not new else (config.seed if config.seed is not None else secrets.randbits(63))
    )
    settings = settings_fingerprint(config, seed)
    same = old is not None and _settings_of(old) == settings
    pool = plan_pool(config, history_of(old) if same else None)
    config = pool.config
    if pool.grew and on_plan is not None and config.format == "league":
        on_plan(pool)
    if config.format == "sprt" and config.sprt is not None:
        test = sprt_test or SprtTest(config.sprt, math.ceil(config.matches / 2))
        observer = _both(test.observe, observer)
        extra_meta = _merged(lambda: {"sprt": test.to_data()}, extra_meta)
        vname, rules = next(iter(config.variants.items()))
        schedule = schedule or (
            lambda c, s: sprt_schedule(
                seed=s,
                labels=[e.label for e in c.entrants],
                params=test.params,
                players=c.players[0],
                pairs=test.pairs,
                variant=vname,
                rules=rules,
            )
        )
    if schedule is not None:
        specs, history = schedule(config, seed), pool.history
    else:
        specs, history = league_schedule(config, seed, pool.history)
    fingerprint = {**settings, "bots": [[e.label, e.spec.sha256] for e in config.entrants]}
    retired = (
        [
            b
            for b in list(old.get("bots", [])) + list(old.get("retired", []))
            if isinstance(b, dict) and b.get("name") in pool.retired
        ]
        if same and old
        else []
    )
    plan = RunPlan(config, seed, specs, history, pool, fingerprint, observer, extra_meta, retired)
    # A complete folder is shown as it is unless a bot changed (a format that does not grow then refuses
    # in the store, naming the files).
    if same and old is not None and old.get("status") == "complete" and not pool.grew and not pool.changed_files:
        recorded = read_records(config.out).records
        ids = {r.match for r in recorded}
        stop = False
        if observer is not None:
            for rec in recorded:
                stop = observer(Finished.of(rec)) or stop
        if stop or all(s.match in ids for s in specs):
            plan.already, plan.ended, plan.recorded = True, old.get("ended"), len(ids)
    return plan


def _both(first: Observer, second: Observer | None) -> Observer:
    """One observer of two: both see every match; stop when either says so."""
    if second is None:
        return first

    def observe(rec: Finished) -> bool:
        stop = first(rec)
        return second(rec) or stop

    return observe


def _merged(first: Meta, second: Meta | None) -> Meta:
    return first if second is None else (lambda: {**second(), **first()})
