"""What a bot's program needs from the host to run inside the sandbox.

The first word of a manifest's command (``python3``, ``./mybot/venv/bin/python``,
``java``, ``/opt/node/bin/node``) is resolved here, on the host, when the bot is
loaded, into a :class:`Runtime`: the program to execute inside the sandbox and
the host paths it needs, shown read-only at the same place. Nothing the bot
controls is ever executed on the host, and nothing a bot's file or link points
at is shown unless it is recognised as a runtime part:

- **Python**: an installation is its interpreter, its standard library folder
  ``<prefix>/lib/pythonX.Y`` (found by Python's own landmark, ``os.py``) and its
  ``libpython`` files; a venv adds its ``pyvenv.cfg``, the interpreter path the
  venv is run through (so Python finds ``pyvenv.cfg``) and its ``lib`` folder
  (site-packages), on top of the installation its ``home`` names. Bare
  ``python``/``python3`` mean the active venv's interpreter (``VIRTUAL_ENV``,
  else ``PATH``); a pyenv shim (a bash script that cannot run inside) is
  resolved the way pyenv does, from its version files.
- **Java**: the JDK home (``release``/``lib/modules``) and the configuration
  its own links lead to under ``/etc`` (Debian links ``conf/`` and
  ``lib/jvm.cfg`` to ``/etc/java-17-openjdk``), each top folder under ``/etc``
  that they reach, never ``/etc`` itself.
- **Anything else** (Node, a compiled binary, a script): the program file
  itself; its interpreter when it is a script with an absolute ``#!`` line.
  Libraries outside the system folders are not looked for.

Everything under the system folders (:data:`SYSTEM_DIRS`) is visible in every
sandbox already and is never bound again.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from arena.errors import ConfigError

__all__ = ["Runtime", "SYSTEM_DIRS", "host_python", "inside", "is_system", "resolve_program"]

# The read-only system every sandbox shows (arena.sandbox.mounts.system_args binds these).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")


@dataclass(frozen=True)
class Runtime:
    """A resolved program: what runs inside the sandbox, and what it needs."""

    program: str  # absolute path executed inside the sandbox
    binds: tuple[str, ...]  # host paths shown read-only at the same place
    kind: str  # python | venv | java | program (for messages)


def inside(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or lies under it (both absolute and normalised)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def is_system(path: str) -> bool:
    return any(inside(path, d) for d in SYSTEM_DIRS)


def _executable_file(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


class _Bot:
    """What resolution needs to know about the bot: its folder, which paths are
    its own (visible anyway), and how to name it in errors."""

    def __init__(self, folder: str, own: Callable[[str], bool], where: str) -> None:
        self.folder = folder
        self.own = own
        self.where = where

    def fail(self, message: str) -> ConfigError:
        return ConfigError(f"{self.where}: {message}")

    def keep(self, paths: list[str]) -> tuple[str, ...]:
        """Paths that need a bind: not the system, not the bot's own files."""
        out = [p for p in paths if not is_system(p) and not self.own(os.path.realpath(p))]
        return tuple(dict.fromkeys(out))


