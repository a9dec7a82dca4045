"""The wire codec: lines in, objects out, replies parsed strictly."""

from __future__ import annotations

import pytest

from arena.engine.rules import CALZA, DUDO, Bid
from arena.errors import ProtocolError
from arena.protocol.messages import encode_reply
from arena.protocol.parse import parse_reply
from arena.protocol.wire import MAX_LINE, clip, decode, encode


def test_encode_is_one_line() -> None:
    line = encode({"type": "turn", "dice": [1, 2], "s": "é\n"})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert decode(line) == {"type": "turn", "dice": [1, 2], "s": "é\n"}


@pytest.mark.parametrize(
    "line, what",
    [
        (b"not json", "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'"dudo"', "not a JSON object"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b'{"action": ', "not JSON"),
        (b"", "not JSON"),
        (b'\xef\xbb\xbf{"action": "dudo"}', "not UTF-8"),  # a byte-order mark: the protocol says UTF-8
        ('{"action": "dudo"}'.encode("utf-16"), "not UTF-8"),
        ('{"action": "dudo"}'.encode("utf-16-le"), "not"),
        (b'{"action": "dudo", "x": NaN}', "not JSON"),
        (b'{"action": "dudo", "x": Infinity}', "not JSON"),
        (b'{"action": "dudo", "x": 1e400}', "not JSON"),
        (b'{"action": "du\x1bdo"}', "not JSON"),  # a raw control character in a string
        (b'{"a": ' + b"[" * 1015 + b"]" * 1015 + b', "f": 1.5}', "nested more than"),
        (b'{"a": ' + b"[" * 1015 + b"]" * 1015 + b"}", "nested more than"),
        (b'{"a": ' + b'{"b": ' * 20 + b"1" + b"}" * 20 + b"}", "nested more than"),
        (b'{"a": ' + b"[" * 2000 + b"]" * 2000 + b"}", "not JSON"),
    ],
)
def test_decode_rejects(line: bytes, what: str) -> None:
    with pytest.raises(ProtocolError) as err:
        decode(line)
    assert err.value.kind == "malformed" and what in err.value.detail
    assert len(err.value.detail) < 600 and "\n" not in err.value.detail


def test_decode_rejects_an_over_long_line() -> None:
    with pytest.raises(ProtocolError) as err:
        decode(b'{"a": "' + b"x" * MAX_LINE + b'"}')
    assert "limit" in err.value.detail and len(err.value.detail) < 400


@pytest.mark.parametrize(
    "obj, action",
    [
        ({"action": "bid", "quantity": 5, "face": 3}, Bid(5, 3)),
        ({"action": "dudo"}, DUDO),
        ({"action": "calza"}, CALZA),
        ({"action": "dudo", "comment": "unknown fields are ignored"}, DUDO),
        ({"action": "bid", "quantity": 0, "face": 3}, Bid(0, 3)),  # well-formed, illegal
        ({"action": "bid", "quantity": -1, "face": 9}, Bid(-1, 9)),
    ],
)
def test_parse_reply(obj: dict, action: object) -> None:
    assert parse_reply(obj) == action


@pytest.mark.parametrize(
    "text",
    [
        b'{"action": "bid", "quantity": true, "face": 3}',
        b'{"action": "bid", "quantity": 3.0, "face": 3}',
        b'{"action": "bid", "quantity": "3", "face": 3}',
        b'{"action": "bid", "quantity": 3}',
        b'{"action": "bid", "quantity": 3, "face": null}',
        b'{"action": "bid", "quantity": 1e400, "face": 3}',
        b'{"action": "raise"}',
        b'{"quantity": 3, "face": 3}',
        b'{"action": ["dudo"]}',
    ],
)
def test_parse_reply_rejects_malformed(text: bytes) -> None:
    with pytest.raises(ProtocolError) as err:
        parse_reply(decode(text))
    assert err.value.kind == "malformed"


def test_a_100_digit_quantity_is_a_bid() -> None:
    big = "9" * 100
    line = f'{{"action": "bid", "quantity": {big}, "face": 3}}'.encode()
    action = parse_reply(decode(line))
    assert action == Bid(int(big), 3)
    # A 60 KB number (CPython refuses int() past 4300 digits) is malformed, not a crash.
    huge = b'{"action": "bid", "quantity": ' + b"9" * 60000 + b', "face": 3}'
    with pytest.raises(ProtocolError) as err:
        parse_reply(decode(huge))
    assert err.value.kind == "malformed"


@pytest.mark.parametrize(
    "value",
    [
        [[[[[[[[[[[[[[1]]]]]]]]]]]]]],  # nested, within the depth cap
        {"q": [1, [2, [3]]]},
        1.5,
    ],
    ids=["nested-list", "nested-dict", "float"],
)
def test_bad_values_in_any_field_are_malformed_with_a_short_detail(value: object) -> None:
    for key in ("quantity", "face", "action"):
        obj = {"action": "bid", "quantity": 3, "face": 3, key: value}
        with pytest.raises(ProtocolError) as err:
            parse_reply(obj)
        assert err.value.kind == "malformed" and len(err.value.detail) < 700


def test_clip_is_short_and_printable() -> None:
    assert clip("x" * 1000).startswith("'xxx") and len(clip("x" * 1000)) < 260
    assert "\n" not in clip("a\nb") and clip("a\nb") == "'a\\nb'"
    assert clip(b"\xff ok") == repr("\ufffd ok")


@pytest.mark.parametrize(
    "returned, expected",
    [
        (Bid(5, 3), {"action": "bid", "quantity": 5, "face": 3}),
        (DUDO, {"action": "dudo"}),
        (CALZA, {"action": "calza"}),
        ("5x3", {"action": "bid", "quantity": 5, "face": 3}),
        ("Dudo", {"action": "dudo"}),
        ("raise!", {"action": "raise!"}),  # junk goes out as-is: the referee records malformed
        (None, {"action": "None"}),
        ({"action": "bid", "quantity": 10**30, "face": 2}, {"action": "bid", "quantity": 10**30, "face": 2}),
        (Bid(10**30, 2), {"action": "bid", "quantity": 10**30, "face": 2}),
        (Bid(3.0, 2), {"action": "bid", "quantity": 3.0, "face": 2}),  # sent as it is, never rounded to a bid
        (Bid(True, 2), {"action": "bid", "quantity": True, "face": 2}),
        ({"action": {1, 2}}, {"action": "{1, 2}"}),
    ],
)
def test_host_reply_forms(returned: object, expected: dict) -> None:
    line = encode_reply(returned)
    assert line.endswith(b"\n") and decode(line) == expected
