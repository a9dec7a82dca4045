"""Day-to-day running: the printed resume command resumes exactly (with
--matches and --set), a finished run says so, --new starts a new secret seed,
and live standings with the fault warning reach a terminal (through a pty)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from arena.running.store import read_records

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-m", "arena"]
BIN = str(Path(sys.executable).parent)  # where `arena` is installed (the venv's bin)


def write_config(folder: Path, **extra: object) -> Path:
    cfg = {
        "name": "t",
        "bots": ["random", "probabilistic", "cautious", "bluffer"],
        "players": [3, 4],
        "matches": 400,
        "variants": {"classic": {"preset": "classic"}},
    }
    cfg.update(extra)
    path = folder / "c.yaml"
    path.write_text(json.dumps(cfg))
    return path


def shell(command: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", "")}
    return subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)


def test_ctrl_c_then_the_printed_command_completes_the_run_with_every_match_once(tmp_path: Path) -> None:
    # No seed: a secret one is drawn and kept in run.json. A leisurely bot at every
    # table (players=3 of 3 bots), so that the Ctrl-C lands mid-run on any machine.
    cfg = write_config(tmp_path, bots=["probabilistic", "cautious", str(ROOT / "tests" / "bots" / "leisurely.py")])
    out = tmp_path / "out dir"  # a space: the printed command must quote it
    proc = subprocess.Popen(
        [*ARENA, "run", str(cfg), "--matches", "30", "--set", "players=3", "--out", str(out), "--workers", "2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if (out / "games.jsonl").exists() and len(read_records(out).records) >= 3:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert 3 <= len(read_records(out).records) < 30
    m = re.search(r"Resume with: (.+)", err)
    assert m, err
    command = m.group(1)
    assert "--matches 30" in command and "--set players=3" in command and "--new" not in command
    seed = json.loads((out / "run.json").read_text())["seed"]
    done = shell(command)
    assert done.returncode == 0, done.stderr
    assert "different config" not in done.stderr
    lines = [x for x in (out / "games.jsonl").read_bytes().split(b"\n") if x.strip()]
    ids = [json.loads(x)["match"] for x in lines]
    assert len(ids) == len(set(ids)) == 30  # every match recorded once
    assert all(len(json.loads(x)["bots"]) == 3 for x in lines)  # --set players=3 held
    assert json.loads((out / "run.json").read_text())["seed"] == seed
    # The same command once more: it says the run is complete and shows its result.
    again = shell(command)
    assert again.returncode == 0 and "already complete" in again.stderr and "--new" in again.stderr
    assert "probabilistic" in again.stdout
    assert [x for x in (out / "games.jsonl").read_bytes().split(b"\n") if x.strip()] == lines
    # --new: a new run with a new secret seed; the old one moved aside, not deleted.
    fresh = shell(command + " --new")
    assert fresh.returncode == 0, fresh.stderr
    assert "moved to" in fresh.stderr
    assert json.loads((out / "run.json").read_text())["seed"] != seed
    assert [p for p in tmp_path.iterdir() if p.name.startswith("out dir.old-")]


def read_pty(fd: int, proc: subprocess.Popen[bytes], timeout: float) -> str:
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    return b"".join(chunks).decode("utf-8", "replace")


def test_live_standings_and_the_fault_warning_reach_a_terminal(tmp_path: Path) -> None:
    bad = ROOT / "tests" / "bots" / "bad_quantity.py"  # faults on its first turn of every match
    cfg = write_config(
        tmp_path, seed=5, players=[3], matches=45, bots=["random", "probabilistic", "cautious", str(bad)]
    )
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*ARENA, "run", str(cfg), "--out", str(tmp_path / "o"), "--workers", "2", "--live-every", "0.5"],
        cwd=ROOT,
        stdin=slave,
        stdout=slave,
        stderr=slave,
    )
    os.close(slave)
    try:
        text = read_pty(master, proc, 600)
    finally:
        os.close(master)
        proc.wait(timeout=60)
    assert proc.returncode == 0, text
    assert "live standings after" in text and "Elo (mean 1500)" in text, text
    warnings = re.findall(
        r"warning: bad_quantity faulted in \d+ of its \d+ matches \(mostly (\w+)\); "
        r"see why with: arena check (\S+)",
        text,
    )
    assert len(warnings) == 1, text  # once
    assert warnings[0][1] == str(bad)
    # The last block (the first may come before every bot has played 5 matches: "±   ?").
    standings = text.split("live standings after")[-1]
    assert re.search(r"1\. \S+\s+\d+ ± +\d+\s+\d+ matches", standings), standings


def test_live_standings_are_off_with_no_live_but_the_warning_stays(tmp_path: Path) -> None:
    bad = ROOT / "tests" / "bots" / "bad_quantity.py"
    cfg = write_config(
        tmp_path, seed=5, players=[3], matches=30, bots=["random", "probabilistic", "cautious", str(bad)]
    )
    r = subprocess.run(
        [*ARENA, "run", str(cfg), "--out", str(tmp_path / "o"), "--no-live"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    assert "live standings" not in r.stderr and "warning: bad_quantity faulted" in r.stderr
    assert shlex.split(r.stderr.split("arena check ")[1].splitlines()[0]) == [str(bad)]
