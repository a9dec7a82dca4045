"""Bot files: ``<name>.py`` (a Python bot run by :mod:`arena.protocol.host`) or
``<name>.yaml`` (a program bot in any language that speaks the protocol).

:func:`load_bot` turns a path into a :class:`BotSpec`: everything needed to
start the bot, plus a hash so a run can tell when a bot changed.

What a bot is, on disk, is exactly two things (:func:`bot_tree`): its bot
file (``<name>.py``, or the manifest ``<name>.yaml``/``.yml``) and the folder
``<name>/`` beside it with everything in it. Nothing else in the folder that
holds it counts, whatever its name (a ``<name>.out`` log or a ``<name>.cfg``
left beside the bot is neither hashed nor visible in the sandbox).
Each is checked where it really is: a bot file or data folder that is a
symlink, or a command path that leads anywhere else (``..``, an absolute path
into the bots' folder, another bot's file, a file beside the manifest instead
of inside its folder) is refused here, before any match,
naming the bot, the path and why. Symlinks *inside* the data folder are kept
as links: hashed and shipped as their link text, never followed, so inside
the sandbox they reach only what the sandbox shows anyway. The sandbox
(:mod:`arena.sandbox.mounts`), the hash and the Ray backend all use this list,
and :func:`file_digests` lets a run say which files changed.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from arena.botfile.runtime import SYSTEM_DIRS, inside, is_system, not_own, resolve_program
from arena.botfile.supports import Supports
from arena.errors import ConfigError
from arena.untrusted import load_untrusted_yaml, short_repr

__all__ = ["BotSpec", "Entry", "bot_tree", "changed_files", "file_digests", "load_bot", "owns", "python_literal"]

_MANIFEST_KEYS = {"command", "version", "env", "supports", "limits", "view"}


@dataclass(frozen=True)
class BotSpec:
    """How to start one bot, resolved from its file."""

    name: str  # the file's stem
    kind: Literal["python", "program"]
    path: Path  # absolute path of the .py or .yaml file, in its real folder
    command: tuple[str, ...]  # program bots: resolved argv; python bots: ()
    env: Mapping[str, str] = field(default_factory=dict)  # extra environment (manifest `env`)
    version: str | None = None
    sha256: str = ""  # every entry of bot_tree(): own files, data folder (links as link text)
    folder: Path = Path("/")  # the real folder that holds the bot
    supports: Supports = field(default_factory=Supports)  # what it can play (arena.botfile.supports)
    own: tuple[Path, ...] = ()  # its own files and data folder, as resolved at load (the sandbox shows these)
    runtime: tuple[str, ...] = ()  # program bots: host paths its program needs (arena.botfile.runtime)
    limits: Mapping[str, int] = field(default_factory=dict)  # raises it asks for (manifest limits / LIMITS)
    digests: Mapping[str, str] = field(default_factory=dict)  # each entry of bot_tree() by path: its digest
    view: tuple[str, ...] = ()  # program bots: system paths added to its file view (manifest `view`)

    def files(self) -> tuple[Path, ...]:
        """What the sandbox shows the bot of its folder, read-only: its own
        files and its data folder, never the other bots or anything else."""
        return self.own


@dataclass(frozen=True)
class Entry:
    """One entry of a bot on disk (:func:`bot_tree`)."""

    rel: str  # path relative to the bot's folder, with /
    kind: Literal["file", "dir", "link"]
    executable: bool = False  # files: any x bit
    link: str = ""  # links: the link text, never followed


def _view(folder: Path, bot_file: Path, where: str) -> tuple[Path, ...]:
    """The bot's own top-level entries in ``folder``: its bot file and, when
    there is one, its data folder ``<name>/``, each refused unless it is what
    it seems (no symlink, no special file)."""
    own: list[Path] = []
    for p, what in ((bot_file, "bot file"), (folder / bot_file.stem, "data folder")):
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise ConfigError(f"{where}: {p} cannot be read: {exc.strerror}") from None
        if stat.S_ISLNK(st.st_mode):
            raise ConfigError(
                f"{where}: its {what} {p} is a symlink to {os.path.realpath(p)}; a bot's files "
                f"must be its own, inside {folder} (copy them in instead of linking)"
            )
        if stat.S_ISDIR(st.st_mode) and what == "data folder":
            own.append(p)
        elif stat.S_ISREG(st.st_mode) and what == "bot file":
            own.append(p)
        elif not stat.S_ISDIR(st.st_mode) and not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"{where}: {p} is not a regular file or folder (a fifo, socket or device)")
        # a file named like the data folder (a compiled `<name>` beside `<name>.yaml`) is not the bot's:
        # the command refuses it by name (_argument), saying to move it into the folder
    return tuple(own)


def _walk(folder: Path, top: Path, where: str) -> Iterator[Entry]:
    """Everything under ``top`` (the data folder), depth first in name order,
    without following any symlink."""
    stack = [(str(top), os.path.relpath(top, folder))]  # (path, path relative to folder)
    while stack:
        d, rel_d = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as exc:
            raise ConfigError(f"{where}: {d} cannot be read: {exc.strerror}") from None
        below = []
        for e in entries:
            st = e.stat(follow_symlinks=False)
            rel = f"{rel_d}/{e.name}"
            if stat.S_ISLNK(st.st_mode):
                yield Entry(rel, "link", link=os.readlink(e.path))
            elif stat.S_ISDIR(st.st_mode):
                yield Entry(rel, "dir")
                below.append((e.path, rel))
            elif stat.S_ISREG(st.st_mode):
                yield Entry(rel, "file", executable=bool(st.st_mode & 0o111))
            else:
                raise ConfigError(
                    f"{where}: {e.path} is not a regular file, folder or symlink "
                    f"(a fifo, socket or device cannot be part of a bot)"
                )
        stack.extend(reversed(below))


def bot_tree(spec: BotSpec) -> list[Entry]:
    """Every entry that makes up the bot, in a stable order: its own files,
    then its data folder and everything in it (symlinks as links). The hash,
    the sandbox's view and the Ray backend's copy all come from this list."""
    return _tree(spec.folder, spec.own, f"bot {spec.name} ({spec.path})")


def _tree(folder: Path, own: tuple[Path, ...], where: str) -> list[Entry]:
    out: list[Entry] = []
    for p in own:
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            out.append(Entry(p.name, "link", link=os.readlink(p)))
        elif stat.S_ISDIR(st.st_mode):
            out.append(Entry(p.name, "dir"))
            out.extend(_walk(folder, p, where))
        else:
            out.append(Entry(p.name, "file", executable=bool(st.st_mode & 0o111)))
    return out


def _hash(folder: Path, entries: list[Entry]) -> tuple[str, dict[str, str]]:
    """sha256 over every entry: its kind, relative path, x bit, and content
    (a file's bytes, a link's text; a link is never followed); and each
    entry's own digest by relative path, so that a changed bot can be told
    by which files changed (:func:`changed_files`)."""
    h = hashlib.sha256()
    top = str(folder)
    each: dict[str, str] = {}
    for e in entries:
        h.update(f"{e.kind}\0{e.rel}\0{int(e.executable)}\0".encode())
        content = b""
        if e.kind == "file":
            fd = os.open(f"{top}/{e.rel}", os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as f:
                content = hashlib.file_digest(f, "sha256").digest()
        elif e.kind == "link":
            content = os.fsencode(e.link)
        h.update(content)
        h.update(b"\0")
        each[e.rel] = hashlib.sha256(f"{e.kind}\0{int(e.executable)}\0".encode() + content).hexdigest()[:16]
    return h.hexdigest(), each


def file_digests(spec: BotSpec) -> dict[str, str]:
    """Each of the bot's entries (relative path) and a short digest of it: what
    a run folder keeps to say later which files of a bot changed."""
    return dict(spec.digests)


def changed_files(before: Mapping[str, str], after: Mapping[str, str], limit: int = 8) -> str:
    """The files that differ between two versions of a bot, in words: added,
    removed, changed (at most ``limit`` named, then how many more)."""
    parts = [f"{rel} (changed)" for rel in sorted(before) if rel in after and before[rel] != after[rel]]
    parts += [f"{rel} (new)" for rel in sorted(after) if rel not in before]
    parts += [f"{rel} (removed)" for rel in sorted(before) if rel not in after]
    if not parts:
        return "no file differs by content (a file's executable bit or kind changed)"
    more = f", and {len(parts) - limit} more" if len(parts) > limit else ""
    return ", ".join(parts[:limit]) + more


def _owns(folder: Path, own: tuple[Path, ...]) -> Callable[[str], bool]:
    """``own(real_path)``: whether a (resolved) path is one of the bot's own files or in its data folder."""
    files = {str(p) for p in own if not p.is_dir() or p.is_symlink()}
    dirs = [str(p) for p in own if p.is_dir() and not p.is_symlink()]

    def own_path(path: str) -> bool:
        return path in files or any(inside(path, d) for d in dirs)

    return own_path


