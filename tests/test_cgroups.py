"""The cgroup layer on v1, v2 and the hybrid (arena/sandbox/cgroups.py): which
mechanism does which job, exact CPU time from cpu.stat, freezing, cgroup.kill
for escaped processes, the v2 limits where the controllers can be enabled, and
no cgroup left behind by a dead referee, in either hierarchy."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_process import FAST, LIMITS, TURN, leftovers, match_start, spec

import arena.sandbox.box as box_mod
from arena.errors import BotCrashed, BotFault, SandboxError
from arena.match.process import BotProcess, TimeControl
from arena.sandbox import Mechanisms, SandboxLimits, available, describe_sandbox
from arena.sandbox import cgroups as cg
from arena.sandbox.cgroups import PREFER_ENV

pytestmark = pytest.mark.sandbox  # run as root and as an unprivileged user in CI

MECH = available()
V2 = MECH.unified.parent if MECH.unified else None


def plan_for(prefer: str) -> cg.Plan:
    return cg.plan(MECH.cgroups, MECH.unified, prefer)


def needs_v2(job: str) -> pytest.MarkDecorator:
    """Skip unless cgroup v2 does ``job`` here, saying plainly why not."""
    p = plan_for("v2")
    if V2 is None:
        why = "no cgroup2 mount we may create cgroups in" + (f" ({MECH.unified.why})" if MECH.unified else "")
    elif job in ("memory", "pids"):
        offered = Path(V2, "cgroup.controllers").read_text().split()
        why = (
            f"the {job} controller is not offered to cgroup v2 here ({os.path.join(V2, 'cgroup.controllers')}: "
            f"{' '.join(offered) or 'none'}): a controller is bound to one hierarchy, and on this "
            f"machine {job} is mounted as cgroup v1"
            if job not in offered
            else f"the {job} controller could not be enabled: {MECH.unified.why}"
        )  # type: ignore[union-attr]
    else:
        why = f"this kernel's cgroup v2 has no {'cgroup.kill' if job == 'kill' else job}"
    return pytest.mark.skipif(getattr(p, job) != "v2", reason=why)


@pytest.fixture(autouse=True)
def _no_stray_cgroups() -> Iterator[None]:
    yield
    mine = f"arena-{os.getpid()}-"
    for parent in [p for _, p in MECH.cgroups] + ([V2] if V2 else []):
        assert [d for d in os.listdir(parent) if d.startswith(mine)] == [], parent


def test_the_plan_gives_each_job_to_one_mechanism() -> None:
    auto, v2, v1 = plan_for("auto"), plan_for("v2"), plan_for("v1")
    assert v1.v2 is None and v1.kill in ("signals", None)  # v1: no unified cgroup at all
    if V2 and MECH.unified and MECH.unified.freeze:
        assert auto.freeze == v2.freeze == "v2"  # 7x cheaper than the v1 freezer (NOTES)
        assert v2.cpu == "v2" and v2.v2 == V2
        assert "cpuacct" not in dict(v2.v1) and "freezer" not in dict(v2.v1)
    if MECH.cgroup("cpuacct"):
        assert auto.cpu == "v1"
    if MECH.cgroup("freezer"):
        assert v1.freeze == "v1"
    with pytest.raises(SandboxError, match=PREFER_ENV):
        cg.plan(MECH.cgroups, MECH.unified, "v3")


def test_the_one_line_says_which_mechanism_does_what(monkeypatch: pytest.MonkeyPatch) -> None:
    line = describe_sandbox(SandboxLimits())
    for label in ("CPU time:", "freezing:", "killing:", "memory:", "processes:"):
        assert label in line
    monkeypatch.setenv(PREFER_ENV, "v2")
    if plan_for("v2").cpu == "v2":
        assert "CPU time: cgroup v2 cpu.stat" in describe_sandbox(SandboxLimits())


@needs_v2("cpu")
def test_cpu_budget_from_cpu_stat_is_exact_to_the_microsecond(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PREFER_ENV, "v2")
    with BotProcess(spec("steady.py"), LIMITS, FAST) as bot:
        bot.start()
        bot.notify(match_start())
        box = bot._box
        assert box is not None and box.cgroups.plan.cpu == "v2"
        since = bot._mark  # the budget counts from the bot's previous reply (here: ready)
        _, cpu = bot.request(TURN)
        after = bot._mark
        assert round(cpu * 1e9) == after - since > 0 and since % 1000 == 0
        for _ in range(500):  # once the freeze has taken hold, the counter stands still
            if box.frozen():
                break
            time.sleep(0.002)
        now = box.cpu_ns()
        # The counter the budget reads is cpu.stat's usage_usec, exactly.
        with open(os.path.join(box.cgroups.paths[cg.V2], "cpu.stat")) as f:
            usage = int(f.readline().split()[1])
        assert now == usage * 1000
        assert 0 <= now - after < 1_000_000  # the freeze's own tail, charged to the next decision
    _, fault = spin_once()
    assert fault is not None and fault.kind == "timeout" and "CPU time" in fault.detail


# The CPU budget must trip before the wall-clock cap even on a loaded machine,
# where a spinning bot may get an eighth of a core: a wide wall factor.
SPIN = TimeControl(budget_ms=FAST.budget_ms, wall_factor=20.0, hello_ms=FAST.hello_ms, grace_ms=FAST.grace_ms)


def spin_once() -> tuple[object, BotFault | None]:
    bot = BotProcess(spec("spin.py"), LIMITS, SPIN)
    try:
        bot.start()
        bot.notify(match_start())
        return bot.request(TURN), None
    except BotFault as exc:
        return None, exc
    finally:
        bot.close()


@pytest.mark.parametrize("prefer", ["v2", "v1"])
def test_a_bot_is_frozen_between_turns_and_thawed_to_close(prefer: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if not plan_for(prefer).has("freeze") or plan_for(prefer).freeze != prefer:
        pytest.skip(f"no {prefer} freezer here")
    monkeypatch.setenv(PREFER_ENV, prefer)
    bot = BotProcess(spec("steady.py"), LIMITS, FAST)
    try:
        bot.start()
        box = bot._box
        assert box is not None and box.can_freeze
        assert wait_frozen(box)  # after the handshake
        bot.notify(match_start())  # queued in the pipe, read when it next runs
        assert bot.request(TURN)[0]["turns"] == 1
        assert wait_frozen(box)  # after the reply
        # Only the bot's own processes are frozen per turn; bwrap's two wait outside.
        inner = box.cgroups._target
        assert inner is not None and os.path.basename(inner) == "bot"
        frozen = {int(p) for p in Path(inner, "cgroup.procs").read_text().split()}
        outer = {int(p) for p in Path(os.path.dirname(inner), "cgroup.procs").read_text().split()}
        if MECH.bwrap:
            assert len(outer) == 2 and bot.pid in outer and bot.pid not in frozen
        assert frozen and not frozen & outer
    finally:
        bot.close()  # thawed, it reads EOF and exits within the grace
    assert bot._proc is not None and bot._proc.returncode == 0


def wait_frozen(box: object) -> bool:
    for _ in range(500):  # asynchronous: the tasks stop a moment after the write
        if box.frozen():  # type: ignore[attr-defined]
            return True
        time.sleep(0.002)
    return False


@needs_v2("kill")
def test_closing_kills_escaped_and_frozen_processes_through_cgroup_kill(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without namespaces nothing but the cgroup holds a double-forked daemon
    in its own session. No signal is sent by the referee here (os.kill is
    stubbed out): cgroup.kill alone ends them, frozen as they are."""
    monkeypatch.setenv(PREFER_ENV, "v2")
    monkeypatch.setattr(box_mod, "available", lambda: Mechanisms(None, None, MECH.cgroups, MECH.root, MECH.unified))
    monkeypatch.setattr(box_mod, "_warned", set())
    bot = BotProcess(spec("escaper.py"), LIMITS, FAST)
    try:
        bot.start()
        bot.notify(match_start())
        reply, _ = bot.request(TURN)
        escaped = reply["escaped"]
        assert len(escaped) == 3 and all(os.path.exists(f"/proc/{p}") for p in escaped)
        box = bot._box
        assert box is not None
        from arena.sandbox import procfs

        assert not set(escaped) & set(procfs.proc_tree(bot._proc.pid))  # type: ignore[union-attr]
        sent: list[int] = []
        monkeypatch.setattr(cg.os, "kill", lambda pid, sig: sent.append(pid))
        box.freeze()
        box.kill_all()
        assert sent == []
        for _ in range(200):  # out of the cgroup, a killed task may take a moment more to finish exiting
            if all(procfs.gone(p) for p in escaped):
                break
            time.sleep(0.005)
        assert all(procfs.gone(p) for p in escaped)
    finally:
        monkeypatch.undo()
        bot.close()
    assert leftovers("escaper") == []


