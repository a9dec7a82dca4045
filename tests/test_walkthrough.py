"""A newcomer's walkthrough, from the README alone: in a fresh copy of the
repository, every README line that runs offline is run as written, in order
(installing and the test suite need the network and are left out), the bot the
README shows is dropped into bots/, and the league's command, run again, grows
the league by that bot alone.

Then the first lines of docs/running.md run on the league the README grew
(again, --new, replay, ratings, stats). Two things are shortened so that the
walkthrough takes a few minutes, and only these: `arena run` gets `--matches`
(the same number every time, so the same command is still the same run) and
`arena check` gets `--turns`.

Last, Ctrl-C as a user presses it: the league's command runs on a terminal
(a pty that is its controlling terminal), the test types Ctrl-C (the
terminal sends SIGINT to the foreground process group, arena's workers
included), then pastes the printed `Resume with:` line into a shell: the run
completes with every match once and every record written before the
interrupt kept byte for byte. tests/test_daily.py checks the resume command's
options; a read-only folder and a full disk are tests/test_disk.py's.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shlex
import shutil
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from arena.running.store import read_records, read_run_json

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
OFFLINE = ("arena ",)  # what a README line may run here; pip, venv, pytest and jupyter need more


def fresh_copy(to: Path) -> Path:
    """The repository's tracked files as they are now (what a clone holds)."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in names.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, to / name)
    return to


def readme_steps(text: str) -> list[tuple[str, str]]:
    """("shell", command) and ("file", path + source) in README order."""
    steps: list[tuple[str, str]] = []
    for lang, body in FENCE.findall(text):
        if lang == "bash":
            for line in body.splitlines():
                line = re.sub(r"\s+#.*$", "", line).strip()
                for part in line.split("&&"):
                    part = part.strip()
                    if part.startswith(OFFLINE):
                        steps.append(("shell", part))
        elif lang == "python":
            first = body.splitlines()[0]
            if first.startswith("# bots/"):
                steps.append(("file", body))
    return steps


def shortened(command: str) -> list[str]:
    words = shlex.split(command)
    if words[:2] == ["arena", "run"]:
        words += ["--matches", "44", "--workers", "2"]  # docs/running.md replays m-000042
    elif words[:2] == ["arena", "check"]:
        words += ["--turns", "100"]
    return [sys.executable, "-m", "arena", *words[1:]]


