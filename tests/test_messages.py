"""Every message of the protocol: what its builder makes, its strict parser reads
back exactly, and a message that breaks docs/protocol.md is refused naming the
field (the bot's side), or is a ``malformed`` fault (the referee's side)."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

import pytest

from arena.engine.dice import roll_table
from arena.engine.rules import CALZA, DUDO, PRESETS, Bid, Rules, State, apply, deal, legal_actions, new_match
from arena.errors import ProtocolError
from arena.protocol.messages import (
    PROTOCOL_VERSION,
    encode_reply,
    hello_message,
    match_end_message,
    match_start_message,
    reply_message,
    round_end_message,
    turn_message,
    turn_view,
)
from arena.protocol.parse import (
    MessageError,
    parse_hello,
    parse_match_end,
    parse_match_start,
    parse_ready,
    parse_reply,
    parse_round_end,
    parse_turn,
)
from arena.protocol.wire import decode, encode
from arena.sdk import MatchInfo

NAMES = ["a", "b", "c"]


def wire(msg: Any) -> Any:
    """The message as a bot reads it off the pipe."""
    return decode(encode(msg))


def states(seed: int, preset: str = "classic", n: int = 3) -> list[State]:
    """Every state of one match of random legal moves, round ends included."""
    rng = random.Random(seed)
    rules = Rules.preset(preset)
    state = new_match(rules, n, 0)
    out = []
    while state.placements is None:
        state = deal(state, roll_table(seed, state.round, state.counts))
        while state.dice is not None:
            out.append(state)
            state = apply(state, rng.choice(legal_actions(state)))
        out.append(state)
    return out


def info_for(state: State, seat: int, seed: int = 11) -> MatchInfo:
    return parse_match_start(
        wire(match_start_message("m-1", seat, NAMES[: len(state.counts)], state.rules.to_dict(), seed))
    )


# --- builders and parsers agree ---------------------------------------------------------


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_message_of_a_match_parses_back_to_what_was_built(preset: str) -> None:
    for seed in range(3):
        for state in states(seed, preset):
            if state.dice is not None:
                msg = wire(turn_message("m-1", state, 700))
                turn = parse_turn(msg, info_for(state, state.to_act), random.Random(1))
                assert turn.round == state.round and turn.seat == state.to_act and turn.time_ms == 700
                assert turn.dice == tuple(sorted(state.dice[state.to_act])) and turn.counts == state.counts
                assert turn.history == state.history and turn.palifico == state.palifico
                assert set(turn.legal.actions()) == set(legal_actions(state))  # the summary, read back, is exact
            elif state.last is not None:
                end = parse_round_end(wire(round_end_message("m-1", state)), info_for(state, 0))
                last = state.last
                assert (end.round, end.dice, end.counts) == (last.round, last.dice, state.counts)
                assert end.bid == last.bids[-1] and end.call == last.call and end.count == last.count
                assert end.change == last.change and end.fault is None
                assert end.history == last.bids and end.palifico == last.palifico  # the whole bidding
        final = states(seed, preset)[-1]
        assert final.placements is not None
        assert parse_match_end(wire(match_end_message("m-1", final.placements)), info_for(final, 0)) == final.placements


@pytest.mark.parametrize("cap", [4096, 3])
def test_a_turn_is_the_view_of_the_seat_to_act_whatever_turn_messages_came_before(
    cap: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """turn_message shares the ``legal`` part between turns (built once per
    ladder, standing bid, aces rule and calza): every turn of many matches,
    every preset and table size, played one after the other in one process,
    must still be byte for byte the acting seat's turn_view; so too when the
    memo is small and starts over often (a long-lived worker)."""
    import arena.protocol.messages as messages_mod

    monkeypatch.setattr(messages_mod, "_LEGAL", {})
    monkeypatch.setattr(messages_mod, "_LEGAL_CAP", cap)
    turns = 0
    for preset in sorted(PRESETS):
        for seed in range(12):
            for state in states(seed, preset, n=2 + seed % 5):
                if state.dice is None:
                    continue
                view = {"type": "turn", "match": "m-1", **turn_view(state, state.to_act), "time_ms": 700}
                assert encode(turn_message("m-1", state, 700)) == encode(view)
                turns += 1
    assert turns > 1000 and len(messages_mod._LEGAL) <= cap


@pytest.mark.pure
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_usual_round_end_takes_the_bulk_checks(preset: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot reads about one ``round_end`` per decision it makes: the usual
    message (a call's result, with the bidding) must pass the bulk checks,
    not fall through to the field-by-field ones (which would parse it twice),
    and give what those give."""
    import arena.protocol.parse as parse_mod

    ends = [
        (wire(round_end_message("m-1", s)), info_for(s, 0))
        for seed in range(3)
        for s in states(seed, preset)
        if s.dice is None and s.last is not None and s.last.fault is None
    ]
    assert ends
    fast = [parse_round_end(msg, info) for msg, info in ends]

    def not_in_bulk(*_: object) -> None:
        raise TypeError("as if the bulk checks had failed")

    with monkeypatch.context() as m:
        m.setattr(parse_mod, "_build_round_end", not_in_bulk)
        assert [parse_round_end(msg, info) for msg, info in ends] == fast  # the field-by-field result

    def field_by_field(*_: object) -> None:
        raise AssertionError("the round_end fell through to the field-by-field checks")

    monkeypatch.setattr(parse_mod, "_type", field_by_field)
    assert [parse_round_end(msg, info) for msg, info in ends] == fast