@needs_v2("memory")
def test_v2_memory_limit_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PREFER_ENV, "v2")
    bot = BotProcess(spec("alloc.py"), dataclasses.replace(LIMITS, memory_mb=96), FAST)
    with pytest.raises(BotCrashed, match="memory limit of 96 MB"):
        try:
            bot.start()
            bot.notify(match_start())
            bot.request(TURN)
        finally:
            bot.close()


@needs_v2("pids")
def test_v2_process_cap_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PREFER_ENV, "v2")
    bot = BotProcess(spec("forker.py"), dataclasses.replace(LIMITS, processes=8), FAST)
    try:
        bot.start()
        bot.notify(match_start())
        with pytest.raises(BotFault):
            bot.request(TURN)
        assert bot._box is not None and bot._box.pids_capped()
    finally:
        bot.close()
    assert leftovers("forker") == []


def _dead_pid() -> int:
    dead = subprocess.Popen(["true"])
    dead.wait()
    return dead.pid


def _leftover(parent: str, freeze: tuple[str, str] | None) -> tuple[str, subprocess.Popen[bytes]]:
    group = os.path.join(parent, f"arena-{_dead_pid()}-1-leftover")
    os.mkdir(group)
    left = subprocess.Popen(["sleep", "1000"])
    with open(os.path.join(group, "cgroup.procs"), "w") as f:
        f.write(str(left.pid))
    if freeze:
        with open(os.path.join(group, freeze[0]), "w") as f:
            f.write(freeze[1])
    return group, left


