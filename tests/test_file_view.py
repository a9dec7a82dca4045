"""The bot's file view served from memory (arena/sandbox/view.py, docs/sandbox.md "The file view").

What a user relies on: a Python bot reads only copies on a tmpfs (what the
host needs, and its own files), so that a read or a name lookup costs the
same whoever made it before (the attack bot tests/bots/cache_timer.py); a
file outside the view is absent inside; a bot importing a package the view
lacks is told which and what to do; a view is made once and reused.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import statistics
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.botfile.spec import BotSpec, load_bot
from arena.errors import SandboxError
from arena.match.process import BotCrashed, BotProcess, TimeControl
from arena.sandbox import SandboxLimits, available, mounts
from arena.sandbox import view as fileview

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [
    pytest.mark.sandbox,  # run as root and as an unprivileged user in CI
    pytest.mark.skipif(available().bwrap is None, reason="bubblewrap is not installed"),
    pytest.mark.skipif(fileview.unavailable() is not None, reason=f"no view: {fileview.unavailable()}"),
]

# Prints, at import, which of the paths in $ARENA_LOOK exist, then plays.
LOOKER = """\
import json, os, sys
from arena.sdk import DUDO
print(json.dumps({p: os.path.lexists(p) for p in os.environ["ARENA_LOOK"].split(":")}), file=sys.stderr, flush=True)


def act(turn):
    return DUDO if turn.legal.dudo else next(turn.legal.bids())
"""


def run_bot(spec: BotSpec, env: dict[str, str]) -> str:
    """Start ``spec`` with ``env`` added (it works at import), close it, return its stderr."""
    bot = BotProcess(dataclasses.replace(spec, env=env), SandboxLimits(), TimeControl(hello_ms=60000))
    try:
        bot.start()
    finally:
        bot.close()
    return bot.stderr_tail()


def looks(spec: BotSpec, paths: list[str]) -> dict[str, bool]:
    err = run_bot(spec, {"ARENA_LOOK": ":".join(paths)})
    line = next(x for x in err.splitlines() if x.startswith("{"))
    seen: dict[str, bool] = json.loads(line)
    return seen


@pytest.fixture
def view_off(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The host's files bound as before the view (the control)."""
    monkeypatch.setattr(fileview, "unavailable", lambda: "off for the test")
    yield


def _stdlib() -> str:
    return sysconfig.get_paths()["stdlib"]


def test_a_python_bot_sees_what_it_needs_and_nothing_else_of_the_host(tmp_path: Path) -> None:
    (tmp_path / "looker.py").write_text(LOOKER)
    spec = load_bot(tmp_path / "looker.py")
    site = sysconfig.get_paths()["purelib"]
    libc = os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6")
    needed = [
        os.path.join(_stdlib(), "os.py"),
        os.path.join(_stdlib(), "json", "__init__.py"),
        os.path.join(site, "numpy", "__init__.py"),
        libc,
        str(ROOT / "arena" / "__init__.py"),
        str(tmp_path / "looker.py"),
    ]
    # On the host, each of these exists; none is part of what a Python bot needs.
    outside = [
        os.path.join(_stdlib(), "test", "__init__.py"),
        os.path.join(_stdlib(), "idlelib"),
        os.path.join(site, "yaml", "__init__.py"),
        os.path.join(site, "pandas"),
        "/usr/bin/ls",
        "/usr/share/doc",
        "/etc/ssl/certs",
        "/usr/lib/x86_64-linux-gnu/libX11.so.6",
    ]
    outside = [p for p in outside if os.path.lexists(p)]
    assert len(outside) >= 4, outside
    assert all(os.path.lexists(p) for p in needed)
    seen = looks(spec, needed + outside)
    assert {p for p in needed if not seen[p]} == set()
    assert {p for p in outside if seen[p]} == set()


def test_without_the_view_the_host_files_are_there_again(tmp_path: Path, view_off: None) -> None:
    """The control for the test above: the same bot with the view off sees the host's /usr."""
    (tmp_path / "looker.py").write_text(LOOKER)
    assert looks(load_bot(tmp_path / "looker.py"), ["/usr/bin/ls"]) == {"/usr/bin/ls": os.path.exists("/usr/bin/ls")}


