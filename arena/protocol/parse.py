"""The strict parsers of the player protocol, one per message (built in :mod:`arena.protocol.messages`).

Two sides, two threat models:

- **The referee's side** reads what a bot wrote: ``ready`` and the replies.
  Every bot is hostile, so :func:`parse_ready` and :func:`parse_reply` turn any
  decoded object (:func:`arena.protocol.wire.decode`) into a value or a
  ``malformed`` :class:`~arena.errors.ProtocolError` with a short, one-line
  detail; never another exception.
- **The bot's side** reads what the referee sent, into the types of
  :mod:`arena.sdk`: :func:`parse_hello`, :func:`parse_match_start`,
  :func:`parse_turn`, :func:`parse_round_end`, :func:`parse_match_end`. A
  message that is not what docs/protocol.md says (a field missing or of the
  wrong JSON type, a seat or table that does not fit the match) raises
  :class:`MessageError` naming the field, instead of a bot failing later on
  a value it cannot use. Unknown fields are ignored, as the protocol says.

:func:`parse_turn` is on the per-decision path of every Python bot: it reads
the fields and checks their types in bulk, and only when that fails walks
the message again, field by field, to say what is wrong.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Mapping
from itertools import chain
from typing import Any, Final, TypeVar

from arena.engine.rules import CALZA, DUDO, KEYS, OPTIONAL_KEYS, PASS, Action, Bid, Rules, bid
from arena.errors import ArenaError, ProtocolError, RulesError
from arena.protocol.messages import OLDEST_VERSION, PROTOCOL_VERSION, ReadyMessage, ready_message
from arena.protocol.wire import clip, json_text
from arena.sdk import Legal, MatchInfo, RoundEnd, Turn

__all__ = [
    "MessageError",
    "parse_ready",
    "parse_reply",
    "parse_hello",
    "parse_match_start",
    "parse_turn",
    "parse_round_end",
    "parse_match_end",
]

RawMessage = Mapping[str, Any]  # a decoded JSON object: its values are unchecked until parsed here
T = TypeVar("T")


class MessageError(ArenaError):
    """A message from the referee that breaks the player protocol (the bot's side)."""


# --- the referee's side: what a bot wrote (hostile) ---------------------------------


def _reply_integer(obj: RawMessage, key: str) -> int:
    value = obj.get(key)
    # bool is a subclass of int in Python: `true` must not pass as 1.
    if type(value) is not int:
        raise ProtocolError(
            f"{key!r} must be a JSON integer, got {clip(json_text(value))} in {clip(json_text(obj))}", "malformed"
        )
    return value


def parse_reply(obj: RawMessage) -> Action:
    """A ``turn`` reply as an action: ``Bid``, ``DUDO``, ``CALZA`` or ``PASS``.

    Only the shape is checked here; a bid out of range (quantity 0, a
    100-digit quantity, face 7) is returned as a :class:`Bid` for the referee
    to reject as ``illegal``. Unknown extra fields are ignored.
    """
    action = obj.get("action")
    if action == "bid":
        quantity, face = obj.get("quantity"), obj.get("face")
        if type(quantity) is int and type(face) is int:  # the usual reply (bool is no int here)
            return _new(Bid, (quantity, face))  # Bid(quantity, face), without NamedTuple's Python __new__
        return Bid(_reply_integer(obj, "quantity"), _reply_integer(obj, "face"))
    if action == "dudo":
        return DUDO
    if action == "calza":
        return CALZA
    if action == "pass":
        return PASS
    raise ProtocolError(
        f'expected {{"action": "bid", "quantity": Q, "face": F}}, {{"action": "dudo"}}, '
        f'{{"action": "calza"}} or {{"action": "pass"}}, got {clip(json_text(obj))}',
        "malformed",
    )


MAX_NAME: Final = 200  # characters in a bot's name or version as it reports them


def parse_ready(obj: RawMessage) -> ReadyMessage:
    """The answer to ``hello``: ``{"type": "ready", "name": ..., "version": ...}``.

    ``name`` is a non-empty JSON string; ``version`` a string, or absent or
    ``null`` (read as ``None``). Unknown fields are dropped.
    """
    expected = 'expected {"type": "ready", "name": "...", "version": "..."}'
    if obj.get("type") != "ready":
        raise ProtocolError(f"{expected}, got {clip(json_text(obj))}", "malformed")
    name, version = obj.get("name"), obj.get("version")
    if type(name) is not str or not name or len(name) > MAX_NAME:
        raise ProtocolError(
            f"{expected}: 'name' must be a JSON string of 1 to {MAX_NAME} characters, got {clip(json_text(name))}",
            "malformed",
        )
    if version is not None and (type(version) is not str or len(version) > MAX_NAME):
        raise ProtocolError(
            f"{expected}: 'version' must be a JSON string of at most {MAX_NAME} characters "
            f"(or left out), got {clip(json_text(version))}",
            "malformed",
        )
    return ready_message(name, version)


# --- the bot's side: what the referee sent --------------------------------------------


def _problem(what: str, msg: object, why: str) -> MessageError:
    return MessageError(f"{what}: {why}, in {clip(json_text(msg))}")


def _field(msg: RawMessage, key: str, what: str) -> Any:
    try:
        return msg[key]
    except KeyError:
        raise _problem(what, msg, f"no {key!r}") from None


_JSON_TYPE: Final[dict[type, str]] = {
    int: "a JSON integer",
    bool: "true or false",
    str: "a JSON string",
    dict: "a JSON object",
}


def _typed(msg: RawMessage, key: str, what: str, kind: type[T]) -> T:
    """``msg[key]``, which must be of exactly ``kind`` (``true`` is no integer here)."""
    value = _field(msg, key, what)
    if type(value) is not kind:
        raise _problem(what, msg, f"{key!r} must be {_JSON_TYPE[kind]}, got {clip(json_text(value))}")
    return value  # of type kind, checked above


def _int(msg: RawMessage, key: str, what: str, low: int | None = None, high: int | None = None) -> int:
    value = _typed(msg, key, what, int)
    if (low is not None and value < low) or (high is not None and value > high):
        span = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise _problem(what, msg, f"{key!r} must be {span}, got {value}")
    return value


def _bool(msg: RawMessage, key: str, what: str) -> bool:
    return _typed(msg, key, what, bool)


def _object(msg: RawMessage, key: str, what: str) -> RawMessage:
    return _typed(msg, key, what, dict)


def _ints(
    msg: RawMessage, key: str, what: str, length: int | None = None, low: int | None = None, high: int | None = None
) -> list[int]:
    """A list of integers (``length`` of them, each from ``low`` to ``high``)."""
    value = _field(msg, key, what)
    if type(value) is not list or any(type(v) is not int for v in value):
        raise _problem(what, msg, f"{key!r} must be a list of JSON integers, got {clip(json_text(value))}")
    if length is not None and len(value) != length:
        raise _problem(what, msg, f"{key!r} must have {length} entries (one per seat), got {len(value)}")
    if (low is not None and any(v < low for v in value)) or (high is not None and any(v > high for v in value)):
        raise _problem(what, msg, f"{key!r} must hold integers from {low} to {high}, got {value}")
    return value


def _type(msg: object, kind: str) -> RawMessage:
    if not isinstance(msg, dict):
        raise MessageError(f"{kind}: expected a JSON object, got {clip(json_text(msg))}")
    if msg.get("type") != kind:
        raise _problem(kind, msg, f"'type' must be {kind!r}, got {clip(json_text(msg.get('type')))}")
    return msg


def parse_hello(msg: RawMessage) -> int:
    """``hello``: the protocol version, which must be one spoken here."""
    _type(msg, "hello")
    version = _int(msg, "protocol", "hello")
    if not OLDEST_VERSION <= version <= PROTOCOL_VERSION:
        raise _problem(
            "hello",
            msg,
            f"protocol {version} is not spoken here: this side speaks versions {OLDEST_VERSION} to {PROTOCOL_VERSION}",
        )
    return version


MAX_SEATS: Final = 10  # docs/rules.md: a table seats 2 to 10


def parse_match_start(msg: RawMessage) -> MatchInfo:
    """``match_start`` as a :class:`~arena.sdk.MatchInfo`. ``rules`` must hold
    every key of the rule book with an allowed value, but the variant keys
    (``OPTIONAL_KEYS``), which are absent where at their default (keys it does
    not know are ignored: a newer referee may add some)."""
    what = "match_start"
    _type(msg, what)
    players = _int(msg, "players", what, 2, MAX_SEATS)
    seat = _int(msg, "seat", what, 0, players - 1)
    names = _field(msg, "names", what)
    if type(names) is not list or len(names) != players or any(type(n) is not str for n in names):
        raise _problem(what, msg, f"'names' must be a list of {players} JSON strings, got {clip(json_text(names))}")
    rules = _object(msg, "rules", what)
    missing = [k for k in KEYS if k not in rules and k not in OPTIONAL_KEYS]
    if missing:
        raise _problem(
            what,
            msg,
            f"'rules' lacks {', '.join(map(repr, missing))} (it carries every key "
            f"but the variant keys at their default)",
        )
    try:
        resolved = Rules.from_dict({k: rules[k] for k in KEYS if k in rules})
    except RulesError as exc:
        raise _problem(what, msg, f"'rules': {exc}") from None
    return MatchInfo(_typed(msg, "match", what, str), seat, players, tuple(names), resolved, _int(msg, "seed", what))


def _fast_init(cls: type) -> Callable[..., Any]:
    """A constructor for a frozen slots dataclass that fills the slots directly
    (positional, in field order), skipping the per-field ``object.__setattr__``
    the generated ``__init__`` of a frozen class does. Generated once per class
    so the loop over fields is unrolled."""
    names = [f.name for f in dataclasses.fields(cls)]
    env = {"new": object.__new__, "cls": cls, **{f"set_{n}": getattr(cls, n).__set__ for n in names}}
    body = "".join(f"    set_{n}(obj, {n})\n" for n in names)
    exec(f"def build({', '.join(names)}):\n    obj = new(cls)\n{body}    return obj\n", env)
    return env["build"]  # type: ignore[no-any-return]


_build_turn: Callable[..., Turn] = _fast_init(Turn)
_build_legal: Callable[..., Legal] = _fast_init(Legal)
_FACE_KEYS: Final = {str(f): f for f in range(1, 7)}  # a min_quantity key -> its face; any other key fails
_FACES: Final = frozenset(range(1, 7))
_INT: Final = frozenset({int})
_LIST: Final = frozenset({list})
_CALLS: Final = ("dudo", "calza")
_SEATS: Final = tuple(frozenset(range(n)) for n in range(64))  # seats of an n-player table
_build_round_end: Callable[..., RoundEnd] = _fast_init(RoundEnd)
_chain = chain
_new = tuple.__new__


def parse_turn(msg: RawMessage, match: MatchInfo, rng: random.Random) -> Turn:
    """``turn`` for the seat of ``match`` as a :class:`~arena.sdk.Turn` carrying ``rng``.

    On the per-decision path of every Python bot (compiled: arena/compiled.py),
    so the usual message is checked in one pass of typed loops: every scalar
    and container by its exact type, every integer inside the lists (dice,
    counts, history, the minimum quantities) too, dice from 1 to 6. Whatever
    is wrong, :func:`_turn_problem` then says which field.
    """
    try:
        legal = msg["legal"]
        mins = legal["min_quantity"]
        dice, counts, history = msg["dice"], msg["counts"], msg["history"]
        rnd, seat, time_ms, top = msg["round"], msg["seat"], msg["time_ms"], legal["max_quantity"]
        palifico, dudo, calza = msg["palifico"], legal["dudo"], legal["calza"]
        may_pass = legal.get("pass", False)  # a dead man's turn only (protocol 2)
    except (KeyError, TypeError, ValueError, AttributeError):
        raise _turn_problem(msg, match) from None
    if not (
        type(dice) is list
        and type(counts) is list
        and type(history) is list
        and type(mins) is dict
        and type(rnd) is int
        and type(seat) is int
        and type(time_ms) is int
        and type(top) is int
        and type(palifico) is bool
        and type(dudo) is bool
        and type(calza) is bool
        and type(may_pass) is bool
        and seat == match.seat
        and len(counts) == match.players
    ):
        raise _turn_problem(msg, match)
    hand: list[Any] = dice
    seats: list[Any] = counts
    said: list[Any] = history
    low: dict[Any, Any] = mins
    for d in hand:
        if type(d) is not int or d < 1 or d > 6:
            raise _turn_problem(msg, match)
    for c in seats:
        if type(c) is not int:
            raise _turn_problem(msg, match)
    min_quantity: dict[int, int] = {}
    for key, q in low.items():
        face = _FACE_KEYS.get(key)  # a key but "1".."6" has no face
        if face is None or type(q) is not int:
            raise _turn_problem(msg, match)
        min_quantity[face] = q
    bids: list[tuple[int, Bid]] = []
    for entry in said:
        if type(entry) is not list:
            raise _turn_problem(msg, match)
        triple: list[Any] = entry
        if len(triple) != 3:
            raise _turn_problem(msg, match)
        s, q, f = triple[0], triple[1], triple[2]
        if type(s) is not int or type(q) is not int or type(f) is not int:
            raise _turn_problem(msg, match)
        bids.append((s, bid(q, f)))
    return _build_turn(
        match,
        rnd,
        seat,
        tuple(hand),
        tuple(seats),
        palifico,
        tuple(bids),
        _build_legal(dudo, calza, min_quantity, top, may_pass),
        time_ms,
        rng,
    )


def _turn_problem(msg: object, match: MatchInfo) -> MessageError:
    """What is wrong with a ``turn`` the fast path refused, field by field."""
    what = "turn"
    try:
        turn = _type(msg, what)
        _int(turn, "round", what)
        if _int(turn, "seat", what) != match.seat:
            raise _problem(what, turn, f"'seat' must be {match.seat}, this bot's seat in the match")
        _int(turn, "time_ms", what)
        _bool(turn, "palifico", what)
        _ints(turn, "counts", what, match.players)
        _ints(turn, "dice", what, None, 1, 6)
        history = _field(turn, "history", what)
        if type(history) is not list or any(
            type(h) is not list or len(h) != 3 or not _INT.issuperset(map(type, h)) for h in history
        ):
            raise _problem(
                what,
                turn,
                f"'history' must be a list of [seat, quantity, face] JSON integers, got {clip(json_text(history))}",
            )
        legal = _object(turn, "legal", what)
        _bool(legal, "dudo", "turn.legal")
        _bool(legal, "calza", "turn.legal")
        if "pass" in legal:
            _bool(legal, "pass", "turn.legal")
        _int(legal, "max_quantity", "turn.legal")
        mins = _object(legal, "min_quantity", "turn.legal")
        if any(k not in _FACE_KEYS or type(v) is not int for k, v in mins.items()):
            raise _problem(
                "turn.legal",
                legal,
                f'\'min_quantity\' must map faces "1" to "6" to JSON integers, got {clip(json_text(mins))}',
            )
    except MessageError as exc:
        return exc
    return _problem(what, msg, "not a turn message")  # the checks above cover the fast path's


def _seat_and(msg: RawMessage, key: str, what: str, second: str) -> tuple[int, object]:
    """``msg[key]``, an object ``{"seat": S, second: ...}``: the seat and the second value, unchecked."""
    obj = _object(msg, key, what)
    return _int(obj, "seat", f"{what}.{key}"), _field(obj, second, f"{what}.{key}")


def _seat_kind(msg: RawMessage, key: str, what: str, kinds: tuple[str, ...] | None = None) -> tuple[int, str]:
    seat, kind = _seat_and(msg, key, what, "kind")
    if type(kind) is not str or (kinds is not None and kind not in kinds):
        allowed = " or ".join(f'"{k}"' for k in kinds) if kinds else "a JSON string"
        raise _problem(what, msg, f"'{key}.kind' must be {allowed}, got {clip(json_text(kind))}")
    return seat, kind


def _seat_delta(msg: RawMessage, key: str, what: str) -> tuple[int, int]:
    seat, delta = _seat_and(msg, key, what, "delta")
    if type(delta) is not int:
        raise _problem(what, msg, f"'{key}.delta' must be a JSON integer, got {clip(json_text(delta))}")
    return seat, delta


def parse_round_end(msg: RawMessage, match: MatchInfo) -> RoundEnd:
    """``round_end`` as a :class:`~arena.sdk.RoundEnd`: every die, and either the
    call with its result (``bid``, ``call``, ``count``, ``change``) or, for a
    void round, the ``fault`` instead of them."""
    # Fast path: a bot reads one of these for about every decision it makes, so
    # the usual message (a call's result) is checked in bulk, every integer
    # by its exact type in C; anything else takes the checks below, which
    # also say what is wrong.
    try:
        hands, counts, rnd, b = msg["dice"], msg["counts"], msg["round"], msg["bid"]
        call, count, change = msg["call"], msg["count"], msg["change"]
        hist, palifico = msg["history"], msg["palifico"]
        n = match.players
        flat = list(_chain.from_iterable(hist)) if type(hist) is list and _LIST.issuperset(map(type, hist)) else None
        if (
            type(msg) is dict
            and msg["type"] == "round_end"
            and "fault" not in msg
            and type(rnd) is int
            and rnd >= 1
            and type(count) is int
            and count >= 0
            and type(hands) is list
            and len(hands) == n
            and _LIST.issuperset(map(type, hands))
            and _INT.issuperset(map(type, _chain.from_iterable(hands)))
            and _FACES.issuperset(_chain.from_iterable(hands))
            and type(counts) is list
            and len(counts) == n
            and _INT.issuperset(map(type, counts))
            and min(counts) >= 0
            and type(b) is list
            and len(b) == 3
            and _INT.issuperset(map(type, b))
            and type(call) is dict
            and type(call["seat"]) is int
            and call["kind"] in _CALLS
            and type(change) is dict
            and type(change["seat"]) is int
            and type(change["delta"]) is int
            and type(palifico) is bool
            and flat is not None
            and len(flat) == 3 * len(hist)
            and _INT.issuperset(map(type, flat))
            and _SEATS[n].issuperset(flat[0::3])
            and (not flat or min(flat[1::3]) >= 1)
            and _FACES.issuperset(flat[2::3])
        ):
            said = tuple([(flat[i], bid(flat[i + 1], flat[i + 2])) for i in range(0, len(flat), 3)])
            return _build_round_end(
                rnd,
                tuple(map(tuple, hands)),
                tuple(counts),
                (b[0], bid(b[1], b[2])),
                (call["seat"], call["kind"]),
                count,
                (change["seat"], change["delta"]),
                None,
                said,
                palifico,
            )
    except (KeyError, TypeError, ValueError, IndexError):
        pass
    what = "round_end"
    _type(msg, what)
    rnd = _int(msg, "round", what, 1)
    hands = _field(msg, "dice", what)
    if (
        type(hands) is not list
        or len(hands) != match.players
        or any(type(h) is not list or any(type(d) is not int or not 1 <= d <= 6 for d in h) for h in hands)
    ):
        raise _problem(
            what,
            msg,
            f"'dice' must be {match.players} lists of dice (JSON integers 1 to 6), got {clip(json_text(hands))}",
        )
    counts = tuple(_ints(msg, "counts", what, match.players, 0))
    dice = tuple(tuple(h) for h in hands)
    # ``history`` and ``palifico`` came later within version 1: absent, the round's
    # bids are unknown (an empty history) and the round is taken as ordinary.
    history: tuple[tuple[int, Bid], ...] = ()
    if "history" in msg:
        raw = msg["history"]
        if type(raw) is not list or any(
            type(h) is not list
            or len(h) != 3
            or not _INT.issuperset(map(type, h))
            or not 0 <= h[0] < match.players
            or h[1] < 1
            or not 1 <= h[2] <= 6
            for h in raw
        ):
            raise _problem(
                what,
                msg,
                f"'history' must be a list of [seat, quantity, face] JSON integers "
                f"(seats 0 to {match.players - 1}, faces 1 to 6), got {clip(json_text(raw))}",
            )
        history = tuple((h[0], bid(h[1], h[2])) for h in raw)
    palifico = _bool(msg, "palifico", what) if "palifico" in msg else False
    outcome = [k for k in ("bid", "call", "count", "change") if k in msg]
    if "fault" in msg:
        if outcome:
            raise _problem(what, msg, f"a void round (with 'fault') carries no {', '.join(map(repr, outcome))}")
        return RoundEnd(rnd, dice, counts, None, None, None, None, _seat_kind(msg, "fault", what), history, palifico)
    if len(outcome) != 4:
        raise _problem(what, msg, "a round carries 'bid', 'call', 'count' and 'change', or a 'fault'")
    b = _ints(msg, "bid", what, 3)
    return RoundEnd(
        rnd,
        dice,
        counts,
        (b[0], bid(b[1], b[2])),
        _seat_kind(msg, "call", what, ("dudo", "calza")),
        _int(msg, "count", what, 0),
        _seat_delta(msg, "change", what),
        None,
        history,
        palifico,
    )


def parse_match_end(msg: RawMessage, match: MatchInfo) -> tuple[int, ...]:
    """``match_end``: ``placements[s]``, seat s's place (1 = the winner), one place per seat."""
    what = "match_end"
    _type(msg, what)
    places = _ints(msg, "placements", what, match.players)
    if sorted(places) != list(range(1, match.players + 1)):
        raise _problem(what, msg, f"'placements' must give each of the {match.players} places once, got {places}")
    return tuple(places)