def owns(spec: BotSpec) -> Callable[[str], bool]:
    """``own(real_path)`` for ``spec``: whether a path is one of its own files or in its data folder."""
    return _owns(spec.folder, spec.own)


def load_bot(path: str | Path) -> BotSpec:
    """The :class:`BotSpec` for a ``.py`` or ``.yaml`` bot file; ``ConfigError`` says what is wrong."""
    p = Path(path).expanduser()
    if not os.path.lexists(p):
        raise ConfigError(f"bot file {str(path)!r} does not exist")
    if p.is_dir():
        raise ConfigError(f"bot file {str(path)!r} is not a file (expected a .py or .yaml bot file)")
    folder = p.absolute().parent.resolve()
    p = folder / p.name
    name = p.stem
    if not name.isidentifier():
        raise ConfigError(
            f"bot file {str(p)!r}: the name {name!r} must be letters, digits and _ "
            f"(it names the bot and, for a Python bot, its module)"
        )
    if p.suffix not in (".py", ".yaml", ".yml"):
        raise ConfigError(
            f"bot file {str(p)!r} has suffix {p.suffix!r}; expected .py (a Python bot) "
            f"or .yaml (a program bot manifest with a `command` list)"
        )
    where = f"bot {name} ({p})"
    own = _view(folder, p, where)
    if p not in own:
        raise ConfigError(f"bot file {str(p)!r} does not exist")
    sha, digests = _hash(folder, _tree(folder, own, where))
    if p.suffix == ".py":
        return BotSpec(
            name=name,
            kind="python",
            path=p,
            command=(),
            env={},
            version=None,
            sha256=sha,
            folder=folder,
            own=own,
            digests=digests,
            supports=Supports.from_data(python_literal(p, "SUPPORTS"), f"bot file {str(p)!r}: SUPPORTS"),
            limits=_limits(python_literal(p, "LIMITS"), f"bot file {str(p)!r}: LIMITS"),
        )
    return _load_manifest(p, folder, own, sha, digests)


