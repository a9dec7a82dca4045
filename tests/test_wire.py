"""The wire codec: lines in, objects out, replies parsed strictly."""

from __future__ import annotations

import pytest

from arena.errors import ProtocolError
from arena.host import reply_bytes
from arena.rules import CALZA, DUDO, Bid
from arena.wire import MAX_LINE, clip, decode, encode, parse_reply


def test_encode_is_one_line() -> None:
    line = encode({"type": "turn", "dice": [1, 2], "s": "é\n"})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert decode(line) == {"type": "turn", "dice": [1, 2], "s": "é\n"}


@pytest.mark.parametrize("line, what", [
    (b"not json", "not JSON"),
    (b"[1, 2]", "not a JSON object"),
    (b'"dudo"', "not a JSON object"),
    (b"\xff\xfe{}", "not UTF-8"),
    (b'{"action": ', "not JSON"),
    (b"", "not JSON"),
])
def test_decode_rejects(line: bytes, what: str) -> None:
    with pytest.raises(ProtocolError) as err:
        decode(line)
    assert err.value.kind == "malformed" and what in err.value.detail


def test_decode_rejects_an_over_long_line() -> None:
    with pytest.raises(ProtocolError) as err:
        decode(b'{"a": "' + b"x" * MAX_LINE + b'"}')
    assert "limit" in err.value.detail and len(err.value.detail) < 400


@pytest.mark.parametrize("obj, action", [
    ({"action": "bid", "quantity": 5, "face": 3}, Bid(5, 3)),
    ({"action": "dudo"}, DUDO),
    ({"action": "calza"}, CALZA),
    ({"action": "dudo", "comment": "unknown fields are ignored"}, DUDO),
    ({"action": "bid", "quantity": 0, "face": 3}, Bid(0, 3)),  # well-formed, illegal
    ({"action": "bid", "quantity": -1, "face": 9}, Bid(-1, 9)),
])
def test_parse_reply(obj: dict, action: object) -> None:
    assert parse_reply(obj) == action


@pytest.mark.parametrize("text", [
    b'{"action": "bid", "quantity": true, "face": 3}',
    b'{"action": "bid", "quantity": 3.0, "face": 3}',
    b'{"action": "bid", "quantity": "3", "face": 3}',
    b'{"action": "bid", "quantity": 3}',
    b'{"action": "bid", "quantity": 3, "face": null}',
    b'{"action": "bid", "quantity": 1e400, "face": 3}',
    b'{"action": "raise"}',
    b'{"quantity": 3, "face": 3}',
    b'{"action": ["dudo"]}',
])
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


def test_clip_is_short_and_printable() -> None:
    assert clip("x" * 1000).startswith("'xxx") and len(clip("x" * 1000)) < 260
    assert "\n" not in clip("a\nb") and clip("a\nb") == "'a\\nb'"
    assert clip(b"\xff ok") == repr("\ufffd ok")


@pytest.mark.parametrize("returned, expected", [
    (Bid(5, 3), {"action": "bid", "quantity": 5, "face": 3}),
    (DUDO, {"action": "dudo"}),
    (CALZA, {"action": "calza"}),
    ("5x3", {"action": "bid", "quantity": 5, "face": 3}),
    ("Dudo", {"action": "dudo"}),
    ("raise!", {"action": "raise!"}),  # junk goes out as-is: the referee records malformed
    (None, {"action": "None"}),
    ({"action": "bid", "quantity": 10 ** 30, "face": 2}, {"action": "bid", "quantity": 10 ** 30, "face": 2}),
])
def test_host_reply_forms(returned: object, expected: dict) -> None:
    line = reply_bytes(returned)
    assert line.endswith(b"\n") and decode(line) == expected
