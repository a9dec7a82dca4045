"""Non-root on cgroup v2: an unprivileged user's arena uses the cgroup v2
subtree delegated to it (as systemd's Delegate=yes or a container runtime
gives one), and says once when it has none.

Here root delegates a subtree of the unified mount to an unprivileged user the
way systemd does (the directory and its cgroup.procs, cgroup.subtree_control
and cgroup.threads chowned to the user), moves the test's child into it first
(moving a process needs write access at the common ancestor, which only root
has), and runs a referee in it as that user with Debian's /usr/bin/python3
(root's home, where pyenv's interpreter lives, is mode 0700). The referee
starts a bot that leaves a spinner in a session of its own; the bot must be
frozen between turns, charged from cpu.stat, and everything must be gone
after close, cgroups included."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import arena
from arena.sandbox import available

ROOT = Path(arena.__file__).resolve().parent.parent
MECH = available()
V2 = MECH.unified.parent if MECH.unified else None
USER = os.environ.get("ARENA_TEST_UNPRIVILEGED_USER", "nobody")
PYTHON = "/usr/bin/python3"


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root, to delegate a cgroup v2 subtree to another user"
    if V2 is None:
        return "no cgroup2 mount this process may create cgroups in"
    if not (MECH.unified and MECH.unified.freeze):
        return "this kernel's cgroup v2 has no cgroup.freeze"
    if shutil.which("runuser") is None:
        return "no runuser (util-linux)"
    try:
        pwd.getpwnam(USER)
    except KeyError:
        return f"no user {USER!r} (set ARENA_TEST_UNPRIVILEGED_USER)"
    try:
        ver = subprocess.run(
            [PYTHON, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True, timeout=30
        ).stdout.strip()
    except OSError:
        return f"no {PYTHON} (Debian's python3: .ci/run installs it)"
    if ver != str(sys.version_info[:2]):
        return f"{PYTHON} is Python {ver}, not {sys.version_info[:2]}: the compiled dependencies would not load"
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")

REFEREE = r"""
import json, logging, os, sys, time
logging.basicConfig(level=logging.WARNING, format="%(message)s")
from arena.botfile.spec import load_bot
from arena.match.process import BotProcess, TimeControl
from arena.engine.rules import Rules
from arena.sandbox import SandboxLimits, available, describe_sandbox
from arena.sandbox import cgroups, procfs

turn = {"type": "turn", "match": "m-000001", "round": 1, "seat": 0, "dice": [1, 2, 3, 4, 5],
        "counts": [5, 5], "palifico": False, "history": [[1, 2, 3]],
        "legal": {"dudo": True, "calza": True, "min_quantity": {"3": 3}, "max_quantity": 10}, "time_ms": 500}
m = available()
out = {"uid": os.geteuid(), "line": describe_sandbox(), "v2_parent": m.unified.parent if m.unified else None}
bot = BotProcess(load_bot(sys.argv[1]), SandboxLimits(memory_mb=256), TimeControl(budget_ms=500, grace_ms=100))
bot.start()
bot.notify({"type": "match_start", "match": "m-000001", "seat": 0, "players": 2, "names": ["a", "b"],
            "rules": Rules().to_dict(), "seed": 1})
reply, cpu = bot.request(turn)
box = bot._box
cg = box.cgroups
out["reply"] = reply
out["cgroup"] = cg.paths.get(cgroups.V2)
out["plan"] = {j: getattr(cg.plan, j) for j in cgroups.JOBS}
frozen = False
for _ in range(500):
    if box.can_freeze and box.frozen():
        frozen = True
        break
    time.sleep(0.002)
out["frozen"] = frozen
c0 = box.cpu_ns()
time.sleep(0.3)  # the spinner would burn a core meanwhile, were it not frozen
out["cpu_while_frozen_ns"] = box.cpu_ns() - c0
folders = list(cg.paths.values()) + ([cg._inner] if cg._inner else [])
pids = [int(p) for f in folders for p in open(os.path.join(f, "cgroup.procs")).read().split()]
out["pids"] = pids
bot.close()
for _ in range(400):  # out of their cgroup, killed tasks may take a moment more to finish exiting
    alive = [p for p in pids if not procfs.gone(p)]
    if not alive:
        break
    time.sleep(0.005)
