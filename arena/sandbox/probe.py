"""What this machine offers to confine bots, probed once per process."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass

from arena.sandbox import cgroups
from arena.sandbox.cgroups import Plan, Unified  # by name: the field `cgroups` hides the module in the class

__all__ = ["Mechanisms", "available"]


@dataclass(frozen=True)
class Mechanisms:
    """What this machine offers, probed once per process (:func:`available`)."""

    bwrap: str | None  # path of a working bubblewrap
    unshare: tuple[str, ...] | None  # a working unshare prefix (net + pid namespaces)
    cgroups: tuple[tuple[str, str], ...]  # (v1 controller, writable parent folder)
    root: bool
    unified: Unified | None = None  # the cgroup v2 hierarchy, if mounted

    def cgroup(self, controller: str) -> str | None:
        """The writable parent folder of a cgroup v1 ``controller``, if any."""
        return dict(self.cgroups).get(controller)

    def plan(self) -> Plan:
        """Which cgroup mechanism does which job (``ARENA_CGROUP_PREFER`` read now)."""
        return cgroups.plan(self.cgroups, self.unified)

    def missing(self) -> list[str]:
        out = []
        if not self.bwrap:
            out.append(
                "bubblewrap (file system hidden, private /tmp): apt-get install bubblewrap"
                + ("" if self.unshare else "; no working `unshare` either, so no network or pid namespace")
            )
        p = self.plan()
        what = {
            "cpu": "exact CPU time (cgroup v1 cpuacct or v2 cpu.stat)",
            "freeze": "freezing bots between turns (cgroup v2 cgroup.freeze or v1 freezer; CPU a bot "
            "uses between its turns is charged to its next decision instead"
            + ("" if p.has("cpu") else ", from /proc")
            + ")",
            "memory": "a memory cgroup (v1 memory, or v2 with the memory controller enabled)",
            "pids": "a process cap cgroup (v1 pids, or v2 with the pids controller enabled)",
        }
        for job, text in what.items():
            if not p.has(job):
                out.append(text)
        u = self.unified
        if u is not None and u.parent is None:
            out.append(
                f"a delegated cgroup v2 subtree ({u.why}; run the arena inside one, e.g. "
                f"`systemd-run --user --scope -p Delegate=yes arena run ...`)"
            )
        elif u is not None and u.why and u.parent is not None and p.v2 and not (p.has("memory") and p.has("pids")):
            out.append(u.why)
        return out


def _run_ok(argv: list[str]) -> bool:
    try:
        return (
            subprocess.run(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10
            ).returncode
            == 0
        )
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
    if bwrap and not _run_ok(
        [bwrap, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--ro-bind", "/", "/", "true"]
    ):
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
    v2 = cgroups.unified()
    cpu = cgroups.cpu_parent()  # workers' CPU groups (cgroups.join_cpu_group) left by dead runs
    cgroups.reap_stale(found + ((("cpu", cpu),) if cpu else ()), v2.parent if v2 else None)
    return Mechanisms(bwrap=bwrap, unshare=unshare, cgroups=found, root=root, unified=v2)
