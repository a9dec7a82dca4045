"""Per-user kernel quotas, split so that one sandbox can neither exhaust
another's nor signal through them.

Some of the kernel's limits count a *user's* use, not a process's: tasks
(``RLIMIT_NPROC``), queued signals (``RLIMIT_SIGPENDING``), POSIX
message-queue bytes (``RLIMIT_MSGQUEUE``) and locked shared memory
(``RLIMIT_MEMLOCK``, for ``SHM_LOCK`` and the like). Every bot of a run is the
same user, so as one plain limit these are shared: a bot that fills the
user's quota makes another bot's ``fork``/``sigqueue``/``mq_open`` fail,
which stops its start (a fork bomb during preflight failed other entrants'
bwrap, and the run blamed them) or, toggled on purpose, signals one bit at a
time to a colluding partner (measured: 96,363 queued signals in one sandbox
made the first ``sigqueue`` of another fail).

Since Linux 5.14 the kernel keeps these counts per user namespace
("ucounts"), hierarchically: a task's use is checked against its own limit at
its own namespace's level, and against each enclosing level's ceiling (the
limit its creator had when the namespace was made). Every bwrap sandbox is a
user namespace of its own, so:

- inside, as the first program in the sandbox, util-linux's ``prlimit``
  sets small limits (:func:`inside`); they count that sandbox's use only;
- outside, the referee's child raises the same limits to the user's hard
  limit (:func:`outside`), the ceiling every sandbox's namespace inherits,
  so that all sandboxes together stay below it: a sandbox's share is the hard
  limit split :data:`SANDBOXES` ways (1,024 queued signals, 25 KiB of
  message queues and 256 KiB of locked shared memory with Debian's defaults).

``RLIMIT_NPROC`` is only set inside for a user other than root (the kernel
exempts uid 0) and only without a pids cgroup (which counts the same tasks
and covers root too). The shares assume at most :data:`SANDBOXES` sandboxes of
one user at once; more than that, all at their limits, could again reach the
shared ceiling where it cannot be raised (as non-root, above the hard limit).
"""

from __future__ import annotations

import resource
import shutil

from arena.sandbox.limits import SandboxLimits

__all__ = ["PRLIMIT", "SANDBOXES", "inside", "launcher", "outside"]

PRLIMIT = shutil.which("prlimit") or ""  # util-linux: sets limits, then runs the bot (one exec)
SANDBOXES = 32  # sandboxes of one user at once that the shared ceilings are sized for

_INF = resource.RLIM_INFINITY
_SIGPENDING = 1024  # signals a bot may have queued at once, at most
_SHARED = (resource.RLIMIT_SIGPENDING, resource.RLIMIT_MSGQUEUE, resource.RLIMIT_MEMLOCK)


def _hard(res: int) -> int:
    return resource.getrlimit(res)[1]


def _share(res: int, cap: int | None = None) -> int:
    """A sandbox's share of the user's hard limit: 1/:data:`SANDBOXES` of it
    (even root may not be allowed to raise a hard limit: not here, in a
    container without CAP_SYS_RESOURCE)."""
    hard = _hard(res)
    share = (cap or hard) if hard == _INF else max(1, hard // SANDBOXES)
    return min(share, cap) if cap else share


def inside(limits: SandboxLimits, *, root: bool, pids_cgroup: bool) -> list[str]:
    """``prlimit`` options for the bot's own user namespace (soft = hard: a bot may not raise them)."""
    opts = {
        "sigpending": _share(resource.RLIMIT_SIGPENDING, _SIGPENDING),
        "msgqueue": _share(resource.RLIMIT_MSGQUEUE, 819200),
        "memlock": _share(resource.RLIMIT_MEMLOCK, 8 << 20),
    }
    if not root and not pids_cgroup:
        # bwrap's init and the bot's tree; the outer bwrap is the one more
        # that a pids cgroup of `processes` would also count.
        opts["nproc"] = limits.processes - 1
    return [f"--{k}={v}:{v}" for k, v in opts.items()]


def launcher(limits: SandboxLimits, *, root: bool, pids_cgroup: bool) -> list[str]:
    """The command prefix that applies :func:`inside`, or nothing without ``prlimit``."""
    if not PRLIMIT:
        return []
    return [PRLIMIT, *inside(limits, root=root, pids_cgroup=pids_cgroup), "--"]


def outside(*, nproc: bool) -> list[tuple[int, tuple[int, int]]]:
    """(resource, (soft, hard)) for the referee's child, before bwrap makes the
    namespace: each shared ceiling at the user's hard limit."""
    res = [*_SHARED, resource.RLIMIT_NPROC] if nproc else list(_SHARED)
    return [(r, (_hard(r), _hard(r))) for r in res]