def test_match_start_and_a_void_round_parse_back() -> None:
    rules = Rules.preset("wikipedia", {"dice": 2})
    info = parse_match_start(wire(match_start_message("m-9", 1, NAMES, rules.to_dict(), 2**62)))
    assert info == MatchInfo("m-9", 1, 3, tuple(NAMES), rules, 2**62)
    state = deal(new_match(rules, 3, 0), roll_table(5, 1, (2, 2, 2)))
    from arena.engine.rules import fault

    void = fault(state, 1)
    end = parse_round_end(wire(round_end_message("m-9", void, "timeout")), info)
    assert end.fault == (1, "timeout") and all(x is None for x in (end.bid, end.call, end.count, end.change))
    assert end.counts == void.counts and end.dice == state.dice


def test_round_end_without_the_bidding_still_parses_and_a_bad_bidding_is_named() -> None:
    """``history`` and ``palifico`` came later within version 1: an older
    referee's ``round_end`` (a recorded session, a mock) still parses."""
    state = next(s for s in states(2) if s.dice is None and s.last is not None and s.last.fault is None)
    info = info_for(state, 0)
    msg = wire(round_end_message("m-1", state))
    assert len(msg["history"]) >= 1 and isinstance(msg["palifico"], bool)
    older = {k: v for k, v in msg.items() if k not in ("history", "palifico")}
    end = parse_round_end(older, info)
    assert end.history == () and end.palifico is False
    assert end.bid == parse_round_end(msg, info).bid
    for bad in ([[0, 1]], [[9, 1, 2]], [[0, 1, 7]], [[0, "1", 2]], {"0": 1}):
        with pytest.raises(MessageError, match="'history' must be a list of"):
            parse_round_end({**msg, "history": bad}, info)
    with pytest.raises(MessageError, match="palifico"):
        parse_round_end({**msg, "palifico": 1}, info)


def test_unknown_fields_are_ignored() -> None:
    state = states(1)[3]
    info = info_for(state, state.to_act)
    msg = wire(turn_message("m-1", state, 700))
    plain = parse_turn(msg, info, random.Random(1))
    extra = {**msg, "hint": {"x": 1}, "legal": {**msg["legal"], "max_bid": 3}}
    assert parse_turn(extra, info, random.Random(1)) == plain
    start = wire(match_start_message("m-1", 0, NAMES, Rules().to_dict(), 1))
    newer = {**start, "clock": 5, "rules": {**start["rules"], "a_rule_from_the_future": True}}
    assert parse_match_start(newer) == parse_match_start(start)


