"""Plain data that crosses process boundaries: what to play and what was played.

A :class:`MatchSpec` is everything a worker needs to play one match (no bound
methods, no open files). A :class:`MatchRecord` is what was played, the one
typed form of a match record: its rounds (:class:`RoundRecord`), each round's
actions (:class:`ActionRecord`), change of dice (:class:`DiceChange`) or fault
(:class:`FaultRecord`), and how the match ended (:class:`EndReason`). Its JSON
form is one line of ``games.jsonl`` (docs/records.md, "The match record"):
:meth:`MatchRecord.to_json` writes it and :meth:`MatchRecord.from_json` reads
it, older records included (what it infers for them is said there).

Pure: nothing here reads or writes a file (the run folder is
:mod:`arena.running.store`'s). Everything is immutable and picklable, so
workers on other machines (Ray) can send it.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any, NamedTuple

import orjson

from arena.engine.rules import CALZA, DUDO, PASS, Action, Bid, Calza, Dudo, Pass, Rules, State
from arena.errors import ArenaError, FaultKind, RulesError, StateError

__all__ = [
    "ActionRecord",
    "DiceChange",
    "EndReason",
    "FaultKind",
    "FaultRecord",
    "MatchRecord",
    "MatchSpec",
    "RecordError",
    "RoundRecord",
    "SeatOutcome",
    "TIMING_FIELDS",
    "canonical",
    "derive_seed",
    "end_reason",
    "match_id",
    "record_line",
    "seat_outcome",
]

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


# ---------------------------------------------------------------------------
# How a match ended
# ---------------------------------------------------------------------------


class EndReason(StrEnum):
    """How a match ended (the record's ``end``). Named after what a user asks
    of a finished match: did the winner take the last opponent's last die, did
    the opponents drop out, or did the rules stop it?"""

    ELIMINATION = "elimination"
    """One player is left with dice; the round that ended the match was decided
    by a call (the usual end)."""
    FORFEIT = "forfeit"
    """One player is left with dice, and the round that ended the match was void:
    the last opponent faulted (timed out, crashed, ... or a human left the
    table). A match in which every other player faulted always ends so."""
    MAX_ROUNDS = "max_rounds"
    """The rules' safety cap (the rule key of the same name): several players
    still had dice when round ``max_rounds`` ended, and were placed by dice left."""


def end_reason(state: State) -> EndReason:
    """How the finished match ``state`` ended."""
    if state.placements is None:
        raise StateError("the match is not over: it has no end reason yet")
    if len(state.counts) - len(state.out) > 1:
        return EndReason.MAX_ROUNDS
    last = state.last
    return EndReason.FORFEIT if last is not None and last.fault is not None else EndReason.ELIMINATION


# ---------------------------------------------------------------------------
# The record
# ---------------------------------------------------------------------------


class RecordError(ArenaError):
    """A match record that is not one: a missing key or a value of the wrong
    form; the message names it (the run folder's reader adds file and line)."""


class ActionRecord(NamedTuple):
    """One action of a round: ``seat`` did ``action`` (the engine's
    :class:`Bid`, ``DUDO``, ``CALZA`` or ``PASS``). JSON ``[seat, "bid", quantity, face]``,
    ``[seat, "dudo"]``, ``[seat, "calza"]`` or ``[seat, "pass"]`` (a player who is
    out letting a bid go by, under ``dead_mans_calza``).

    A ``NamedTuple``, not a dataclass like the rest: a record holds one per
    decision (about 50 a match), and loading thousands of matches builds them
    by the hundred thousand, several times faster as tuples.
    """

    seat: int
    action: Action

    @property
    def kind(self) -> str:
        """``"bid"``, ``"dudo"``, ``"calza"`` or ``"pass"``."""
        return "bid" if type(self.action) is Bid else str(self.action)

    def to_json(self) -> list[Any]:
        a = self.action
        if type(a) is Bid:
            return [self.seat, "bid", a[0], a[1]]
        return [self.seat, _WORDS[type(a)]]


class DiceChange(NamedTuple):
    """The dice a call cost or gave: ``seat`` changed by ``delta`` (0 where a
    right calza could not add a die above the maximum, or for a wrong dead
    man's calza; a right one's delta is the dice the player returns with)."""

    seat: int
    delta: int


@dataclass(frozen=True, slots=True)
class FaultRecord:
    """A fault: ``seat`` failed as ``kind`` says, in ``round`` (``None`` for a
    fault outside any round), ``detail`` in words (cut short by the referee)."""

    seat: int
    kind: FaultKind
    detail: str
    round: int | None

    def to_json(self, *, in_round: bool = False) -> dict[str, Any]:
        """The fault's JSON object: inside a round entry without ``round``, in
        the record's ``faults`` list with it (first)."""
        if in_round:
            return {"seat": self.seat, "kind": self.kind, "detail": self.detail}
        return {"round": self.round, "seat": self.seat, "kind": self.kind, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """One round: who opened it, whether it was palifico, every player's
    ``dice`` as rolled (empty for a player who is out), the ``actions`` in
    order, and how it ended: a call (``count`` of the standing bid's face and
    the ``change`` of dice it caused) or, for a void round, the ``fault``."""

    round: int
    opener: int
    palifico: bool
    dice: tuple[tuple[int, ...], ...]
    actions: tuple[ActionRecord, ...]
    count: int | None = None
    change: DiceChange | None = None
    fault: FaultRecord | None = None

    @property
    def void(self) -> bool:
        return self.fault is not None

    def to_json(self) -> dict[str, Any]:
        """The round's JSON object (tuples stand for arrays: orjson and json write them so)."""
        words = _WORDS
        out: dict[str, Any] = {
            "round": self.round,
            "opener": self.opener,
            "palifico": self.palifico,
            "dice": self.dice,
            # Inline, not ActionRecord.to_json: once per action of every record written.
            "actions": [(s, "bid", a[0], a[1]) if type(a) is Bid else (s, words[type(a)]) for s, a in self.actions],
        }
        fault, change = self.fault, self.change
        if fault is not None:
            out["fault"] = fault.to_json(in_round=True)
        else:
            out["count"] = self.count
            out["change"] = {"seat": change[0], "delta": change[1]} if change is not None else None
        return out


class SeatOutcome(NamedTuple):
    """Per seat, replayed from a record's changes and faults: the dice each
    seat held at the end, and the round in which it lost its last die or
    faulted (``None`` for a seat still in at the end)."""

    dice_left: tuple[int, ...]
    out_round: tuple[int | None, ...]


def seat_outcome(
    dice: int, players: int, rounds: tuple[RoundRecord, ...], faults: tuple[FaultRecord, ...]
) -> SeatOutcome:
    """Dice left and the round each seat went out, replayed from the rounds'
    changes and faults and then the match's ``faults`` list (which may hold
    faults outside any round), each seat starting with ``dice`` and held
    within 0 and ``dice``. The one place this is worked out from a record:
    matches.parquet, the analysis tables and an old record's end all use it."""
    left = [dice] * players
    out: list[int | None] = [None] * players
    for rnd in rounds:
        fault, change = rnd.fault, rnd.change
        if fault is not None:
            seat = fault.seat
            left[seat] = 0
        elif change is not None:
            seat = change.seat
            left[seat] = min(dice, max(0, left[seat] + change.delta))
        else:
            continue
        if left[seat]:
            out[seat] = None  # back by a dead man's calza, if it was out
        elif out[seat] is None:
            out[seat] = rnd.round
    for f in faults:
        left[f.seat] = 0
        if out[f.seat] is None and f.round is not None:
            out[f.seat] = f.round
    return SeatOutcome(tuple(left), tuple(out))


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A finished match, as docs/records.md describes its record: enough to replay it and check
    every rule (:mod:`arena.engine.replay`).

    ``bots[s]`` is the entrant label in seat ``s`` (after seating), ``seed``
    the dice seed of the match's table, ``first`` the opener of round 1,
    ``placements[s]`` seat ``s``'s place (1 = winner), ``end`` how the match
    ended, ``faults`` every fault of the match in order. ``think[s]`` (seat
    ``s``'s CPU thinking time) and ``seconds`` (the match's wall time) measure
    time: ``None`` when a record does not carry them.
    """

    match: str
    variant: str
    rules: Rules
    seed: int
    bots: tuple[str, ...]
    first: int
    rounds: tuple[RoundRecord, ...]
    placements: tuple[int, ...]
    rounds_played: int
    end: EndReason
    faults: tuple[FaultRecord, ...] = ()
    think: tuple[float, ...] | None = None
    seconds: float | None = None

    @property
    def players(self) -> int:
        return len(self.bots)

    @property
    def winner(self) -> int | None:
        """The seat placed first."""
        return self.placements.index(1) if 1 in self.placements else None

    def outcome(self) -> SeatOutcome:
        """Dice left and the round each seat went out (:func:`seat_outcome`)."""
        return seat_outcome(self.rules.dice, len(self.bots), self.rounds, self.faults)

    # -- JSON ------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON data (docs/records.md's keys in their order, then
        ``end``, ``faults`` and the timing fields). Arrays are tuples, which
        orjson and the stdlib json write as arrays."""
        out: dict[str, Any] = {
            "match": self.match,
            "variant": self.variant,
            "rules": dict(_rules_json(self.rules)),
            "seed": self.seed,
            "bots": self.bots,
            "first": self.first,
            "rounds": [r.to_json() for r in self.rounds],
            "placements": self.placements,
            "rounds_played": self.rounds_played,
            "end": self.end,
            "faults": [f.to_json() for f in self.faults],
        }
        if self.think is not None:
            out["think"] = self.think
        if self.seconds is not None:
            out["seconds"] = self.seconds
        return out

    def to_json(self) -> bytes:
        """Compact JSON (one line, no newline; :func:`record_line` adds it)."""
        return orjson.dumps(self.to_dict())

    @classmethod
    def from_json(cls, data: bytes | str) -> MatchRecord:
        """A record from its JSON text (:meth:`from_dict`); :class:`RecordError` if it is not one."""
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise RecordError(f"not JSON ({exc})") from None
        return cls.from_dict(obj)

    @classmethod
    def from_dict(cls, data: object) -> MatchRecord:
        """A record from JSON data, checked on the way (every key docs/records.md
        requires, with values of the right form; :class:`RecordError` names
        the first that is not).

        Records written before the record had a type still load. Keys they may
        lack are inferred:

        - ``end``: from the dice left at the end (:meth:`outcome`): several
          players with dice is ``max_rounds``; else a void last round is a
          ``forfeit``, a called one an ``elimination``;
        - ``faults``: the faults of the void rounds, in order;
        - ``rounds_played``: the number of rounds;
        - a fault's ``detail``: empty;
        - ``think`` and ``seconds``: left ``None``;
        - rule keys missing from ``rules``: the rules' defaults.
        """
        if not isinstance(data, dict):
            raise RecordError(f"a match record is a JSON object, not {type(data).__name__}")
        missing = [k for k in _REQUIRED if k not in data]
        if missing:
            raise RecordError(f"a match record needs the keys {', '.join(_REQUIRED)}; {', '.join(missing)} missing")
        mid = data["match"]
        if type(mid) is not str:
            raise RecordError(f"match: {mid!r} is not a match id (text such as 'm-000042')")
        try:
            return _parse(mid, data)
        except RecordError as exc:
            raise RecordError(f"match {mid}: {exc}") from None
        except (TypeError, ValueError, KeyError, IndexError) as exc:  # a value of the wrong form
            raise RecordError(f"match {mid}: does not follow the record's form ({type(exc).__name__}: {exc})") from None


_WORDS: dict[type, str] = {Dudo: "dudo", Calza: "calza", Pass: "pass"}


@lru_cache(maxsize=64)
def _rules_json(rules: Rules) -> dict[str, Any]:
    # Rules are frozen and a run has a few rule sets: each JSON object is made
    # once (to_dict hands out a copy: the cached one is shared).
    return rules.to_dict()


def record_line(record: MatchRecord) -> bytes:
    """One ``games.jsonl`` line: the record's compact JSON, newline-terminated."""
    return orjson.dumps(record.to_dict(), option=orjson.OPT_APPEND_NEWLINE)


def canonical(record: MatchRecord) -> dict[str, Any]:
    """The record's JSON data without its timing fields: equal for equal (config, seed)."""
    return {k: v for k, v in record.to_dict().items() if k not in TIMING_FIELDS}


# ---------------------------------------------------------------------------
# Reading JSON data
# ---------------------------------------------------------------------------

_REQUIRED = ("match", "variant", "rules", "seed", "bots", "first", "rounds", "placements")
_CALLS: dict[str, Action] = {"dudo": DUDO, "calza": CALZA, "pass": PASS}
_FACES = frozenset(range(1, 7))
_KINDS: frozenset[str] = frozenset(FaultKind)
_LIST_TYPE = frozenset({list})
_INT_TYPE = frozenset({int})
_new = tuple.__new__
_chain = itertools.chain.from_iterable
# Actions already checked, per table size (a bid of 100 dice at most: about
# 6,000 a size); bounded all the same, against a file of odd quantities.
_KNOWN: dict[int, dict[tuple[Any, ...], ActionRecord]] = {}
_KNOWN_MAX = 1 << 14
_RULES: dict[tuple[tuple[str, Any], ...], Rules] = {}  # rule sets already checked (a run has a few)


def _int(value: object, what: str) -> int:
    if type(value) is not int:
        raise RecordError(f"{what}: {value!r} is not an integer")
    return value


def _seat(value: object, n: int, what: str) -> int:
    if type(value) is not int or not 0 <= value < n:
        raise RecordError(f"{what}: {value!r} is not a seat of the table (0 to {n - 1})")
    return value


def _ints(value: object, what: str) -> tuple[int, ...]:
    if type(value) is not list or any(type(x) is not int for x in value):
        raise RecordError(f"{what}: {value!r} is not a list of integers")
    return tuple(value)


def _rules(value: object) -> Rules:
    if not isinstance(value, dict):
        raise RecordError(f"rules: {value!r} is not a rule set (an object of rule keys)")
    key = tuple(value.items())
    try:
        found = _RULES.get(key)
    except TypeError:  # an unhashable value: not a rule value anyway
        found = None
    if found is None:
        try:
            found = Rules.from_dict(value)
        except RulesError as exc:
            raise RecordError(f"rules: {exc}") from None
        except TypeError as exc:
            raise RecordError(f"rules: {exc}") from None
        if len(_RULES) < 256:
            _RULES[key] = found
    return found


def _fault(value: object, rnd: int | None, n: int, what: str) -> FaultRecord:
    if not isinstance(value, dict):
        raise RecordError(f"{what}: {value!r} is not a fault object")
    kind = value.get("kind")
    if not isinstance(kind, str) or kind not in _KINDS:
        raise RecordError(f"{what}: fault kind {kind!r} is not one of {', '.join(FaultKind)}")
    fk = FaultKind(kind)
    detail = value.get("detail", "")
    if type(detail) is not str:
        raise RecordError(f"{what}: detail {detail!r} is not text")
    return FaultRecord(_seat(value.get("seat"), n, f"{what}: seat"), fk, detail, rnd)


def _listed_fault(value: object, n: int) -> FaultRecord:
    """A fault of the record's ``faults`` list: its ``round`` may be null (outside any round)."""
    rnd = value.get("round") if isinstance(value, dict) else None
    return _fault(value, None if rnd is None else _int(rnd, "faults: round"), n, "faults")


def _actions(items: object, n: int, number: int) -> tuple[ActionRecord, ...]:
    # The hot loop of loading a run (about 50 actions a match). A table of n
    # seats has a few thousand possible actions, so each is checked once and
    # kept (per n: the seat must be one of the table's): a known action is a
    # dict lookup, done in C for the whole round.
    if type(items) is not list:
        raise RecordError(f"round {number}: actions {items!r} is not a list")
    known = _KNOWN.get(n)
    if known is None:
        known = _KNOWN[n] = {}
    try:
        found = tuple(map(known.__getitem__, map(tuple, items)))
    except (KeyError, TypeError):  # one not seen yet (or not a list of plain values)
        return tuple(_action(item, n, number, known) for item in items)
    return found


def _action(item: object, n: int, number: int, known: dict[tuple[Any, ...], ActionRecord]) -> ActionRecord:
    if type(item) is list:
        size = len(item)
        if size == 4:
            seat, word, q, f = item
            if word == "bid" and type(seat) is int and type(q) is int and type(f) is int and 0 <= seat < n:
                rec = _new(ActionRecord, (seat, _new(Bid, (q, f))))
                if len(known) < _KNOWN_MAX:
                    known[tuple(item)] = rec
                return rec
        elif size == 2:
            seat, word = item
            call = _CALLS.get(word) if type(word) is str else None
            if call is not None and type(seat) is int and 0 <= seat < n:
                rec = _new(ActionRecord, (seat, call))
                known[tuple(item)] = rec
                return rec
    raise RecordError(
        f'round {number}: action {item!r} is not [seat, "bid", quantity, face], [seat, "dudo"], '
        f'[seat, "calza"] or [seat, "pass"] for a seat of the table'
    )


def _round(entry: object, n: int) -> RoundRecord:
    # Once per round of every record loaded: the checks are inline, and the
    # words of an error are put together only when there is one.
    if type(entry) is not dict:
        raise RecordError(f"round entry {entry!r} is not an object")
    number, opener, palifico, dice = entry["round"], entry["opener"], entry["palifico"], entry["dice"]
    if type(number) is not int:
        raise RecordError(f"round: {number!r} is not an integer")
    # One list per seat, and every die an int from 1 to 6 (checked in C).
    if (
        type(dice) is not list
        or len(dice) != n
        or not _LIST_TYPE.issuperset(map(type, dice))
        or not _INT_TYPE.issuperset(map(type, _chain(dice)))
        or not _FACES.issuperset(_chain(dice))
    ):
        raise RecordError(f"round {number}: dice {dice!r} is not one list of dice (1 to 6) per seat")
    if type(palifico) is not bool:
        raise RecordError(f"round {number}: palifico {palifico!r} is not true or false")
    if type(opener) is not int or not 0 <= opener < n:
        _seat(opener, n, f"round {number}: opener")
    actions = _actions(entry["actions"], n, number)
    hands = tuple(map(tuple, dice))
    fault = entry.get("fault")
    if fault is not None:
        return RoundRecord(
            number, opener, palifico, hands, actions, None, None, _fault(fault, number, n, f"round {number}")
        )
    count, change = entry.get("count"), entry.get("change")
    if type(change) is not dict or type(count) is not int:
        raise RecordError(f"round {number}: a round carries count and change (integers), or a fault")
    seat, delta = change["seat"], change["delta"]
    if type(seat) is not int or not 0 <= seat < n or type(delta) is not int:
        _seat(seat, n, f"round {number}: change seat")
        _int(delta, f"round {number}: change delta")
    return RoundRecord(number, opener, palifico, hands, actions, count, _new(DiceChange, (seat, delta)))


def _parse(mid: str, data: dict[str, Any]) -> MatchRecord:
    variant = data["variant"]
    if type(variant) is not str:
        raise RecordError(f"variant: {variant!r} is not text")
    bots = data["bots"]
    if type(bots) is not list or not bots or any(type(b) is not str for b in bots):
        raise RecordError(f"bots: {bots!r} is not a list of entrant names")
    n = len(bots)
    placements = _ints(data["placements"], "placements")
    if len(placements) != n:
        raise RecordError(f"{len(placements)} placements for {n} bots")
    raw_rounds = data["rounds"]
    if type(raw_rounds) is not list:
        raise RecordError(f"rounds: {raw_rounds!r} is not a list")
    rounds = tuple(_round(entry, n) for entry in raw_rounds)
    raw_faults = data.get("faults")
    faults: tuple[FaultRecord, ...]
    if raw_faults is None:
        faults = tuple(r.fault for r in rounds if r.fault is not None)
    elif type(raw_faults) is list:
        faults = tuple(_listed_fault(f, n) for f in raw_faults)
    else:
        raise RecordError(f"faults: {raw_faults!r} is not a list")
    raw_think = data.get("think")
    think: tuple[float, ...] | None = None
    if raw_think is not None:
        if type(raw_think) is not list or len(raw_think) != n or any(type(t) not in (int, float) for t in raw_think):
            raise RecordError(f"think: {raw_think!r} is not one number of seconds per seat")
        think = tuple(float(t) for t in raw_think)
    raw_seconds = data.get("seconds")
    seconds: float | None = None
    if raw_seconds is not None:
        if type(raw_seconds) not in (int, float):
            raise RecordError(f"seconds: {raw_seconds!r} is not a number")
        seconds = float(raw_seconds)
    rules = _rules(data["rules"])
    end = data.get("end")
    if end is None:
        reason = _inferred_end(rules, n, rounds, faults)
    else:
        try:
            reason = EndReason(end)
        except ValueError:
            raise RecordError(f"end: {end!r} is not one of {', '.join(EndReason)}") from None
    return MatchRecord(
        mid,
        variant,
        rules,
        _int(data["seed"], "seed"),
        tuple(bots),
        _seat(data["first"], n, "first"),
        rounds,
        placements,
        _int(data.get("rounds_played", len(rounds)), "rounds_played"),
        reason,
        faults,
        think,
        seconds,
    )


def _inferred_end(rules: Rules, n: int, rounds: tuple[RoundRecord, ...], faults: tuple[FaultRecord, ...]) -> EndReason:
    """The end reason of a record written before records carried one (:meth:`MatchRecord.from_dict`)."""
    if sum(1 for d in seat_outcome(rules.dice, n, rounds, faults).dice_left if d) > 1:
        return EndReason.MAX_ROUNDS
    return EndReason.FORFEIT if rounds and rounds[-1].fault is not None else EndReason.ELIMINATION
