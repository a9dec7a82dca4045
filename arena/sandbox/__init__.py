"""Confinement of one bot process (Linux). Every bot is hostile.

What each bot process gets, best first (docs/sandbox.md has the threat model):

- ``bwrap`` (bubblewrap): new user, pid, network, mount, ipc, uts and cgroup
  namespaces; all capabilities dropped; a new session; a read-only view of
  the system libraries, the interpreter, the ``arena`` package and the bot's
  own files only (never the project tree, configs, results or other bots);
  a private ``/tmp`` and ``/dev/shm`` (tmpfs mounts sized to share the memory
  limit, gone with the sandbox), ``/tmp`` the working folder; a read-only
  ``/dev``; ``--die-with-parent``.
- Without bwrap: ``unshare`` (util-linux) for the network and pid namespaces,
  and a private working folder on disk, removed on close; the file system is
  then *not* hidden (said once, by a warning).
- cgroups (:mod:`~arena.sandbox.cgroups`): processes, memory and exact CPU time.
- rlimits always: open files, lifetime CPU seconds (backstop), no core
  files; file size when the working folder is on disk; address space only
  when there is no memory cgroup (``RLIMIT_AS`` breaks runtimes that reserve
  address space, like Node.js); processes (``RLIMIT_NPROC``) only without a
  pids cgroup and not as root.
- A scrubbed environment: PATH, HOME, TMPDIR, LANG, and the manifest's env.
- A system-call filter (:mod:`~arena.sandbox.seccomp`, loaded by bwrap):
  what namespaces do not separate (locks, the keyring, file watches, shared
  futexes) and the kernel's attack surface.
- Per-user kernel quotas split per sandbox (:mod:`~arena.sandbox.quotas`).

The modules, one concern each: :mod:`~arena.sandbox.limits` (what a bot may
use), :mod:`~arena.sandbox.probe` (what the machine offers),
:mod:`~arena.sandbox.mounts` (what a bot sees), :mod:`~arena.sandbox.seccomp`
(what it may call), :mod:`~arena.sandbox.quotas` (per-user limits), :mod:`~arena.sandbox.cgroups`,
:mod:`~arena.sandbox.procfs` (the fallbacks from /proc) and
:mod:`~arena.sandbox.box` (:class:`Sandbox`, which ties them together;
:mod:`arena.match.process` spawns the command it builds).
"""

from arena.sandbox.box import Sandbox, describe_sandbox
from arena.sandbox.limits import SandboxLimits
from arena.sandbox.probe import Mechanisms, available
from arena.sandbox.procfs import die_with_parent

__all__ = ["Mechanisms", "Sandbox", "SandboxLimits", "available", "describe_sandbox", "die_with_parent"]
