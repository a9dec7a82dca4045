"""The player protocol's wire format: one JSON object per ``\\n``-terminated line.

Both sides of the pipe use this module: the referee's :mod:`arena.process` and
the Python bot host :mod:`arena.host`. It sits on the per-decision path, so it
uses orjson (5-7x faster than the stdlib here, see docs/performance.md) and
falls back to the stdlib only for what orjson refuses but the protocol allows
(integers beyond 64 bits, which a hostile bot may send).
"""

from __future__ import annotations

import json
from typing import Any, Final

import orjson

from arena.errors import ProtocolError
from arena.rules import CALZA, DUDO, Action, Bid

__all__ = ["PROTOCOL_VERSION", "MAX_LINE", "encode", "decode", "parse_reply", "clip"]

PROTOCOL_VERSION: Final = 1
MAX_LINE: Final = 64 * 1024  # bytes in one line, newline excluded

_dumps = orjson.dumps
_loads = orjson.loads
_OPT = orjson.OPT_APPEND_NEWLINE
_JSONDecodeError = orjson.JSONDecodeError


def encode(msg: dict[str, Any]) -> bytes:
    """``msg`` as one JSON line, ``b"\\n"``-terminated."""
    return _dumps(msg, option=_OPT)


def _stdlib_loads(line: bytes) -> Any:
    # The stdlib parses integers of any size, but CPython caps int() at 4300
    # digits and raises ValueError past that; a 64 KiB line cannot hold a
    # number big enough to be slow below that cap.
    return json.loads(line)


def decode(line: bytes) -> dict[str, Any]:
    """One line (newline optional) as a JSON object, or ``ProtocolError("malformed")``."""
    if len(line) > MAX_LINE + 1:
        raise ProtocolError(f"line of {len(line)} bytes is over the {MAX_LINE}-byte limit: {clip(line)}",
                            "malformed")
    try:
        obj = _loads(line)
    except _JSONDecodeError:
        # orjson refuses integers beyond 64 bits (and a few other things the
        # stdlib also refuses); retry with the stdlib so a 100-digit quantity
        # is a well-formed, illegal bid rather than malformed JSON.
        try:
            obj = _stdlib_loads(line)
        except (ValueError, RecursionError):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                raise ProtocolError(f"not UTF-8: {clip(line)}", "malformed") from None
            raise ProtocolError(f"not JSON: {clip(line)}", "malformed") from None
    if type(obj) is not dict:
        raise ProtocolError(f"not a JSON object: {clip(line)}", "malformed")
    # orjson turns an integer beyond 64 bits into a float without a word, so
    # a 100-digit quantity would look like 1e+100; replies are flat objects,
    # so one pass over the top-level values finds the case to re-read.
    for value in obj.values():
        if type(value) is float:
            return _stdlib_loads(line)  # type: ignore[no-any-return]
    return obj


def _integer(obj: dict[str, Any], key: str) -> int:
    value = obj.get(key)
    # bool is a subclass of int in Python: `true` must not pass as 1.
    if type(value) is not int:
        raise ProtocolError(
            f"{key!r} must be a JSON integer, got {clip(json.dumps(value))}"
            f" in {clip(_safe_dump(obj))}",
            "malformed",
        )
    return value


def _safe_dump(obj: Any) -> str:
    try:
        return orjson.dumps(obj).decode()
    except TypeError:  # a big integer somewhere inside
        return json.dumps(obj)


def parse_reply(obj: dict[str, Any]) -> Action:
    """A ``turn`` reply as an action: ``Bid``, ``DUDO`` or ``CALZA``.

    Only the shape is checked here; a bid out of range (quantity 0, a
    100-digit quantity, face 7) is returned as a :class:`Bid` for the referee
    to reject as ``illegal``. Unknown extra fields are ignored.
    """
    action = obj.get("action")
    if action == "bid":
        return Bid(_integer(obj, "quantity"), _integer(obj, "face"))
    if action == "dudo":
        return DUDO
    if action == "calza":
        return CALZA
    raise ProtocolError(
        f'expected {{"action": "bid", "quantity": Q, "face": F}}, {{"action": "dudo"}} or '
        f'{{"action": "calza"}}, got {clip(_safe_dump(obj))}',
        "malformed",
    )


def clip(text: str | bytes | bytearray, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters for a fault detail, quoted with
    control characters escaped (so a detail is always one printable line)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text[: limit * 4 + 4]).decode("utf-8", "replace")
    if len(text) > limit:
        return repr(text[:limit]) + f"... ({len(text)} characters)" if len(text) < limit * 4 else repr(text[:limit]) + "..."
    return repr(text)
