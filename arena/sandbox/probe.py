"""What this machine offers to confine bots, probed once per process."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass

from arena.sandbox import cgroups

__all__ = ["Mechanisms", "available"]


@dataclass(frozen=True)
class Mechanisms:
    """What this machine offers, probed once per process (:func:`available`)."""

    bwrap: str | None  # path of a working bubblewrap
    unshare: tuple[str, ...] | None  # a working unshare prefix (net + pid namespaces)
    cgroups: tuple[tuple[str, str], ...]  # (controller, writable parent folder)
    root: bool

    def cgroup(self, controller: str) -> str | None:
        return dict(self.cgroups).get(controller)

    def missing(self) -> list[str]:
        out = []
        if not self.bwrap:
            out.append("bubblewrap (file system hidden, private /tmp): apt-get install bubblewrap"
                       + ("" if self.unshare else "; no working `unshare` either, so no network or "
                          "pid namespace"))
        for c in cgroups.CONTROLLERS:
            if not self.cgroup(c):
                out.append(f"cgroup v1 `{c}` controller (writable)")
        return out


def _run_ok(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


_probe_lock = threading.Lock()


def available() -> Mechanisms:
    """Probe bwrap, unshare and cgroups once (a few ms); safe from many threads at once
    (two concurrent probes would each see the other's probe folder and wrongly
    conclude that a controller is missing)."""
    with _probe_lock:
        return _probe()


@functools.lru_cache(maxsize=1)
def _probe() -> Mechanisms:
    root = os.geteuid() == 0
    bwrap = shutil.which("bwrap")
    if bwrap and not _run_ok([bwrap, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL",
                              "--ro-bind", "/", "/", "true"]):
        bwrap = None
    unshare: tuple[str, ...] | None = None
    u = shutil.which("unshare")
    if u:
        flags: tuple[str, ...] = ("--net", "--pid", "--fork", "--kill-child", "--mount-proc")
        if not root:
            flags = ("--user", "--map-root-user", *flags)
        prefix = (u, *flags)
        if _run_ok([*prefix, "true"]):
            unshare = prefix
    found = tuple(cgroups.parents())
    cgroups.reap_stale(found)
    return Mechanisms(bwrap=bwrap, unshare=unshare, cgroups=found, root=root)
