"""Attack probe: prints, once at import, what confines its own process, so a
test can compare a bot forked from the zygote with one started anew.

``CONFINED <json>``: the capability sets, ``NoNewPrivs``, ``Seccomp`` and
its filter count, its uid, the descriptors it holds beyond 0, 1, 2 (and their
targets), the pids its ``/proc`` shows, its session and process group against
its own pid, its working folder, the environment's names, and what ``/tmp``
holds, and its cgroups as its cgroup namespace shows them. It also tries ``setns`` back into namespaces through
``/proc/1/ns/*`` (the sandbox's own init: a way out would be to join a
namespace of its parent) and says what the kernel answered. Plays like
``random`` otherwise.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

from arena.sdk import DUDO, Bot, Turn, bid


def _status() -> dict[str, str]:
    keep = ("Uid", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp", "Seccomp_filters")
    with open("/proc/self/status") as f:
        rows = (line.split(":", 1) for line in f)
        return {k: v.strip() for k, v in rows if k in keep}


def _fds() -> dict[str, str]:
    out = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            out[name] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            pass  # the listing's own descriptor, closed by now
    return {k: v for k, v in out.items() if int(k) > 2}


def _setns() -> dict[str, str]:
    libc = ctypes.CDLL(None, use_errno=True)
    out = {}
    for name in ("user", "mnt", "pid", "net"):
        try:
            fd = os.open(f"/proc/1/ns/{name}", os.O_RDONLY)
        except OSError as exc:
            out[name] = f"open: {exc.strerror}"
            continue
        rc = libc.setns(fd, 0)
        out[name] = "joined" if rc == 0 else os.strerror(ctypes.get_errno())
        os.close(fd)
    return out


REPORT = {
    "status": _status(),
    "fds": _fds(),
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "pid": os.getpid(),
    "sid": os.getsid(0),
    "pgid": os.getpgid(0),
    "cwd": os.getcwd(),
    "env": sorted(os.environ),
    "tmp": sorted(os.listdir("/tmp")),
    "setns": _setns(),
    "cgroup": open("/proc/self/cgroup").read().split(),  # relative to its cgroup namespace: its own cgroup
}
print("CONFINED " + json.dumps(REPORT, sort_keys=True), file=sys.stderr, flush=True)


class Confinement(Bot):
    def act(self, turn: Turn):  # type: ignore[no-untyped-def]
        if turn.standing is not None and turn.legal.dudo:
            return DUDO
        face = min(turn.legal.min_quantity)
        return bid(turn.legal.min_quantity[face], face)
