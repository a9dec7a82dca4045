"""What a bot sees of the file system inside bubblewrap: the bwrap arguments."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

import arena
from arena.botfile import BotSpec
from arena.sandbox.limits import SandboxLimits

__all__ = ["WORK", "bwrap_args", "python_paths", "system_args", "view_args"]

SYSTEM_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
              "/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/ssl",
              "/etc/ca-certificates")
WORK = "/tmp"  # the bot's private working folder inside bwrap


def python_paths() -> tuple[str, str, str]:
    """(interpreter, the folder holding the arena package, site-packages)."""
    exe = os.path.realpath(sys.executable)
    pkg_parent = str(Path(arena.__file__).resolve().parent.parent)
    return exe, pkg_parent, sysconfig.get_paths()["purelib"]


def bwrap_args(bwrap: str, spec: BotSpec, limits: SandboxLimits, inner: list[str]) -> list[str]:
    """The whole bwrap command line that runs ``inner`` for ``spec``: the
    system part, then the bot's own view, then the finishing touches."""
    return [bwrap, *system_args(limits), *view_args(spec), "--remount-ro", "/", "--chdir", WORK, "--", *inner]


def system_args(limits: SandboxLimits) -> list[str]:
    """Namespaces, capabilities, the read-only system, /proc, /dev and the private /tmp."""
    a = ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            a += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            a += ["--ro-bind", top, top]
    for e in SYSTEM_ETC:
        a += ["--ro-bind-try", e, e]
    a += ["--proc", "/proc", "--dev", "/dev", "--size", str(limits.memory_mb << 20), "--tmpfs", WORK]
    return a


def view_args(spec: BotSpec) -> list[str]:
    """The bot's runtime and its own files, read-only."""
    binds: list[str] = []
    if spec.kind == "python":
        exe, pkg, site = python_paths()
        binds += [sys.base_prefix, os.path.join(pkg, "arena"), site]
        if not exe.startswith(sys.base_prefix):
            binds.append(exe)
    else:
        prog = os.path.realpath(spec.command[0])
        if not prog.startswith(("/usr/", "/bin/", "/lib")):
            d = os.path.dirname(prog)
            binds.append(os.path.dirname(d) if os.path.basename(d) == "bin" else d)
    binds += [str(f) for f in spec.files()]
    a: list[str] = []
    for b in dict.fromkeys(binds):
        a += ["--ro-bind", b, b]
    return a
