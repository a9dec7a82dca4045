"""Containment: memory, processes, network, signals, files, hidden
information; degraded modes; nothing left behind."""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_process import FAST, LIMITS, TURN, leftovers, match_start, spec

import arena
import arena.sandbox as sandbox
import arena.sandbox.box as box_mod
from arena.botfile.spec import load_bot
from arena.errors import BotCrashed, BotFault, SandboxError
from arena.match.process import BotProcess, TimeControl
from arena.sandbox import Mechanisms, SandboxLimits, available, describe_sandbox, procfs
from arena.sandbox import cgroups as cgroups_mod

pytestmark = pytest.mark.sandbox  # run as root and as an unprivileged user in CI

MECH = available()
needs_bwrap = pytest.mark.skipif(MECH.bwrap is None, reason="bubblewrap is not installed")
needs_cgroups = pytest.mark.skipif(
    not MECH.cgroup("pids") or not MECH.cgroup("memory"), reason="no writable cgroup v1 pids/memory controllers"
)
REPO = Path(arena.__file__).resolve().parent.parent


def play(
    name: str, *, limits: SandboxLimits = LIMITS, time: TimeControl = FAST, **env: str
) -> tuple[dict[str, Any] | None, BotFault | None, BotProcess]:
    bot = BotProcess(spec(name, **env), limits, time)
    reply, fault = None, None
    try:
        bot.start()
        bot.notify(match_start())
        reply = bot.request(TURN)[0]
    except BotFault as exc:
        fault = exc
    finally:
        bot.close()
    assert leftovers(load_bot(Path(__file__).parent / "bots" / name).name) == []
    return reply, fault, bot


def cgroup_dirs(tag_part: str) -> list[str]:
    """Bot cgroups left in the v1 hierarchies or the unified one."""
    out = []
    v2 = [MECH.unified.parent] if MECH.unified and MECH.unified.parent else []
    for parent in [p for _, p in MECH.cgroups] + v2:
        out += [d for d in os.listdir(parent) if d.startswith("arena-") and tag_part in d]
    return out


@needs_cgroups
def test_unbounded_allocation_is_killed_at_the_memory_limit() -> None:
    _, fault, _ = play("alloc.py", limits=dataclasses.replace(LIMITS, memory_mb=96))
    assert isinstance(fault, BotCrashed)
    assert "memory limit of 96 MB" in fault.detail


@pytest.mark.skipif(
    MECH.bwrap is None or (MECH.root and not MECH.cgroup("pids")),
    reason="as root only a pids cgroup caps processes (RLIMIT_NPROC ignores uid 0)",
)
def test_fork_bomb_is_capped_and_cleaned_up() -> None:
    # play() checks that no forked child outlives close(); the autouse
    # fixture, that the bot's cgroups are gone.
    _, fault, bot = play("forker.py", limits=dataclasses.replace(LIMITS, processes=8))
    assert fault is not None and fault.kind == "timeout"


@needs_bwrap
def test_no_connection_reaches_a_local_listener() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        reply, fault, _ = play("netbot.py", ARENA_TEST_PORT=str(port))
        assert fault is None and reply is not None
        assert not any("connected" in r for r in reply["net"]), reply["net"]
        with pytest.raises(BlockingIOError):
            listener.accept()


@needs_bwrap
def test_signals_do_not_leave_the_sandbox() -> None:
    got: list[int] = []
    old = signal.signal(signal.SIGUSR1, lambda signum, frame: got.append(signum))
    try:
        reply, fault, _ = play("signaller.py", ARENA_TEST_TARGET=str(os.getpid()))
    finally:
        signal.signal(signal.SIGUSR1, old)
    assert fault is None and reply is not None
    assert got == []
    assert reply["ppid"] != os.getpid()  # it cannot even name its real parent


@needs_bwrap
def test_no_file_appears_outside_the_private_folder(tmp_path: Path) -> None:
    bots = Path(__file__).parent / "bots"
    targets = [
        REPO / "ESCAPED.txt",
        REPO / "arena" / "escaped.py",
        bots / "escaped.txt",
        tmp_path / "escaped.txt",
        Path("/tmp/arena-escaped.txt"),
        Path.home() / "escaped.txt",
    ]
    reply, fault, _ = play("writer.py", ARENA_TEST_PATHS=":".join(map(str, targets)))
    assert fault is None and reply is not None
    assert not any(r.endswith("written") and not r.startswith("/tmp/") for r in reply["writes"]), reply
    assert [t for t in targets if t.exists()] == []


@needs_bwrap
def test_run_configs_results_and_other_bots_are_unreadable(tmp_path: Path) -> None:
    """Hidden information stays hidden: the run seed lives in configs/ and results/."""
    secret = tmp_path / "results" / "run.json"
    secret.parent.mkdir()
    secret.write_text('{"seed": 42}')
    bots = Path(__file__).parent / "bots"
    paths = [
        secret,
        REPO / "pyproject.toml",
        REPO / "README.md",
        bots / "steady.py",
        bots / "reader.py",
        REPO / "arena" / "engine" / "rules.py",
    ]
    reply, fault, _ = play("reader.py", ARENA_TEST_PATHS=":".join(map(str, paths)))
    assert fault is None and reply is not None
    # Its own file and the arena package (public code) only.
    assert sorted(reply["readable"]) == sorted([str(bots / "reader.py"), str(REPO / "arena" / "engine" / "rules.py")])


