"""Handling what comes from bots: text for a terminal, YAML from a bot's folder,
values in error messages.

Anything a bot controls (its stderr, its name and version, its replies, its
manifest) may be built to hurt whoever reads it: escape sequences that clear
the screen or fake a verdict, a 1 KB YAML alias bomb that expands to
gigabytes once formatted, a structure nested a thousand levels deep. These
helpers are the one place that defuses each.
"""

from __future__ import annotations

import re
import reprlib
from pathlib import Path
from typing import Any

import yaml

from arena.errors import ConfigError

__all__ = ["MANIFEST_MAX_BYTES", "printable", "short_repr", "load_untrusted_yaml"]

MANIFEST_MAX_BYTES = 64 * 1024  # a manifest is a few lines; anything bigger is not one

# C0 controls but tab and newline, DEL, C1 controls (ESC's 8-bit twins, CSI
# among them), and the bidirectional overrides that make text display in an
# order other than the one it is read in.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def printable(text: str, *, newlines: bool = True) -> str:
    """``text`` safe to print on a terminal: every control character (and
    bidirectional override) shown as a visible escape such as ``\\x1b``.
    With ``newlines=False`` newlines and tabs are escaped too (one line)."""
    if not newlines:
        text = text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return _CONTROL.sub(_escape, text)


_repr = reprlib.Repr()
_repr.maxlevel = 3
_repr.maxstring = 80
_repr.maxother = 80
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 8


def short_repr(value: Any, limit: int = 200) -> str:
    """A bounded ``repr`` for an error message: never expands a deep or shared
    structure (an alias bomb), never more than about ``limit`` characters."""
    try:
        text = _repr.repr(value)
    except Exception:  # noqa: BLE001 - a repr that raises must not hide the error it decorates
        text = f"<{type(value).__name__}>"
    return printable(text if len(text) <= limit else text[:limit] + "...", newlines=False)


class _NoAliasLoader(yaml.SafeLoader):
    """PyYAML's safe loader without aliases: ``*name`` is refused where it
    appears, so a file cannot describe a structure far bigger than itself."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]  # PyYAML's stubs leave it untyped
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed here", event.start_mark)
        return super().compose_node(parent, index)


def load_untrusted_yaml(path: Path, what: str, max_bytes: int = MANIFEST_MAX_BYTES) -> Any:
    """Parse a YAML file that a bot author controls: at most ``max_bytes``,
    strict UTF-8, no aliases, bounded nesting. Any problem is one
    :class:`ConfigError` naming ``what`` (for example ``bot manifest 'x.yaml'``)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(max_bytes + 1)
    except OSError as exc:
        raise ConfigError(f"{what} cannot be read: {exc.strerror}") from None
    if len(raw) > max_bytes:
        raise ConfigError(f"{what} is over {max_bytes} bytes; a manifest is a few lines of YAML")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{what} is not UTF-8 text (byte {exc.start})") from None
    try:
        return yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506 - a safe loader, aliases refused
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{what} is not valid YAML{where}: {printable(str(problem), newlines=False)}") from None
    except RecursionError:
        raise ConfigError(f"{what} is nested too deeply to be a manifest") from None
