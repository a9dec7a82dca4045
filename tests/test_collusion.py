"""Two copies of a colluding bot at one table, through `arena run`: over every
shared-kernel channel they try (tests/bots/colluder.py), not one message
arrives in the sandbox, while each channel is shown to be attempted, every
turn, and, without the sandbox, to carry the partner's real hand."""

from __future__ import annotations

import glob
import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
from test_process import BOTS

from arena.running.config import load_config
from arena.running.runner import run
from arena.sandbox import available, seccomp

pytestmark = pytest.mark.sandbox  # run as root and as an unprivileged user in CI

MECH = available()
REPO = Path(__file__).resolve().parent.parent
CHANNELS = [
    "fcntl_lock",
    "ofd_lock",
    "flock",
    "keyring",
    "dev_shm",
    "tmp",
    "abstract_socket",
    "sysv_shm",
    "sysv_sem",
    "sysv_msg",
    "posix_mqueue",
    "inotify",
    "fanotify",
    "futex",
]
needs_sandbox = pytest.mark.skipif(
    MECH.bwrap is None or seccomp.unavailable() is not None, reason="needs bubblewrap and libseccomp (the full sandbox)"
)


def collude(tmp_path: Path, sandbox: str) -> dict[str, dict[str, Any]]:
    """A run of 3 matches at a table of three: the two colluders and an honest bot."""
    cfg = tmp_path / "collude.yaml"
    out = tmp_path / "results"
    cfg.write_text(
        textwrap.dedent(f"""\
        name: collude
        bots: [{BOTS / "colluder.py"}, {BOTS / "colluder.py"}, {REPO / "bots" / "probabilistic.py"}]
        players: 3
        matches: 3
        workers: 1
        out: {out}
        time: {{budget_ms: 2000, hello_ms: 10000}}
        sandbox: {{{sandbox}, stderr_tail: 65536}}
        """)
    )
    result = run(load_config(cfg), force=True)
    assert result.status == "complete", result.error
    records = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines() if line.strip()]
    assert len(records) == 3 and not [f for r in records for f in r["faults"]], [r["faults"] for r in records]
    stats = {}
    for label in ("colluder", "colluder#2"):
        lines = [
            ln for ln in (out / "bots" / f"{label}.stderr").read_text().splitlines() if ln.startswith("collusion ")
        ]
        assert lines, f"{label} wrote no report"
        stats[label] = json.loads(lines[-1][len("collusion ") :])
    return stats


def assert_every_channel_was_tried(stats: dict[str, dict[str, Any]]) -> None:
    """The attempt log: each colluder tried to send and to receive on every
    channel, every turn (a bot that silently skipped one could not fail)."""
    for label, s in stats.items():
        assert sorted(s) == sorted(CHANNELS), (label, sorted(s))
        turns = max(c["recv"] for c in s.values())
        assert turns >= 3, (label, s)
        for name, c in s.items():
            assert c["send"] >= turns and c["recv"] >= turns, (label, name, c)


@needs_sandbox
def test_no_bit_crosses_between_two_colluders_in_the_sandbox(tmp_path: Path) -> None:
    stats = collude(tmp_path, "mode: auto")
    assert_every_channel_was_tried(stats)
    for label, s in stats.items():
        crossed = {name: c["got"] for name, c in s.items() if c["got"]}
        assert crossed == {}, (label, {n: s[n] for n in crossed})
        # Each closed channel failed where the sandbox stops it (an error, or an
        # empty private namespace: nothing there to receive).
        for name in ("keyring", "inotify", "fanotify"):
            assert s[name]["send_err"] and s[name]["recv_err"], (label, name, s[name])
        assert s["futex"]["recv_err"] == {"EAGAIN": s["futex"]["recv"]}, (label, s["futex"])  # no one can sleep
        for name in ("fcntl_lock", "ofd_lock"):
            assert s[name]["recv_err"] == {"EPERM": s[name]["recv"]}, (label, name, s[name])


@pytest.mark.slow
def test_without_the_sandbox_every_channel_carries_the_partners_hand(tmp_path: Path) -> None:
    """The control: the same run with `sandbox: {mode: off}` (plain processes
    of one user). Every channel carries the partner's true hand at least once,
    so the bots' channels work and the sandboxed run's zeros mean something."""
    try:
        stats = collude(tmp_path, 'mode: "off"')
    finally:  # what plain processes left behind in the host's shared folders
        for path in glob.glob("/tmp/collude-m-*") + glob.glob("/dev/shm/collude-m-*"):
            try:
                os.unlink(path)
            except OSError:
                pass
    assert_every_channel_was_tried(stats)
    right = {name: sum(s[name]["right"] for s in stats.values()) for name in CHANNELS}
    assert all(right.values()), right
