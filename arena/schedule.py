"""The schedule: which entrants meet, in which seats, under which variant, with
which seeds. A pure function of the config and the run seed, so the matches are
the same whatever the number of workers, the backend or the interruptions.

Order is table-major (every variant and rotation of table 0, then table 1 ...),
so a run stopped halfway has played every variant about equally.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Sequence

from arena.errors import ConfigError
from arena.records import MatchSpec, derive_seed, match_id


def _tables_league(rng: random.Random, n_entrants: int, sizes: Sequence[int], count: int,
                   fixed: int | None = None) -> list[tuple[int, ...]]:
    """Random tables balanced greedily: every entrant plays about equally often,
    every pair meets about equally often, every entrant sits in every seat
    position about equally often. ``fixed`` (gauntlet) sits at every table."""
    appear = [0] * n_entrants
    pair = [[0] * n_entrants for _ in range(n_entrants)]
    seat_count = [[0] * 10 for _ in range(n_entrants)]
    pool = [e for e in range(n_entrants) if e != fixed]
    tables: list[tuple[int, ...]] = []
    for t in range(count):
        size = sizes[t % len(sizes)]
        chosen: list[int] = [] if fixed is None else [fixed]
        while len(chosen) < size:
            candidates = [e for e in pool if e not in chosen]
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


def _tables_round_robin(n_entrants: int, sizes: Sequence[int], count: int) -> list[tuple[int, ...]]:
    """Every combination for each table size, seats rotated from cycle to cycle;
    rounded up to whole cycles so every combination plays equally often."""
    combos = [c for size in sizes for c in itertools.combinations(range(n_entrants), size)]
    cycles = max(1, math.ceil(count / len(combos)))
    tables = []
    for cycle in range(cycles):
        for c in combos:
            k = cycle % len(c)
            tables.append(tuple(c[k:] + c[:k]))
    return tables


def build_schedule(*, seed: int, n_entrants: int, sizes: Sequence[int], matches: int, fmt: str,
                   seating: str, variants: dict[str, dict], gauntlet: int | None = None) -> list[MatchSpec]:
    """Every match of the run, in schedule order; ``matches`` counts per variant."""
    rotate = seating == "rotate"
    per_table = 1
    if rotate:
        # Each table is played once per rotation of its seats.
        per_table = max(sizes)
    n_tables = max(1, math.ceil(matches / per_table))
    rng = random.Random(derive_seed(seed, "schedule"))
    if fmt == "league":
        tables = _tables_league(rng, n_entrants, sizes, n_tables)
    elif fmt == "round-robin":
        tables = _tables_round_robin(n_entrants, sizes, n_tables)
    elif fmt == "gauntlet":
        if gauntlet is None:
            raise ConfigError("format gauntlet needs the entrant to face the field (gauntlet: NAME)")
        tables = _tables_league(rng, n_entrants, sizes, n_tables, fixed=gauntlet)
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
                specs.append(MatchSpec(index=index, match=match_id(index), variant=vname, rules=vrules,
                                       entrants=entrants, seed=derive_seed(seed, "match", vname, t, r),
                                       dice_seed=dice_seed, table=t, rotation=r,
                                       repeat=v * len(rotations) + r))
                index += 1
    return specs


def repeats(specs: Sequence[MatchSpec]) -> int:
    """How many matches share each deal (variants x rotations; 1 when none is shared)."""
    return 1 + max((s.repeat for s in specs), default=0)
