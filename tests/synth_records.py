"""Synthetic run folders for the analysis tests: match records played by the
real rules engine with simple in-process policies (no bot processes), written
as docs/records.md describes. Used until a real small ``arena run`` replaces them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pandas as pd

from arena.engine import rules as R
from arena.engine.dice import roll_table
from arena.engine.records import MatchRecord

# Policies: how much a bid must exceed the expected count before the bot calls
# dudo (lower is sharper); "random" picks any legal action.
POLICIES = {"random": None, "cautious": 0.5, "sharp": 0.0, "reckless": 3.0}


def _expected(state: R.State, seat: int, bid: R.Bid) -> float:
    hand = state.dice[seat] if state.dice else ()
    wild = state.rules.wild_ones and bid.face != 1 and not state.palifico
    own = sum(1 for d in hand if d == bid.face or (wild and d == 1))
    unseen = sum(state.counts) - len(hand)
    p = 1 / 3 if wild else 1 / 6
    return own + unseen * p


def _choose(state: R.State, policy: str, rng: random.Random) -> R.Action:
    legal = R.legal_actions(state)
    if not state.counts[state.to_act]:  # out, asked for a dead man's calza (dead_mans_calza): now and then
        return R.CALZA if rng.random() < 0.2 else R.PASS
    margin = POLICIES[policy]
    if margin is None:
        return rng.choice(legal)
    seat = state.to_act
    bids = [a for a in legal if isinstance(a, R.Bid)]
    if state.history:
        standing = state.history[-1][1]
        if standing.quantity > _expected(state, seat, standing) + margin or not bids:
            return R.DUDO
    # The cheapest raise on one of a few faces, preferring what we hold.
    sample = bids[:12]
    return max(sample, key=lambda b: (_expected(state, seat, b) - b.quantity, -sample.index(b)))


def play(
    match: str,
    variant: str,
    rules: R.Rules,
    bots: list[str],
    seed: int,
    fault: tuple[int, int, str] | None = None,
    policy_of: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One match record; ``fault`` = (seat, round, kind) makes that seat fault
    when it first acts in that round (or later). A bot plays the policy of
    its name, or ``policy_of[name]``."""
    rng = random.Random(seed)
    n = len(bots)
    first = rng.randrange(n)
    state = R.new_match(rules, n, first)
    rounds: list[dict[str, Any]] = []
    faults: list[dict[str, Any]] = []
    while state.placements is None:
        state = R.deal(state, roll_table(seed, state.round, state.counts))
        acts: list[list[Any]] = []  # as played: bids, a dead man's passes (dead_mans_calza), the call
        while state.dice is not None and state.placements is None:
            seat = state.to_act
            if fault and seat == fault[0] and state.round >= fault[1] and not faults and state.counts[seat]:
                faults.append({"seat": seat, "round": state.round, "kind": fault[2], "detail": "synthetic"})
                state = R.fault(state, seat)
                break
            action = _choose(state, (policy_of or {}).get(bots[seat], bots[seat]), rng)
            state = R.apply(state, action)
            if type(action) is R.Bid:
                acts.append([seat, "bid", action.quantity, action.face])
            elif state.dice is not None:  # a pass; a call ends the round and is added below
                acts.append([seat, str(action)])
            if state.last is not None and state.dice is None:
                break
        last = state.last
        assert last is not None
        entry: dict[str, Any] = {
            "round": last.round,
            "opener": last.opener,
            "palifico": last.palifico,
            "dice": [list(h) for h in last.dice],
            "actions": acts,
        }
        if last.fault is not None:
            entry["fault"] = {"seat": last.fault, "kind": faults[-1]["kind"], "detail": "synthetic"}
        else:
            assert last.call is not None and last.change is not None
            acts.append([last.call[0], last.call[1]])
            entry["count"] = last.count
            entry["change"] = {"seat": last.change[0], "delta": last.change[1]}
        rounds.append(entry)
    return {
        "match": match,
        "variant": variant,
        "rules": rules.to_dict(),
        "seed": seed,
        "bots": bots,
        "first": first,
        "rounds": rounds,
        "placements": list(state.placements),
        "rounds_played": len(rounds),
        "seconds": 0.01,
        "faults": faults,
        "think": [0.001 * (i + 1) for i in range(n)],
    }


def typed(records: list[dict[str, Any]]) -> list[MatchRecord]:
    """The records as the project reads them (as from a games.jsonl line)."""
    return [MatchRecord.from_dict(rec) for rec in records]


