"""The modules compiled with mypyc, and the pure-Python fallback.

The referee's and the bot host's per-decision path (rules and dice, the
messages, their encoding and parsing, the referee loop, the bot's driver)
is compiled to C by mypyc when the package is installed (``setup.py``): the
same source, typed as it is; the referee's CPU per decision falls by a fifth
in a league, a third in a warm loop (docs/performance.md, "Seventh round"). The source stays the truth, and
the package runs from it, every module alike, whenever the compiled modules
cannot be trusted to be that source:

- ``ARENA_PURE_PYTHON`` is set (to anything but empty or ``0``): for a
  debugger, a profiler that wants Python frames, or to compare the two;
- they were not built (installed without a C compiler, or with
  ``ARENA_PURE_PYTHON=1`` at install time);
- in a checkout (an editable install), a source file is newer than its
  compiled module (edited, or changed by a ``git pull``, since the last
  ``pip install -e .``): the compiled modules call each other directly, so
  one stale module would mix old and new code. (Not in an installed
  package: pip writes its files in any order, a source a moment after its
  compiled module, and nothing edits them in place.)

It is all or nothing, and decided once per process, before any of these
modules is imported (:mod:`arena` installs it on import). :func:`status`
says which, and why.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["MODULES", "GROUP", "status", "active", "asked_pure", "install"]

# Compiled together (one shared library, GROUP), in this order. setup.py reads
# this list; a module here must type-check strictly and keep no state a test
# or a caller replaces from outside (a compiled module calls its own
# functions directly, not through its namespace).
MODULES: tuple[str, ...] = (
    "arena.engine.dice",
    "arena.engine.rules",
    "arena.protocol.wire",
    "arena.protocol.messages",
    "arena.protocol.parse",
    "arena.protocol.driver",
    "arena.protocol.hostloop",
    "arena.match.process",
    "arena.match.referee",
    "arena.running.tables",
    "arena.running.tablefiles",
)
GROUP = "arena._native"  # the shared library's module: arena/_native__mypyc.*.so

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _checkout() -> bool:
    """Whether the package runs from its source tree (pyproject.toml beside it)."""
    return os.path.isfile(os.path.join(_ROOT, "pyproject.toml"))


def _source(name: str) -> str:
    return os.path.join(_ROOT, *name.split(".")) + ".py"


def _built(name: str) -> str | None:
    """The extension module built for ``name`` next to its source, if any."""
    stem = os.path.join(_ROOT, *name.split("."))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        if os.path.exists(stem + suffix):
            return stem + suffix
    return None


def asked_pure() -> bool:
    """Whether ``ARENA_PURE_PYTHON`` asks for the source (anything but empty or ``0``)."""
    return os.environ.get("ARENA_PURE_PYTHON", "") not in ("", "0")


def _why_pure() -> str | None:
    if asked_pure():
        return "ARENA_PURE_PYTHON is set"
    if _built(GROUP + "__mypyc") is None:
        return "not compiled (installed without a C compiler, or with ARENA_PURE_PYTHON=1)"
    checkout = _checkout()
    for name in MODULES:
        built = _built(name)
        if built is None:
            return f"{name} was not compiled"
        source = _source(name)
        if checkout and os.path.getmtime(source) > os.path.getmtime(built):
            return (
                f"{os.path.relpath(source, _ROOT)} changed after it was compiled (`pip install -e .` compiles it again)"
            )
    return None


class _SourceFirst:
    """A meta path finder that loads :data:`MODULES` from their ``.py`` files."""

    @staticmethod
    def find_spec(
        name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name not in MODULES:
            return None
        return importlib.util.spec_from_file_location(name, _source(name))


_STATUS: str | None = None
_ACTIVE = False


def install() -> None:
    """Decide, once per process: the compiled modules, or their source for all of them."""
    global _STATUS, _ACTIVE
    if _STATUS is not None:
        return
    why = _why_pure()
    if why is None:
        _STATUS, _ACTIVE = "compiled (mypyc)", True
        return
    _STATUS = f"pure Python: {why}"
    loaded = [name for name in MODULES if name in sys.modules]
    if loaded:  # too late to choose for these: say so rather than mix
        _STATUS += f" (but {', '.join(loaded)} already imported as built)"
    sys.meta_path.insert(0, _SourceFirst())


def active() -> bool:
    """Whether this process runs the compiled modules."""
    install()
    return _ACTIVE


def status() -> str:
    """``compiled (mypyc)``, or ``pure Python: <why>``."""
    install()
    assert _STATUS is not None
    return _STATUS