def test_every_bound_file_of_a_python_bot_comes_from_the_tmpfs(tmp_path: Path) -> None:
    (tmp_path / "me.py").write_text(LOOKER)
    (tmp_path / "me").mkdir()
    (tmp_path / "me" / "policy.bin").write_bytes(b"\0" * 10000)
    spec = load_bot(tmp_path / "me.py")
    args = mounts.bwrap_args("bwrap", spec, SandboxLimits(), ["x"])
    binds = [(args[i + 1], args[i + 2]) for i, a in enumerate(args) if a in ("--ro-bind", "--bind")]
    parent = os.path.join(os.environ.get("ARENA_VIEW_ROOT") or "/dev/shm", f"arena-view-{os.geteuid()}")
    from_disk = [
        (src, dst)
        for src, dst in binds
        if not src.startswith(parent + "/")
        and src != "/dev/null"
        and not src.startswith(os.path.dirname(mounts._proc_snapshots()[0][0]))
    ]
    assert from_disk == []
    assert ("/usr" in {dst for _, dst in binds}) and str(tmp_path / "me") in {dst for _, dst in binds}


def test_a_missing_package_is_named_with_what_to_do(tmp_path: Path) -> None:
    site = sysconfig.get_paths()["purelib"]
    if not os.path.isdir(os.path.join(site, "yaml")):
        pytest.skip("pyyaml is not installed here")
    (tmp_path / "needy.py").write_text("import yaml\n\n\ndef act(turn):\n    return 'dudo'\n")
    with pytest.raises(BotCrashed) as err:
        run_bot(load_bot(tmp_path / "needy.py"), {})
    msg = str(err.value)
    assert "module 'yaml' is not in the sandbox's file view: give the bot a manifest that runs a venv" in msg