# What a bot may raise for itself (its manifest's `limits`, a Python bot's
# LIMITS), and the run config's key for the ceiling of each (sandbox.limits).
RAISABLE = {"processes": "max_processes", "memory_mb": "max_memory_mb", "open_files": "max_open_files"}


def _limits(data: Any, where: str) -> dict[str, int]:
    """A bot's ``limits`` (manifest) or ``LIMITS`` (Python): raises of its own
    sandbox limits, checked against the run's ceilings when the run is built."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{where}: expected a mapping such as {{processes: 64, memory_mb: 1024}}, got {short_repr(data)}"
        )
    out: dict[str, int] = {}
    for key, value in data.items():
        if key not in RAISABLE:
            raise ConfigError(f"{where}: {short_repr(key)} cannot be raised; the keys are {', '.join(RAISABLE)}")
        if type(value) is not int or value < 1:
            raise ConfigError(f"{where}.{key}: {short_repr(value)} is not a positive integer")
        out[key] = value
    return out


def _load_manifest(p: Path, folder: Path, own: tuple[Path, ...], sha: str, digests: dict[str, str]) -> BotSpec:
    where = f"bot manifest {str(p)!r}"
    data: Any = load_untrusted_yaml(p, where)
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must be a mapping with a `command` list, e.g. command: [node, ./mybot.js]")
    unknown = set(data) - _MANIFEST_KEYS
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {short_repr(sorted(map(str, unknown)))}; allowed: {', '.join(sorted(_MANIFEST_KEYS))}"
        )
    cmd = data.get("command")
    if not isinstance(cmd, list) or not cmd or not all(isinstance(c, str) and c for c in cmd):
        raise ConfigError(
            f"{where}: `command` must be a non-empty list of strings, e.g. "
            f"command: [node, ./mybot.js]; got {short_repr(cmd)}"
        )
    owns = _owns(folder, own)
    runtime = resolve_program(cmd[0], str(folder), p.stem, owns, where)
    resolved = [runtime.program] + [_argument(part, folder, p.stem, owns, where) for part in cmd[1:]]
    version = data.get("version")
    if version is not None and not isinstance(version, (str, int, float)):
        raise ConfigError(f"{where}: `version` must be a string, got {short_repr(version)}")
    env = data.get("env") or {}
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, (str, int, float, bool)) for k, v in env.items()
    ):
        raise ConfigError(f"{where}: `env` must map names to strings, got {short_repr(env)}")
    return BotSpec(
        name=p.stem,
        kind="program",
        path=p,
        command=tuple(resolved),
        env={k: str(v) for k, v in env.items()},
        version=None if version is None else str(version),
        sha256=sha,
        folder=folder,
        own=own,
        runtime=runtime.binds,
        digests=digests,
        supports=Supports.from_data(data.get("supports"), f"{where}: supports"),
        limits=_limits(data.get("limits"), f"{where}: limits"),
        view=_view_paths(data.get("view"), f"{where}: view"),
    )


def _view_paths(value: Any, where: str) -> tuple[str, ...]:
    """The manifest's ``view`` list: system files or folders (under /usr, /bin,
    /lib..., or a file of /etc) the bot needs besides its runtime's closure;
    each is copied into its file view (docs/sandbox.md, "The file view")."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(
            f"{where} must be a list of absolute paths, e.g. view: [/usr/bin/awk]; got {short_repr(value)}"
        )
    out = []
    for v in value:
        norm = os.path.normpath(v)
        if (
            not os.path.isabs(v)
            or norm != v.rstrip("/")
            or not (is_system(norm) or inside(norm, "/etc"))
            or norm == "/etc"
        ):
            raise ConfigError(
                f"{where}: {short_repr(v)} must be an absolute path without '..' under the system folders "
                f"({', '.join(SYSTEM_DIRS)}) or a file of /etc (the bot's own files are in its view already)"
            )
        if not os.path.lexists(norm):
            raise ConfigError(f"{where}: {short_repr(v)} does not exist on this machine")
        out.append(norm)
    return tuple(dict.fromkeys(out))


def _argument(part: str, folder: Path, name: str, owns: Callable[[str], bool], where: str) -> str:
    """A command argument: a path into the bot's folder must be one of its own
    files (and is passed resolved); any other text is passed as it is. An
    argument is never made visible just because it is mentioned."""
    relative = part in (".", "..") or part.startswith(("./", "../"))
    if not relative and not os.path.isabs(part):
        return part
    real = os.path.realpath(folder / part if relative else part)
    if owns(real):
        return real
    if relative or inside(real, str(folder)) or inside(str(folder), real):
        raise ConfigError(f"{where}: {not_own(f'the command argument {part!r}', real, str(folder), name)}")
    return part  # elsewhere on the host: passed on, never shown (the system is visible anyway)


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
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target: ast.expr | None = node.targets[0]
        elif isinstance(node, ast.AnnAssign):
            target = node.target
        else:
            continue
        if isinstance(target, ast.Name) and target.id == name and node.value is not None:
            try:
                found = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                raise ConfigError(
                    f"bot file {str(path)!r}: {name} must be a literal (a dict of lists "
                    f"of numbers and strings), line {node.lineno}"
                ) from None
    return found
