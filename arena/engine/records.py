"""Plain data that crosses process boundaries: what to play and what was played.

A :class:`MatchSpec` is everything a worker needs to play one match (no bound
methods, no open files), and a match record is the JSON object of RESULTS.md.
Stdlib only: workers on other machines (Ray) unpickle these.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

SCHEMA_VERSION = 1

# Fields of a record that measure time and so differ between runs of the same
# config and seed; every other field is a pure function of (config, seed).
TIMING_FIELDS = ("seconds", "think")


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """One match of the schedule.

    ``entrants`` index the run's entrant list in schedule seat order;
    ``dice_seed`` keys the dice and is shared by the rotations of one table
    (duplicate play) and by the same table under every variant; ``repeat``
    numbers those repetitions of one deal (0 .. variants x rotations - 1),
    so that a bot process never plays the same deal twice (the worker keeps
    one process per repetition); ``seed`` is the match's own seed, from which
    the bots' seeds are derived.
    """

    index: int
    match: str
    variant: str
    rules: dict[str, Any]
    entrants: tuple[int, ...]
    seed: int
    dice_seed: int
    table: int
    rotation: int
    repeat: int = 0


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from any parts, stable across platforms and Python versions."""
    text = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8, person=b"dudo-arena").digest(), "big") >> 1


def match_id(index: int) -> str:
    return f"m-{index:06d}"


def record_line(record: dict[str, Any]) -> bytes:
    """One ``games.jsonl`` line: compact JSON, keys in record order, newline-terminated."""
    import orjson

    return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)


def canonical(record: dict[str, Any]) -> dict[str, Any]:
    """The record without its timing fields: equal for equal (config, seed)."""
    return {k: v for k, v in record.items() if k not in TIMING_FIELDS}
