"""The system-call filter: every denied call fails with its listed error on
every ABI (and would not without the filter), the calls runtimes need still
work, and Python, Node, the JVM and a compiled C bot run under it."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_process import BOTS, LIMITS, TURN, leftovers, match_start, spec

import arena.sandbox.box as box_mod
from arena.botfile.spec import load_bot
from arena.match.process import BotProcess, TimeControl
from arena.sandbox import Sandbox, SandboxLimits, available, seccomp
from arena.sandbox import view as fileview

pytestmark = pytest.mark.sandbox  # run as root and as an unprivileged user in CI

MECH = available()
REPO = Path(__file__).resolve().parent.parent
needs_filter = pytest.mark.skipif(
    MECH.bwrap is None or seccomp.unavailable() is not None,
    reason=f"no bubblewrap or no libseccomp: {seccomp.unavailable()}",
)
x86_64 = pytest.mark.skipif(
    subprocess.run(["uname", "-m"], capture_output=True, text=True).stdout.strip() != "x86_64",
    reason="the raw probes use x86_64 system-call numbers",
)
SLOW = TimeControl(budget_ms=20000, wall_factor=3.0, hello_ms=20000, grace_ms=200)

# What each probe of tests/bots/syscalls.py must return under the filter.
EXPECTED = {
    "add_key": "EPERM",
    "request_key": "EPERM",
    "keyctl": "EPERM",
    # Taking a lock "succeeds" without reaching the kernel; asking fails.
    "flock": "ok",
    "fcntl F_SETLK": "ok",
    "fcntl F_SETLKW": "ok",
    "fcntl F_OFD_SETLK": "ok",
    "fcntl F_OFD_SETLKW": "ok",
    "fcntl F_SETLK high bits": "ok",
    "locks held on /etc/passwd": "none",
    "fcntl F_GETLK": "EPERM",
    "fcntl F_OFD_GETLK": "EPERM",
    "fcntl F_GETLEASE": "EPERM",
    "fcntl F_SETLEASE": "EPERM",
    "fcntl F_NOTIFY": "EPERM",
    "inotify_init": "EPERM",
    "inotify_init1": "EPERM",
    "inotify_add_watch": "EPERM",
    "fanotify_init": "EPERM",
    "fanotify_mark": "EPERM",
    "ptrace": "EPERM",
    "process_vm_readv": "EPERM",
    "process_vm_writev": "EPERM",
    "process_madvise": "EPERM",
    "kcmp": "EPERM",
    "pidfd_getfd": "EPERM",
    "unshare": "EPERM",
    "setns": "EPERM",
    **{
        f"clone {f}": "EPERM"
        for f in (
            "CLONE_NEWNS",
            "CLONE_NEWCGROUP",
            "CLONE_NEWUTS",
            "CLONE_NEWIPC",
            "CLONE_NEWUSER",
            "CLONE_NEWPID",
            "CLONE_NEWNET",
        )
    },
    "clone plain": "EINVAL",  # allowed: the kernel's own answer to the deliberately bad flags
    "clone3": "ENOSYS",
    "mount": "EPERM",
    "umount2": "EPERM",
    "pivot_root": "EPERM",
    "chroot": "EPERM",
    **{n: "ENOSYS" for n in ("fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr")},
    "name_to_handle_at": "EPERM",
    "open_by_handle_at": "EPERM",
    "bpf": "EPERM",
    "perf_event_open": "EPERM",
    "userfaultfd": "EPERM",
    "io_uring_setup": "ENOSYS",
    "io_uring_enter": "ENOSYS",
    "io_uring_register": "ENOSYS",
    **{
        n: "EPERM"
        for n in (
            "init_module",
            "finit_module",
            "delete_module",
            "kexec_load",
            "kexec_file_load",
            "reboot",
            "acct",
            "swapon",
            "swapoff",
            "quotactl",
            "quotactl_fd",
            "syslog",
            "iopl",
            "ioperm",
            "uselib",
            "ustat",
            "sysfs",
            "settimeofday",
            "clock_settime",
            "clock_adjtime",
            "adjtimex",
            "modify_ldt",
            "migrate_pages",
            "move_pages",
        )
    },
    "personality query": "EPERM",
    "personality ADDR_NO_RANDOMIZE": "EPERM",
    "personality PER_LINUX": "ok",
    **{f"socket {f}": "EAFNOSUPPORT" for f in ("AF_VSOCK", "AF_PACKET", "AF_ALG", "AF_APPLETALK", "AF_KEY")},
    **{f"socket {f}": "ok" for f in ("AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK")},
    "socket AF_UNIX high bits": "EAFNOSUPPORT",  # the filter compares all 64 bits: any junk is refused
    "ioctl TIOCSTI": "EPERM",
    "ioctl TIOCLINUX": "EPERM",
    "fcntl F_GETFD": "ok",
    "i386: keyctl": "EPERM",
    "i386: flock": "ok",
    "i386: fcntl64 F_NOTIFY": "EPERM",
    "i386: inotify_init": "EPERM",
    "i386: unshare": "EPERM",
    "i386: getpid": "ok",
    "x32: keyctl": "EPERM",
    "futex FUTEX_WAIT shared": "EAGAIN",
    "futex FUTEX_WAIT_BITSET shared": "EAGAIN",
    "futex FUTEX_WAIT private": "ETIMEDOUT",  # allowed: the kernel's own timeout
    "futex_waitv": "ENOSYS",
    # The page cache of shared files: exact probes fail, hints are "done" and reach nothing.
    "preadv2 RWF_NOWAIT": "ENOTSUP",
    "preadv2 RWF_NOWAIT in the 5th argument": "ENOTSUP",
    "preadv2 plain": "ok",
    "pwritev2 RWF_NOWAIT": "ENOTSUP",
    "mincore": "ENOSYS",
    "cachestat": "ENOSYS",
    **{f"fadvise64 POSIX_FADV_{a}": "ok" for a in ("WILLNEED", "DONTNEED", "RANDOM")},
    "readahead": "ok",
    **{f"madvise MADV_{a}": "ok" for a in ("WILLNEED", "COLD", "PAGEOUT")},
    **{f"madvise MADV_{a}": "EINVAL" for a in ("POPULATE_READ", "POPULATE_WRITE", "COLLAPSE", "MERGEABLE")},
    **{f"madvise MADV_{a}": "ok" for a in ("DONTNEED", "FREE", "NOHUGEPAGE")},  # allowed: malloc's advice
    "prctl PR_SET_MEMORY_MERGE": "EINVAL",
    "i386: fadvise64_64": "ok",
    "i386: fadvise64": "ok",
    "i386: readahead": "ok",
    "i386: mincore": "ENOSYS",
    "i386: madvise MADV_PAGEOUT": "ok",
    "i386: cachestat": "ENOSYS",
    "x32: preadv2 RWF_NOWAIT": "ENOTSUP",
}
# Probes the kernel itself answers differently without the filter, here: the
# channels and calls the filter is what stops (the rest the kernel refuses too,
# for want of capabilities, and the filter is the second wall).
CLOSED_BY_FILTER = {
    "add_key",
    "keyctl",
    "locks held on /etc/passwd",
    "fcntl F_GETLK",
    "fcntl F_OFD_GETLK",
    "fcntl F_GETLEASE",
    "fcntl F_NOTIFY",
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "fanotify_init",
    "unshare",
    "clone CLONE_NEWUSER",
    "clone3",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "personality query",
    "modify_ldt",
    "socket AF_VSOCK",
    "i386: keyctl",
    "i386: fcntl64 F_NOTIFY",
    "i386: inotify_init",
    "i386: unshare",
    "x32: keyctl",
    "futex FUTEX_WAIT shared",
    "futex FUTEX_WAIT_BITSET shared",
    "futex_waitv",
    "preadv2 RWF_NOWAIT",
    "preadv2 RWF_NOWAIT in the 5th argument",
    "pwritev2 RWF_NOWAIT",
    "mincore",
    "cachestat",
    "fadvise64 POSIX_FADV_WILLNEED",
    "fadvise64 POSIX_FADV_DONTNEED",
    "fadvise64 POSIX_FADV_RANDOM",
    "readahead",
    "madvise MADV_WILLNEED",
    "madvise MADV_COLD",
    "madvise MADV_PAGEOUT",
    "madvise MADV_POPULATE_READ",
    "madvise MADV_POPULATE_WRITE",
    "madvise MADV_COLLAPSE",
    "madvise MADV_MERGEABLE",
    "prctl PR_SET_MEMORY_MERGE",
    "i386: fadvise64_64",
    "i386: fadvise64",
    "i386: readahead",
    "i386: mincore",
    "i386: madvise MADV_PAGEOUT",
    "i386: cachestat",
    "x32: preadv2 RWF_NOWAIT",
}


def probe() -> dict[str, Any]:
    with BotProcess(spec("syscalls.py"), LIMITS, SLOW) as bot:
        bot.start()
        bot.notify(match_start())
        reply = bot.request({**TURN, "time_ms": 20000})[0]
    assert leftovers("syscalls") == []
    return reply


@needs_filter
@x86_64
def test_every_denied_call_fails_with_its_error_and_only_because_of_the_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    filtered = probe()
    assert filtered["seccomp"] == "2" and filtered["no_new_privs"] == "1"
    assert filtered["probes"] == EXPECTED
    # The same bot in the same sandbox without the filter: each of these gets through. The host's own
    # files are bound for it, as before the file view: on the view's tmpfs the kernel itself has no
    # non-blocking reads (RWF_NOWAIT is EOPNOTSUPP there), which would hide what the filter does.
    monkeypatch.setattr(box_mod.seccomp, "unavailable", lambda: "turned off by the test")
    monkeypatch.setattr(box_mod, "_warned", {"turned off by the test"})
    monkeypatch.setattr(fileview, "unavailable", lambda: "turned off by the test")
    unfiltered = probe()
    assert unfiltered["seccomp"] == "0"
    got_through = {k for k in CLOSED_BY_FILTER if unfiltered["probes"][k] != EXPECTED[k]}
    assert got_through == CLOSED_BY_FILTER, {k: unfiltered["probes"][k] for k in CLOSED_BY_FILTER - got_through}


def test_every_entry_is_documented() -> None:
    """docs/sandbox.md's table names every denied call, and nothing the filter lacks."""
    text = (REPO / "docs" / "sandbox.md").read_text()
    table = text[text.index("## The system-call filter") :]
    table = table[: table.index("\n## ", 5)]
    documented = set(re.findall(r"`([a-z0-9_]+)`", table))
    denied = {d.syscall for d in seccomp.DENY}
    assert denied <= documented, denied - documented