@pytest.mark.slow
def test_the_readme_walkthrough_adds_a_bot_to_the_league(tmp_path: Path) -> None:
    repo = fresh_copy(tmp_path / "repo")
    steps = readme_steps((repo / "README.md").read_text())
    shells = [s for kind, s in steps if kind == "shell"]
    # The README's own order: the league, a bot written, checked, tried, added to the same league.
    assert shells[0] == "arena run configs/league.yaml" and shells[-1] == "arena run configs/league.yaml"
    env = {**os.environ, "PYTHONPATH": str(repo)}
    league = repo / "results" / "league"
    outputs = []
    before: list[str] = []
    for kind, step in steps:
        if kind == "file":
            name = step.splitlines()[0][2:].strip()
            (repo / name).write_text(step)
            before = [r.match for r in read_records(league).records]
            continue
        proc = subprocess.run(shortened(step), cwd=repo, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"{step}\n{proc.stderr}"
        assert "Traceback" not in proc.stderr, proc.stderr
        outputs.append((step, proc))
    assert before, "the league was played before the bot was written"
    last = outputs[-1][1]
    assert (
        "league: adding mybot: only their matches against the pool are played; nothing recorded is replayed"
        in last.stderr.splitlines()
    )
    records = read_records(league).records
    assert [r.match for r in records][: len(before)] == before  # nothing recorded was played again
    added = records[len(before) :]
    assert added and all("mybot" in r.bots for r in added)
    assert "mybot" in last.stdout  # rated in the final table
    assert read_run_json(league)["status"] == "complete"  # type: ignore[index]
    # Then docs/running.md's first lines, on the same folder: again, --new, replay, ratings, stats.
    running = (repo / "docs" / "running.md").read_text()
    lines = [s for kind, s in readme_steps(running.split("## What")[0]) if kind == "shell"]
    assert lines[:3] == ["arena run configs/league.yaml"] * 2 + ["arena run configs/league.yaml --new"]
    done = {}
    for step in lines:
        proc = subprocess.run(shortened(step), cwd=repo, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, f"{step}\n{proc.stderr}"
        done.setdefault(step, []).append(proc)
    assert "this run is already complete" in done["arena run configs/league.yaml"][1].stderr
    assert "the earlier run was moved to results/league.old-" in done["arena run configs/league.yaml --new"][0].stderr
    assert "m-000042" in done["arena replay results/league m-000042"][0].stdout
    assert "Plackett-Luce Elo" in done["arena ratings results/league"][0].stdout


def on_terminal(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
    """``argv`` with a new pty as its controlling terminal (stdin, stdout, stderr), as in
    a terminal window; returns the process and the pty's master end."""
    master, slave = pty.openpty()

    def controlling_terminal() -> None:  # runs in the child, after setsid (start_new_session)
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        preexec_fn=controlling_terminal,
    )
    os.close(slave)
    return proc, master


def drain(fd: int, proc: subprocess.Popen[bytes], until: float) -> bytes:
    """What the terminal shows until the process ends (or the time is up)."""
    chunks = []
    while time.monotonic() < until:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: every writer of the pty has closed it
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    return b"".join(chunks)


@pytest.mark.slow
def test_ctrl_c_on_a_terminal_then_the_printed_line_loses_nothing(tmp_path: Path) -> None:
    repo = fresh_copy(tmp_path / "repo")
    env = {**os.environ, "PYTHONPATH": str(repo), "TERM": "xterm"}
    league = repo / "results" / "league"
    matches = 200  # long enough (several seconds) that Ctrl-C lands mid-run
    argv = [sys.executable, "-m", "arena", "run", "configs/league.yaml", "--matches", str(matches)]
    proc, master = on_terminal(argv, repo, env)
    try:
        deadline = time.monotonic() + 300
        shown = b""
        while time.monotonic() < deadline and proc.poll() is None:
            shown += drain(master, proc, time.monotonic() + 0.2)
            if (league / "games.jsonl").exists() and len(read_records(league).records) >= 20:
                break
        assert proc.poll() is None, shown.decode(errors="replace")
        os.write(master, b"\x03")  # Ctrl-C, typed
        shown += drain(master, proc, time.monotonic() + 120)
    finally:
        os.close(master)
        proc.wait(timeout=120)
    text = shown.decode("utf-8", "replace")
    assert proc.returncode == 130, text
    assert "Traceback" not in text, text
    kept = (league / "games.jsonl").read_bytes()
    before = [line for line in kept.split(b"\n") if line.strip()]
    assert 20 <= len(before) < matches
    assert read_run_json(league)["status"] == "interrupted"  # type: ignore[index]
    m = re.search(r"Resume with: (.+?)\r?\n", text)
    assert m, text
    resume = m.group(1)
    assert resume == f"arena run configs/league.yaml --matches {matches}", resume
    # The line pasted into a shell, as printed (`arena` is the installed command).
    bin_dir = str(Path(sys.executable).parent)
    done = subprocess.run(
        ["bash", "-c", resume],
        cwd=repo,
        env={**env, "PATH": bin_dir + os.pathsep + env.get("PATH", "")},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert f"resumed: {len(before)} matches were already recorded" in done.stderr, done.stderr
    after = (league / "games.jsonl").read_bytes()
    lines = [line for line in after.split(b"\n") if line.strip()]
    assert lines[: len(before)] == before  # nothing written before Ctrl-C changed
    ids = [r.match for r in read_records(league).records]
    assert len(ids) == len(set(ids)) == matches  # every match once
    assert read_run_json(league)["status"] == "complete"  # type: ignore[index]
