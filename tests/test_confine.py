"""Confinement that must hold as root and as an unprivileged user alike: the
writable tmpfs mounts hold no more than the memory limit, one bot's fork bomb
cannot stop another bot from starting (and is the only one blamed), nothing
a bot writes outlives it, and the host's keyring is out of reach."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_process import BOTS, LIMITS, TURN, leftovers, match_start, spec

from arena.botfile.spec import load_bot
from arena.errors import BotCrashed, RunError, SandboxError
from arena.match.process import BotProcess, TimeControl
from arena.running.config import load_config
from arena.running.runner import preflight
from arena.sandbox import SandboxLimits, available, mounts, quotas

pytestmark = pytest.mark.sandbox  # run as root and as an unprivileged user in CI

MECH = available()
ROOT = os.geteuid() == 0
REPO = Path(__file__).resolve().parent.parent
needs_bwrap = pytest.mark.skipif(MECH.bwrap is None, reason="bubblewrap is not installed")
needs_root = pytest.mark.skipif(not ROOT, reason="root only: it is about root's own keyring")


def one_turn(
    name: str, limits: SandboxLimits, time: TimeControl, **env: str
) -> tuple[dict | None, Exception | None, str]:
    bot = BotProcess(spec(name, **env), limits, time)
    reply, fault = None, None
    try:
        bot.start()
        bot.notify(match_start())
        reply = bot.request({**TURN, "time_ms": time.budget_ms})[0]
    except BotCrashed as exc:
        fault = exc
    finally:
        bot.close()
    assert leftovers(load_bot(BOTS / name).name) == []
    return reply, fault, bot.stderr_tail()


@needs_bwrap
def test_tmpfs_mounts_hold_no_more_than_the_memory_limit() -> None:
    """1.5 GB into /dev/shm, /tmp and /dev with a 512 MB limit: the sized
    tmpfs mounts say no (or, with a memory cgroup, the kernel kills the bot
    for memory first); /dev itself is read-only. Without a memory cgroup
    (non-root) the sizes are the only bound on what files hold."""
    limits = dataclasses.replace(LIMITS, memory_mb=512)
    slow = TimeControl(budget_ms=60000, wall_factor=2.0, hello_ms=10000, grace_ms=200)
    reply, fault, tail = one_turn("filler.py", limits, slow)
    written: dict[str, int] = {}
    for m in re.finditer(r"^(?:filled|stopped) (\S+) (\d+)", tail, re.M):
        written[m.group(1)] = max(written.get(m.group(1), 0), int(m.group(2)))
    assert "/dev/shm" in written, tail  # it did try
    assert sum(written.values()) <= 512 << 20, written
    assert written.get("/dev", 0) == 0
    sizes = mounts.tmpfs_sizes(limits)
    if reply is not None:  # every place said no before the memory cgroup (if any) did
        filled = reply["filled"]
        assert filled["/dev/shm"] == [sizes["/dev/shm"], "No space left on device"]
        assert filled["/tmp"][1] == "No space left on device" and filled["/tmp"][0] <= sizes["/tmp"]
        assert filled["/dev"] == [0, "Read-only file system"]
    else:
        assert MECH.cgroup("memory") and fault is not None and "memory limit of 512 MB" in str(fault)


def test_tmpfs_sizes_add_up_to_the_memory_limit() -> None:
    for mb in (64, 512, 4096):
        sizes = mounts.tmpfs_sizes(SandboxLimits(memory_mb=mb))
        assert sum(sizes.values()) == mb << 20 and all(v > 0 for v in sizes.values())


def running(path: Path) -> list[int]:
    """Live processes whose command line names ``path`` (this checkout's bot file)."""
    found = []
    for d in os.listdir("/proc"):
        try:
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().split(b"\0") if d.isdigit() else []
            state = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[0] if cmd else "Z"
        except OSError:
            continue
        if str(path).encode() in cmd and state != "Z":
            found.append(int(d))
    return found


def bomb_config(tmp_path: Path) -> Path:
    """A config: the fork bomb and five honest bots (Python, and Node where installed)."""
    honest = [str(REPO / "bots" / f"{b}.py") for b in ("random", "probabilistic", "cautious", "bluffer", "calza")]
    cfg = tmp_path / "bomb.yaml"
    cfg.write_text(
        textwrap.dedent(f"""\
        name: bomb
        bots: [{", ".join([str(BOTS / "import_bomb.py"), *honest])}]
        players: 4
        matches: 4
        out: {tmp_path / "results"}
        time: {{budget_ms: 1000, hello_ms: 4000}}
        sandbox: {{memory_mb: 256}}
        """)
    )
    return cfg


@needs_bwrap
@pytest.mark.slow
def test_a_fork_bomb_at_import_blames_only_the_bomber(tmp_path: Path) -> None:
    """Six preflights, each with a bot that fork-bombs while it is imported,
    started at the same moment as five honest bots: every time, the run is
    refused naming the bomber and no one else. (Without a pids cgroup, as an
    unprivileged user, the bomber used to exhaust the user's process allowance
    so that the others' bwrap could not start, and the run blamed them.)"""
    config = load_config(bomb_config(tmp_path))
    for attempt in range(6):
        with pytest.raises(RunError) as err:
            preflight(config)
        msg = str(err.value)
        named = set(re.findall(r"bots: (\w+) \(", msg))
        assert named == {"import_bomb"}, f"attempt {attempt}: {msg}"
        assert running(BOTS / "import_bomb.py") == []


@needs_bwrap
def test_nothing_a_bot_writes_outlives_it() -> None:
    """Every writable place inside is a tmpfs of the sandbox's own: a second
    process of the same bot finds none of the first one's files."""
    first, _, _ = one_turn("persist.py", LIMITS, TimeControl(hello_ms=10000))
    second, _, _ = one_turn("persist.py", LIMITS, TimeControl(hello_ms=10000))
    assert first is not None and second is not None
    assert first["wrote"] and not first["found"], first
    assert second["found"] == [], second  # what the first wrote is gone
    assert all(w == "sysv shm" or w.startswith(("/tmp/", "/dev/shm/")) for w in first["wrote"]), first
    assert not (BOTS / "arena-persist-marker").exists()


def host_keys() -> str:
    try:
        return Path("/proc/keys").read_text()
    except OSError:
        return ""


@needs_bwrap
@needs_root
def test_the_host_keyring_is_out_of_reach_as_root() -> None:
    """As root, the sandbox's user is root outside, whose user keyring is the
    whole machine's: the bot's add_key and keyctl fail, nothing appears in the
    host's /proc/keys, and the sandbox's /proc/keys shows nothing of the host's."""
    marker = f"arena-keyring-{os.getpid()}"
    before = host_keys()
    reply, fault, _ = one_turn("keyring.py", LIMITS, TimeControl(hello_ms=10000), ARENA_TEST_KEY=marker)
    assert fault is None and reply is not None
    assert set(reply["add_key"].values()) == {"EPERM"}, reply  # every keyring it tried
    assert reply["keyctl"] == "EPERM"
    assert reply["proc_keys"] in ("unreadable", "empty"), reply
    after = host_keys()
    assert marker not in after and marker not in before
    # A key the host holds (this test's own, in root's user keyring) is not visible inside either.
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    key = libc.syscall(248, b"user", f"{marker}-host".encode(), b"x", ctypes.c_size_t(1), ctypes.c_long(-4))
    assert key > 0, os.strerror(ctypes.get_errno())
    try:
        assert f"{marker}-host" in host_keys()
        reply, _, _ = one_turn("keyring.py", LIMITS, TimeControl(hello_ms=10000), ARENA_TEST_KEY=marker)
        assert reply is not None and f"{marker}-host" not in str(reply)
    finally:
        assert libc.syscall(250, 21, ctypes.c_long(key)) == 0  # KEYCTL_INVALIDATE: gone at the next key GC


def test_without_bubblewrap_the_missing_filter_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.sandbox.box as box_mod
    from arena.sandbox import Mechanisms

    monkeypatch.setattr(box_mod, "available", lambda: Mechanisms(None, MECH.unshare, MECH.cgroups, MECH.root))
    assert any("system-call filter" in m for m in box_mod._filter_missing(box_mod.available()))
    with pytest.raises(SandboxError) as err:
        BotProcess(spec("steady.py"), SandboxLimits(mode="strict"), TimeControl()).start()
    assert "system-call filter" in str(err.value)


@pytest.mark.skipif(
    MECH.bwrap is None or (ROOT and not MECH.cgroup("pids")),
    reason="as root only a pids cgroup caps processes (RLIMIT_NPROC ignores uid 0)",
)
def test_process_cap_counts_only_the_sandboxs_own_tasks() -> None:
    """The bot gets exactly its allowance of processes, however many tasks the
    user runs elsewhere: the pids cgroup where there is one, and otherwise (an
    unprivileged user) RLIMIT_NPROC set inside the bot's own user namespace,
    which counts the same tasks."""
    held = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) for _ in range(20)]
    try:
        limits = dataclasses.replace(LIMITS, processes=10)
        reply, fault, tail = one_turn("counter.py", limits, TimeControl(budget_ms=10000, hello_ms=10000))
    finally:
        for p in held:
            p.kill()
            p.wait()
    assert fault is None and reply is not None, tail
    # processes=10: the outer bwrap, bwrap's init inside, the bot, and 7 children.
    assert reply["forked"] == 7, reply


@needs_bwrap
def test_per_user_quotas_are_counted_per_sandbox() -> None:
    """Two copies of a bot that takes all it can of the user's queued-signal
    and message-queue quotas, the first holding its share while the second
    tries: both get the same. As one plain per-user limit the second would get
    nothing (a signal between sandboxes, or a start-up failure)."""
    limits = dataclasses.replace(LIMITS, open_files=2048)
    time = TimeControl(budget_ms=20000, hello_ms=10000)
    first, second = BotProcess(spec("quota_hog.py"), limits, time), BotProcess(spec("quota_hog.py"), limits, time)
    try:
        replies = []
        for bot in (first, second):  # the first still holds all it got while the second tries
            bot.start()
            bot.notify(match_start())
            replies.append(bot.request({**TURN, "time_ms": 20000})[0])
    finally:
        first.close()
        second.close()
    a, b = replies
    share = int(quotas.inside(limits, root=ROOT, pids_cgroup=True)[0].split(":")[1])  # --sigpending=N:N
    assert a["signals"] == b["signals"] == share, (a, b)
    assert a["queues"] == b["queues"] > 0, (a, b)
    assert leftovers("quota_hog") == []
