"""Bot files: ``<name>.py`` (a Python bot run by :mod:`arena.host`) or
``<name>.yaml`` (a program bot in any language that speaks the protocol).

:func:`load_bot` turns a path into a :class:`BotSpec`: everything needed to
start the bot, plus a hash so a run can tell when a bot's code changed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping

from arena.errors import ConfigError
from arena.supports import Supports
from arena.untrusted import load_untrusted_yaml, short_repr

__all__ = ["BotSpec", "load_bot"]

_MANIFEST_KEYS = {"command", "version", "env", "supports"}


@dataclass(frozen=True)
class BotSpec:
    """How to start one bot, resolved from its file."""

    name: str  # the file's stem
    kind: Literal["python", "program"]
    path: Path  # absolute path of the .py or .yaml file
    command: tuple[str, ...]  # program bots: resolved argv; python bots: ()
    env: Mapping[str, str] = field(default_factory=dict)  # extra environment (manifest `env`)
    version: str | None = None
    sha256: str = ""  # the bot file, plus the files a manifest's command names in its folder
    folder: Path = Path("/")  # the folder the bot's files live in
    supports: Supports = field(default_factory=Supports)  # what it can play (arena.supports)

    def files(self) -> tuple[Path, ...]:
        """What the sandbox shows the bot, read-only: its own file, the files
        and sub-folders its command names inside its folder, and a folder named
        after it (``bots/<name>/``) for data, if there is one; never the other
        bots or anything else next to it."""
        out: list[Path] = [self.path]
        for part in self.command[1:] if self.kind == "program" else ():
            p = Path(part)
            if p.is_absolute() and _inside(p, self.folder) and p.exists():
                rel = p.relative_to(self.folder)
                out.append(self.folder / rel.parts[0])  # a file, or its top sub-folder
        data = self.folder / self.name
        if data.is_dir():
            out.append(data)
        return tuple(dict.fromkeys(out))


def _inside(p: Path, folder: Path) -> bool:
    try:
        p.relative_to(folder)
    except ValueError:
        return False
    return True


def _hash(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(str(p.name).encode() + b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def load_bot(path: str | Path) -> BotSpec:
    """The :class:`BotSpec` for a ``.py`` or ``.yaml`` bot file; ``ConfigError`` says what is wrong."""
    p = Path(path).expanduser()
    if not p.exists():
        raise ConfigError(f"bot file {str(path)!r} does not exist")
    if not p.is_file():
        raise ConfigError(f"bot file {str(path)!r} is not a file (expected a .py or .yaml bot file)")
    p = p.resolve()
    name = p.stem
    if not name.isidentifier():
        raise ConfigError(f"bot file {str(p)!r}: the name {name!r} must be letters, digits and _ "
                          f"(it names the bot and, for a Python bot, its module)")
    if p.suffix == ".py":
        return BotSpec(name=name, kind="python", path=p, command=(), env={}, version=None,
                       sha256=_hash([p]), folder=p.parent,
                       supports=Supports.from_data(python_literal(p, "SUPPORTS"), f"bot file {str(p)!r}: SUPPORTS"))
    if p.suffix in (".yaml", ".yml"):
        return _load_manifest(p)
    raise ConfigError(f"bot file {str(p)!r} has suffix {p.suffix!r}; expected .py (a Python bot) "
                      f"or .yaml (a program bot manifest with a `command` list)")


def _load_manifest(p: Path) -> BotSpec:
    where = f"bot manifest {str(p)!r}"
    data: Any = load_untrusted_yaml(p, where)
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must be a mapping with a `command` list, e.g. command: [node, ./mybot.js]")
    unknown = set(data) - _MANIFEST_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {short_repr(sorted(map(str, unknown)))}; allowed: {', '.join(sorted(_MANIFEST_KEYS))}")
    cmd = data.get("command")
    if not isinstance(cmd, list) or not cmd or not all(isinstance(c, str) and c for c in cmd):
        raise ConfigError(f"{where}: `command` must be a non-empty list of strings, e.g. "
                          f"command: [node, ./mybot.js]; got {short_repr(cmd)}")
    folder = p.parent
    resolved: list[str] = []
    hashed = [p]
    for i, part in enumerate(cmd):
        if part.startswith(("./", "../")):
            target = (folder / part).resolve()
            if i == 0 and not target.is_file():
                raise ConfigError(f"{where}: program {part!r} not found (looked for {str(target)!r})")
            if i == 0 and not os.access(target, os.X_OK):
                raise ConfigError(f"{where}: program {part!r} is not executable (chmod +x {target})")
            if target.is_file() and _inside(target, folder):
                hashed.append(target)
            resolved.append(str(target))
        elif i == 0:
            if "/" in part:
                if not os.path.isabs(part):
                    raise ConfigError(f"{where}: program {part!r} must be a bare name looked up on PATH, "
                                      f"./relative to the manifest folder, or an absolute path")
                found: str | None = part if os.access(part, os.X_OK) and os.path.isfile(part) else None
            else:
                found = shutil.which(part)
            if found is None:
                raise ConfigError(f"{where}: program {part!r} not found on PATH "
                                  f"(install it, or give a path starting with ./)")
            resolved.append(os.path.abspath(found))
        else:
            resolved.append(part)
    version = data.get("version")
    if version is not None and not isinstance(version, (str, int, float)):
        raise ConfigError(f"{where}: `version` must be a string, got {short_repr(version)}")
    env = data.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, (str, int, float, bool))
                                            for k, v in env.items()):
        raise ConfigError(f"{where}: `env` must map names to strings, got {short_repr(env)}")
    return BotSpec(name=p.stem, kind="program", path=p, command=tuple(resolved),
                   env={k: str(v) for k, v in env.items()},
                   version=None if version is None else str(version),
                   sha256=_hash(hashed), folder=folder,
                   supports=Supports.from_data(data.get("supports"), f"{where}: supports"))


def python_literal(path: Path, name: str) -> Any:
    """The value of a module-level ``NAME = <literal>`` in a Python bot file,
    read from its syntax tree (the file is never run outside the sandbox);
    ``None`` when there is none."""
    import ast

    try:
        source = path.read_bytes()
        tree = ast.parse(source, filename=str(path))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the host reports a broken file at start-up, with its line
    found: Any = None
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id == name and node.value is not None:
            try:
                found = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                raise ConfigError(f"bot file {str(path)!r}: {name} must be a literal (a dict of lists "
                                  f"of numbers and strings), line {node.lineno}") from None
    return found
