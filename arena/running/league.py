"""A league that grows: entrants added, changed or removed between runs of one folder.

A league's run folder keeps its history of entrants in ``run.json`` (``pool``):
a list of *generations*, each the entrants present after it (label and sha256)
and the labels it added. The schedule of the folder is a pure function of the
config, the run seed and that history:

- generation 0 is the ordinary league schedule of its entrants
  (:func:`arena.running.schedule.build_schedule`), match ids ``m-000000`` on;
- each later generation adds, for each new entrant in turn, an *entry block*:
  a gauntlet of the new entrant against every other entrant present in that
  generation, with as many tables as an entrant of generation 0 sits at, its
  own seeds (derived from the run seed, the generation and the entrant's
  label) and match ids continuing after the last one scheduled.

So adding a bot schedules only the new bot's matches: nothing recorded is
replayed or rewritten, and the ratings are fitted on every record.

A *removed* entrant (in the history, not in the config) keeps its recorded
matches (real results of that exact program, rated with the rest); its
matches not yet played are dropped from the schedule. A *changed* entrant
(same label, another sha256) is the removal of the old version (its records
stay under the old label) and the entry of the new version under the label
``LABEL@SHA8`` (the first 8 hex digits of its sha256), so the two versions are
never mixed in one rating (later runs know that version by that label). :class:`PoolPlan` says which of these happened, for
the user to be told.

Only ``format: league`` grows; another format refuses a changed set of bots.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.botfile.spec import changed_files
from arena.botfile.supports import Supports
from arena.engine.records import MatchSpec, derive_seed, match_id
from arena.errors import RunError
from arena.running.config import Entrant, RunConfig
from arena.running.schedule import build_schedule, seat_plan


@dataclass(frozen=True)
class Generation:
    """The entrants present after one growth step, and the labels it added."""

    bots: tuple[tuple[str, str], ...]  # (label, sha256), in run order
    added: tuple[str, ...]
    # label -> its supports declaration (Supports.to_data) for every entrant present: an
    # entry block is a function of them, and must stay so once the bot file is gone.
    supports: Mapping[str, Any] = field(default_factory=dict)
    first: tuple[int, ...] = ()  # the first match index of each added label's entry block
    # label -> {file: digest} (arena.botfile.spec.file_digests) of each version that entered here
    # (all of generation 0's, then those added): what a later run compares to name the files that changed.
    files: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "bots": [list(b) for b in self.bots],
            "added": list(self.added),
            "supports": dict(self.supports),
            "first": list(self.first),
        }
        if self.files:
            data["files"] = {label: dict(f) for label, f in self.files.items()}
        return data

    @staticmethod
    def from_data(data: Any) -> Generation:
        try:
            files = data.get("files") or {}
            return Generation(
                tuple((str(a), str(b)) for a, b in data["bots"]),
                tuple(str(x) for x in data["added"]),
                dict(data.get("supports") or {}),
                tuple(int(x) for x in data.get("first") or ()),
                {str(k): {str(r): str(d) for r, d in v.items()} for k, v in files.items()},
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            raise RunError(f"run.json: pool: {data!r} is not a generation of entrants") from None


@dataclass(frozen=True)
class PoolPlan:
    """How the config's entrants relate to the folder's history."""

    history: tuple[Generation, ...]  # including the new generation, if any
    config: RunConfig  # entrants in run order, a changed bot renamed LABEL@SHA8
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[tuple[str, str], ...] = ()  # (old label, new label)
    retired: frozenset[str] = field(default_factory=frozenset)  # every label no longer present
    # old label -> which of its files differ, in words (also where a format that does not grow refuses)
    changed_files: Mapping[str, str] = field(default_factory=dict)

    @property
    def grew(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def messages(self) -> list[str]:
        """What happened, one line each, for the user."""
        out = []
        for old, new in self.changed:
            files = self.changed_files.get(old)
            out.append(
                f"league: {old} changed ({files or 'another sha256'}): its recorded matches stay under "
                f"{old!r} (the old version, still rated); the new version enters as {new!r}"
            )
        for label in self.removed:
            out.append(
                f"league: {label} is no longer in the config: its recorded matches are kept and "
                f"rated, its matches not yet played are dropped"
            )
        if self.added:
            out.append(
                f"league: adding {', '.join(self.added)}: only their matches against the pool are "
                f"played; nothing recorded is replayed"
            )
        return out


def history_of(meta: Mapping[str, Any] | None) -> tuple[Generation, ...] | None:
    """The folder's generations from its run.json (an old folder: its bots list as generation 0)."""
    if not meta:
        return None
    pool = meta.get("pool")
    if isinstance(pool, list) and pool:
        return tuple(Generation.from_data(g) for g in pool)
    fp = meta.get("fingerprint") or {}
    bots = fp.get("bots")
    if isinstance(bots, list) and bots:
        return (Generation(tuple((str(a), str(b)) for a, b in bots), ()),)
    return None


