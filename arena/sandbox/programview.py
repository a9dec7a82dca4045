"""The file view of a program bot (a manifest): its runtime's closure, served
from memory (docs/sandbox.md, "The file view").

A program bot used to see the host's whole ``/usr`` and its runtime through
bind mounts, so the kernel's page cache and dentry cache of those files were
the machine's: a bot timed a read of a rarely read page, or a lookup of a
missing name, to learn what another process of it had read (the timing
channels docs/sandbox.md lists, which no system-call filter can refuse). Here it sees
copies on the tmpfs view store (:mod:`arena.sandbox.view`) of what its
program needs and nothing else:

- the program (and every link met on the way to it: ``/usr/bin/java`` leads
  through ``/etc/alternatives``) and the runtime :mod:`arena.botfile.runtime`
  resolved for it: a JDK's home (without ``jmods``, headers, man pages and
  sources, which only the build tools read) and its ``/etc`` configuration,
  a Python installation's standard library (with its site-packages unless a
  venv leaves them out; a system Python's ``dist-packages`` too), a venv's
  own parts;
- for a shell (``sh``, ``bash``, ... as the program or a script's ``#!``
  line), the utilities scripts call (:data:`SHELL_TOOLS`, those the host has);
- the shared libraries all of these load (``ldd`` on the operator's files)
  and those the bot's own ELF files name (their ``DT_NEEDED`` entries, read
  here without running anything of the bot, looked up in the dynamic
  linker's cache), with their own closure;
- what the Python view holds for every sandbox: the quota launcher, ``/bin/sh``,
  a few ``/etc`` files, glibc's C.UTF-8 locale;
- every path of the manifest's ``view`` list (system files the bot opens or
  runs that the closure cannot see, e.g. a tool a script runs by a name it
  computes, or a library it ``dlopen``s).

The view is keyed by the content of what it copies (as every view: a
changed source makes a new one), so bots sharing a runtime share one copy.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import struct
import subprocess
import threading
from collections.abc import Iterable, Iterator

from arena.botfile import runtime as rt
from arena.botfile.spec import BotSpec, bot_tree
from arena.errors import SandboxError
from arena.sandbox import view as fileview

__all__ = ["JDK_SKIP", "SHELLS", "SHELL_TOOLS", "elf_needs", "program_sources", "program_view"]

log = logging.getLogger("arena.sandbox")

SHELLS = frozenset({"sh", "bash", "dash", "ash", "ksh", "mksh", "zsh", "busybox"})

# What a shell script may run, besides its shell's builtins: the POSIX
# utilities and the GNU ones scripts commonly call (each included where the
# host has it, on the sandbox's PATH). Anything else a script runs is named
# in the manifest's `view` list.
SHELL_TOOLS = (
    *sorted(SHELLS),
    "[",
    "awk",
    "base64",
    "basename",
    "bc",
    "cat",
    "chmod",
    "cksum",
    "cmp",
    "comm",
    "cp",
    "csplit",
    "cut",
    "date",
    "dd",
    "diff",
    "dirname",
    "du",
    "echo",
    "env",
    "expand",
    "expr",
    "false",
    "find",
    "fold",
    "getconf",
    "grep",
    "egrep",
    "fgrep",
    "gawk",
    "mawk",
    "head",
    "id",
    "join",
    "kill",
    "ln",
    "ls",
    "md5sum",
    "mkdir",
    "mkfifo",
    "mktemp",
    "mv",
    "nl",
    "nproc",
    "od",
    "paste",
    "printf",
    "pwd",
    "readlink",
    "realpath",
    "rev",
    "rm",
    "rmdir",
    "sed",
    "seq",
    "sha1sum",
    "sha256sum",
    "shuf",
    "sleep",
    "sort",
    "split",
    "stat",
    "tac",
    "tail",
    "tee",
    "test",
    "timeout",
    "touch",
    "tr",
    "true",
    "tsort",
    "tty",
    "uname",
    "unexpand",
    "uniq",
    "wc",
    "which",
    "xargs",
    "yes",
)
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"  # the PATH a bot is started with (arena.sandbox.box)

# Parts of a JDK's home that only the build tools read (jlink's modules,
# C headers, man pages, sources, demos): a JVM running a bot never opens them.
JDK_SKIP = frozenset({"jmods", "include", "man", "demo", "sample", "src.zip", "legal"})

_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")
_MAX_OWN_FILES = 20000  # a bot's files looked at for ELF and #! headers (the rest are data)
_lock = threading.Lock()


# -- a bot's own ELF files, read without running them --------------------------------


def elf_needs(path: str) -> tuple[list[str], str | None]:
    """The ``DT_NEEDED`` names and the ``PT_INTERP`` interpreter of the 64-bit
    little-endian ELF file ``path`` (``[], None`` for anything else). Parsed
    here rather than by ``ldd``, which may run the file's own interpreter:
    the file is a bot's."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
                return [], None  # a bot's data file is not read past its first bytes
            data = head + f.read(64 << 20)
    except OSError:
        return [], None
    try:
        phoff, phentsize, phnum = struct.unpack_from("<Q", data, 32)[0], *struct.unpack_from("<HH", data, 54)
        loads: list[tuple[int, int, int]] = []  # (vaddr, offset, filesz)
        dynamic: tuple[int, int] | None = None
        interp: str | None = None
        for i in range(min(phnum, 256)):
            off = phoff + i * phentsize
            p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", data, off)
            if p_type == 1:
                loads.append((p_vaddr, p_offset, p_filesz))
            elif p_type == 2:
                dynamic = (p_offset, p_filesz)
            elif p_type == 3:
                interp = data[p_offset : p_offset + p_filesz].split(b"\0", 1)[0].decode("utf-8", "replace")
        if dynamic is None:
            return [], interp
        strtab, needed = None, []
        for j in range(0, min(dynamic[1], 1 << 16), 16):
            tag, val = struct.unpack_from("<qQ", data, dynamic[0] + j)
            if tag == 0:
                break
            if tag == 1:
                needed.append(val)
            elif tag == 5:
                strtab = val
        if strtab is None:
            return [], interp
        base = next((o + strtab - v for v, o, n in loads if v <= strtab < v + n), None)
        if base is None:
            return [], interp
        names = [data[base + n : data.find(b"\0", base + n)].decode("utf-8", "replace") for n in needed]
        return [n for n in names if n and "/" not in n], interp
    except (struct.error, ValueError):
        return [], None