def seats_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """matches.parquet's rows (docs/records.md) for the records."""
    rows = []
    for rec in records:
        fault_of = {f["seat"]: f["kind"] for f in rec.get("faults", [])}
        for s, bot in enumerate(rec["bots"]):
            rows.append(
                {
                    "match": rec["match"],
                    "variant": rec["variant"],
                    "seat": s,
                    "bot": bot,
                    "place": rec["placements"][s],
                    "players": len(rec["bots"]),
                    "rounds": rec["rounds_played"],
                    "dice_left": None,
                    "out_round": None,
                    "fault": fault_of.get(s),
                    "seconds": (rec.get("think") or [None] * len(rec["bots"]))[s],
                }
            )
    return pd.DataFrame(rows)


def write_run(
    folder: Path,
    records: list[dict[str, Any]],
    variants: dict[str, dict[str, Any]],
    name: str = "synthetic",
    gz: bool = False,
    status: str = "complete",
) -> Path:
    """A run folder: run.json, games.jsonl (or .gz), matches.parquet and tables/."""
    import gzip

    folder.mkdir(parents=True, exist_ok=True)
    bots = sorted({b for rec in records for b in rec["bots"]})
    run = {
        "name": name,
        "seed": 1,
        "status": status,
        "started": "2026-11-30T00:00:00Z",
        "ended": "2026-11-30T00:01:00Z",
        "version": "0.1.0",
        "config": {"name": name},
        "variants": variants,
        "bots": [{"name": b, "path": f"bots/{b}.py", "sha256": "0" * 64} for b in bots],
    }
    (folder / "run.json").write_text(json.dumps(run, indent=2))
    text = "".join(json.dumps(rec) + "\n" for rec in records)
    if gz:
        with gzip.open(folder / "games.jsonl.gz", "wt") as fh:
            fh.write(text)
    else:
        (folder / "games.jsonl").write_text(text)
    # The parquet as a run writes it (the faults of void rounds included, for
    # records that carry no faults list), so a reader of it sees what a real run holds.
    from arena.errors import RunError
    from arena.running.store import write_matches_parquet, write_tables

    try:
        write_matches_parquet(folder)
        write_tables(folder)
    except RunError:
        pass  # records broken on purpose (a test of the reader): no run could have written a parquet of them
    return folder


def league(
    folder: Path, matches_per_variant: int = 30, seed: int = 7, variants: tuple[str, ...] = ("classic", "lizumo")
) -> Path:
    """A small league: the four policies at tables of 2 to 4, under each variant."""
    rng = random.Random(seed)
    names = list(POLICIES)
    records = []
    resolved = {}
    for v in variants:
        rules = R.Rules.preset(v, {})
        resolved[v] = rules.to_dict()
        for i in range(matches_per_variant):
            k = rng.randint(2, 4)
            bots = rng.sample(names, k)
            fault = (rng.randrange(k), 2, "timeout") if i % 10 == 9 else None
            records.append(play(f"{v}-{i:04d}", v, rules, bots, rng.randrange(2**31), fault))
    return write_run(folder, records, resolved)


