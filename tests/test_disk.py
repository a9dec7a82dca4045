"""A disk that refuses a write (read-only, full) ends a command in one line
naming the path, what was kept and what to do, never a traceback; a full disk
marks the run interrupted and the same command resumes it with every match
once; the analysis commands print their results when they cannot write.

The read-only folders are read-only bind mounts and the full disk a small
tmpfs (root ignores file modes, so chmod would prove nothing): the tests need
root and mount(8), and are skipped without them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from arena.engine.records import canonical
from arena.running.store import RunStore, read_records

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-m", "arena"]
SEED = "12345678901"  # above the guessable range: no seed warning in the output


def _can_mount() -> bool:
    return os.geteuid() == 0 and subprocess.run(["which", "mount"], capture_output=True).returncode == 0


needs_mount = pytest.mark.skipif(not _can_mount(), reason="needs root and mount(8) for read-only and full disks")


def mount(*args: str) -> None:
    proc = subprocess.run(["mount", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"mount {' '.join(args)}: {proc.stderr.strip()}")


@contextmanager
def read_only(folder: Path, at: Path) -> Iterator[Path]:
    """``folder`` seen read-only at ``at`` (a read-only bind mount)."""
    at.mkdir(parents=True, exist_ok=True)
    mount("--bind", str(folder), str(at))
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(at)], check=True, capture_output=True)
        yield at
    finally:
        subprocess.run(["umount", str(at)], check=True)


@contextmanager
def small_disk(at: Path, size: str) -> Iterator[Path]:
    at.mkdir(parents=True, exist_ok=True)
    mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(at))
    try:
        yield at
    finally:
        subprocess.run(["umount", str(at)], check=True)


def config(folder: Path, matches: int) -> Path:
    path = folder / "c.yaml"
    path.write_text(
        json.dumps(
            {
                "name": "disk",
                "bots": ["random", "probabilistic", "cautious"],
                "players": 3,
                "matches": matches,
                "seed": int(SEED),
                "variants": {"classic": {"preset": "classic"}},
                "workers": 2,
            }
        )
    )
    return path


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([*ARENA, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr


@needs_mount
def test_an_out_folder_that_cannot_be_created_is_one_line(tmp_path: Path) -> None:
    cfg = config(tmp_path, 4)
    (tmp_path / "ro").mkdir()
    with read_only(tmp_path / "ro", tmp_path / "ro"):
        proc = arena("run", str(cfg), "--out", "ro/run", cwd=tmp_path)
    no_traceback(proc)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        "Error: ro/run: cannot create the run folder (Read-only file system); "
        "nothing was written; choose a writable place with --out DIR"
    )


@needs_mount
def test_a_complete_read_only_run_still_shows_its_tables(tmp_path: Path) -> None:
    cfg = config(tmp_path, 6)
    first = arena("run", str(cfg), "--out", "done", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    with read_only(tmp_path / "done", tmp_path / "ro"):
        again = arena("run", str(cfg), "--out", "ro", cwd=tmp_path)
        ratings = arena("ratings", "ro", cwd=tmp_path)
        stats = arena("stats", "ro", cwd=tmp_path)
        report = arena("report", "ro", cwd=tmp_path)
        elsewhere = arena("report", "ro", "-o", str(tmp_path / "r.html"), cwd=tmp_path)
    for proc in (again, ratings, stats, report, elsewhere):
        no_traceback(proc)
    # arena run: the table, and why ratings.csv is not there, instead of "no Elo table".
    assert again.returncode == 0 and "no Elo table" not in again.stdout + again.stderr
    assert "Plackett-Luce Elo" in again.stdout
    unwritten = (
        "ro/ratings.csv: could not write it: Read-only file system; the table is shown without it "
        "(`arena ratings ro --no-write` does not try; `arena ratings ro --csv > FILE` keeps it elsewhere)"
    )
    assert unwritten in again.stderr.splitlines()
    assert ratings.returncode == 0 and "Plackett-Luce Elo" in ratings.stdout
    assert ratings.stderr.splitlines() == [unwritten]
    assert stats.returncode == 0 and "skill" in stats.stdout
    assert stats.stderr.splitlines() == [
        unwritten.replace("ratings", "stats").replace("stats.csv", "variant_stats.csv")
    ]
    assert report.returncode == 1 and report.stderr.splitlines() == [
        "Error: ro/report.html: could not write it: Read-only file system; nothing was written; write the "
        "report elsewhere with `arena report ro -o FILE`"
    ]
    assert elsewhere.returncode == 0 and (tmp_path / "r.html").stat().st_size > 1000
    # --no-write: nothing tried, nothing said.
    with read_only(tmp_path / "done", tmp_path / "ro"):
        quiet = arena("ratings", "ro", "--no-write", cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == "" and "Plackett-Luce Elo" in quiet.stdout


@pytest.mark.slow
@needs_mount
def test_a_full_disk_interrupts_the_run_and_the_same_command_completes_it(tmp_path: Path) -> None:
    matches = 150  # about 3.5 kB a record: some 500 kB, more than the disk holds
    cfg = config(tmp_path, matches)
    reference = arena("run", str(cfg), "--out", "reference", cwd=tmp_path)
    assert reference.returncode == 0, reference.stderr
    with small_disk(tmp_path / "disk", "256k") as disk:
        full = arena("run", str(cfg), "--out", "disk/run", cwd=tmp_path)
        no_traceback(full)
        assert full.returncode == 1
        kept = read_records(disk / "run")
        assert 10 < len(kept.records) < matches and not kept.truncated
        error = next(line for line in full.stderr.splitlines() if line.startswith("Error: "))
        assert error == (
            f"Error: disk/run/games.jsonl: could not append a match record: No space left on device; "
            f"the {len(kept.records)} matches recorded before are kept; make room on that disk (or "
            f"copy the folder elsewhere and use --out COPY) and run the same command to resume"
        )
        assert f"Resume with: arena run {cfg} --out disk/run" in full.stderr
        assert json.loads((disk / "run" / "run.json").read_text())["status"] == "interrupted"
        subprocess.run(["mount", "-o", "remount,size=4m", str(disk)], check=True)
        resumed = arena("run", str(cfg), "--out", "disk/run", cwd=tmp_path)
        no_traceback(resumed)
        assert resumed.returncode == 0, resumed.stderr
        assert f"resumed: {len(kept.records)} matches were already recorded" in resumed.stderr
        done = read_records(disk / "run").records
        assert json.loads((disk / "run" / "run.json").read_text())["status"] == "complete"
    same = read_records(tmp_path / "reference").records
    # Every match once, each as an uninterrupted run on a roomy disk has it (file order follows the workers).
    assert sorted(map(canonical, done), key=lambda r: r["match"]) == sorted(
        map(canonical, same), key=lambda r: r["match"]
    )


def test_a_resume_says_what_it_recovered_from_a_run_that_did_not_close(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    store = RunStore(folder)
    store.open({"name": "t"}, {"k": 1}, force=False)
    store.close("complete")
    # As a run killed mid-append leaves it: run.json says running, the last line is torn.
    meta = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**meta, "status": "running"}))
    (folder / "games.jsonl").write_bytes(b'{"match": "m-0000')
    again = RunStore(folder)
    again.open({"name": "t"}, {"k": 1}, force=False)
    assert again.recovered == (
        f"recovered: 0 matches recorded by a run that stopped without closing (run.json "
        f"said running); the torn last line of {folder / 'games.jsonl'} (a match cut "
        f"short) was dropped and is played again; nothing else was lost"
    )
    again.close("complete")
    assert (folder / "games.jsonl").read_bytes() == b""


def test_an_out_folder_under_a_file_is_one_line_naming_both(tmp_path: Path) -> None:
    """A refusal that needs no mount (root ignores file modes): the folder's parent is a file."""
    from arena.errors import RunError

    (tmp_path / "afile").write_text("")
    folder = tmp_path / "afile" / "run"
    with pytest.raises(RunError) as info:
        RunStore(folder).open({"name": "t"}, {"k": 1}, force=False)
    assert str(info.value) == (
        f"{folder}: cannot create the run folder (Not a directory); nothing was written; "
        f"choose a writable place with --out DIR"
    )