@functools.lru_cache(maxsize=1)
def _ld_cache() -> dict[str, str]:
    """Library name -> path, as the dynamic linker's cache has it (``ldconfig -p``
    reads the operator's ``/etc/ld.so.cache``), 64-bit entries first."""
    out: dict[str, str] = {}
    for exe in ("/sbin/ldconfig", "/usr/sbin/ldconfig"):
        if os.path.exists(exe):
            res = subprocess.run([exe, "-p"], capture_output=True, text=True, check=False, env={"LC_ALL": "C"})
            for line in res.stdout.splitlines():
                m = re.match(r"\s*(\S+) \(([^)]*)\) => (/\S+)$", line)
                if m and (m.group(1) not in out or "64" in m.group(2)):
                    out[m.group(1)] = m.group(3)
            break
    return out


def _library(name: str) -> str | None:
    """Where the dynamic linker finds the library ``name`` (a bot's ELF file
    names it: only a file of the system's library folders, never a folder)."""
    if name in (".", "..") or "/" in name:
        return None
    path = _ld_cache().get(name)
    if path is None:
        for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/usr/local/lib"):
            if os.path.isfile(os.path.join(d, name)):
                return os.path.join(d, name)
    return path if path is not None and os.path.isfile(path) and rt.is_system(path) else None


# -- what a program bot needs -----------------------------------------------------------


def _shebang(path: str) -> list[str]:
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return []
    if not head.startswith(b"#!"):
        return []
    return [os.fsdecode(w) for w in head[2:].split(b"\n", 1)[0].split()]