def test_hello_is_the_version_spoken_here() -> None:
    assert parse_hello(wire(hello_message())) == PROTOCOL_VERSION == 2
    assert parse_hello(wire(hello_message(1))) == 1  # a bot that declares no version 2 variant is greeted so
    cases: list[tuple[dict[str, Any], str]] = [
        ({"type": "hello", "protocol": 3}, "protocol 3 is not spoken here"),
        ({"type": "hello", "protocol": 0}, "protocol 0 is not spoken here"),
        ({"type": "hello", "protocol": "1"}, "'protocol' must be a JSON integer"),
        ({"type": "hello"}, "no 'protocol'"),
        ({"type": "helo", "protocol": 1}, "'type'"),
    ]
    for bad, words in cases:
        with pytest.raises(MessageError, match=words):
            parse_hello(bad)


# --- the bot's side refuses what breaks the protocol, naming the field --------------------


def _turn_case() -> tuple[dict[str, Any], MatchInfo]:
    state = next(s for s in states(4) if s.dice is not None and len(s.history) >= 2)
    return wire(turn_message("m-1", state, 700)), info_for(state, state.to_act)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(msg: dict[str, Any]) -> None:
        *up, key = path.split(".")
        target = msg
        for k in up:
            target = target[k]
        if value is KeyError:
            del target[key]
        else:
            target[key] = value

    return change


TURN_BREAKS: list[tuple[str, Any, str]] = [
    *[
        (key, KeyError, f"no {key.split('.')[-1]!r}")
        for key in (
            "round",
            "seat",
            "dice",
            "counts",
            "palifico",
            "history",
            "legal",
            "time_ms",
            "legal.dudo",
            "legal.calza",
            "legal.min_quantity",
            "legal.max_quantity",
        )
    ],
    ("round", True, "'round' must be a JSON integer"),
    ("round", 7.0, "'round' must be a JSON integer"),
    ("seat", "0", "'seat' must be a JSON integer"),
    ("time_ms", None, "'time_ms' must be a JSON integer"),
    ("palifico", 0, "'palifico' must be true or false"),
    ("dice", [1, "3"], "'dice' must be a list of JSON integers"),
    ("dice", [True, 2], "'dice' must be a list of JSON integers"),
    ("counts", [5, True, 5], "'counts' must be a list of JSON integers"),
    ("history", [[0, True, 2]], "'history' must be a list of [seat, quantity, face]"),
    ("legal.min_quantity", {"1": False}, "'min_quantity' must map faces"),
    ("dice", [7, 2], "'dice' must hold integers from 1 to 6"),
    ("dice", [0], "'dice' must hold integers from 1 to 6"),
    ("dice", "135", "'dice' must be a list of JSON integers"),
    ("dice", {"1": 2}, "'dice' must be a list of JSON integers"),
    ("counts", [5, 5], "'counts' must have 3 entries"),
    ("counts", [5, 5.0, 5], "'counts' must be a list of JSON integers"),
    ("history", [[0, 1]], "'history' must be a list of [seat, quantity, face]"),
    ("history", [[0, 1, 2, 3]], "'history' must be a list of [seat, quantity, face]"),
    ("history", [[0, 1, "2"]], "'history' must be a list of [seat, quantity, face]"),
    ("history", [7], "'history' must be a list of [seat, quantity, face]"),
    ("history", "x", "'history' must be a list of [seat, quantity, face]"),
    ("history", [{"s": 1, "q": 2, "f": 3}], "'history' must be a list of [seat, quantity, face]"),
    ("legal", [], "'legal' must be a JSON object"),
    ("legal.dudo", 1, "'dudo' must be true or false"),
    ("legal.calza", None, "'calza' must be true or false"),
    ("legal.max_quantity", 12.5, "'max_quantity' must be a JSON integer"),
    ("legal.min_quantity", {"7": 1}, "'min_quantity' must map faces"),
    ("legal.min_quantity", {"1": "2"}, "'min_quantity' must map faces"),
    ("legal.min_quantity", [["1", 2]], "'min_quantity' must be a JSON object"),
]