@needs_filter
def test_the_filter_is_built_once_and_is_small() -> None:
    prog = seccomp.program()
    assert prog is seccomp.program()
    assert len(prog) % 8 == 0 and 0 < len(prog) <= 65536


@needs_filter
def test_an_honest_python_bot_using_the_stdlib_works() -> None:
    with BotProcess(spec("honest_runtime.py"), dataclasses.replace(LIMITS, memory_mb=256), SLOW) as bot:
        bot.start()
        bot.notify(match_start())
        reply = bot.request({**TURN, "time_ms": 20000})[0]
    assert reply["ok"] == {k: True for k in reply["ok"]} and len(reply["ok"]) == 8, reply


def run_sandboxed(argv: list[str], limits: SandboxLimits, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``argv`` as a program bot, in the full sandbox, to completion (not a protocol bot)."""
    manifest = tmp_path / "probe.yaml"
    manifest.write_text("command: [" + ", ".join(argv) + "]\n")
    box = Sandbox(load_bot(manifest), limits)
    try:
        cmd, env, cwd = box.command()
        return subprocess.run(
            cmd,
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=60,
            pass_fds=box.pass_fds,
            preexec_fn=box.preexec(),
            start_new_session=True,
        )
    finally:
        box.cleanup()


def program_bot(manifest: Path, limits: SandboxLimits) -> tuple[dict[str, Any], dict[str, Any], str]:
    with BotProcess(load_bot(manifest), limits, SLOW) as bot:
        ready = bot.start()
        bot.notify(match_start())
        reply = bot.request({**TURN, "time_ms": 20000})[0]
        return ready, reply, bot.stderr_tail()


# The JVM starts about 20 threads, and reserves address space by the GB
# (which RLIMIT_AS counts where there is no memory cgroup): the limits and
# heap flags a JVM bot needs.
JVM_LIMITS = SandboxLimits(memory_mb=1024, processes=64)
JVM_FLAGS = [
    "-Xmx64m",
    "-Xss512k",
    "-XX:ReservedCodeCacheSize=32m",
    "-XX:CompressedClassSpaceSize=64m",
    "-XX:MaxMetaspaceSize=64m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
]
needs_java = pytest.mark.skipif(
    shutil.which("java") is None or shutil.which("javac") is None,
    reason="no JDK (java and javac); CI installs default-jdk-headless",
)


@needs_filter
@needs_java
def test_java_version_runs_under_the_filter(tmp_path: Path) -> None:
    done = run_sandboxed(["java", *JVM_FLAGS, "-version"], JVM_LIMITS, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "version" in done.stderr and "warning" not in done.stderr.lower() + done.stdout.lower(), done


@needs_filter
@needs_java
def test_a_java_bot_plays_under_the_filter(tmp_path: Path) -> None:
    classes = tmp_path / "javabot"  # the bot's own folder, named after its manifest
    classes.mkdir()
    subprocess.run(["javac", "-d", str(classes), str(BOTS / "javabot" / "Dudo.java")], check=True)
    manifest = tmp_path / "javabot.yaml"
    manifest.write_text(f"command: [java, {', '.join(JVM_FLAGS)}, -cp, ./javabot, Dudo]\n")
    ready, reply, tail = program_bot(manifest, JVM_LIMITS)
    assert ready["name"] == "javabot" and reply == {"action": "dudo"}, tail


@needs_filter
@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed; CI installs nodejs")
def test_the_node_bot_plays_under_the_filter() -> None:
    # 2 GB: where no memory cgroup counts resident memory (non-root), RLIMIT_AS
    # counts V8's reservations, and 512 MB is too little for them.
    limits = dataclasses.replace(LIMITS, memory_mb=2048)
    ready, reply, tail = program_bot(REPO / "bots" / "node_probabilistic.yaml", limits)
    assert ready["type"] == "ready" and reply.get("action") in ("bid", "dudo", "calza"), (reply, tail)


@needs_filter
@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler; CI installs gcc")
def test_a_compiled_c_bot_plays_under_the_filter(tmp_path: Path) -> None:
    (tmp_path / "cbot").mkdir()
    exe = tmp_path / "cbot" / "cbot"
    subprocess.run(["gcc", "-O1", "-pthread", "-o", str(exe), str(BOTS / "cbot.c")], check=True)
    manifest = tmp_path / "cbot.yaml"
    manifest.write_text("command: [./cbot/cbot]\n")
    ready, reply, tail = program_bot(manifest, LIMITS)
    assert ready["name"] == "cbot" and reply == {"action": "dudo"}, tail