def plan_pool(config: RunConfig, history: tuple[Generation, ...] | None) -> PoolPlan:
    """Match the config's entrants against the history: the same pool, or a grown one."""
    mine = [(e.label, e.spec.sha256) for e in config.entrants]
    sups = {e.label: e.spec.supports.to_data() for e in config.entrants}
    digests = {e.label: dict(e.spec.digests) for e in config.entrants}
    if history is None:
        return PoolPlan((Generation(tuple(mine), (), sups, files=digests),), config)
    last = history[-1]
    if sorted(last.bots) == sorted(mine):
        if not last.supports:  # a folder from before the pool was recorded
            history = history[:-1] + (dataclasses.replace(last, supports=sups),)
        return PoolPlan(history, _in_order(config, [label for label, _ in last.bots], {}))
    every = {label: sha for g in history for label, sha in g.bots}
    differ = {
        label: _which_files(history, label, digests[label])
        for label, sha in mine
        if label in every and every[label] != sha and every.get(f"{label}@{sha[:8]}") != sha
    }
    if config.format != "league":
        return PoolPlan(history, config, changed_files=differ)  # the caller refuses it: only a league grows
    rename: dict[str, str] = {}
    changed: list[tuple[str, str]] = []
    for label, sha in mine:
        new = f"{label}@{sha[:8]}"
        if every.get(new) == sha:
            rename[label] = new  # a version that entered earlier under its renamed label
        elif label in every and every[label] != sha:
            if new in every:
                raise RunError(f"league: {label} changed and {new!r} is already taken in this run folder")
            rename[label] = new
            changed.append((label, new))
    now = {rename.get(label, label): sha for label, sha in mine}
    kept = [label for label, sha in last.bots if now.get(label) == sha]
    added = [label for label in now if label not in kept]
    removed = [label for label, _ in last.bots if label not in now and label not in rename]
    order = kept + added
    ordered = _in_order(config, order, rename)
    gen = Generation(
        tuple((label, now[label]) for label in order),
        tuple(added),
        {e.label: e.spec.supports.to_data() for e in ordered.entrants},
        files={e.label: dict(e.spec.digests) for e in ordered.entrants if e.label in added},
    )
    if not last.supports:
        old_sups = {label: sups.get(label, {}) for label, _ in last.bots}
        history = history[:-1] + (dataclasses.replace(last, supports=old_sups),)
    return PoolPlan(
        history + (gen,), ordered, tuple(added), tuple(removed), tuple(changed), frozenset(every) - set(order), differ
    )


def _which_files(history: tuple[Generation, ...], label: str, now: Mapping[str, str]) -> str:
    """Which files of ``label`` differ from the version the history last recorded, in words."""
    for g in reversed(history):  # the latest version, under its own label or a renamed one (LABEL@SHA8)
        for key in reversed(list(g.files)):
            if key == label or key.startswith(label + "@"):
                return changed_files(g.files[key], now)
    return "another sha256; this run folder predates the list of each bot's files"


