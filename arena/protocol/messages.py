"""Every message of the player protocol (docs/protocol.md), typed, and its builder.

Both directions live here: what the referee sends (``hello``, ``match_start``,
``turn``, ``round_end``, ``match_end``) and what a bot answers (``ready`` and
the three replies). Whoever speaks the protocol builds its messages here: the
referee, ``arena check``, the human player and the Python bot host, so a bot
sees the same bytes whichever of them it talks to. Their strict parsers are in
:mod:`arena.protocol.parse`.

The types are :class:`~typing.TypedDict`: a message is the plain ``dict`` the
wire codec writes, so typing it costs nothing on the per-decision path.

``turn_view`` reads the acting seat's own dice and nothing else of anyone's
dice, so no other seat's hidden dice can ever reach a bot through a ``turn``
(a property test pins this).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Final, Literal, NotRequired, TypedDict

import orjson

from arena.engine.rules import Action, Bid, Calza, Dudo, Pass, State, calza_allowed, legal_summary, parse_action
from arena.errors import FaultKind, InvalidAction, StateError

__all__ = [
    "PROTOCOL_VERSION",
    "RuleValue",
    "HelloMessage",
    "MatchStartMessage",
    "LegalMessage",
    "TurnView",
    "TurnMessage",
    "CallNotice",
    "ChangeNotice",
    "FaultNotice",
    "RoundEndMessage",
    "MatchEndMessage",
    "Notification",
    "RefereeMessage",
    "ReadyMessage",
    "BidReply",
    "CallReply",
    "ReplyMessage",
    "hello_message",
    "match_start_message",
    "turn_view",
    "turn_message",
    "round_end_message",
    "match_end_message",
    "ready_message",
    "reply_message",
    "encode_reply",
]

# 2 added the dead man's turn (a ``turn`` whose ``legal`` carries ``pass``, the
# reply ``pass``) and the rule keys of the two variants; a table without them
# sends exactly what version 1 sent, but for this number (docs/protocol.md).
PROTOCOL_VERSION: Final = 2
OLDEST_VERSION: Final = 1  # every version from this one on is spoken (docs/protocol.md, Versions)

RuleValue = bool | int | str  # a rule's value, as Rules.to_dict() gives it


# --- the referee's messages ---------------------------------------------------------


class HelloMessage(TypedDict):
    type: Literal["hello"]
    protocol: int


class MatchStartMessage(TypedDict):
    type: Literal["match_start"]
    match: str
    seat: int
    players: int
    names: list[str]
    rules: dict[str, RuleValue]  # the rule book's keys (Rules.to_dict(): the variant keys where on)
    seed: int  # for the bot's own randomness; never the dice seed


# The functional form, since ``pass`` is a Python keyword. ``pass`` is present
# (and true) only in a dead man's turn: every other turn is as in version 1.
LegalMessage = TypedDict(
    "LegalMessage",
    {
        "dudo": bool,
        "calza": bool,
        "min_quantity": dict[str, int],  # face (as a JSON key) -> smallest legal quantity; absent: may not bid
        "max_quantity": int,
        "pass": NotRequired[bool],
    },
)


class TurnView(TypedDict):
    """The game part of a ``turn``: one seat's view of the round."""

    round: int
    seat: int
    dice: list[int]  # this seat's own dice, sorted
    counts: list[int]
    palifico: bool
    history: list[list[int]]  # [seat, quantity, face], oldest first
    legal: LegalMessage | None  # None for a seat that is not to act


class TurnMessage(TypedDict):
    type: Literal["turn"]
    match: str
    round: int
    seat: int
    dice: list[int]
    counts: list[int]
    palifico: bool
    history: list[list[int]]
    legal: LegalMessage
    time_ms: int


class CallNotice(TypedDict):
    seat: int
    kind: str  # "dudo" | "calza" (a dead man's calza too: the caller's seat is out)


class ChangeNotice(TypedDict):
    seat: int
    delta: int


class FaultNotice(TypedDict):
    seat: int
    kind: str  # a fault kind (timeout, crash, malformed, illegal, unasked)


class RoundEndMessage(TypedDict):
    """A resolved round carries ``bid``, ``call``, ``count`` and ``change``;
    a void round carries ``fault`` instead. ``palifico`` and ``history`` (every
    bid of the round) were added within version 1: a reader of an older
    referee's messages finds them absent."""

    type: Literal["round_end"]
    match: str
    round: int
    palifico: bool
    history: list[list[int]]  # [seat, quantity, face] of every bid of the round, oldest first
    dice: list[list[int]]
    bid: NotRequired[list[int]]  # [bidder, quantity, face]
    call: NotRequired[CallNotice]
    count: NotRequired[int]
    change: NotRequired[ChangeNotice]
    fault: NotRequired[FaultNotice]
    counts: list[int]


class MatchEndMessage(TypedDict):
    type: Literal["match_end"]
    match: str
    placements: list[int]


Notification = MatchStartMessage | RoundEndMessage | MatchEndMessage  # expects no reply
RefereeMessage = HelloMessage | MatchStartMessage | TurnMessage | RoundEndMessage | MatchEndMessage