def _interpreters(spec: BotSpec) -> tuple[list[str], list[str]]:
    """(host programs the bot's own scripts name in ``#!`` lines, library names
    its own ELF files need, their interpreters included)."""
    programs: list[str] = []
    libs: list[str] = []
    folder = str(spec.folder)
    for i, e in enumerate(bot_tree(spec)):
        if i >= _MAX_OWN_FILES:
            break
        if e.kind != "file":
            continue
        path = os.path.join(folder, e.rel)
        words = _shebang(path)
        if words:
            first = words[0]
            if os.path.isabs(first) and rt.is_system(first) and os.path.isfile(first):  # a file: never all of /usr
                programs.append(first)
            if os.path.basename(first) == "env" and len(words) > 1:  # env looks X up on the sandbox's PATH
                name = next((w for w in words[1:] if not w.startswith("-") and "=" not in w), None)
                found = shutil.which(name, path=SANDBOX_PATH) if name else None
                if found:
                    programs.append(found)
            continue
        needed, interp = elf_needs(path)
        libs.extend(needed)
        if interp and rt.is_system(interp) and os.path.isfile(interp):
            programs.append(interp)
    return programs, libs


def _walk_runtime(path: str, skip: Iterable[str]) -> Iterator[str]:
    yield path
    yield from fileview._walk(path, skip)


def _python_parts(program: str) -> list[str]:
    """A system Python's installation (its runtime binds leave out the system
    folders, seen whole before): its standard library and the system's
    ``dist-packages`` folders on its path."""
    real = os.path.realpath(program)
    if not (_PYTHON.fullmatch(os.path.basename(real)) and rt.is_system(real)):
        return []
    parts = rt._python_installation(real)
    if parts is None:
        return []
    out = list(parts)
    version = os.path.basename(parts[1])[len("python") :]
    for extra in ("/usr/lib/python3/dist-packages", f"/usr/local/lib/python{version}/dist-packages"):
        if os.path.isdir(extra):
            out.append(extra)
    return out


def _jdk_parts(program: str) -> list[str]:
    """A system JVM's home and its /etc configuration (its runtime binds leave
    out the system folders, seen whole before)."""
    real = os.path.realpath(program)
    home = os.path.dirname(os.path.dirname(real))
    if os.path.basename(real) != "java" or not rt._is_jdk(home):
        return []
    return [home, *rt._jdk_etc(home)]


def _venv_skips(program: str) -> frozenset[str]:
    """What of a base installation's standard library a venv does not use:
    its site-packages, unless ``include-system-site-packages`` is true."""
    root = rt._venv_root(program)
    if root is None:
        return frozenset()
    cfg = rt._read_pyvenv(root)
    if cfg.get("include-system-site-packages", "false").lower() == "true":
        return frozenset()
    return frozenset({"site-packages", "dist-packages"})


def program_sources(spec: BotSpec, programs: Iterable[str]) -> tuple[list[str], dict[str, list[str]]]:
    """The host paths of ``spec``'s view before the ELF closure: ``programs``
    (the sandbox's own: the quota launcher, the shell), the bot's program and
    runtime, a shell's tools, the libraries its own ELF files need, the
    manifest's ``view`` list and the /etc files every view has. Returned as
    (the system's files and single files elsewhere, {each runtime folder
    outside the system: its files}): each such folder (a Python's standard
    library, a venv's site-packages, a JDK home under /opt) is a view of its
    own, shared by every bot that uses it (a new venv does not copy its base
    Python's standard library again)."""
    out: list[str] = []
    program = spec.command[0]
    stdlib_skip = (fileview.STDLIB_SKIP - {"site-packages", "dist-packages"}) | _venv_skips(program)
    own_programs, libs = _interpreters(spec)
    mine = {str(f) for f in spec.files()}
    hosts = [p for p in (*programs, *own_programs) if os.path.lexists(p)]
    if not any(rt.inside(program, m) for m in mine):
        hosts.append(program)
    if os.path.basename(program) == "env":  # command: [env, X, ...]: X looked up on the sandbox's PATH
        name = next((w for w in spec.command[1:] if not w.startswith("-") and "=" not in w), None)
        found = shutil.which(name, path=SANDBOX_PATH) if name else None
        if found:
            hosts.append(found)
    for p in list(hosts):
        hosts += _python_parts(p) + _jdk_parts(p)
    # A shell the bot runs (the sandbox's own /bin/sh, run by the launcher, brings no tools).
    bots_programs = [program, *own_programs, *spec.runtime]
    if any(os.path.basename(os.path.realpath(p)) in SHELLS or os.path.basename(p) in SHELLS for p in bots_programs):
        for tool in SHELL_TOOLS:
            found = shutil.which(tool, path=SANDBOX_PATH)
            if found:
                hosts.append(found)
    for name in dict.fromkeys(libs):
        found = _library(name)
        if found:
            hosts.append(found)
    layers: dict[str, list[str]] = {}
    for p in (*hosts, *spec.runtime, *spec.view):
        if any(rt.inside(p, m) for m in mine) or not os.path.lexists(p):
            continue
        if os.path.isdir(p) and not os.path.islink(p):
            real = os.path.realpath(p)
            skip = stdlib_skip if fileview._is_stdlib(real) else JDK_SKIP if rt._is_jdk(real) else ()
            if rt.is_system(real) or real == "/etc" or rt.inside(real, "/etc"):
                out.append(real)
                out.extend(fileview._walk(real, skip))
            elif not any(rt.inside(real, top) for top in layers):
                layers[real] = [real, *fileview._walk(real, skip)]
        else:
            out.extend(fileview._hops(p))
    for e in fileview.VIEW_ETC:
        if os.path.lexists(e):
            out.extend(fileview._hops(e))
            if os.path.isdir(e):
                out.extend(fileview._walk(e))
    return list(dict.fromkeys(out)), layers


