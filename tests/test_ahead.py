"""arena run's end-of-run Elo table made ahead by a forked helper
(arena/apps/ahead.py): the same text, notes and progress as in process, and
nothing lost or left behind when the helper fails or is not wanted."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest
from synth_records import league

from arena.analysis.commands import end_of_run_text
from arena.apps.ahead import EloAhead


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def run_folder(tmp_path: Path) -> Path:
    return league(tmp_path / "run", matches_per_variant=25)


def test_the_helpers_table_is_the_one_made_in_process(run_folder: Path) -> None:
    ahead = EloAhead.start(run_folder)
    assert ahead is not None
    notes: list[str] = []
    steps: list[tuple[str, int, int]] = []
    text = ahead.table(note=notes.append, progress=lambda *step: steps.append(step))
    here_notes: list[str] = []
    here_steps: list[tuple[str, int, int]] = []
    here = end_of_run_text(run_folder, note=here_notes.append, progress=lambda *step: here_steps.append(step))
    assert text == here
    assert "Elo" in text
    assert notes == here_notes
    assert steps == here_steps and steps


def test_a_helper_that_died_gives_no_table_and_no_notes(run_folder: Path) -> None:
    ahead = EloAhead.start(run_folder)
    assert ahead is not None and ahead.pid is not None
    os.kill(ahead.pid, signal.SIGKILL)
    notes: list[str] = []
    assert ahead.table(note=notes.append) is None  # the caller then makes it itself
    assert notes == []


def test_a_helper_not_told_to_go_is_stopped_and_reaped(run_folder: Path) -> None:
    with EloAhead.start(run_folder) as ahead:
        assert ahead is not None and ahead.pid is not None
        pid = ahead.pid
    assert ahead.pid is None
    assert not _alive(pid)  # reaped: not even a zombie


def test_no_helper_is_forked_beside_another_thread(run_folder: Path) -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert EloAhead.start(run_folder) is None  # a fork would copy that thread's state mid-step
    finally:
        stop.set()
        other.join()