def _hand(
    match: str,
    variant: str,
    bots: list[str],
    first: int,
    dice: int,
    rounds: list[tuple[Any, ...]],
    placements: list[int],
    faults: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A record from compact rounds: (opener, palifico, counts, actions, count, change)
    with change (seat, delta), or (opener, palifico, counts, actions, fault) for a void round."""
    out = []
    for i, rnd in enumerate(rounds, start=1):
        opener, palifico, counts, actions = rnd[:4]
        entry: dict[str, Any] = {
            "round": i,
            "opener": opener,
            "palifico": palifico,
            "dice": [[(s + k) % 6 + 1 for k in range(c)] for s, c in enumerate(counts)],
            "actions": [list(a) for a in actions],
        }
        if isinstance(rnd[4], dict):
            entry["fault"] = rnd[4]
        else:
            entry["count"] = rnd[4]
            entry["change"] = {"seat": rnd[5][0], "delta": rnd[5][1]}
        out.append(entry)
    rec = {
        "match": match,
        "variant": variant,
        "rules": {"dice": dice},
        "seed": 1,
        "bots": bots,
        "first": first,
        "rounds": out,
        "placements": placements,
        "rounds_played": len(out),
        "seconds": 0.5,
        "think": [0.25 * (s + 1) for s in range(len(bots))],
    }
    if faults is not None:
        rec["faults"] = faults
    return rec


def hand_built() -> list[dict[str, Any]]:
    """Four matches whose statistics are worked out by hand in test_stats.py.

    v1/A: x, y, z (2 dice); z wins, x out in round 3, y in round 5.
    v1/B: y, x; y times out in round 2 (void round), x wins.
    v1/C: x, z (1 die); x wins.
    v2/D: x, y (1 die); y wins; x has an administrative ("arena") fault.
    """
    a = _hand(
        "A",
        "v1",
        ["x", "y", "z"],
        0,
        2,
        [
            (0, False, [2, 2, 2], [(0, "bid", 2, 3), (1, "dudo")], 1, (0, -1)),  # dudo right
            (0, True, [1, 2, 2], [(0, "bid", 1, 5), (1, "bid", 2, 5), (2, "calza")], 2, (2, 0)),  # calza right, capped
            (2, False, [1, 2, 2], [(2, "bid", 3, 4), (0, "dudo")], 3, (0, -1)),  # dudo wrong; x out
            (1, False, [0, 2, 2], [(1, "bid", 1, 2), (2, "dudo")], 0, (1, -1)),  # dudo right
            (1, True, [0, 1, 2], [(1, "bid", 1, 6), (2, "dudo")], 0, (1, -1)),  # dudo right; y out
        ],
        [3, 2, 1],
        faults=[],
    )
    b = _hand(
        "B",
        "v1",
        ["y", "x"],
        1,
        2,
        [
            (1, False, [2, 2], [(1, "bid", 1, 3), (0, "bid", 2, 3), (1, "dudo")], 3, (1, -1)),  # dudo wrong
            (1, False, [2, 1], [(1, "bid", 1, 4)], {"seat": 0, "kind": "timeout", "detail": "no reply in 1000 ms"}),
        ],
        [2, 1],
    )  # no "faults" list: the loader takes the round's fault
    c = _hand(
        "C",
        "v1",
        ["x", "z"],
        0,
        1,
        [
            (0, False, [1, 1], [(0, "bid", 1, 2), (1, "dudo")], 1, (1, -1)),  # dudo wrong
        ],
        [1, 2],
        faults=[],
    )
    d = _hand(
        "D",
        "v2",
        ["x", "y"],
        0,
        1,
        [
            (0, False, [1, 1], [(0, "bid", 1, 6), (1, "dudo")], 0, (0, -1)),  # dudo right
        ],
        [2, 1],
        faults=[{"seat": 0, "round": None, "kind": "arena", "detail": "worker lost"}],
    )
    return [a, b, c, d]


def wide(
    folder: Path,
    variants: int = 12,
    bots: int = 12,
    matches_per_variant: int = 40,
    seed: int = 5,
    players: tuple[int, ...] = (3, 4, 5, 6),
) -> Path:
    """A run of ``variants`` rule variants and ``bots`` bots (names cycling
    through the policies), for checking that the report scales."""
    rng = random.Random(seed)
    presets = ["classic", "lizumo", "wikipedia", "neller", "plain"]
    extra = [
        {},
        {"calza": False},
        {"palifico": False},
        {"dice": 3},
        {"penalty": "difference"},
        {"open_on_ones": True},
        {"calza_reward": "bidder_loses"},
        {"dice": 4},
    ]
    kinds = list(POLICIES)
    names = [f"{kinds[i % len(kinds)]}-{i:02d}" for i in range(bots)]
    policy_of = {n: kinds[i % len(kinds)] for i, n in enumerate(names)}
    records, resolved = [], {}
    for k in range(variants):
        preset, change = presets[k % len(presets)], extra[k % len(extra)]
        label = preset + "".join(f"-{key}={value}" for key, value in change.items())
        if label in resolved:
            label += f"-{k}"
        rules = R.Rules.preset(preset, dict(change))
        resolved[label] = rules.to_dict()
        for _ in range(matches_per_variant):
            size = rng.choice(players)
            table = rng.sample(names, size)
            fault = (rng.randrange(size), 2, "timeout") if rng.random() < 0.03 else None
            records.append(
                play(f"m-{len(records):06d}", label, rules, table, rng.randrange(2**31), fault, policy_of=policy_of)
            )
    return write_run(folder, records, resolved, name="wide")
