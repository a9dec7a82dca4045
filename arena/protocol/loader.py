"""The one loader of Python bot files (``bots/<name>.py``), for the sandboxed
host (:mod:`arena.protocol.host`) and for in-process play
(:mod:`arena.match.inprocess`) alike.

A bot file defines exactly one subclass of :class:`arena.sdk.Bot`, or a
module-level function ``act(turn)`` (adapted by :class:`FunctionBot`); its
``__version__`` (or ``VERSION``) is the version it reports in ``ready``, and
its name is the file's stem.

The module is imported as ``_arena_bot_<stem>`` and registered in
``sys.modules`` under that name (as a normal import would, so pickling, type
hints and dataclasses work in it): a bot file called ``random.py`` does not
replace the standard library's ``random``, for itself or for the SDK. A
second, different file with the same stem in the same process gets
``_arena_bot_<stem>_2`` (and so on); loading the same file again replaces its
module.

Running the file runs the bot's code: in the host that is inside the
sandbox, in-process it is trusted code only.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable

from arena.errors import ConfigError
from arena.sdk import Bot, Reply, Turn

__all__ = ["BotFactory", "BotFileError", "BotImportError", "FunctionBot", "PythonBot", "load_python_bot"]

BotFactory = Callable[[], Bot]  # a fresh bot instance per match


class BotFileError(ConfigError):
    """A Python bot file that cannot be played: not a file, or no (or several) bots in it."""


class BotImportError(BotFileError):
    """The bot file raised while it was imported; ``__cause__`` is the bot's own exception."""


class FunctionBot(Bot):
    """Adapts a bot file's module-level ``act(turn)`` to the :class:`~arena.sdk.Bot`
    interface (the turn it is given carries ``turn.rng``, the match's seeded generator)."""

    def __init__(self, act: Callable[[Turn], Reply]) -> None:
        # The function itself, as the instance's act: no extra call per decision.
        self.act = act  # type: ignore[method-assign, assignment]


class PythonBot:
    """A loaded bot file: call it for a fresh bot instance (a :data:`BotFactory`)."""

    # A plain class: a dataclass costs the host most of a millisecond at every bot's start-up.
    __slots__ = ("path", "name", "version", "make")

    def __init__(self, path: str, name: str, version: str | None, make: BotFactory) -> None:
        self.path = path
        self.name = name  # the file's stem
        self.version = version  # __version__ or VERSION, as text
        self.make = make

    def __call__(self) -> Bot:
        return self.make()

    def __repr__(self) -> str:
        return f"PythonBot({self.path!r}, name={self.name!r}, version={self.version!r})"


def _module_name(path: str, stem: str) -> str:
    base = f"_arena_bot_{stem}"
    name, n = base, 1
    while (held := sys.modules.get(name)) is not None and getattr(held, "__file__", None) != path:
        n += 1
        name = f"{base}_{n}"
    return name


def load_python_bot(path: str | os.PathLike[str]) -> PythonBot:
    """Import the bot file at ``path`` and find its bot (see the module docstring).

    Raises :class:`BotFileError` naming the file when it is not a readable
    ``.py`` file or defines no bot (or several), and :class:`BotImportError`
    when its code raised on import.
    """
    # os.path rather than pathlib: the host imports this at every bot's start-up.
    p = os.fspath(path)
    stem, suffix = os.path.splitext(os.path.basename(p))
    where = f"bot file {p!r}"
    if suffix != ".py" or not os.path.isfile(p):
        raise BotFileError(f"{where}: not a readable .py file")
    name = _module_name(p, stem)
    spec = importlib.util.spec_from_file_location(name, p)
    if spec is None or spec.loader is None:
        raise BotFileError(f"{where}: Python cannot import it")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the bot author's import-time error, kept as the cause
        sys.modules.pop(name, None)
        raise BotImportError(f"{where} failed to import: {type(exc).__name__}: {exc}") from exc
    classes = [
        c
        for c in vars(module).values()
        if isinstance(c, type) and issubclass(c, Bot) and c is not Bot and c.__module__ == name
    ]
    act = vars(module).get("act")
    make: BotFactory
    if len(classes) == 1:
        make = classes[0]
    elif len(classes) > 1:
        sys.modules.pop(name, None)
        names = ", ".join(sorted(c.__name__ for c in classes))
        raise BotFileError(f"{where} defines several Bot subclasses ({names}); keep one")
    elif callable(act):
        make = lambda: FunctionBot(act)  # noqa: E731
    else:
        sys.modules.pop(name, None)
        raise BotFileError(f"{where} defines neither a Bot subclass nor a function act(turn)")
    version = getattr(module, "__version__", None) or getattr(module, "VERSION", None)
    return PythonBot(p, stem, None if version is None else str(version), make)
