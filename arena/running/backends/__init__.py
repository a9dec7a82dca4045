"""Where matches are played: one small interface, several engines.

A backend takes the specs still to play and yields one result per spec, in
any order, as matches finish (``{"match", "line", "stderr"}`` or ``{"error", "match"}``,
see :class:`arena.running.worker.Worker`). The scheduler neither knows nor cares which
backend runs; the records are the same.

The registry is this package: each public module (``local``, ``ray``) is one
backend under its own name and defines ``make(config) -> Backend``. The config's
``backend`` key, ``arena run --backend`` and the runner all read :func:`names`
and :func:`make`, so adding a backend is adding its module (helpers a backend
keeps apart start with ``_``). Listing the names imports no backend: a
backend's own imports (multiprocess, Ray) are paid only by the run that uses it.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

from arena.errors import RunError

if TYPE_CHECKING:  # at run time these would import the worker into every config load
    from arena.engine.records import MatchSpec
    from arena.running.config import RunConfig
    from arena.running.worker import Drained, PlayResult


class Backend(Protocol):
    def run(self, specs: Sequence[MatchSpec]) -> Iterator[PlayResult]: ...

    def drain(self) -> list[Drained]:
        """Each worker's last stderr, once every match is played (closes the bots)."""
        ...

    def close(self) -> None: ...

    def terminate(self) -> None:
        """Stop now, whatever state the workers are in; no bot process outlives it."""
        ...


def names() -> tuple[str, ...]:
    """Every backend's name, sorted: the modules of this package. (A listing
    of the folder: ``pkgutil`` would add its own import to every command's start.)"""
    here = os.path.dirname(__file__)
    return tuple(sorted(f[:-3] for f in os.listdir(here) if f.endswith(".py") and not f.startswith("_")))


def load(name: str) -> ModuleType:
    """The module of the backend ``name`` (one of :func:`names`), imported.
    ``arena run`` calls it while the bots are checked, so that the backend's
    imports are not paid while matches run."""
    if name not in names():
        raise RunError(f"no backend {name!r}; use one of {', '.join(names())}")
    return importlib.import_module(f"{__name__}.{name}")


def make(config: RunConfig) -> Backend:
    """The config's backend, started: its module's ``make(config)``."""
    backend: Backend = load(config.backend).make(config)
    return backend