out["alive_after_close"] = alive
print(json.dumps(out))
"""


@pytest.fixture
def world() -> Iterator[Path]:
    """A folder the unprivileged user can read: the arena package, the two
    compiled dependencies the referee imports and mypy_extensions (the
    compiled modules' class hints), the bot, the referee script."""
    tmp = Path(tempfile.mkdtemp(prefix="arena-delegation-", dir="/tmp"))
    try:
        lib = tmp / "lib"
        shutil.copytree(ROOT / "arena", lib / "arena", ignore=shutil.ignore_patterns("__pycache__"))
        import orjson
        import yaml

        for mod in (orjson, yaml):
            src = Path(mod.__file__).parent  # type: ignore[arg-type]
            shutil.copytree(src, lib / src.name, ignore=shutil.ignore_patterns("__pycache__"))
        for extra in Path(yaml.__file__).parent.parent.glob("_yaml*"):  # type: ignore[arg-type]
            (shutil.copytree if extra.is_dir() else shutil.copy)(extra, lib / extra.name)
        import mypy_extensions

        shutil.copy(mypy_extensions.__file__, lib / "mypy_extensions.py")
        bots = tmp / "bots"
        bots.mkdir()
        shutil.copy(ROOT / "tests" / "bots" / "spinner.yaml", bots / "spinner.yaml")
        shutil.copytree(ROOT / "tests" / "bots" / "spinner", bots / "spinner")
        (tmp / "referee.py").write_text(REFEREE)
        for p in [tmp, *tmp.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_as_user(world: Path, cgroup: str | None) -> subprocess.CompletedProcess[str]:
    def join() -> None:  # as root, before runuser: into the delegated subtree
        if cgroup:
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                f.write("0")

    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": str(world / "lib"),
        "HOME": "/tmp",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return subprocess.run(
        [
            shutil.which("runuser") or "runuser",
            "-u",
            USER,
            "--",
            PYTHON,
            str(world / "referee.py"),
            str(world / "bots" / "spinner.yaml"),
        ],
        cwd="/tmp",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=join,
    )


def test_an_unprivileged_referee_freezes_and_kills_in_its_delegated_subtree(world: Path) -> None:
    assert V2 is not None
    deleg = os.path.join(V2, f"arena-{os.getpid()}-delegated")  # the stale sweep clears it if we die
    os.mkdir(deleg)
    try:
        uid = pwd.getpwnam(USER).pw_uid
        for p in ("", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"):
            os.chown(os.path.join(deleg, p), uid, -1)
        r = run_as_user(world, deleg)
        assert r.returncode == 0, r.stderr
        out: dict[str, Any] = json.loads(r.stdout.splitlines()[-1])
        assert out["uid"] == uid != 0
        assert out["v2_parent"].rstrip("/") == deleg
        assert out["plan"]["freeze"] == "v2" and out["plan"]["cpu"] == "v2" and out["plan"]["kill"] == "v2"
        assert "freezing: cgroup v2 cgroup.freeze" in out["line"]
        assert out["cgroup"].startswith(deleg + "/arena-")
        assert out["reply"]["action"] == "dudo"
        assert out["frozen"] is True
        assert out["cpu_while_frozen_ns"] < 1_000_000  # its escaped spinner got nothing
        assert len(out["pids"]) >= 2  # the bot and its spinner (and bwrap's two)
        assert out["alive_after_close"] == [], out  # cgroup.kill took the escaped spinner too
        assert "delegated" not in r.stderr
    finally:
        for _ in range(200):
            try:
                os.rmdir(deleg)  # fails if a bot cgroup was left inside
                break
            except OSError:
                time.sleep(0.01)
    assert not os.path.exists(deleg), os.listdir(deleg)


def test_without_a_delegated_subtree_it_says_so_once(world: Path) -> None:
    """The user's cgroup (here the unified root) is not its own: no v2 cgroups,
    said once, and the bot is charged for CPU between turns instead."""
    r = run_as_user(world, None)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["v2_parent"] is None and out["plan"]["freeze"] is None
    assert r.stderr.count("a delegated cgroup v2 subtree") == 1
    assert "systemd-run --user --scope -p Delegate=yes" in r.stderr
    assert out["alive_after_close"] == []  # bwrap's pid namespace still takes the spinner with it