def hello_message(version: int = PROTOCOL_VERSION) -> HelloMessage:
    """``hello`` saying ``version``: the newest, or version 1 to a bot that
    declares none of version 2's variants (it is sent nothing version 1 lacks)."""
    return {"type": "hello", "protocol": version}


def match_start_message(
    match: str, seat: int, names: Sequence[str], rules: dict[str, RuleValue], seed: int
) -> MatchStartMessage:
    """``match_start`` for ``seat``; ``rules`` is the full rule set (``Rules.to_dict()``)."""
    return {
        "type": "match_start",
        "match": match,
        "seat": seat,
        "players": len(names),
        "names": list(names),
        "rules": rules,
        "seed": seed,
    }


_FACE_TEXT: Final = ("", "1", "2", "3", "4", "5", "6")  # a face -> its key in min_quantity


def turn_view(state: State, seat: int) -> TurnView:
    """``seat``'s view of the round being played: the fields of a ``turn``
    message but ``type``, ``match`` and ``time_ms``."""
    if state.dice is None:
        raise StateError("no round is being played: deal the round first")
    if not 0 <= seat < len(state.counts):
        raise StateError(f"seat {seat} does not exist at a table of {len(state.counts)}")
    msg = _turn(state, seat, _legal_message(state) if state.to_act == seat else None, "", 0)
    return {k: v for k, v in msg.items() if k not in _NOT_VIEW}  # type: ignore[return-value]  # the view's keys


def _legal_message(state: State) -> LegalMessage:
    """The ``legal`` part of a turn for the seat to act."""
    legal = legal_summary(state)
    out: LegalMessage = {
        "dudo": legal.dudo,
        "calza": legal.calza,
        "min_quantity": {_FACE_TEXT[f]: q for f, q in legal.min_quantity.items()},
        "max_quantity": legal.max_quantity,
    }
    if legal.may_pass:
        out["pass"] = True
    return out


_NOT_VIEW: Final = frozenset({"type", "match", "time_ms"})


def _turn(state: State, seat: int, legal: LegalMessage | None, match: str, time_ms: int) -> TurnMessage:
    """The whole ``turn`` in one literal (its keys in the order they are encoded;
    a view and a merge cost a second dict per decision)."""
    dice = state.dice
    assert dice is not None  # the callers check it
    return {
        "type": "turn",
        "match": match,
        "round": state.round,
        "seat": seat,
        "dice": sorted(dice[seat]),
        "counts": list(state.counts),
        "palifico": state.palifico,
        "history": [[s, b.quantity, b.face] for s, b in state.history],
        "legal": legal,  # type: ignore[typeddict-item]  # None only in a view for a seat not to act
        "time_ms": time_ms,
    }


# The ``legal`` part of a turn outside palifico rounds depends on nothing but the
# ladder (the dice in play and the ones rule: one shared object each), the
# standing bid's place on it, whether aces may open and whether calza may be
# called; so the referee builds each such part once instead of on every
# decision (a third of building a turn: docs/performance.md, "Fourth round").
# Only turn_message shares them, since its message is encoded as soon as it is
# built; turn_view's caller owns what it gets. Keyed by the ladder's id (a
# ladder holds a dict, so it does not hash); an entry keeps its ladder, so an
# id reused by another ladder cannot match.
_LEGAL: dict[tuple[int, int, bool, bool], tuple[object, LegalMessage]] = {}
_LEGAL_CAP = 4096  # starts over when full (not Final: a test shrinks it, and compiled code inlines a Final)


def turn_message(match: str, state: State, time_ms: int) -> TurnMessage:
    """``turn`` for the seat to act in ``state``."""
    seat = state.to_act
    if state.palifico or state.dice is None or seat < 0 or not state.counts[seat]:
        return {"type": "turn", "match": match, **turn_view(state, seat), "time_ms": time_ms}  # type: ignore[typeddict-item]  # legal is set: the seat is to act
    ladder = state.ladder
    key = (id(ladder), state.top, state.rules.open_on_ones, calza_allowed(state))
    entry = _LEGAL.get(key)
    if entry is not None and entry[0] is ladder:
        legal = entry[1]
    else:
        legal = _legal_message(state)
        if len(_LEGAL) >= _LEGAL_CAP:
            _LEGAL.clear()
        _LEGAL[key] = (ladder, legal)
    return _turn(state, seat, legal, match, time_ms)