def _in_order(config: RunConfig, order: Sequence[str], rename: Mapping[str, str]) -> RunConfig:
    """The config with its entrants in run order (renamed where a bot changed)."""
    by_label = {rename.get(e.label, e.label): Entrant(rename.get(e.label, e.label), e.spec) for e in config.entrants}
    entrants = tuple(by_label[label] for label in order)
    gauntlet = rename.get(config.gauntlet, config.gauntlet) if config.gauntlet else None
    return dataclasses.replace(config, entrants=entrants, gauntlet=gauntlet)


def _supports(gen: Generation, label: str) -> Supports:
    return Supports.from_data(gen.supports.get(label) or None, f"run.json: pool: {label}")


def league_schedule(
    config: RunConfig, seed: int, history: Sequence[Generation]
) -> tuple[list[MatchSpec], tuple[Generation, ...]]:
    """Every match of the folder's schedule whose entrants are all present
    (indices into ``config.entrants``), and the history with each entry
    block's first index filled in."""
    g0 = history[0]
    labels0 = [label for label, _ in g0.bots]
    hero = labels0.index(config.gauntlet) if config.gauntlet in labels0 else None
    sups0 = [_supports(g0, label) for label in labels0]
    variants = {k: dict(v) for k, v in config.variants.items()}
    base = build_schedule(
        seed=seed,
        n_entrants=len(labels0),
        sizes=config.players,
        matches=config.matches,
        fmt=config.format,
        seating=config.seating,
        variants=variants,
        gauntlet=hero,
        seatable=seat_plan(labels0, sups0, config.players, variants, config.format, hero),
    )
    present = {e.label: i for i, e in enumerate(config.entrants)}
    out = [_remap(s, labels0, present) for s in base]
    index = len(base)
    tables = _tables_per_entrant(base, len(labels0))
    filled = [g0]
    for g, gen in enumerate(history[1:], 1):
        firsts = list(gen.first)
        labels = [label for label, _ in gen.bots]
        for k, new in enumerate(gen.added):
            first = firsts[k] if k < len(firsts) else index
            if k >= len(firsts):
                firsts.append(first)
            sub = [new] + [label for label in labels if label != new]
            block = _entry_block(config, seed, new, g, sub, [_supports(gen, x) for x in sub], tables, first)
            index = max(index, first + len(block))
            out += [_remap(s, sub, present) for s in block]
        filled.append(dataclasses.replace(gen, first=tuple(firsts)))
    return [s for s in out if s is not None], tuple(filled)


def _tables_per_entrant(base: Sequence[MatchSpec], n0: int) -> int:
    """Tables an entrant of generation 0 sits at, on average."""
    tables: dict[int, int] = {}
    for s in base:
        tables[s.table] = len(s.entrants)
    return max(1, math.ceil(sum(tables.values()) / n0))


def _entry_block(
    config: RunConfig, seed: int, new: str, g: int, sub: list[str], supports: list[Supports], tables: int, first: int
) -> list[MatchSpec]:
    """The entry block of ``new`` (``sub[0]``) against ``sub[1:]``: a gauntlet with
    its own seed, match indices from ``first``."""
    sizes = tuple(size for size in config.players if size <= len(sub))
    if not sizes:
        return []
    variants = {k: dict(v) for k, v in config.variants.items()}
    seatable = seat_plan(sub, supports, sizes, variants, "gauntlet", 0)
    per_table = max(sizes) if config.seating == "rotate" else 1
    block = build_schedule(
        seed=derive_seed(seed, "entry", g, new),
        n_entrants=len(sub),
        sizes=sizes,
        matches=tables * per_table,
        fmt="gauntlet",
        seating=config.seating,
        variants=variants,
        gauntlet=0,
        seatable=seatable,
    )
    return [dataclasses.replace(s, index=first + s.index, match=match_id(first + s.index)) for s in block]


def _remap(spec: MatchSpec, labels: Sequence[str], present: Mapping[str, int]) -> MatchSpec | None:
    try:
        return dataclasses.replace(spec, entrants=tuple(present[labels[e]] for e in spec.entrants))
    except KeyError:
        return None  # an entrant of this match is no longer present: not played
