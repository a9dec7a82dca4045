"""The schedule: which entrants meet, in which seats, under which variant, with
which seeds. A pure function of the config and the run seed, so the matches are
the same whatever the number of workers, the backend or the interruptions.

Order is table-major (every variant and rotation of table 0, then table 1 ...),
so a run stopped halfway has played every variant about equally.

Bots may declare what they can play (:mod:`arena.botfile.supports`). Every table is
played under every variant, so an entrant can sit at a table of size ``n``
only if it supports ``n`` players under every variant of the run:
:func:`seat_plan` works out who can sit where, or refuses the run naming the
bot, the table size or variant and the reason. Tables are then drawn only
from those entrants; with no declarations every entrant can sit everywhere
and the schedule is exactly the one drawn without them.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

from arena.botfile.supports import Supports, opt_in
from arena.engine.records import MatchSpec, derive_seed, match_id
from arena.errors import ConfigError

Seatable = Mapping[int, Sequence[int]]  # table size -> the entrants that may sit at it


def _why_not_size(sup: Supports, size: int, variants: Mapping[str, Mapping[str, Any]]) -> str | None:
    """Why ``sup`` cannot sit at a table of ``size`` (played under every variant), or None."""
    if sup.players is not None and size not in sup.players:
        # why_not names the table size before anything else.
        return f"table size {size}: {sup.why_not(next(iter(variants.values())), size)}"
    for vname, rules in variants.items():
        why = sup.why_not(rules, size)
        if why is not None:
            return f"variant {vname!r}: {why}"
    return None


def seat_plan(
    labels: Sequence[str],
    supports: Sequence[Supports],
    sizes: Sequence[int],
    variants: Mapping[str, Mapping[str, Any]],
    fmt: str = "league",
    gauntlet: int | None = None,
) -> dict[int, tuple[int, ...]]:
    """For each table size, the entrants (indices, in order) that can sit at it.

    Raises :class:`ConfigError` when the declarations leave the run unplayable
    as configured: an entrant that can sit at no table of the run, a table size
    that too few entrants can fill, a gauntlet hero that cannot play a size.
    Pure: a function of the declarations, the sizes and the variants only.
    """
    everyone = tuple(range(len(labels)))
    if not any(s.restricted for s in supports) and not any(opt_in(v) for v in variants.values()):
        return {size: everyone for size in dict.fromkeys(sizes)}
    reasons: list[dict[int, str]] = [{} for _ in labels]
    plan: dict[int, tuple[int, ...]] = {}
    for size in dict.fromkeys(sizes):
        ok = []
        for e, sup in enumerate(supports):
            why = _why_not_size(sup, size, variants)
            if why is None:
                ok.append(e)
            else:
                reasons[e][size] = why
        plan[size] = tuple(ok)
    if gauntlet is not None and reasons[gauntlet]:
        size, why = next(iter(reasons[gauntlet].items()))
        raise ConfigError(
            f"gauntlet: {labels[gauntlet]!r} sits at every table, but cannot play {why}; "
            f"drop table size {size} from players, or change its supports declaration"
        )
    for e, label in enumerate(labels):
        if len(reasons[e]) == len(plan):
            why = "; ".join(dict.fromkeys(reasons[e].values()))
            raise ConfigError(
                f"bots: {label!r} cannot be seated at any table of this run ({why}); "
                f"remove it from bots, or add a table size and variants it supports"
            )
    for size, seated in plan.items():
        if len(seated) < size:
            out = "; ".join(f"{labels[e]!r}: {reasons[e][size]}" for e in everyone if size in reasons[e])
            can = ", ".join(repr(labels[e]) for e in seated) or "none"
            raise ConfigError(
                f"players: a table of {size} needs {size} entrants that support it, only {len(ok)} do ({can}); {out}"
            )
    return plan


def _tables_league(
    rng: random.Random,
    n_entrants: int,
    sizes: Sequence[int],
    count: int,
    fixed: int | None = None,
    seatable: Seatable | None = None,
) -> list[tuple[int, ...]]:
    """Random tables balanced greedily: every entrant plays about equally often,
    every pair meets about equally often, every entrant sits in every seat
    position about equally often. ``fixed`` (gauntlet) sits at every table.

    With ``seatable``, a table of size n is drawn only from the entrants that
    may sit at it. An entrant that plays fewer sizes plays fewer tables, so it
    is behind on appearances and the greedy choice seats it at every table it
    can play while it is behind: it plays as often as its declaration allows."""
    appear = [0] * n_entrants
    pair = [[0] * n_entrants for _ in range(n_entrants)]
    seat_count = [[0] * 10 for _ in range(n_entrants)]
    pool = [e for e in range(n_entrants) if e != fixed]
    pools = {size: [e for e in pool if seatable is None or e in seatable[size]] for size in sizes}
    tables: list[tuple[int, ...]] = []
    for t in range(count):
        size = sizes[t % len(sizes)]
        chosen: list[int] = [] if fixed is None else [fixed]
        while len(chosen) < size:
            candidates = [e for e in pools[size] if e not in chosen]
            rng.shuffle(candidates)  # random among equals
            best = min(candidates, key=lambda e: (appear[e], sum(pair[e][c] for c in chosen)))
            chosen.append(best)
        for a in chosen:
            appear[a] += 1
            for b in chosen:
                if a != b:
                    pair[a][b] += 1
        # Seats: each entrant (the most frequent first, so the gauntlet's hero
        # leads) takes the free position it has sat in least.
        seats: list[int] = [-1] * size
        free = list(range(size))
        rng.shuffle(chosen)
        for e in sorted(chosen, key=lambda x: -appear[x]):
            rng.shuffle(free)
            pos = min(free, key=lambda p: seat_count[e][p])
            free.remove(pos)
            seats[pos] = e
            seat_count[e][pos] += 1
        order = seats
        tables.append(tuple(order))
    return tables


def _tables_round_robin(
    n_entrants: int, sizes: Sequence[int], count: int, seatable: Seatable | None = None
) -> list[tuple[int, ...]]:
    """Every combination for each table size (of the entrants that may sit at
    it), seats rotated from cycle to cycle; rounded up to whole cycles so every
    combination plays equally often."""
    combos = [
        c
        for size in sizes
        for c in itertools.combinations(range(n_entrants) if seatable is None else seatable[size], size)
    ]
    cycles = max(1, math.ceil(count / len(combos)))
    tables = []
    for cycle in range(cycles):
        for c in combos:
            k = cycle % len(c)
            tables.append(tuple(c[k:] + c[:k]))
    return tables


def build_schedule(
    *,
    seed: int,
    n_entrants: int,
    sizes: Sequence[int],
    matches: int,
    fmt: str,
    seating: str,
    variants: dict[str, dict[str, Any]],
    gauntlet: int | None = None,
    seatable: Seatable | None = None,
) -> list[MatchSpec]:
    """Every match of the run, in schedule order; ``matches`` counts per variant.

    ``seatable`` (from :func:`seat_plan`) restricts who may sit at a table of
    each size; ``None`` means everyone."""
    if seatable is not None:
        missing = [size for size in sizes if size not in seatable]
        if missing:
            raise ConfigError(f"no seat plan for table size {missing[0]}")
    rotate = seating == "rotate"
    per_table = 1
    if rotate:
        # Each table is played once per rotation of its seats.
        per_table = max(sizes)
    n_tables = max(1, math.ceil(matches / per_table))
    rng = random.Random(derive_seed(seed, "schedule"))
    if fmt == "league":
        tables = _tables_league(rng, n_entrants, sizes, n_tables, seatable=seatable)
    elif fmt == "round-robin":
        tables = _tables_round_robin(n_entrants, sizes, n_tables, seatable)
    elif fmt == "gauntlet":
        if gauntlet is None:
            raise ConfigError("format gauntlet needs the entrant to face the field (gauntlet: NAME)")
        tables = _tables_league(rng, n_entrants, sizes, n_tables, fixed=gauntlet, seatable=seatable)
    else:
        raise ConfigError(f"format {fmt!r} is not allowed; use league, round-robin or gauntlet")
    specs: list[MatchSpec] = []
    index = 0
    for t, table in enumerate(tables):
        dice_seed = derive_seed(seed, "dice", t)
        rotations = range(len(table)) if rotate else range(1)
        for v, (vname, rules) in enumerate(variants.items()):
            vrules = dict(rules)
            if rotate:
                # Duplicate play: the schedule fixes the seats; dice follow seat positions.
                vrules["seating"] = "fixed"
            for r in rotations:
                entrants = table[r:] + table[:r]
                specs.append(
                    MatchSpec(
                        index=index,
                        match=match_id(index),
                        variant=vname,
                        rules=vrules,
                        entrants=entrants,
                        seed=derive_seed(seed, "match", vname, t, r),
                        dice_seed=dice_seed,
                        table=t,
                        rotation=r,
                        repeat=v * len(rotations) + r,
                    )
                )
                index += 1
    return specs


def repeats(specs: Sequence[MatchSpec]) -> int:
    """How many matches share each deal (variants x rotations; 1 when none is shared)."""
    return 1 + max((s.repeat for s in specs), default=0)