@pytest.mark.parametrize(
    "path, value, words", TURN_BREAKS, ids=[f"{p}={'missing' if v is KeyError else repr(v)}" for p, v, _ in TURN_BREAKS]
)
def test_a_broken_turn_is_refused_naming_the_field(path: str, value: Any, words: str) -> None:
    msg, info = _turn_case()
    parse_turn(msg, info, random.Random(1))  # as built: fine
    broken = copy.deepcopy(msg)
    _set(path, value)(broken)
    with pytest.raises(MessageError) as err:
        parse_turn(broken, info, random.Random(1))
    assert words in str(err.value), str(err.value)
    assert len(str(err.value)) < 700 and "\n" not in str(err.value)


def test_a_turn_for_another_seat_or_table_is_refused() -> None:
    msg, info = _turn_case()
    other = MatchInfo(info.match, (info.seat + 1) % 3, 3, info.names, info.rules, info.seed)
    with pytest.raises(MessageError, match=f"'seat' must be {other.seat}"):
        parse_turn(msg, other, random.Random(1))
    bigger = MatchInfo(info.match, info.seat, 4, (*info.names, "d"), info.rules, info.seed)
    with pytest.raises(MessageError, match="'counts' must have 4 entries"):
        parse_turn(msg, bigger, random.Random(1))
    for junk in ([msg], "turn", None):
        with pytest.raises(MessageError, match="expected a JSON object"):
            parse_turn(junk, info, random.Random(1))  # type: ignore[arg-type]


START_BREAKS: list[tuple[str, Any, str]] = [
    *[(key, KeyError, f"no {key!r}") for key in ("match", "seat", "players", "names", "rules", "seed")],
    ("players", 1, "'players' must be from 2 to 10"),
    ("players", 11, "'players' must be from 2 to 10"),
    ("seat", 3, "'seat' must be from 0 to 2"),
    ("seat", -1, "'seat' must be from 0 to 2"),
    ("names", ["a", "b"], "'names' must be a list of 3 JSON strings"),
    ("names", ["a", "b", 3], "'names' must be a list of 3 JSON strings"),
    ("seed", "1", "'seed' must be a JSON integer"),
    ("match", 42, "'match' must be a JSON string"),
    ("rules", [], "'rules' must be a JSON object"),
    ("rules.max_rounds", KeyError, "'rules' lacks 'max_rounds'"),
    ("rules.dice", 0, "rule dice: 0 is not allowed"),
    ("rules.ones", "sometimes", "rule ones: 'sometimes' is not allowed"),
    ("rules.calza", 1, "rule calza: 1 is not allowed"),
]


@pytest.mark.parametrize(
    "path, value, words",
    START_BREAKS,
    ids=[f"{p}={'missing' if v is KeyError else repr(v)}" for p, v, _ in START_BREAKS],
)
def test_a_broken_match_start_is_refused_naming_the_field(path: str, value: Any, words: str) -> None:
    broken = wire(match_start_message("m-1", 1, NAMES, Rules().to_dict(), 5))
    _set(path, value)(broken)
    with pytest.raises(MessageError) as err:
        parse_match_start(broken)
    assert words in str(err.value), str(err.value)


def _round_end_case() -> tuple[dict[str, Any], MatchInfo]:
    state = next(s for s in states(2) if s.dice is None and s.last is not None)
    return wire(round_end_message("m-1", state)), info_for(state, 0)