def test_a_referees_cgroups_are_stale_once_its_pid_is_another_processs(tmp_path: Path) -> None:
    """Pids wrap (pid_max): a referee killed outright may have its pid taken
    by a new process before a later run sweeps, and its cgroups must not
    then pass for a live referee's. The name's start time tells them apart."""
    mine = cg.tag(7, "bot")
    assert mine.startswith(f"arena-{os.getpid()}-t") and mine.endswith("-7-bot")
    start = mine.split("-")[2][1:]
    other = f"arena-{os.getpid()}-t{int(start) + 1}-1-bot"  # this pid, another process's start
    for name in (mine, other, f"arena-{os.getpid()}-1-old"):  # the last: a name from before start times
        (tmp_path / name).mkdir()
    assert cg._stale(str(tmp_path)) == [str(tmp_path / other)]


def test_a_zombie_referees_cgroups_are_stale(tmp_path: Path) -> None:
    """A worker killed with its run lingers as a zombie until init reaps it
    (seconds on these machines, never under an init that does not reap), with
    its /proc entry still there: it can clean nothing up, so its cgroups are
    swept like a dead one's, while a live referee's stay."""
    zombie = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # exited, not yet waited for: a zombie
        if Path(f"/proc/{zombie.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            break
        time.sleep(0.01)
    try:
        dead = _dead_pid()
        for pid in (zombie.pid, dead, os.getpid()):
            (tmp_path / f"arena-{pid}-1-bot").mkdir()
        assert sorted(cg._stale(str(tmp_path))) == sorted(
            str(tmp_path / f"arena-{pid}-1-bot") for pid in (zombie.pid, dead)
        )
    finally:
        zombie.wait()


@pytest.mark.parametrize("where", ["v2", "v1-freezer"])
def test_a_later_run_ends_a_dead_referees_frozen_bot(where: str) -> None:
    """A referee killed outright may leave its bot frozen: v2 ends it with
    cgroup.kill; v1 needs the group thawed for SIGKILL to take."""
    if where == "v2":
        if V2 is None:
            pytest.skip("no usable cgroup2 mount")
        group, left = _leftover(V2, ("cgroup.freeze", "1"))
    else:
        if not MECH.cgroup("freezer"):
            pytest.skip("no writable cgroup v1 freezer")
        group, left = _leftover(MECH.cgroup("freezer"), ("freezer.state", "FROZEN"))  # type: ignore[arg-type]
    try:
        cg.reap_stale(MECH.cgroups, V2)
        assert left.wait(timeout=5) == -signal.SIGKILL
        assert not os.path.exists(group)
    finally:
        if left.poll() is None:
            left.kill()
        if os.path.exists(group):
            for name, value in (("cgroup.freeze", "0"), ("freezer.state", "THAWED")):
                try:
                    Path(group, name).write_text(value)
                except OSError:
                    pass
            left.wait()
            os.rmdir(group)


@pytest.mark.parametrize("prefer", ["v2", "v1"])
def test_a_bot_killed_while_frozen_dies_at_once(prefer: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault noticed between turns kills a frozen bot without thawing it
    first: SIGKILL works on frozen v2 tasks; v1 ones take it only once thawed,
    which kill_all does after sending the signals."""
    if plan_for(prefer).freeze != prefer:
        pytest.skip(f"no {prefer} freezer here")
    monkeypatch.setenv(PREFER_ENV, prefer)
    bot = BotProcess(spec("steady.py"), LIMITS, FAST)
    try:
        bot.start()
        bot.notify(match_start())
        bot.request(TURN)
        assert bot._box is not None and wait_frozen(bot._box)
        t = time.monotonic()
        bot.close(grace=False)  # what a fault does
        assert time.monotonic() - t < 2.0
        assert bot._proc is not None and bot._proc.returncode is not None
    finally:
        bot.close()
    assert leftovers("steady") == []