def resolve_program(
    word: str,
    folder: str,
    name: str,
    own: Callable[[str], bool],
    where: str,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> Runtime:
    """Resolve ``word``, the first word of a manifest's command, for the bot
    ``name`` in ``folder`` whose own files ``own(real_path)`` recognises;
    errors name ``where``. ``env`` and ``cwd`` are the operator's (PATH,
    VIRTUAL_ENV, pyenv's version files), by default this process's."""
    env = os.environ if env is None else env
    bot = _Bot(folder, own, where)
    if word.startswith(("./", "../")) or os.path.isabs(word):
        named = word
        raw = word if os.path.isabs(word) else os.path.join(folder, word)
    elif "/" in word:
        raise bot.fail(
            f"program {word!r} must be a bare name looked up on PATH, "
            f"./relative to the manifest folder, or an absolute path"
        )
    else:
        named = None
        raw = _which(word, env, cwd, bot)
    # Resolve the folders on the way, not the last name: a venv's bin/python
    # must be run through its own path, where Python finds pyvenv.cfg.
    if os.path.basename(raw) in ("", ".", ".."):
        path = os.path.realpath(raw)
    else:
        path = os.path.join(os.path.realpath(os.path.dirname(raw)), os.path.basename(raw))
    if not os.path.lexists(path):
        raise bot.fail(f"program {word!r} not found (looked for {path!r})")
    if own(path):
        return _own_program(word, path, bot)
    if inside(path, folder) or inside(folder, path):
        raise bot.fail(not_own(f"program {word!r}", path, folder, name))
    if named is not None and not os.path.isabs(named):
        raise bot.fail(
            f"program {word!r} leads out of the bot's folder {folder}; put the program "
            f"in the bot's own folder, or name a system program by its absolute path"
        )
    return _host_program(word, path, bot)


BOT_SUFFIXES = (".py", ".yaml", ".yml")  # what a bot file is named (another bot's, beside this one)


def not_own(what: str, real: str, folder: str, name: str) -> str:
    """Why a path a manifest names is refused: a file beside the manifest is
    told to move into the bot's folder (the old layout counted every
    ``<name>.*`` as the bot's), anything else (another bot's file) that it is not the bot's."""
    base = os.path.basename(real)
    stem, suffix = os.path.splitext(base)
    if os.path.dirname(real) == folder and os.path.isfile(real) and (stem == name or suffix not in BOT_SUFFIXES):
        return (
            f"{what} is the file {real} beside the manifest, not in the bot's folder: a bot is exactly "
            f"{name}.yaml and the folder {folder}/{name}/ (nothing else beside it is shown or hashed); "
            f"move it to {folder}/{name}/{base} and name it ./{name}/{base} in the command"
        )
    return (
        f"{what} is {real}, which is not one of the bot's own files (the manifest and the folder "
        f"{folder}/{name}/); only those are visible inside the sandbox"
    )


def _which(word: str, env: Mapping[str, str], cwd: str | None, bot: _Bot) -> str:
    """A bare name as the operator's shell would run it: the activated venv's
    python, else PATH, with a pyenv shim resolved to the interpreter it runs."""
    venv = env.get("VIRTUAL_ENV")
    if venv and _PYTHON.fullmatch(word) and _executable_file(os.path.join(venv, "bin", word)):
        return os.path.abspath(os.path.join(venv, "bin", word))  # even if PATH says otherwise
    found = shutil.which(word, path=env.get("PATH", os.defpath))
    if found is None:
        raise bot.fail(f"program {word!r} not found on PATH (install it, or give a path starting with ./)")
    found = os.path.abspath(found)
    shim = _pyenv_root(found, env)
    if shim is not None:
        found = _pyenv_which(word, shim, env, cwd or os.getcwd(), bot)
    return found


# -- the bot's own program --------------------------------------------------


def _own_program(word: str, path: str, bot: _Bot) -> Runtime:
    """A program among the bot's own files: visible already; it may still need
    an interpreter (its venv's base Python, a #! interpreter)."""
    if not os.path.lexists(path):
        raise bot.fail(f"program {word!r} not found (looked for {path!r})")
    venv = _venv_root(path)
    if venv is not None and _PYTHON.fullmatch(os.path.basename(path)):
        return _venv(word, path, venv, bot, trusted=False)
    if os.path.islink(path):
        target = os.path.realpath(path)
        if not bot.own(target) and not is_system(target):
            raise bot.fail(
                f"program {word!r} is a symlink to {target}, outside the bot's own files "
                f"and the system; the sandbox shows neither its target nor anything it needs"
            )
        if is_system(target):
            return Runtime(path, (), "program")
        path_for_checks = target
    else:
        path_for_checks = path
    if not os.path.isfile(path_for_checks):
        raise bot.fail(f"program {word!r} is not a file ({path_for_checks})")
    if not os.access(path_for_checks, os.X_OK):
        raise bot.fail(f"program {word!r} is not executable (chmod +x {path_for_checks})")
    return Runtime(path, _shebang_binds(path_for_checks, bot), "program")


def _shebang_binds(path: str, bot: _Bot, depth: int = 0) -> tuple[str, ...]:
    """A script's absolute ``#!`` interpreter, made visible (``#!/usr/bin/env X`` is
    looked up inside the sandbox, on its own PATH, so it needs nothing here)."""
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return ()
    if not head.startswith(b"#!") or depth > 3:  # the kernel follows at most a few #! levels
        return ()
    words = head[2:].split(b"\n", 1)[0].split()
    if not words:
        return ()
    interp = os.fsdecode(words[0])
    if not os.path.isabs(interp) or is_system(interp) or bot.own(os.path.realpath(interp)):
        return ()
    if inside(os.path.realpath(interp), bot.folder):
        raise bot.fail(f"{path}: its #! interpreter {interp} is another bot's file")
    rt = _host_program(interp, interp, bot, depth + 1)
    return bot.keep([*rt.binds, interp])


# -- programs of the host -----------------------------------------------------


def _host_program(word: str, path: str, bot: _Bot, depth: int = 0) -> Runtime:
    """A program outside the bot's folder, named by PATH or an absolute path:
    the operator's, and recognised runtimes bring what they need."""
    if not os.path.exists(path):
        raise bot.fail(f"program {word!r} not found (looked for {path!r})")
    if not _executable_file(path):
        raise bot.fail(f"program {word!r} ({path}) is not an executable file")
    real = os.path.realpath(path)
    if bot.own(real):  # a link to the bot's own program: the bot's to control, treated as such
        return _own_program(word, real, bot)
    if inside(real, bot.folder):
        raise bot.fail(f"program {word!r} is {real}, another bot's file; a bot sees only its own files")
    venv = _venv_root(path)
    if venv is not None and _PYTHON.fullmatch(os.path.basename(path)):
        if inside(venv, bot.folder) and not bot.own(venv):
            raise bot.fail(f"program {word!r} is in the venv {venv}, another bot's folder")
        return _venv(word, path, venv, bot, trusted=True)
    if _PYTHON.fullmatch(os.path.basename(real)) or _PYTHON.fullmatch(os.path.basename(path)):
        binds = _python_installation(real)
        if binds is not None:
            return Runtime(real, bot.keep(list(binds)), "python")
    if os.path.basename(real) == "java":
        home = os.path.dirname(os.path.dirname(real))
        if _is_jdk(home):
            return Runtime(path if is_system(path) else real, bot.keep([home, *_jdk_etc(home)]), "java")
    if is_system(path) and is_system(real):
        return Runtime(path, (), "program")
    # Shown at the path it is run by (a symlink's target is bound there).
    return Runtime(path, bot.keep([path, *_shebang_binds(real, bot, depth)]), "program")


# -- Python -------------------------------------------------------------------


def _venv_root(path: str) -> str | None:
    """The venv an interpreter path belongs to: ``pyvenv.cfg`` next to its
    folder or in it, where Python itself looks."""
    d = os.path.dirname(path)
    for root in (os.path.dirname(d), d):
        if os.path.isfile(os.path.join(root, "pyvenv.cfg")):
            return root
    return None


def _read_pyvenv(root: str) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        with open(os.path.join(root, "pyvenv.cfg"), "rb") as f:
            text = f.read(16384).decode("utf-8", "replace")
    except OSError:
        return out
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        if eq:
            out[key.strip().lower()] = value.strip()
    return out


@functools.lru_cache(maxsize=64)
def _python_installation(exe: str) -> tuple[str, ...] | None:
    """What a real (not venv) Python interpreter ``exe`` needs: itself, its
    standard library folder (Python's landmark ``lib/pythonX.Y/os.py``) and its
    libpython; ``None`` when ``exe`` is not part of such an installation."""
    prefix = os.path.dirname(os.path.dirname(exe))
    m = re.fullmatch(r"python(\d+\.\d+)", os.path.basename(exe))
    versions = (
        [m.group(1)]
        if m
        else [os.path.basename(p)[6:] for p in glob.glob(os.path.join(glob.escape(prefix), "lib", "python3.*"))]
    )
    libs = [os.path.join(prefix, "lib", f"python{v}") for v in versions]
    libs = [lib for lib in libs if os.path.isfile(os.path.join(lib, "os.py"))]
    if len(libs) != 1:
        return None
    libpython = sorted(glob.glob(os.path.join(glob.escape(prefix), "lib", "libpython*.so*")))
    return (exe, libs[0], *libpython)


def _venv(word: str, path: str, root: str, bot: _Bot, *, trusted: bool) -> Runtime:
    """A venv's interpreter, run through ``path`` so Python finds ``pyvenv.cfg``.

    ``trusted``: the venv is the operator's (named on PATH, by VIRTUAL_ENV or by
    an absolute path), so its own parts are shown; otherwise it lies in the
    bot's own folder (visible already) and only its base installation is
    added, after checking that it is one."""
    cfg = _read_pyvenv(root)
    home = cfg.get("home")
    where = f"program {word!r} is in the venv {root}"
    if not home or not os.path.isabs(home):
        raise bot.fail(f"{where}, whose pyvenv.cfg names no absolute `home` (the base Python's folder)")
    home = os.path.realpath(home)
    base = os.path.realpath(path)
    if os.path.dirname(base) != home:
        if os.path.islink(path):
            raise bot.fail(f"{where}: it links to {base}, but pyvenv.cfg says the base Python is in {home}")
        # Copied interpreter (venv --copies): the base is the same name in home.
        version = re.match(r"\d+\.\d+", cfg.get("version", cfg.get("version_info", "")))
        names = ([f"python{version.group()}"] if version else []) + [os.path.basename(path), "python3"]
        base = next(
            (os.path.realpath(os.path.join(home, n)) for n in names if _executable_file(os.path.join(home, n))), ""
        )
    if inside(base, bot.folder) and not bot.own(base):
        raise bot.fail(f"{where}, whose base Python {base} is another bot's file")
    binds = _python_installation(base) if base else None
    if binds is None:
        raise bot.fail(
            f"{where}, whose base Python ({base or home}) is not a Python installation "
            f"(no lib/pythonX.Y/os.py next to it); recreate the venv with python -m venv"
        )
    mine = [os.path.join(root, "pyvenv.cfg"), path, os.path.join(root, "lib")] if trusted else []
    # Links between the venv's interpreter and its base (python3 -> .../bin/python3 -> python3.11):
    # each one outside the bot's files is shown as the file it leads to, or the chain breaks inside.
    hops = [h for h in _hops(path) if not inside(h, bot.folder)]
    return Runtime(path, bot.keep([*mine, *hops, *binds]), "venv")


def _hops(path: str) -> list[str]:
    """The symlinks met following ``path`` to its file, hop by hop (each with
    its folder resolved), ``path`` itself included when it is one."""
    out: list[str] = []
    p = path
    for _ in range(40):  # the kernel's own limit on a chain of links
        p = os.path.join(os.path.realpath(os.path.dirname(p)), os.path.basename(p))
        if not os.path.islink(p):
            break
        out.append(p)
        p = os.path.join(os.path.dirname(p), os.readlink(p))
    return out


def _pyenv_root(path: str, env: Mapping[str, str]) -> str | None:
    """pyenv's root when ``path`` is one of its shims (bash scripts that run
    pyenv, which is not inside the sandbox), else ``None``."""
    shims = os.path.dirname(path)
    if os.path.basename(shims) != "shims":
        return None
    candidates = [env.get("PYENV_ROOT", "")]
    d = shims
    while d != os.path.dirname(d):
        d = os.path.dirname(d)
        candidates.append(d)
    for root in candidates:
        if root and inside(shims, root) and os.path.isdir(os.path.join(root, "versions")):
            return root
    return None


def _pyenv_versions(root: str, env: Mapping[str, str], cwd: str) -> tuple[list[str], str]:
    """The versions pyenv selects, and where from: PYENV_VERSION, a
    ``.python-version`` file in the current folder or above, ``$PYENV_ROOT/version``."""
    if env.get("PYENV_VERSION"):
        return [v for v in env["PYENV_VERSION"].split(":") if v], "PYENV_VERSION"
    d = os.path.abspath(env.get("PYENV_DIR") or cwd)
    files = []
    while True:
        files.append(os.path.join(d, ".python-version"))
        if d == os.path.dirname(d):
            break
        d = os.path.dirname(d)
    files.append(os.path.join(root, "version"))
    for f in files:
        try:
            with open(f, encoding="utf-8", errors="replace") as fh:
                text = fh.read(4096)
        except OSError:
            continue
        words = [
            w
            for line in text.splitlines()
            if not line.strip().startswith("#")
            for w in line.split()
            if ".." not in w.split("/")
        ]
        if words:
            return words, f
    return ["system"], "the default"


def _pyenv_which(word: str, root: str, env: Mapping[str, str], cwd: str, bot: _Bot) -> str:
    """What ``pyenv which WORD`` answers, read from pyenv's files (no shell run)."""
    versions, source = _pyenv_versions(root, env, cwd)
    for v in versions:
        if v == "system":
            path = os.pathsep.join(
                p for p in env.get("PATH", "").split(os.pathsep) if p and not inside(os.path.abspath(p), root)
            )
            found = shutil.which(word, path=path)
            if found:
                return os.path.abspath(found)
            continue
        folder = os.path.join(root, "versions", v)
        if not os.path.isdir(folder):
            # pyenv takes a prefix (3.11) as the latest installed release it starts.
            releases = [
                n
                for n in os.listdir(os.path.join(root, "versions"))
                if n.startswith(v + ".") and re.fullmatch(r"[\d.]+", n)
            ]
            if not releases:
                continue
            folder = os.path.join(root, "versions", max(releases, key=lambda n: [int(x) for x in n.split(".") if x]))
        candidate = os.path.join(folder, "bin", word)
        if _executable_file(candidate):
            return candidate
    raise bot.fail(
        f"program {word!r} is a pyenv shim, and pyenv's version(s) {', '.join(versions)} "
        f"(from {source}) have no {word!r}; install it or name the interpreter by its path"
    )


@functools.lru_cache(maxsize=1)
def host_python() -> tuple[str, tuple[str, ...]]:
    """The interpreter that runs Python bots (this one, resolved) and what it
    needs inside the sandbox, the ``arena`` package and site-packages aside."""
    import sys

    exe = os.path.realpath(sys.executable)
    venv = _venv_root(exe)
    if venv is not None:  # a venv made with --copies: the interpreter is its own file
        rt = _venv(exe, exe, venv, _Bot("/nonexistent", lambda p: False, "the arena's Python"), trusted=True)
        return exe, rt.binds
    binds = _python_installation(exe)
    if binds is None:  # an unusual layout: show its whole prefix, as Python itself sees it
        binds = (exe, sys.base_prefix)
    return exe, tuple(b for b in binds if not is_system(b))


# -- Java ----------------------------------------------------------------------


def _is_jdk(home: str) -> bool:
    return os.path.isfile(os.path.join(home, "release")) or os.path.isfile(os.path.join(home, "lib", "modules"))


@functools.lru_cache(maxsize=16)
def _jdk_etc(home: str) -> tuple[str, ...]:
    """The folders under /etc that the JDK's own symlinks lead to (Debian keeps a
    JDK's configuration in /etc/java-NN-openjdk and links it from the JDK home)."""
    out: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(home):
        for name in (*dirnames, *filenames):
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                continue
            target = os.path.realpath(p)
            if target.startswith("/etc/") and os.path.exists(target):
                out.add("/etc/" + target[len("/etc/") :].split("/", 1)[0])
    return tuple(sorted(out))