ROUND_END_BREAKS: list[tuple[str, Any, str]] = [
    *[
        (key, KeyError, "a round carries 'bid', 'call', 'count' and 'change', or a 'fault'")
        for key in ("bid", "call", "count", "change")
    ],
    ("round", KeyError, "no 'round'"),
    ("counts", [1, 2], "'counts' must have 3 entries"),
    ("counts", [5, -1, 5], "'counts' must hold integers from 0"),
    ("dice", [[1], [2]], "'dice' must be 3 lists of dice"),
    ("dice", [[1], [2], [9]], "'dice' must be 3 lists of dice"),
    ("fault", {"seat": 1, "kind": "timeout"}, "a void round (with 'fault') carries no 'bid'"),
    ("call", {"seat": 1, "kind": "raise"}, '\'call.kind\' must be "dudo" or "calza"'),
    ("call", {"kind": "dudo"}, "no 'seat'"),
    ("change", {"seat": 1, "delta": "-1"}, "'change.delta' must be a JSON integer"),
    ("bid", [1, 2], "'bid' must have 3 entries"),
    ("count", -1, "'count' must be at least 0"),
]


@pytest.mark.parametrize(
    "path, value, words",
    ROUND_END_BREAKS,
    ids=[f"{p}={'missing' if v is KeyError else repr(v)}" for p, v, _ in ROUND_END_BREAKS],
)
def test_a_broken_round_end_is_refused_naming_the_field(path: str, value: Any, words: str) -> None:
    msg, info = _round_end_case()
    parse_round_end(msg, info)
    broken = copy.deepcopy(msg)
    _set(path, value)(broken)
    with pytest.raises(MessageError) as err:
        parse_round_end(broken, info)
    assert words in str(err.value), str(err.value)


def test_a_broken_match_end_is_refused() -> None:
    info = info_for(states(1)[0], 0)
    assert parse_match_end(wire(match_end_message("m", [2, 3, 1])), info) == (2, 3, 1)
    for placements, words in [
        ([1, 1, 2], "each of the 3 places once"),
        ([1, 2], "must have 3 entries"),
        ([1, 2, 4], "each of the 3 places once"),
        ([1, 2, "3"], "list of JSON integers"),
    ]:
        with pytest.raises(MessageError, match=words):
            parse_match_end({"type": "match_end", "match": "m", "placements": placements}, info)


# --- the referee's side: ready and the replies (hostile input) ----------------------------


@pytest.mark.parametrize(
    "obj, ready",
    [
        ({"type": "ready", "name": "x", "version": "1.2"}, {"type": "ready", "name": "x", "version": "1.2"}),
        ({"type": "ready", "name": "x"}, {"type": "ready", "name": "x", "version": None}),
        (
            {"type": "ready", "name": "x", "version": None, "extra": [1]},
            {"type": "ready", "name": "x", "version": None},
        ),
    ],
)
def test_parse_ready(obj: dict[str, Any], ready: dict[str, Any]) -> None:
    assert parse_ready(obj) == ready


@pytest.mark.parametrize(
    "obj, words",
    [
        ({"type": "ready"}, "'name' must be a JSON string"),
        ({"type": "ready", "name": ""}, "'name' must be a JSON string"),
        ({"type": "ready", "name": 7}, "'name' must be a JSON string"),
        ({"type": "ready", "name": "x" * 201}, "'name' must be a JSON string of 1 to 200"),
        ({"type": "ready", "name": "x", "version": 1.2}, "'version' must be a JSON string"),
        ({"type": "ready", "name": "x", "version": ["1"]}, "'version' must be a JSON string"),
        ({"type": "Ready", "name": "x"}, "expected"),
        ({"name": "x"}, "expected"),
        ({"type": "ready", "name": [[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]}, "'name' must be"),
    ],
)
def test_parse_ready_refuses(obj: dict[str, Any], words: str) -> None:
    with pytest.raises(ProtocolError) as err:
        parse_ready(obj)
    assert err.value.kind == "malformed" and words in err.value.detail and len(err.value.detail) < 600


def test_reply_lines_are_the_reply_messages() -> None:
    for action in (Bid(5, 3), Bid(0, 9), DUDO, CALZA):
        assert encode_reply(action) == encode(reply_message(action))
    for action in (Bid(5, 3), Bid(10**30, 2), DUDO, CALZA):  # past 64 bits too (an illegal bid, not a crash)
        assert decode(encode_reply(action)) == reply_message(action)
        assert parse_reply(decode(encode_reply(action))) == action
