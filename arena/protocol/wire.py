"""The player protocol's wire format: one JSON object per ``\\n``-terminated line.

Both sides of the pipe use this module: the referee's :mod:`arena.match.process` and
the Python bot host :mod:`arena.protocol.host` (what the lines mean is
:mod:`arena.protocol.messages` and :mod:`arena.protocol.parse`). It sits on the
per-decision path, so it uses orjson (5-7x faster than the stdlib here, see docs/performance.md) and
re-reads with the stdlib only what orjson reads inexactly (integers beyond 64
bits, which a hostile bot may send). Every line a bot writes is hostile input:
:func:`decode` turns anything at all into an object or a ``malformed`` fault.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import orjson

from arena.errors import ProtocolError

__all__ = ["MAX_LINE", "MAX_DEPTH", "encode", "decode", "clip", "json_text"]

MAX_LINE: Final = 64 * 1024  # bytes in one line, newline excluded

_dumps = orjson.dumps
_loads = orjson.loads
_OPT = orjson.OPT_APPEND_NEWLINE
_JSONDecodeError = orjson.JSONDecodeError


def encode(msg: Mapping[str, object]) -> bytes:
    """``msg`` as one JSON line, ``b"\\n"``-terminated."""
    return _dumps(msg, option=_OPT)


MAX_DEPTH: Final = 16  # nesting levels in a message; replies are flat, referee messages nest 3


def _too_deep(obj: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``obj`` nests containers more than ``limit`` levels (iterative:
    a structure a thousand levels deep must not recurse anywhere later, in a
    re-parse, an error message or a log line)."""
    todo: list[tuple[Any, int]] = [(obj, 1)]
    while todo:
        value, depth = todo.pop()
        if depth > limit:
            return True
        if type(value) is dict:
            todo.extend((v, depth + 1) for v in value.values() if type(v) in (dict, list))
        elif type(value) is list:
            todo.extend((v, depth + 1) for v in value if type(v) in (dict, list))
    return False


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode(line: bytes) -> dict[str, Any]:
    """One line (newline optional) as a JSON object, or ``ProtocolError("malformed")``.

    Strict: UTF-8 only (no byte-order mark, no UTF-16), no ``NaN`` or
    ``Infinity``, no raw control characters, at most :data:`MAX_DEPTH` levels
    of nesting. Whatever a bot sends, the result is an object or a
    ``malformed`` fault, never another exception.
    """
    if len(line) > MAX_LINE + 1:
        raise ProtocolError(f"line of {len(line)} bytes is over the {MAX_LINE}-byte limit: {clip(line)}", "malformed")
    try:
        obj = _loads(line)
    except _JSONDecodeError as exc:
        what = "not UTF-8" if "UTF-8" in exc.msg or "BOM" in exc.msg else "not JSON"
        raise ProtocolError(f"{what} ({exc.msg}): {clip(line)}", "malformed") from None
    if type(obj) is not dict:
        raise ProtocolError(f"not a JSON object: {clip(line)}", "malformed")
    reread = False
    for value in obj.values():
        kind = type(value)
        if kind is float:
            reread = True
        elif (kind is dict or kind is list) and _too_deep(obj):
            raise ProtocolError(f"nested more than {MAX_DEPTH} levels deep: {clip(line)}", "malformed")
    if reread:
        # orjson reads an integer beyond 64 bits as a float without a word, so a
        # 100-digit quantity would look like 1e+100. The stdlib keeps it exact
        # (a well-formed, illegal bid rather than a malformed one); the line is
        # already known to be strict UTF-8, flat enough, and free of NaN.
        try:
            return json.loads(line.decode("utf-8"), parse_constant=_reject_constant)  # type: ignore[no-any-return]
        except (ValueError, RecursionError):  # e.g. an integer of more than 4300 digits
            raise ProtocolError(f"not JSON (a number too long to read): {clip(line)}", "malformed") from None
    return obj


def json_text(obj: Any) -> str:
    """``obj`` as JSON text for an error message; never raises, never recurses deep."""
    if _too_deep(obj):
        return f"<{type(obj).__name__} nested more than {MAX_DEPTH} levels deep>"
    try:
        return orjson.dumps(obj).decode()
    except TypeError:  # a big integer somewhere inside
        try:
            return json.dumps(obj)
        except (TypeError, ValueError, RecursionError):  # an integer too long to print, not JSON at all
            return f"<{type(obj).__name__}>"


def clip(text: str | bytes | bytearray, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters for a fault detail, quoted with
    control characters escaped (so a detail is always one printable line)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text[: limit * 4 + 4]).decode("utf-8", "replace")
    if len(text) > limit:
        return (
            repr(text[:limit]) + f"... ({len(text)} characters)"
            if len(text) < limit * 4
            else repr(text[:limit]) + "..."
        )
    return repr(text)
