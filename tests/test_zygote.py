"""Python bots forked from a worker's zygote (arena/sandbox/zygote.py): confined
as a started bot is, reported as one when they fail, and playing the same
records (docs/sandbox.md, "Warm starts")."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.botfile.spec import load_bot
from arena.engine.records import canonical
from arena.errors import BotCrashed
from arena.match.process import BotProcess, TimeControl
from arena.running.store import iter_records
from arena.sandbox import SandboxLimits
from arena.sandbox.zygote import Zygote
from arena.sandbox.zygote import unavailable as no_zygote

ROOT = Path(__file__).resolve().parent.parent
FAST = TimeControl(budget_ms=500, wall_factor=4.0, hello_ms=10000, grace_ms=200)
LIMITS = SandboxLimits(memory_mb=256)

pytestmark = pytest.mark.skipif(no_zygote() is not None, reason=f"no zygote here: {no_zygote()}")


@pytest.fixture
def zygote() -> Zygote:
    z = Zygote()
    yield z  # type: ignore[misc]
    z.close()


def _report(path: Path, zygote: Zygote | None) -> dict[str, object]:
    proc = BotProcess(load_bot(path), LIMITS, FAST, zygote=zygote)
    try:
        proc.start()
        proc.close()
        text = proc.stderr_tail()
    finally:
        proc.close()
    found = re.findall(r"^CONFINED (.*)$", text, re.M)
    assert found, text
    return json.loads(found[-1])  # type: ignore[no-any-return]


def test_a_forked_bot_is_confined_as_a_started_one(zygote: Zygote) -> None:
    probe = ROOT / "tests" / "bots" / "confinement.py"
    started, forked = _report(probe, None), _report(probe, zygote)
    zygote.collect(0.1)
    assert zygote.pids, "the probe was not forked"
    for report in (started, forked):
        status = report["status"]
        assert isinstance(status, dict)
        for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
            assert int(status[cap], 16) == 0, (cap, report)
        assert status["NoNewPrivs"] == "1" and status["Seccomp"] == "2", report
        # Only the protocol's own copy of its stdout beyond 0, 1, 2.
        fds = report["fds"]
        assert isinstance(fds, dict) and len(fds) == 1 and next(iter(fds.values())).startswith("pipe:"), report
        assert report["sid"] == report["pgid"] == report["pid"] or report is started, report
        # No namespace of the sandbox's init is joined: no capability to do it.
        assert all(v != "joined" for v in report["setns"].values()), report  # type: ignore[union-attr]
    # The same view of the world: the same files, folder, environment and user.
    for key in ("cwd", "env", "tmp", "cgroup"):
        assert forked[key] == started[key], key
    assert forked["status"]["Uid"] == started["status"]["Uid"]  # type: ignore[index]
    # Its PID namespace: the sandbox's init, the holder and itself, nothing else.
    assert len(forked["pids"]) <= 3 and len(started["pids"]) <= 2, (forked["pids"], started["pids"])  # type: ignore[arg-type]


def test_a_forked_bot_that_fails_at_import_is_reported_as_a_started_one(tmp_path: Path, zygote: Zygote) -> None:
    (tmp_path / "broken.py").write_text("import arena.sdk\nraise RuntimeError('no luck today')\n")
    messages = []
    for z in (None, zygote):
        proc = BotProcess(load_bot(tmp_path / "broken.py"), LIMITS, FAST, zygote=z)
        with pytest.raises(BotCrashed) as err:
            proc.start()
        proc.close()
        messages.append(err.value.detail)
    for text in messages:
        assert "with status 1" in text and "RuntimeError: no luck today" in text, text


@pytest.mark.slow
def test_a_run_plays_the_same_records_forked_or_started(tmp_path: Path) -> None:
    """Two variants of one table (paired deals), Python bots with numpy and
    policy files among them: the records (but their timings) are the same
    whether the workers fork their bots from a zygote or start each anew."""
    cfg = {
        "name": "same",
        "seed": 11,
        "bots": ["random", "probabilistic", "bayes", "equilibrium"],
        "players": 4,
        "matches": 6,
        "workers": 2,
        "variants": {"classic": {"preset": "classic"}, "no-calza": {"preset": "classic", "calza": False}},
    }
    path = tmp_path / "same.yaml"
    path.write_text(json.dumps(cfg))
    records = []
    for mode in ("forked", "started"):
        env = dict(os.environ)
        env.pop("ARENA_NO_ZYGOTE", None)
        if mode == "started":
            env["ARENA_NO_ZYGOTE"] = "1"
        out = tmp_path / mode
        r = subprocess.run(
            [sys.executable, "-m", "arena", "run", str(path), "--out", str(out)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode == 0, r.stderr
        records.append(sorted(json.dumps(canonical(r), sort_keys=True) for r in iter_records(out)))
    assert records[0] == records[1] and len(records[0]) == 12