def round_end_message(match: str, state: State, fault_kind: FaultKind | None = None) -> RoundEndMessage:
    """``round_end`` for the round ``state.last`` ended: every die, and the call and
    its result, or, for a void round, the fault (``fault_kind``)."""
    res = state.last
    if res is None:
        raise StateError("no round has ended yet")
    # Every bid was said aloud at the table: a seat that acted early, or not at
    # all, sees the whole bidding here (nothing hidden is in it).
    history = [[s, b.quantity, b.face] for s, b in res.bids]
    if res.fault is not None:
        return {
            "type": "round_end",
            "match": match,
            "round": res.round,
            "palifico": res.palifico,
            "history": history,
            "dice": [list(h) for h in res.dice],
            "fault": {"seat": res.fault, "kind": FaultKind(fault_kind or FaultKind.CRASH).value},
            "counts": list(state.counts),
        }
    if res.call is None or res.change is None or res.count is None:  # the engine sets all when a call ends a round
        raise StateError(f"round {res.round} ended with neither a call nor a fault")
    bidder, b = res.bids[-1]
    return {
        "type": "round_end",
        "match": match,
        "round": res.round,
        "palifico": res.palifico,
        "history": history,
        "dice": [list(h) for h in res.dice],
        "bid": [bidder, b.quantity, b.face],
        "call": {"seat": res.call[0], "kind": res.call[1]},
        "count": res.count,
        "change": {"seat": res.change[0], "delta": res.change[1]},
        "counts": list(state.counts),
    }


def match_end_message(match: str, placements: Sequence[int]) -> MatchEndMessage:
    return {"type": "match_end", "match": match, "placements": list(placements)}


# --- what a bot answers -------------------------------------------------------------


class ReadyMessage(TypedDict):
    type: Literal["ready"]
    name: str
    version: str | None  # optional on the wire; the parser fills in None


class BidReply(TypedDict):
    action: Literal["bid"]
    quantity: int
    face: int


class CallReply(TypedDict):
    action: Literal["dudo", "calza", "pass"]


ReplyMessage = BidReply | CallReply


def ready_message(name: str, version: str | None) -> ReadyMessage:
    return {"type": "ready", "name": name, "version": version}


def reply_message(action: Action) -> ReplyMessage:
    """The reply to a ``turn`` for ``action``."""
    if type(action) is Bid:
        return {"action": "bid", "quantity": action.quantity, "face": action.face}
    if isinstance(action, Pass):
        return {"action": "pass"}
    return {"action": "dudo" if isinstance(action, Dudo) else "calza"}


_OPT = orjson.OPT_APPEND_NEWLINE
_dumps = orjson.dumps
# The reply lines of reply_message, ready-made: encode_reply is on the
# per-decision path of every Python bot (tests/test_wire.py pins them equal).
_BID_LINE: Final = b'{"action":"bid","quantity":%d,"face":%d}\n'
_DUDO_LINE: Final = _dumps({"action": "dudo"}, option=_OPT)
_CALZA_LINE: Final = _dumps({"action": "calza"}, option=_OPT)
_PASS_LINE: Final = _dumps({"action": "pass"}, option=_OPT)
_MAX_TEXT = 1000  # characters of a bot's junk passed on to the referee's fault detail


def _number(value: object) -> object:
    """A bid's quantity or face as JSON: an integer (numpy's too) as the integer
    it is; a float or text as it is (the referee rejects it as ``malformed``
    rather than this side rounding it); anything else as its text."""
    if type(value) is not bool:
        try:
            return operator.index(value)  # type: ignore[arg-type]  # TypeError when it is no integer
        except TypeError:
            pass
    if value is None or isinstance(value, (bool, float, str)):
        return value
    return _text(value)


def _text(value: object) -> str:
    """``repr(value)`` cut short; a ``__repr__`` that raises is the bot's bug, not a reason to crash here."""
    try:
        return repr(value)[:_MAX_TEXT]
    except Exception:
        return f"<{type(value).__name__} whose repr() raised>"


def encode_reply(returned: object) -> bytes:
    """Whatever a Python bot's ``act`` returned, as its reply line.

    An action or its text form (``"5x3"``, ``"dudo"``) is sent as the reply
    it is; a dict is sent as it is (a bot may build the reply itself);
    anything else goes out as ``{"action": <its text>}``, for the referee to
    record as ``malformed`` with the text the bot's author needs to see.
    Never raises.
    """
    kind = type(returned)
    if kind is Bid:
        q: object
        f: object
        q, f = returned  # type: ignore[misc]  # a Bid: two fields, of whatever types the bot put in
        if type(q) is not int or type(f) is not int:
            q, f = _number(q), _number(f)
            if type(q) is not int or type(f) is not int:
                return _dumps({"action": "bid", "quantity": q, "face": f}, option=_OPT)
        return _BID_LINE % (q, f)
    if kind is Dudo:
        return _DUDO_LINE
    if kind is Calza:
        return _CALZA_LINE
    if kind is Pass:
        return _PASS_LINE
    if isinstance(returned, str):
        try:
            return encode_reply(parse_action(returned))
        except InvalidAction:
            return _dumps({"action": returned[:_MAX_TEXT]}, option=_OPT)
    if isinstance(returned, dict):
        try:
            return _dumps(returned, option=_OPT)
        except TypeError:  # an integer beyond 64 bits, a key that is not a string, a set...
            import json  # rare: not loaded at the host's start-up

            try:
                return (json.dumps(returned, default=_text, separators=(",", ":")) + "\n").encode()
            except (TypeError, ValueError, RecursionError):
                return _dumps({"action": _text(returned)}, option=_OPT)
    return _dumps({"action": _text(returned)}, option=_OPT)