@needs_cgroups
def test_cgroups_are_removed_on_close() -> None:
    bot = BotProcess(spec("steady.py"), LIMITS, FAST)
    bot.start()
    box = bot._box
    assert box is not None and box.cgroups
    paths = list(box.cgroups.paths.values())
    assert all(os.path.isdir(p) for p in paths)
    bot.close()
    assert not any(os.path.exists(p) for p in paths)


def test_strict_refuses_when_a_mechanism_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(box_mod, "available", lambda: Mechanisms(None, MECH.unshare, MECH.cgroups, MECH.root))
    with pytest.raises(SandboxError) as err:
        BotProcess(spec("steady.py"), SandboxLimits(mode="strict"), FAST).start()
    assert "bubblewrap" in str(err.value)


@needs_bwrap
@needs_cgroups
def test_strict_runs_when_everything_is_there() -> None:
    with BotProcess(spec("steady.py"), dataclasses.replace(LIMITS, mode="strict"), FAST) as bot:
        bot.start()
        bot.notify(match_start())
        assert bot.request(TURN)[0]["action"] == "dudo"


@pytest.mark.skipif(MECH.unshare is None, reason="no working unshare")
def test_degraded_unshare_mode_still_has_no_network(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(box_mod, "available", lambda: Mechanisms(None, MECH.unshare, MECH.cgroups, MECH.root))
    monkeypatch.setattr(box_mod, "_warned", set())
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        with caplog.at_level(logging.WARNING, logger="arena.sandbox"):
            reply, fault, bot = play("netbot.py", ARENA_TEST_PORT=str(listener.getsockname()[1]))
        assert fault is None and reply is not None
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert "bubblewrap" in caplog.text  # said once, loudly
    assert bot._box is not None and bot._box.workdir is None  # its private folder is gone


def test_off_mode_runs_a_plain_process() -> None:
    with BotProcess(spec("steady.py"), SandboxLimits(mode="off"), FAST) as bot:
        bot.start()
        bot.notify(match_start())
        reply, cpu = bot.request(TURN)
        assert reply["action"] == "dudo" and cpu >= 0
    assert "off" in describe_sandbox(SandboxLimits(mode="off"))


def test_describe_names_the_mechanisms() -> None:
    line = describe_sandbox(SandboxLimits())
    assert ("bwrap" in line) == (MECH.bwrap is not None)
    assert "\n" not in line


@pytest.mark.parametrize(
    "bad", [{"mode": "loose"}, {"memory_mb": 0}, {"processes": 2}, {"open_files": 3}, {"output_bytes": -1}]
)
def test_limits_are_validated(bad: dict[str, Any]) -> None:
    with pytest.raises(SandboxError):
        SandboxLimits(**bad)


def test_environment_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_SECRET_TOKEN", "hunter2")
    box = sandbox.Sandbox(spec("steady.py"), LIMITS)
    env = box.env("/tmp")
    assert "ARENA_SECRET_TOKEN" not in env and env["HOME"] == "/tmp"
    assert set(env) <= {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "ARENA_BOT",
        "PYTHONPATH",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "PYTHONIOENCODING",
        "ARENA_TEST_OWNER",
    }  # the last: the spec's own env, from spec()


@pytest.fixture(autouse=True)
def _no_stray_cgroups() -> Iterator[None]:
    yield
    assert cgroup_dirs(f"arena-{os.getpid()}-") == []


def test_without_cgroups_cpu_time_comes_from_proc(monkeypatch: pytest.MonkeyPatch) -> None:
    """No writable cgroups (no root, cgroup v2 only): the CPU budget still holds."""
    monkeypatch.setattr(box_mod, "available", lambda: Mechanisms(MECH.bwrap, MECH.unshare, (), MECH.root))
    monkeypatch.setattr(box_mod, "_warned", set())
    with BotProcess(spec("steady.py"), LIMITS, FAST) as bot:
        bot.start()
        bot.notify(match_start())
        assert bot.request(TURN)[0]["action"] == "dudo"
        assert bot._box is not None and not bot._box.cgroups
    _, fault, _ = play("spin.py")
    assert fault is not None and fault.kind == "timeout" and "CPU time" in fault.detail


def test_user_task_count_sees_this_process() -> None:
    # The base of RLIMIT_NPROC without a pids cgroup: at least this process's threads.
    assert procfs.user_tasks(os.geteuid()) >= len(os.listdir("/proc/self/task"))


def test_a_later_run_ends_what_a_killed_referee_left_in_its_cgroups() -> None:
    """What survives a referee killed outright (bwrap's outer process) is ended
    by the sweep every later run makes of dead referees' cgroups."""
    import subprocess

    parents = dict(MECH.cgroups)
    if "pids" not in parents:
        pytest.skip("no writable pids cgroup on this machine")
    dead = subprocess.Popen(["true"])
    dead.wait()
    group = os.path.join(parents["pids"], f"arena-{dead.pid}-1-leftover")
    os.mkdir(group)
    left = subprocess.Popen(["sleep", "1000"])
    try:
        with open(os.path.join(group, "cgroup.procs"), "w") as f:
            f.write(str(left.pid))
        cgroups_mod.reap_stale(MECH.cgroups)
        assert left.wait(timeout=5) == -9
        assert not os.path.exists(group)
    finally:
        if left.poll() is None:
            left.kill()