# The most a program bot's view may copy: its runtime, and what its manifest's
# `view` list names (a bot that named /usr would have the machine copy all of it
# into memory). ARENA_VIEW_MAX_MB raises it for a larger runtime.
MAX_MB = 2048


def _max_mb() -> int:
    raw = os.environ.get("ARENA_VIEW_MAX_MB", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else MAX_MB


def _check_size(spec: BotSpec, sources: list[str], layers: dict[str, list[str]]) -> None:
    """Refuse a view larger than :func:`_max_mb`, naming its largest parts."""
    sizes: dict[str, int] = {}
    total = 0
    for p in [*sources, *(f for fs in layers.values() for f in fs)]:
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if st.st_mode & 0o170000 == 0o100000:  # a regular file
            total += st.st_size
            top = next((t for t in (*layers, *spec.view) if rt.inside(p, t)), os.path.dirname(p))
            sizes[top] = sizes.get(top, 0) + st.st_size
    limit = _max_mb()
    if total > limit << 20:
        largest = ", ".join(f"{t} ({n >> 20} MB)" for t, n in sorted(sizes.items(), key=lambda kv: -kv[1])[:3])
        raise SandboxError(
            f"bot {spec.name}: its file view would copy at least {total >> 20} MB into memory, more than "
            f"{limit} MB (largest: {largest}); name fewer or smaller paths in its manifest's view "
            f"list, or raise the cap with ARENA_VIEW_MAX_MB (docs/sandbox.md, 'The file view')"
        )


_views: dict[tuple[object, ...], fileview.View] = {}


def program_view(spec: BotSpec, programs: tuple[str, ...]) -> fileview.View:
    """The view of the program bot ``spec`` (made once per content, then
    reused); ``programs`` are the sandbox's own (the quota launcher, the shell)."""
    cache_key = (spec.command[0], spec.runtime, spec.view, spec.sha256, str(spec.folder), programs)
    cached = _views.get(cache_key)
    if cached is not None:
        return cached
    with _lock:
        sources, layers = program_sources(spec, programs)
        _check_size(spec, sources, layers)
        parts = []
        for _top, files in sorted(layers.items()):

            def build_layer(tmp: str, files: list[str] = files) -> None:
                fileview._copy(files, tmp)

            parts.append(fileview._publish("rt-" + fileview._key(files)[:24], build_layer))
        # The system part's closure covers the layers' ELF files too: their keys are in its key.
        extra = fileview._key(["/etc/ld.so.cache"]) + "".join(os.path.basename(p) for p in parts)
        key = "prog-" + fileview._key(sources, extra=extra)[:24]

        def build(tmp: str) -> None:
            elves = [p for p in sources if not p.startswith("/etc/")] + [f for fs in layers.values() for f in fs]
            closure = [
                p for p in fileview._elf_closure(elves) if not any(rt.inside(p, top) for top in layers)
            ]  # what lies in a layer is served from there
            size = fileview._copy(sources, tmp) + fileview._copy(closure, tmp)
            log.info("made a program bot's file view (%s): %d MB in %s", spec.command[0], size >> 20, tmp)

        view = _views[cache_key] = fileview.View(fileview._publish(key, build), *parts)
        return view


def forget() -> None:
    """Forget the views this process found (one was collected meanwhile)."""
    _views.clear()