def test_the_view_is_made_once_and_reused(tmp_path: Path) -> None:
    first = mounts.python_view()
    stamp = os.stat(os.path.join(first.root, ".complete")).st_mtime_ns
    fileview.python_view.cache_clear()  # as a new referee process would
    again = mounts.python_view()
    assert again.root == first.root
    assert os.stat(os.path.join(again.root, ".complete")).st_mtime_ns == stamp  # not made again
    # An edited arena package (a pull, a worktree) is a new 1 MB view beside the same system view.
    edited = tmp_path / "edited" / "arena"
    shutil.copytree(ROOT / "arena", edited, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    (edited / "errors.py").write_text((edited / "errors.py").read_text() + "\n# edited\n")
    runtime, _, sites, programs = mounts.python_view_args()
    other = fileview.python_view(runtime, str(edited), sites, programs)
    assert other.roots[0] == first.roots[0] and other.roots[1] != first.roots[1]
    assert fileview.size(fileview.View(other.roots[1])) < 5 << 20
    # A bot's own files: one copy per content, wherever the bot lies; a change is a new copy.
    for d in ("a", "b", "c"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "twin.py").write_text(LOOKER)
    (tmp_path / "c" / "twin.py").write_text(LOOKER + "\n# changed\n")
    va, vb, vc = (fileview.bot_view(load_bot(tmp_path / d / "twin.py")) for d in ("a", "b", "c"))
    assert va is not None and vb is not None and vc is not None
    assert va.root == vb.root != vc.root
    assert va.source(str(tmp_path / "a" / "twin.py")) == vb.source(str(tmp_path / "b" / "twin.py"))
    # Two starts of the bot read the same copy: the bot plays from it.
    spec = load_bot(tmp_path / "a" / "twin.py")
    for _ in range(2):
        assert looks(spec, [str(tmp_path / "a" / "twin.py")]) == {str(tmp_path / "a" / "twin.py"): True}
    assert os.path.getmtime(os.path.join(va.root, ".complete")) < time.time()


def test_a_view_folder_planted_by_someone_else_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shm = Path(f"/dev/shm/arena-view-test-{os.getpid()}")
    shm.mkdir()
    try:
        monkeypatch.setenv("ARENA_VIEW_ROOT", str(shm))
        planted = shm / f"arena-view-{os.geteuid()}"
        planted.mkdir()
        planted.chmod(0o777)
        with pytest.raises(SandboxError, match="writable by it alone"):
            fileview.base()
    finally:
        shutil.rmtree(shm, ignore_errors=True)
        fileview.python_view.cache_clear()  # it was made under the removed root


def test_a_view_half_made_by_a_killed_referee_is_swept_and_made_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shm = Path(f"/dev/shm/arena-view-test-{os.getpid()}")
    shm.mkdir()
    try:
        monkeypatch.setenv("ARENA_VIEW_ROOT", str(shm))
        (tmp_path / "me.py").write_text(LOOKER)
        spec = load_bot(tmp_path / "me.py")
        key = f"bot{fileview.FORMAT}-{spec.sha256[:32]}-me"
        dead = 2**22 + 12345  # above any pid_max this machine allows by default: no such process
        half = Path(fileview.base()) / f"{key}.tmp-{dead}-1"
        half.mkdir()
        (half / "me.py").write_text("half")
        view = fileview.bot_view(spec)
        assert view is not None and not half.exists()
        assert Path(view.root, "me.py").read_text() == LOOKER and Path(view.root, ".complete").exists()
    finally:
        fileview._bot_views.clear()
        shutil.rmtree(shm, ignore_errors=True)
        fileview.python_view.cache_clear()  # it was made under the removed root


def test_views_unused_for_a_while_are_collected_but_never_one_in_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shm = Path(f"/dev/shm/arena-view-test-{os.getpid()}")
    shm.mkdir()
    try:
        monkeypatch.setenv("ARENA_VIEW_ROOT", str(shm))
        folder = Path(fileview.base())
        old = time.time() - 2 * fileview.IDLE_S

        def fake(name: str, when: float) -> Path:
            (folder / name).mkdir()
            (folder / name / ".complete").write_text(name)
            os.utime(folder / name / ".complete", (when, when))
            return folder / name

        stale, recent = fake("bot2-stale-x", old), fake("bot2-recent-y", time.time())
        (tmp_path / "me.py").write_text(LOOKER)
        spec = load_bot(tmp_path / "me.py")
        bot = BotProcess(
            dataclasses.replace(spec, env={"ARENA_LOOK": "/"}), SandboxLimits(), TimeControl(hello_ms=60000)
        )
        bot.start()  # makes its view (and collects): the stale one goes, the recent one stays
        try:
            assert not stale.exists() and recent.exists()
            mine = fileview.bot_view(spec)
            assert mine is not None
            os.utime(os.path.join(mine.root, ".complete"), (old, old))  # idle, but bound in a live sandbox
            assert Path(mine.root).name not in fileview.collect(str(folder))
            assert Path(mine.root).exists()
        finally:
            bot.close()
        assert Path(mine.root).name in fileview.collect(str(folder))  # closed: unused, collected
        # A referee that kept the collected view in memory makes it again at its next start.
        assert looks(spec, [str(tmp_path / "me.py")]) == {str(tmp_path / "me.py"): True}
        assert Path(mine.root).exists()
    finally:
        fileview.forget_bot_views()
        shutil.rmtree(shm, ignore_errors=True)
        fileview.python_view.cache_clear()  # it was made under the removed root


def timer_bot(folder: Path) -> BotSpec:
    """tests/bots/cache_timer.py with a data folder holding a 24 MiB file only it
    reads (a rarely read file no other process on the machine keeps warm)."""
    shutil.copy(ROOT / "tests" / "bots" / "cache_timer.py", folder / "cache_timer.py")
    (folder / "cache_timer").mkdir()
    (folder / "cache_timer" / "blob.bin").write_bytes(os.urandom(24 << 20))
    return load_bot(folder / "cache_timer.py")


def drop_pages(path: Path) -> None:
    """Drop a host file's pages from the page cache: cold, as a rarely read file's."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def timings(spec: BotSpec, n: int) -> dict[str, list[list[int]]]:
    """One sandbox marks half the candidates, a second times them all."""
    tag = f"t{os.getpid()}-{time.monotonic_ns()}"
    run_bot(spec, {"ARENA_CACHE_TIMER": f"mark:{tag}:{n}"})
    err = run_bot(spec, {"ARENA_CACHE_TIMER": f"probe:{tag}:{n}"})
    out: dict[str, list[list[int]]] = json.loads(next(x for x in err.splitlines() if x.startswith("{")))
    assert out["file"].endswith("/cache_timer/blob.bin")
    return out


@pytest.mark.slow
def test_reads_and_lookups_do_not_tell_what_another_sandbox_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the view, what the marking sandbox read or looked up is no faster for
    the probing one; with the host's files (the control) it is, by far."""
    n = 80
    spec = timer_bot(tmp_path)
    view = timings(spec, n)
    with monkeypatch.context() as m:
        m.setattr(fileview, "unavailable", lambda: "off for the test")
        drop_pages(tmp_path / "cache_timer" / "blob.bin")
        host = timings(spec, n)
    med = {
        (name, what, k): statistics.median(r[what][k])
        for name, r in (("view", view), ("host", host))
        for what in ("read", "lookup")
        for k in (0, 1)
    }
    # The control: on the host's files, marked reads and lookups stand out.
    assert med["host", "read", 0] * 4 < med["host", "read", 1], med
    assert med["host", "lookup", 0] * 1.5 < med["host", "lookup", 1], med
    # In the view they do not: a generous margin, for a loaded machine.
    assert med["view", "read", 0] * 1.5 > med["view", "read", 1], med
    assert med["view", "lookup", 0] * 1.3 > med["view", "lookup", 1], med


def test_the_python_interpreter_runs_from_the_view() -> None:
    """The program the sandbox starts for a Python bot is the view's copy (bound at its path)."""
    exe, _, _ = mounts.python_paths()
    v = mounts.python_view()
    src = v.source(exe)
    assert src is not None and src.startswith(v.root) and os.access(src, os.X_OK)
    assert sys.version.split()[0]  # the same interpreter the referee runs
